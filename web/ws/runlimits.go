package ws

// runlimits.go: what a connection's run waits for besides an engine slot:
// the batcher its decode steps go to, and the visitor's byte budget
// (backpressure on runs, refusals of data requests).

import (
	"context"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

// tagRun tags a connection's new run with its visitor (see scheduleFor)
// and records whether its decode steps are batched; the run it replaces
// is done. With alone set the run's passes are its own, as with batching
// off (its prefill does not wait for the batcher's prefill slot either).
func (c *Conn) tagRun(run catalog.Run, alone bool) {
	c.runDone()
	c.batched, c.batch = false, nil
	if alone {
		if s, ok := run.Runner.(*session.Session); ok {
			s.SetScheduler(nil)
		}
		return
	}
	if cat, ok := c.s.Catalog.(*catalog.EngineCatalog); ok {
		sc, err := cat.ScheduleFor(run, c.visitor)
		c.batched, c.batch = err == nil, sc
	}
}

// runDone tells the batcher the connection's run sends no more steps
// (it stopped, was replaced, or the connection closed).
func (c *Conn) runDone() {
	if c.batch != nil {
		c.batch.Done() // a later step (after a rewind) counts it again
	}
}

// batchedNext reports whether the run's next stage is a decode step the
// batcher runs (so it takes no engine slot: the batcher admits it fairly).
func (c *Conn) batchedNext() bool {
	return c.batched && c.start != nil && !c.start.NoCache && c.runner != nil && c.runner.Next() == session.StageAppend
}

// dataAllowed reports whether a data request (get_logits, sample_n,
// resample, inspect) may be answered now; if not the client is told why with a
// byte_budget error carrying the command's id.
func (c *Conn) dataAllowed(id int64, what string) bool {
	d := c.s.bytes.Debt(c.visitor)
	if d <= 0 {
		return true
	}
	c.s.Metrics.BytesRefused.Add(1)
	c.sendError(id, wire.ErrorPayload{Code: wire.CodeByteBudget, Message: c.s.bytes.Refusal(what, d), RetryAfterMs: max(1, d.Milliseconds()+1)})
	return false
}

// awaitBytes holds a run's next stage until the visitor is out of debt
// (backpressure); it returns an error if ctx ends or the connection closes
// first.
func (c *Conn) awaitBytes(ctx context.Context) error {
	if c.s.bytes.Debt(c.visitor) <= 0 {
		return nil
	}
	ctx, cancel := c.whileOpen(ctx)
	defer cancel()
	waited, err := c.s.bytes.Wait(ctx, c.visitor)
	if waited {
		c.s.Metrics.BytesWaits.Add(1)
	}
	return err
}
