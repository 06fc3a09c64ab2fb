// Package serve is the server's scheduler for forward passes: a Batcher
// per model runs the decode steps of every session that is ready as one
// batched forward pass (continuous batching), and lets one prefill run at
// a time beside it. It implements session.Scheduler; engine/session and
// web know it only through that interface.
//
// batcher.go: the Batcher: its queue, limits, loop and statistics.
//
// Admission is fair by visitor: a server tags each session's steps with
// its visitor (For); when more steps are queued than one pass holds, each
// pass takes them round-robin across addresses and, within an address,
// across its visitors (every visitor's oldest step first, then every
// visitor's second, ...; visitor.go), so one visitor's many sessions get
// one visitor's share of a pass and a class behind one address gets one
// address's share. This is the fair queue's
// rule for batched work: the server does not hold an engine slot while a
// step waits for its pass.
package serve

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
)

// Options are a Batcher's limits.
type Options struct {
	// MaxBatch is the most decode steps one forward pass runs (default 32).
	MaxBatch int
	// MaxWait is how long the oldest queued step may wait for more steps
	// to join its batch (default 20 ms). The batcher waits only while fewer
	// steps are queued than there are sessions decoding (those that queued
	// a step in the last 250 ms), so a lone session never waits, and
	// sessions that would otherwise fall into alternating groups share one
	// pass; and at most half the previous pass's time, so a small model's
	// steps are not held longer than batching them saves.
	MaxWait time.Duration
}

// DefaultOptions are the serve command's defaults.
func DefaultOptions() Options { return Options{MaxBatch: 32, MaxWait: 20 * time.Millisecond} }

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxBatch <= 0 {
		o.MaxBatch = d.MaxBatch
	}
	if o.MaxWait < 0 {
		o.MaxWait = 0
	}
	return o
}

// Tick is one batched forward pass.
type Tick struct {
	At      time.Time `json:"at"`
	Size    int       `json:"size"`     // decode steps in the pass
	ModelMs float64   `json:"model_ms"` // the pass's compute time
	Queued  int       `json:"queued"`   // steps left waiting when it started
}

// Stats is a snapshot of a Batcher.
type Stats struct {
	Model          string  `json:"model"`
	MaxBatch       int     `json:"max_batch"`
	MaxWaitMs      float64 `json:"max_wait_ms"`
	Queued         int     `json:"queued"`          // decode steps waiting now
	PrefillWaiting int     `json:"prefill_waiting"` // prefills waiting for the slot
	PrefillRunning bool    `json:"prefill_running"`
	Passes         int64   `json:"passes"` // batched forward passes so far
	Steps          int64   `json:"steps"`  // decode steps so far
	ScratchBytes   int64   `json:"scratch_bytes"`
	Ticks          []Tick  `json:"ticks"` // the latest passes, oldest first
}

// activeWindow: a session that queued a step this recently counts as
// decoding (the batcher waits up to MaxWait for its next step).
const activeWindow = 250 * time.Millisecond

// tickHistory is how many recent passes Stats keeps.
const tickHistory = 240

type request struct {
	seq     *engine.BatchSeq
	visitor string
	enq     time.Time
	done    chan struct{}
	slot    session.Slot
	err     error
}

// Batcher schedules one model's forward passes. Safe for concurrent use.
type Batcher struct {
	m   *engine.Model
	opt Options
	bs  *engine.BatchState

	mu       sync.Mutex
	queue    []*request
	seen     map[*engine.KVCache]time.Time // sessions decoding lately, by cache
	lastEnd  time.Time                     // when the previous pass finished
	lastPass time.Duration                 // how long it took
	passes   int64
	steps    int64
	ticks    []Tick // ring
	tickNext int
	prefillQ int
	wake     chan struct{}
	quit     chan struct{}
	stopped  chan struct{}
	closed   bool

	prefill chan struct{} // the prefill slot (capacity 1)
}

// New starts a Batcher for m.
func New(m *engine.Model, opt Options) *Batcher {
	opt = opt.withDefaults()
	b := &Batcher{m: m, opt: opt, bs: engine.NewBatchState(m.Config, opt.MaxBatch),
		seen: map[*engine.KVCache]time.Time{}, wake: make(chan struct{}, 1), quit: make(chan struct{}), stopped: make(chan struct{}), prefill: make(chan struct{}, 1)}
	go b.loop()
	return b
}

