package main

// puller.go: the server-side puller: hub downloads started from the lab, added to the catalog when
// done.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/hub"
	"github.com/inferscope/inferscope/web"
)

// serverPuller runs one download at a time for the web UI and adds the
// model to the catalog when it is ready.
type serverPuller struct {
	ctx context.Context
	cat *web.EngineCatalog
	c   *hub.Client
	log *slog.Logger
	// load loads a pulled repo (loadModelRef; replaced in tests).
	load func(repo string) (*engine.Model, error)

	mu sync.Mutex
	st web.PullStatus
}

func newServerPuller(ctx context.Context, cat *web.EngineCatalog, lg *slog.Logger) *serverPuller {
	p := &serverPuller{ctx: ctx, cat: cat, c: hub.FromEnv(), log: lg, st: web.PullStatus{State: "idle"}}
	p.load = p.loadPulled
	return p
}

func (p *serverPuller) Presets() any { return hub.Presets }

func (p *serverPuller) Status() web.PullStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.Cached = p.c.Cached()
	return st
}

func (p *serverPuller) Start(repo string) error {
	if err := hub.ValidRepo(repo); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.State == "running" {
		return fmt.Errorf("already downloading %s: wait for it to finish", p.st.Repo)
	}
	if _, err := p.cat.Model(repo); err == nil {
		return fmt.Errorf("%s is already loaded", repo)
	}
	p.st = web.PullStatus{Repo: repo, State: "running"}
	c := *p.c
	c.OnProgress = func(pr hub.Progress) {
		p.mu.Lock()
		p.st.File, p.st.Done, p.st.Total, p.st.Rate, p.st.ETA = pr.File, pr.Done, pr.Total, pr.Rate, pr.ETA
		p.mu.Unlock()
	}
	go func() {
		err := p.pullAndLoad(&c, repo)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.st.State, p.st.Error = "error", err.Error()
			p.log.Warn("model download failed", "repo", repo, "err", err)
			return
		}
		p.st.State, p.st.Model = "done", repo
		p.log.Info("model downloaded and loaded", "repo", repo)
	}()
	return nil
}

// pullAndLoad downloads repo and adds it to the catalog. A panic anywhere in
// the download or the loaders becomes an error: no pulled file can end the
// server.
func (p *serverPuller) pullAndLoad(c *hub.Client, repo string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("panic while pulling a model", "repo", repo, "panic", r)
			err = fmt.Errorf("%s cannot be loaded: its files are damaged or unsupported (internal error: %v)", repo, r)
		}
	}()
	if _, err := c.Pull(p.ctx, repo, "main", nil); err != nil {
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
	m.Name = repo
	return m, nil
}
