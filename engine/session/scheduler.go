package session

// scheduler.go: the Scheduler a server gives its sessions so their forward
// passes share the machine (decode steps batched across sessions, prefills
// one at a time). Without one a session runs every pass itself.

import (
	"context"
	"time"

	"github.com/inferscope/inferscope/engine"
)

// Scheduler runs sessions' forward passes on a shared server.
type Scheduler interface {
	// Decode runs one decode step: seq's token at its cache's next
	// position, batched with other sessions' steps. On return seq.Logits
	// holds the logits (valid until the session's next pass).
	Decode(ctx context.Context, seq *engine.BatchSeq) (Slot, error)
	// Prefill waits for the prefill slot; the caller runs its prefill and
	// then calls release.
	Prefill(ctx context.Context) (release func(), wait time.Duration, err error)
}

// Slot is what the scheduler reports about one decode step.
type Slot struct {
	Wait  time.Duration // queued before its batch started
	Batch int           // steps that shared the forward pass
	Model time.Duration // the batch's forward pass
}

// SetScheduler makes the session's passes go through sc (nil: run them
// here). Decode steps of runs with NoCache always run here.
func (s *Session) SetScheduler(sc Scheduler) { s.sched = sc }