// Close stops the loop after the passes already queued.
func (b *Batcher) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	close(b.quit)
	<-b.stopped
}

// Decode implements session.Scheduler: it queues seq's step and returns
// when the batched pass that ran it is done. A step that was queued always
// runs (a pass takes milliseconds); ctx only refuses new steps.
func (b *Batcher) Decode(ctx context.Context, seq *engine.BatchSeq) (session.Slot, error) {
	return b.decode(ctx, seq, "")
}

// For is the Batcher as the scheduler of one session of visitor: its
// decode steps are admitted fairly against other visitors' (see the file
// comment). Call Done when the session's run ends or is replaced.
func (b *Batcher) For(visitor string) *SessionScheduler {
	return &SessionScheduler{b: b, visitor: visitor}
}

// SessionScheduler is one session's view of a Batcher (a session.Scheduler).
type SessionScheduler struct {
	b       *Batcher
	visitor string
	mu      sync.Mutex
	kv      *engine.KVCache // the session's cache, as the batcher knows it
}

// Decode implements session.Scheduler.
func (v *SessionScheduler) Decode(ctx context.Context, seq *engine.BatchSeq) (session.Slot, error) {
	v.mu.Lock()
	v.kv = seq.KV
	v.mu.Unlock()
	return v.b.decode(ctx, seq, v.visitor)
}

// Prefill implements session.Scheduler.
func (v *SessionScheduler) Prefill(ctx context.Context) (func(), time.Duration, error) {
	return v.b.Prefill(ctx)
}

// Done says the session will send no more steps: the batcher stops
// counting it among the sessions decoding, so nobody's pass waits for it
// (a run that stopped or was replaced would otherwise count for
// activeWindow, and a lone student restarting runs would wait for ghosts).
func (v *SessionScheduler) Done() {
	v.mu.Lock()
	kv := v.kv
	v.kv = nil
	v.mu.Unlock()
	if kv != nil {
		v.b.mu.Lock()
		delete(v.b.seen, kv)
		v.b.mu.Unlock()
	}
}

func (b *Batcher) decode(ctx context.Context, seq *engine.BatchSeq, visitor string) (session.Slot, error) {
	if err := ctx.Err(); err != nil {
		return session.Slot{}, err
	}
	r := &request{seq: seq, visitor: visitor, enq: time.Now(), done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return session.Slot{}, fmt.Errorf("the server is shutting down")
	}
	b.queue = append(b.queue, r)
	if seq.KV != nil {
		b.seen[seq.KV] = r.enq
	}
	b.mu.Unlock()
	b.signal()
	<-r.done
	return r.slot, r.err
}

// Prefill implements session.Scheduler: one prefill at a time per model,
// on its own goroutine, so a long prompt shares the cores with the decode
// batches instead of stalling them, and many prompts at once queue here.
func (b *Batcher) Prefill(ctx context.Context) (func(), time.Duration, error) {
	t0 := time.Now()
	b.mu.Lock()
	b.prefillQ++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.prefillQ--
		b.mu.Unlock()
	}()
	select {
	case b.prefill <- struct{}{}:
	case <-ctx.Done():
		return nil, time.Since(t0), ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-b.prefill }) }, time.Since(t0), nil
}

func (b *Batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Batcher) loop() {
	defer close(b.stopped)
	var timer *time.Timer
	for {
		batch, wait := b.take()
		if batch == nil {
			if wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-b.wake:
				case <-timer.C:
				case <-b.quit:
					b.drain()
					return
				}
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				continue
			}
			select {
			case <-b.wake:
			case <-b.quit:
				b.drain()
				return
			}
			continue
		}
		b.run(batch)
	}
}

// take returns the next batch, or nil and how long to wait for more steps
// to join (0: wait for a signal).
func (b *Batcher) take() ([]*request, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.queue)
	if n == 0 {
		return nil, 0
	}
	now := time.Now()
	active := 0
	for kv, t := range b.seen {
		if now.Sub(t) > activeWindow {
			delete(b.seen, kv)
		} else {
			active++
		}
	}
	want := min(max(active, 1), b.opt.MaxBatch)
	if n < want && b.opt.MaxWait > 0 {
		// from the later of the oldest step's arrival and the end of the
		// previous pass: the sessions that pass served get MaxWait to queue
		// their next step and join (else two groups alternate forever)
		from := b.queue[0].enq
		if b.lastEnd.After(from) {
			from = b.lastEnd
		}
		// waiting costs every queued step, so it is worth at most half a
		// pass: a small model whose passes take microseconds barely waits
		wait := min(b.opt.MaxWait, b.lastPass/2)
		if left := wait - now.Sub(from); left > 0 {
			return nil, left
		}
	}
	return b.pick(b.opt.MaxBatch), 0
}

