//go:build !engineonly

package main

// pull.go: the pull command: download a model from the Hugging Face hub into the HF cache.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferscope/inferscope/internal/human"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/hub"
)

func init() {
	register(&command{name: "pull", summary: "download a model from the Hugging Face hub into the HF cache", run: runPull})
}

func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pull", "pull REPO [--revision R] [--file F]...   |   pull --list", stderr)
	rev := fs.String("revision", "main", "branch, tag or commit")
	var files multiFlag
	fs.Var(&files, "file", "download only this file (repeatable); default: config, tokenizer and safetensors weights")
	list := fs.Bool("list", false, "list curated models with their download sizes, and what the cache holds")
	var repo string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		repo, args = args[0], args[1:]
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	c := hub.FromEnv()
	if *list {
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "model\tdownload\tneeds\tlicence\tabout")
		gated := false
		for _, p := range hub.Presets {
			lic := p.Licence
			if p.Gated {
				lic += " (gated*)"
				gated = true
			}
			fmt.Fprintf(tw, "%s\t~%s\t%s\t%s\t%s\n", p.Repo, human.Bytes(p.Bytes), p.Arch, lic, p.About)
		}
		tw.Flush()
		if gated {
			fmt.Fprintln(stdout, "\n* gated: accept the licence on the model's hub page, then set HF_TOKEN to a token of that account before pulling.")
		}
		fmt.Fprintln(stdout, "needs: the architecture (config.json model_type) the engine must implement to run the model.")
		fmt.Fprintf(stdout, "\ncache: %s\n", c.CacheDir)
		for _, r := range c.Cached() {
			fmt.Fprintf(stdout, "  %s (cached)\n", r)
		}
		return nil
	}
	if repo == "" {
		fmt.Fprintln(stderr, "pull needs a repo id, e.g. inferscope pull openai-community/gpt2 (inferscope pull --list shows suggestions)")
		fs.Usage()
		return errUsage
	}
	if err := hub.ValidRepo(repo); err != nil {
		return err
	}
	bar := newProgressBar(stderr)
	c.OnProgress = bar.update
	fmt.Fprintf(stderr, "pulling %s@%s from %s into %s\n", repo, *rev, endpointOf(c), c.CacheDir)
	snap, err := c.Pull(ctx, repo, *rev, files)
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", snap)
	if len(files) == 0 {
		m, err := engine.LoadModel(snap, "")
		if err != nil {
			if p, ok := hub.PresetFor(repo); ok {
				return fmt.Errorf("downloaded, but inferscope cannot run it (it needs the %s architecture): %w", p.Arch, err)
			}
			return fmt.Errorf("downloaded, but inferscope cannot run it: %w", err)
		}
		fmt.Fprintf(stderr, "ready: %s, %s, %d layers, %d parameters. Run: inferscope serve --model %s\n", repo, m.Config.Arch, m.Config.NLayers, m.Weights.NumParams(), repo)
	}
	return nil
}

func endpointOf(c *hub.Client) string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return hub.DefaultEndpoint
}

// progressBar draws "file [=====>    ] 12.3/45.6 MiB 3.4 MiB/s ETA 10s" on one line.
type progressBar struct {
	w    io.Writer
	file string
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w} }

func (b *progressBar) update(p hub.Progress) {
	if p.Cached {
		fmt.Fprintf(b.w, "\r%-28s already in the cache (%s)\n", p.File, human.Bytes(p.Total))
		return
	}
	if p.File != b.file && b.file != "" {
		fmt.Fprintln(b.w)
	}
	b.file = p.File
	const width = 24
	frac := 0.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	n := int(frac * width)
	bar := strings.Repeat("=", n) + strings.Repeat(" ", width-n)
	eta := "--"
	if p.ETA > 0 {
		eta = time.Duration(p.ETA * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(b.w, "\r%-28s [%s] %s/%s %s/s ETA %s   ", p.File, bar, human.Bytes(p.Done), human.Bytes(p.Total), human.Bytes(int64(p.Rate)), eta)
}

func (b *progressBar) finish() {
	if b.file != "" {
		fmt.Fprintln(b.w)
	}
}
