package main

// puller.go: the server-side puller: hub downloads started from the lab, added to the catalog when
// done.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

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

	mu sync.Mutex
	st web.PullStatus
}

func newServerPuller(ctx context.Context, cat *web.EngineCatalog, lg *slog.Logger) *serverPuller {
	return &serverPuller{ctx: ctx, cat: cat, c: hub.FromEnv(), log: lg, st: web.PullStatus{State: "idle"}}
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
		_, err := c.Pull(p.ctx, repo, "main", nil)
		if err == nil {
			em, lerr := loadModelRef(repo, "")
			if lerr == nil {
				lerr = p.cat.Add(em, "pulled from the hub", false)
			}
			err = lerr
		}
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
