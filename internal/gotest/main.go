// Command gotest is the README's test command behind `task test`: it runs
// `go test -json` with the given arguments, prints what plain `go test`
// prints (package results, the output of failing tests, build errors), and
// ends with one line saying how many tests skipped and why — a skip is
// otherwise invisible without -v. Under CI=true any skip fails the run.
//
//	go run ./internal/gotest ./...
//
// GOTEST_JSON=FILE also writes go test's JSON stream to FILE.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Output     string
}

// location is the "file_test.go:12: " prefix t.Skip puts before a message.
var location = regexp.MustCompile(`^\s*[\w./-]+\.go:\d+: `)

func main() {
	args := []string{"test", "-json"}
	if !hasFlag(os.Args[1:], "timeout") {
		// go test's default is 10 minutes a package; the web package's
		// browser tests take ~6 on a quiet 2-core machine and can pass 10
		// when other jobs share the cores
		args = append(args, "-timeout=30m")
	}
	if !hasFlag(os.Args[1:], "parallel") {
		// go test runs GOMAXPROCS (2 here) parallel tests at a time; a
		// browser test spends much of its time waiting for Chromium, for
		// paced sockets (a lesson panel feeding 100 positions one by one
		// keeps under the server's 50 messages a second) or for another tab,
		// and at 2 the cores sat idle ~15% of the web package's run (220 s;
		// 207 s at 4)
		args = append(args, "-parallel=4")
	}
	args = append(args, longestFirst(os.Args[1:])...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(2)
	}
	var in io.Reader = out
	var tee *os.File
	if path := os.Getenv("GOTEST_JSON"); path != "" {
		// the raw go test -json stream too, for timelines (which tests ran
		// when, beside which)
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gotest:", err)
			os.Exit(2)
		}
		in, tee = io.TeeReader(out, f), f
	}
	skips := summarize(in, os.Stdout)
	if tee != nil {
		tee.Close() // (main ends in os.Exit, which runs no deferred call)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	fmt.Println(skipLine(skips))
	if len(skips) > 0 && os.Getenv("CI") == "true" {
		fmt.Println("CI=true: a test skipped; every test must run in CI")
		code = max(code, 1)
	}
	os.Exit(code)
}

type skip struct{ test, reason string }

// summarize copies plain go test output from the JSON stream in r to w and
// returns the skipped tests.
func summarize(r io.Reader, w io.Writer) []skip {
	var skips []skip
	buf := map[string][]string{} // package + test → its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(w, sc.Text()) // not JSON: pass it through
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test == "" && e.Action == "output":
			if o := e.Output; o != "PASS\n" && !strings.HasPrefix(o, "=== ") {
				fmt.Fprint(w, o)
			}
		case e.Action == "output":
			buf[key] = append(buf[key], e.Output)
		case e.Action == "fail":
			for _, o := range buf[key] {
				fmt.Fprint(w, o)
			}
			delete(buf, key)
		case e.Action == "skip" && e.Test != "": // (a package skips when it has no tests)
			skips = append(skips, skip{e.Test, reason(buf[key])})
			delete(buf, key)
		case e.Action == "pass":
			delete(buf, key)
		}
	}
	return skips
}

// reason is a skipped test's message without the RUN/SKIP lines and the
// file:line prefix.
func reason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, strings.TrimSpace(location.ReplaceAllString(l, "")))
	}
	if len(msg) == 0 {
		return "no reason given"
	}
	return strings.Join(msg, " ")
}

// skipLine is the one summary line: "N tests skipped: why (k: TestA, …); …".
func skipLine(skips []skip) string {
	if len(skips) == 0 {
		return "0 tests skipped"
	}
	byReason := map[string][]string{}
	for _, s := range skips {
		byReason[s.reason] = append(byReason[s.reason], s.test)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return len(byReason[reasons[i]]) > len(byReason[reasons[j]]) })
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		tests := byReason[r]
		sort.Strings(tests)
		if len(tests) > 3 {
			tests = append(tests[:3], "…")
		}
		parts[i] = fmt.Sprintf("%s (%d: %s)", r, len(byReason[r]), strings.Join(tests, ", "))
	}
	noun := "tests"
	if len(skips) == 1 {
		noun = "test"
	}
	return fmt.Sprintf("%d %s skipped: %s", len(skips), noun, strings.Join(parts, "; "))
}

// hasFlag reports whether args set the go test flag name (-name, --name,
// -name=v, -test.name).
// longestFirst expands arguments that are all package patterns (the
// README's ./...) into the packages, those with the most test code first.
// go test starts building and running packages in the order it is given
// them, two at a time on 2 cores: given ./..., the web package (browser
// tests, most of the suite's time) waited ~35 s behind the engine's and the
// command's tests, and ran its serial tests (timings, one core busy) alone
// after them; started first, its build and serial tests overlap the small
// packages. Arguments with a flag pass through unchanged.
func longestFirst(args []string) []string {
	if len(args) == 0 {
		return args
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return args
		}
	}
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .TestGoFiles \",\"}},{{join .XTestGoFiles \",\"}}"}, args...)...).Output()
	if err != nil {
		return args // go test reports the bad pattern itself
	}
	type pkg struct {
		path string
		size int64
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return args
		}
		p := pkg{path: f[0]}
		for _, name := range strings.Split(f[2], ",") {
			if fi, err := os.Stat(filepath.Join(f[1], name)); name != "" && err == nil {
				p.size += fi.Size()
			}
		}
		pkgs = append(pkgs, p)
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].size > pkgs[j].size })
	paths := make([]string, len(pkgs))
	for i, p := range pkgs {
		paths[i] = p.path
	}
	return paths
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		a, _, _ = strings.Cut(a, "=")
		if a == name || a == "test."+name {
			return true
		}
	}
	return false
}
