package main

// tokenize.go: the tokenize command: a text's tokens as a table or JSON.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/inferscope/inferscope/engine/tokenizer"
)

func init() {
	register(&command{name: "tokenize", summary: "print the tokens of a text: ids, pieces, byte spans", run: runTokenize, lean: true})
}

func runTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", "tokenize [--model M] --text TEXT [--bos] [--allow-special] [--json]", stderr)
	mf := addModelFlags(fs)
	text := fs.String("text", "", "text to tokenize (required)")
	bos := fs.Bool("bos", false, "prepend the model's BOS token, as generation does")
	special := fs.Bool("allow-special", false, "treat special-token strings such as <|endoftext|> as special tokens")
	asJSON := fs.Bool("json", false, "print a JSON array of tokens")
	if err := parse(fs, args); err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "text" {
			set = true
		}
	})
	if !set {
		fmt.Fprintln(stderr, "--text is required")
		fs.Usage()
		return errUsage
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	toks, err := m.Tokenizer.Encode(*text, tokenizer.EncodeOptions{AddBOS: *bos, AllowSpecial: *special})
	if err != nil {
		return err
	}
	if *asJSON {
		if toks == nil {
			toks = []tokenizer.Token{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(toks)
	}
	fmt.Fprintf(stdout, "%s: %d tokens (%s, vocabulary %d)\n", m.Name, len(toks), m.Tokenizer.Kind(), m.Tokenizer.VocabSize())
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tid\tpiece\ttext\tbytes\tflags")
	for i, t := range toks {
		flags := ""
		for _, f := range []struct {
			on   bool
			name string
		}{{t.Special, "special"}, {t.Added, "added"}, {t.Partial, "partial-char"}} {
			if f.on {
				if flags != "" {
					flags += ","
				}
				flags += f.name
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t[%d,%d)\t%s\n", i, t.ID, strconv.Quote(t.Piece), strconv.Quote(t.Text), t.Start, t.End, flags)
	}
	return tw.Flush()
}
