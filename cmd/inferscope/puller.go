//go:build !engineonly

package main

// puller.go: the server-side puller: hub downloads started from the lab
// when the operator allows them (serve --allow-pull), one at a time,
// size-capped and cancellable, added to the catalog when done.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/hub"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// pullMode is what --allow-pull lets visitors download.
type pullMode string

const (
	pullOff     pullMode = ""        // no downloads from the browser (default)
	pullPresets pullMode = "presets" // the curated models only (--allow-pull)
	pullAny     pullMode = "any"     // any hub repo (--allow-pull=any)
)

// pullFlag is --allow-pull: bare means presets, =any means any repo.
type pullFlag struct{ mode pullMode }

func (f *pullFlag) String() string   { return string(f.mode) }
func (f *pullFlag) IsBoolFlag() bool { return true }
func (f *pullFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "true", "presets":
		f.mode = pullPresets
	case "any":
		f.mode = pullAny
	case "false", "off":
		f.mode = pullOff
	default:
		return fmt.Errorf("--allow-pull takes no value (the curated models), =any (any repo) or =false, not %q", v)
	}
	return nil
}

// serverPuller runs one download at a time for the web UI and adds the
// model to the catalog when it is ready.
type serverPuller struct {
	ctx  context.Context
	cat  *catalog.EngineCatalog
	c    *hub.Client
	log  *slog.Logger
	mode pullMode
	// load loads a pulled repo from the cache (loadPulled; replaced in tests).
	load func(repo string) (*engine.Model, error)

	mu     sync.Mutex
	st     web.PullStatus
	cancel context.CancelFunc
}

func newServerPuller(ctx context.Context, cat *catalog.EngineCatalog, lg *slog.Logger, mode pullMode, maxBytes int64) *serverPuller {
	c := hub.FromEnv()
	c.MaxBytes = maxBytes
	p := &serverPuller{ctx: ctx, cat: cat, c: c, log: lg, mode: mode, st: web.PullStatus{State: "idle"}}
	p.load = p.loadPulled
	return p
}

func (p *serverPuller) Presets() any { return hub.Presets }

func (p *serverPuller) isPreset(repo string) bool {
	return slices.ContainsFunc(hub.Presets, func(pr hub.Preset) bool { return pr.Repo == repo })
}

// Status is the download's state; Cached lists the curated models already
// in the cache (not everything the cache holds).
func (p *serverPuller) Status() web.PullStatus {
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	st.Cached = []string{}
	for _, r := range p.c.Cached() {
		if p.isPreset(r) {
			st.Cached = append(st.Cached, r)
		}
	}
	return st
}

func (p *serverPuller) Start(repo string) error {
	if err := hub.ValidRepo(repo); err != nil {
		return err
	}
	if p.mode != pullAny && !p.isPreset(repo) {
		names := make([]string, len(hub.Presets))
		for i, pr := range hub.Presets {
			names[i] = pr.Repo
		}
		return fmt.Errorf("%s is not one of the curated models this server may download (%s); the operator can allow any repo with serve --allow-pull=any", repo, strings.Join(names, ", "))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.State == "running" {
		return fmt.Errorf("already downloading %s: wait for it to finish, or cancel it", p.st.Repo)
	}
	if _, err := p.cat.Model(repo); err == nil {
		return fmt.Errorf("%s is already loaded", repo)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	p.st, p.cancel = web.PullStatus{Repo: repo, State: "running"}, cancel
	c := *p.c
	c.OnProgress = func(pr hub.Progress) {
		p.mu.Lock()
		p.st.File, p.st.Done, p.st.Total, p.st.Rate, p.st.ETA = pr.File, pr.Done, pr.Total, pr.Rate, pr.ETA
		p.mu.Unlock()
	}
	go func() {
		err := p.pullAndLoad(ctx, &c, repo)
		cancelled := ctx.Err() != nil
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cancel = nil
		switch {
		case err != nil && cancelled:
			p.st.State, p.st.Error = "cancelled", "the download was cancelled; starting it again resumes it"
			p.log.Info("model download cancelled", "repo", repo)
		case err != nil:
			p.st.State, p.st.Error = "error", p.redact(err.Error())
			p.log.Warn("model download failed", "repo", repo, "err", err)
		default:
			p.st.State, p.st.Model = "done", repo
			p.log.Info("model downloaded and loaded", "repo", repo)
		}
	}()
	return nil
}

// Cancel stops the running download; what was received stays in the
// cache's partial file, so starting again resumes.
func (p *serverPuller) Cancel() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.State != "running" || p.cancel == nil {
		return errors.New("no download is running")
	}
	p.cancel()
	return nil
}

// redact replaces server paths in a message shown to visitors.
func (p *serverPuller) redact(msg string) string {
	if p.c.CacheDir != "" {
		msg = strings.ReplaceAll(msg, p.c.CacheDir, "<model cache>")
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		msg = strings.ReplaceAll(msg, home, "~")
	}
	return msg
}

// pullAndLoad downloads repo and adds it to the catalog. A panic anywhere in
// the download or the loaders becomes an error: no pulled file can end the
// server.
func (p *serverPuller) pullAndLoad(ctx context.Context, c *hub.Client, repo string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("panic while pulling a model", "repo", repo, "panic", r)
			err = fmt.Errorf("%s cannot be loaded: its files are damaged or unsupported (internal error: %v)", repo, r)
		}
	}()
	if _, err := c.Pull(ctx, repo, "main", nil); err != nil {
		return err
	}
	em, err := p.load(repo)
	if err != nil {
		return err
	}
	return p.cat.Add(em, "pulled from the hub", false)
}

// loadPulled loads a repo from the puller's cache, named by its repo id.
func (p *serverPuller) loadPulled(repo string) (*engine.Model, error) {
	dir, err := p.c.Resolve(repo, "")
	if err != nil {
		return nil, err
	}
	m, err := engine.LoadModel(dir, "")
	if err != nil {
		return nil, err
	}
	m.Name, m.Source = repo, "hf-cache:"+repo
	return m, nil
}
