// Command inferscope runs the inferscope web app and its command-line tools.
//
//	inferscope [serve] [--addr 127.0.0.1:8080]   start the web app (default)
//	inferscope <command> --help                 help for one command
//
// Built with -tags engineonly it is the command-line tools alone (generate,
// tokenize, trace, bench): no web app, hub client or server scheduler, so a
// one-shot run touches only the engine's code (the engine-only build in the
// README's performance section).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand: its own flag set, parsed from its own args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// lean marks a one-shot model command, run with a low GC target (memory.go)
	lean bool
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks an error already explained by the flag package's usage text.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		usage(stderr)
		return 0
	}
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	c, ok := commands[name]
	if !ok && name == "serve" && (len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		fmt.Fprintln(stderr, "inferscope: this engine-only build (-tags engineonly) has no web app; name a command")
		usage(stderr)
		return 2
	}
	if !ok {
		fmt.Fprintf(stderr, "inferscope: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if c.lean {
		defer leanGC()()
	}
	if err := c.run(ctx, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintf(stderr, "inferscope %s: %v\n", name, err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "inferscope: watch a small language model do inference, one step at a time.")
	if commands["serve"] != nil {
		fmt.Fprintln(w, "\nUsage: inferscope <command> [flags]   (no command means serve)")
	} else {
		fmt.Fprintln(w, "\nUsage: inferscope <command> [flags]   (engine-only build: no web app)")
	}
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'inferscope <command> --help' for a command's flags.")
}

// newFlags makes a FlagSet whose errors are returned, not fatal, and whose
// usage names the command.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: inferscope %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags and rejects stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}