// pick takes up to n queued steps for a pass: all of them when they fit,
// else round-robin across addresses, and within an address across its
// visitors — each visitor's oldest step, then each one's second, and so
// on, in the order of their oldest step —
// leaving the rest queued in their order. Call with mu held.
func (b *Batcher) pick(n int) []*request {
	if len(b.queue) <= n {
		batch := append([]*request(nil), b.queue...)
		b.queue = b.queue[:0]
		return batch
	}
	// Two levels (visitor.go): within an address, its visitors' steps in
	// rounds (each visitor's oldest, then each one's second, ...); across
	// addresses, rounds of those orders (each address's first, then each
	// one's second, ...).
	type cand struct{ round, at int }
	rank := map[string]int{}
	byAddr := map[string][]cand{}
	var addrs []string
	for i, r := range b.queue {
		a := AddressOf(r.visitor)
		if _, ok := byAddr[a]; !ok {
			addrs = append(addrs, a)
		}
		byAddr[a] = append(byAddr[a], cand{rank[r.visitor], i})
		rank[r.visitor]++
	}
	cands := make([]cand, 0, len(b.queue))
	for _, a := range addrs {
		own := byAddr[a]
		sort.SliceStable(own, func(i, j int) bool { return own[i].round < own[j].round })
		for k, c := range own {
			cands = append(cands, cand{k, c.at})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].round != cands[j].round {
			return cands[i].round < cands[j].round
		}
		return cands[i].at < cands[j].at
	})
	chosen := make([]bool, len(b.queue))
	for _, c := range cands[:n] {
		chosen[c.at] = true
	}
	batch := make([]*request, 0, n)
	rest := b.queue[:0]
	for i, r := range b.queue {
		if chosen[i] {
			batch = append(batch, r)
		} else {
			rest = append(rest, r)
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	return batch
}

// drain runs whatever is still queued when the batcher closes.
func (b *Batcher) drain() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), b.opt.MaxBatch)
		batch := append([]*request(nil), b.queue[:n]...)
		b.queue = b.queue[n:]
		b.mu.Unlock()
		if n == 0 {
			return
		}
		b.run(batch)
	}
}

func (b *Batcher) run(batch []*request) {
	seqs := make([]*engine.BatchSeq, len(batch))
	for i, r := range batch {
		seqs[i] = r.seq
	}
	t0 := time.Now()
	err := b.forward(seqs)
	model := time.Since(t0)
	b.mu.Lock()
	b.passes++
	b.lastEnd = time.Now()
	b.lastPass = model
	b.steps += int64(len(batch))
	tk := Tick{At: t0, Size: len(batch), ModelMs: float64(model.Nanoseconds()) / 1e6, Queued: len(b.queue)}
	if len(b.ticks) < tickHistory {
		b.ticks = append(b.ticks, tk)
	} else {
		b.ticks[b.tickNext] = tk
		b.tickNext = (b.tickNext + 1) % tickHistory
	}
	b.mu.Unlock()
	for _, r := range batch {
		r.slot = session.Slot{Wait: t0.Sub(r.enq), Batch: len(batch), Model: model}
		r.err = err
		if r.err == nil {
			r.err = r.seq.Err
		}
		close(r.done)
	}
}

// forward runs the pass; a panic becomes every step's error, not a crash.
func (b *Batcher) forward(seqs []*engine.BatchSeq) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in a batched forward pass: %v", r)
		}
	}()
	return b.m.ForwardBatch(b.bs, seqs)
}

// Stats returns a snapshot.
func (b *Batcher) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{Model: b.m.Name, MaxBatch: b.opt.MaxBatch, MaxWaitMs: float64(b.opt.MaxWait.Microseconds()) / 1000, Queued: len(b.queue),
		PrefillWaiting: b.prefillQ, PrefillRunning: len(b.prefill) > 0, Passes: b.passes, Steps: b.steps, ScratchBytes: b.bs.Bytes()}
	s.Ticks = append(s.Ticks, b.ticks[b.tickNext:]...)
	s.Ticks = append(s.Ticks, b.ticks[:b.tickNext]...)
	return s
}
