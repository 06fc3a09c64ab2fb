package catalog

// batching.go: the catalog's schedulers — with batching on, every run of a
// model shares that model's serve.Batcher (decode steps of concurrent
// sessions in one forward pass, one prefill at a time); with it off, each
// run does its own forward passes (the lesson's comparison).
//
// How the fair queue (sched.go) and the batcher compose: a connection's
// run is tagged with its visitor, and its decode steps go to the batcher
// without an engine slot. The batcher admits steps into each pass fairly
// by visitor (round-robin when more are queued than a pass holds), so one
// visitor's many sessions get one visitor's share of every pass, and a
// pass can hold every session that is ready — not only as many as there
// are slots. Every other stage (prefill, logits, sample, no_cache decode,
// sample_n, ...) takes a slot as before.

import (
	"errors"
	"sort"
	"sync"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/serve"
)

// schedulers are the catalog's batchers, one per model, made on first use.
type schedulers struct {
	mu       sync.Mutex
	on       bool
	opt      serve.Options
	batchers map[string]*serve.Batcher
}

// SetBatching turns batching on (with opt's limits) or off for runs started
// from now on. Call it before serving.
func (c *EngineCatalog) SetBatching(on bool, opt serve.Options) {
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	c.sched.on, c.sched.opt = on, opt
}

// Batching reports whether batching is on, and its limits.
func (c *EngineCatalog) Batching() (bool, serve.Options) {
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	return c.sched.on, c.sched.opt
}

// schedule gives a new session its model's batcher when batching is on.
func (c *EngineCatalog) schedule(m *engine.Model, s *session.Session) {
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	if !c.sched.on {
		return
	}
	if c.sched.batchers == nil {
		c.sched.batchers = map[string]*serve.Batcher{}
	}
	b := c.sched.batchers[m.Name]
	if b == nil {
		b = serve.New(m, c.sched.opt)
		c.sched.batchers[m.Name] = b
	}
	s.SetScheduler(b)
}

// SchedulerStats are the batchers' snapshots, by model name.
func (c *EngineCatalog) SchedulerStats() []serve.Stats {
	c.sched.mu.Lock()
	bs := make([]*serve.Batcher, 0, len(c.sched.batchers))
	for _, b := range c.sched.batchers {
		bs = append(bs, b)
	}
	c.sched.mu.Unlock()
	out := make([]serve.Stats, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.Stats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// CloseSchedulers stops the batchers (after their queued steps).
func (c *EngineCatalog) CloseSchedulers() {
	c.sched.mu.Lock()
	bs := c.sched.batchers
	c.sched.batchers = nil
	c.sched.mu.Unlock()
	for _, b := range bs {
		b.Close()
	}
}

// errNotBatched: the run's steps are not batched (batching off, or a run
// not made by this catalog).
var errNotBatched = errors.New("not batched")

// ScheduleFor tags run's batched decode steps with visitor, for the
// batcher's fair admission; it reports whether the run's decode steps are
// batched at all.
func (c *EngineCatalog) ScheduleFor(run Run, visitor string) (*serve.SessionScheduler, error) {
	s, ok := run.Runner.(*session.Session)
	if !ok {
		return nil, errNotBatched
	}
	m, err := c.Model(run.Model.Name)
	if err != nil {
		return nil, err
	}
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	b := c.sched.batchers[m.Name]
	if !c.sched.on || b == nil {
		return nil, errNotBatched
	}
	sc := b.For(visitor)
	s.SetScheduler(sc)
	return sc, nil
}
