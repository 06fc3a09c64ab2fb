// Package sched decides who gets the server next: the fair queue in front
// of the engine, the per-visitor byte budget, per-visitor rates, session
// counts and the per-address connection cap.
package sched

// sched.go: the fair queue in front of the engine. Every piece of engine
// work a connection does (one stage, a rewind, sample_n, a resume entry,
// starting a run) first takes a slot here, keyed by visitor (a browser at
// a client address, internal/serve/visitor.go). There are as many slots as
// cores. Shares are two-level: while several addresses are active, each
// address may hold at most its share of the slots (slots / active
// addresses, at least one), and each visitor at most its share of its
// address's (the address's share / the address's active visitors, at least
// one); waiting visitors are served round-robin. So one visitor's many
// connections get one visitor's share of the CPU, a class behind one NAT
// gets one address's share, and a lone machine at another address still
// gets its own; a visitor alone may use every slot. Work is granted one
// stage at a time, so nobody waits behind a whole 200-token run.
//
// The queue knows nothing of sessions. Batched decode steps do not take
// slots: the model's batcher admits them fairly by visitor (batching.go,
// internal/serve).
//
// Slots bound how many stages run at once, but three things let a busy
// visitor's stages still slow another visitor's (measured: the good
// client's 0.2 ms stage running 10–17 ms, "running" as far as Go knew, so
// waiting for a core):
//
//   - A stage's parallel regions kept every engine worker busy. Now a
//     region leaves the cores of the regions running beside it to them
//     (engine/pool.go), so two slots' stages keep about one core each.
//   - Go hands a P to another goroutine only when one blocks or after a
//     10 ms slice; with as many Ps as engine workers, the goroutines that
//     carry another visitor's request wait behind the engine.
//     ReserveRequestProc gives them a P of their own.
//   - The operating system shares the cores among threads, not visitors: a
//     visitor that always has a stage running keeps a thread busy that the
//     OS weighs the same as the thread of another visitor's short stage.
//     A stage of a backlogged visitor (one that wants more than its share:
//     slots held plus stages waiting exceed it) runs on a thread at a lower
//     OS priority (sched_prio.go), so another visitor's stage, the socket
//     goroutines and the batcher run first whenever they are ready; the
//     backlogged visitor still gets every cycle nobody else wants.

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/inferscope/inferscope/internal/serve"
)

// activeWindow is how long a visitor counts as active after its last
// request for a slot.
const activeWindow = time.Second

// FairQueue grants engine slots fairly across visitors; safe for
// concurrent use.
type FairQueue struct {
	mu       sync.Mutex
	slots    int
	running  int
	visitors map[string]*visitorQueue
	ring     []string // visitors with waiters, in round-robin order
	next     int      // where the next round-robin scan starts
	now      func() time.Time

	active  int            // active visitors at the last share()
	lowPrio func(f func()) // runs a backlogged visitor's work (sched_prio.go)

	// per address (serve.AddressOf): slots held, and active visitors at
	// the last share()
	addrRunning map[string]int
	addrActive  map[string]int
}

type visitorQueue struct {
	running  int
	waiters  []*waiter
	lastSeen time.Time
}

// waiter is one Acquire waiting for a slot; ch is closed when it is
// granted, bulk set before.
type waiter struct {
	ch   chan struct{}
	bulk bool
}

// engineProcs is GOMAXPROCS when the program started, which the engine's
// worker pool is sized by (one worker per core).
var engineProcs = runtime.GOMAXPROCS(0)

// ReserveRequestProc sets GOMAXPROCS to one more than the engine has
// workers, so the goroutines carrying requests can run while engine work
// keeps every worker busy (the operating system then shares the cores in
// finer slices than Go's 10 ms). The serve command calls it once at
// start-up; restore puts the previous setting back.
func ReserveRequestProc() (restore func()) {
	prev := runtime.GOMAXPROCS(engineProcs + 1)
	return func() { runtime.GOMAXPROCS(prev) }
}

// NewFairQueue makes a queue with slots engine slots (≤ 0: one per engine
// worker, i.e. per core). Run runs backlogged visitors' work at a lower OS
// priority.
func NewFairQueue(slots int) *FairQueue {
	if slots <= 0 {
		slots = engineProcs
	}
	return &FairQueue{slots: slots, visitors: map[string]*visitorQueue{}, now: time.Now, lowPrio: runLowPriority,
		addrRunning: map[string]int{}, addrActive: map[string]int{}}
}

// share refreshes who is active (visitors, and per address) and returns
// how many slots one address may hold now: every slot when it is the only
// active address, else slots / active addresses (at least one).
func (q *FairQueue) share() int {
	active := 0
	cut := q.now().Add(-activeWindow)
	clear(q.addrActive)
	for v, vq := range q.visitors {
		if vq.running > 0 || len(vq.waiters) > 0 || vq.lastSeen.After(cut) {
			active++
			q.addrActive[serve.AddressOf(v)]++
		} else {
			delete(q.visitors, v)
		}
	}
	q.active = active
	return max(1, q.slots/max(1, len(q.addrActive)))
}

// fits reports whether visitor may take one more slot, given addrShare
// (from share): its address below the address's share and the visitor
// below its part of it.
func (q *FairQueue) fits(visitor string, vq *visitorQueue, addrShare int) bool {
	a := serve.AddressOf(visitor)
	return q.addrRunning[a] < addrShare && vq.running < q.visitorShare(a, addrShare)
}

// visitorShare is one visitor's part of its address's share.
func (q *FairQueue) visitorShare(addr string, addrShare int) int {
	return max(1, addrShare/max(1, q.addrActive[addr]))
}

func (q *FairQueue) hold(visitor string, vq *visitorQueue) {
	q.running++
	vq.running++
	q.addrRunning[serve.AddressOf(visitor)]++
}

// Run waits for a slot for visitor, runs f holding it and gives it back.
// f runs at a lower OS priority when the visitor is backlogged (it holds
// its share of the slots and has more work waiting while others are
// active; see the file comment). It returns ctx's error, without running
// f, if ctx ends first. A panic in f is f's caller's, as if f ran here.
func (q *FairQueue) Run(ctx context.Context, visitor string, f func()) error {
	release, bulk, err := q.acquire(ctx, visitor)
	if err != nil {
		return err
	}
	defer release()
	if bulk && q.lowPrio != nil {
		q.lowPrio(f)
	} else {
		f()
	}
	return nil
}

// Acquire waits for a slot for visitor and returns the function that gives
// it back (call it exactly once). It returns ctx's error if ctx ends first.
func (q *FairQueue) Acquire(ctx context.Context, visitor string) (release func(), err error) {
	release, _, err = q.acquire(ctx, visitor)
	return release, err
}

// acquire is Acquire, and reports whether the visitor is backlogged (see
// Run) when the slot is granted.
func (q *FairQueue) acquire(ctx context.Context, visitor string) (release func(), bulk bool, err error) {
	if err := ctx.Err(); err != nil { // a closed connection's work never starts
		return nil, false, err
	}
	q.mu.Lock()
	vq := q.visitors[visitor]
	if vq == nil {
		vq = &visitorQueue{}
		q.visitors[visitor] = vq
	}
	vq.lastSeen = q.now()
	// Waiters still waiting are all at their share (dispatch grants any
	// other at once), so a visitor below its share may take a free slot.
	// (so a grant here is never backlogged: nothing of its visitor waits)
	if len(vq.waiters) == 0 && q.running < q.slots && q.fits(visitor, vq, q.share()) {
		q.hold(visitor, vq)
		q.mu.Unlock()
		return q.releaser(visitor), false, nil
	}
	w := &waiter{ch: make(chan struct{})}
	vq.waiters = append(vq.waiters, w)
	if len(vq.waiters) == 1 {
		q.ring = append(q.ring, visitor)
	}
	q.dispatch()
	q.mu.Unlock()
	select {
	case <-w.ch:
		return q.releaser(visitor), w.bulk, nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		select {
		case <-w.ch: // granted meanwhile: hand it on
			q.releaseLocked(visitor)
		default:
			q.removeWaiter(visitor, w)
		}
		return nil, false, ctx.Err()
	}
}

func (q *FairQueue) releaser(visitor string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.releaseLocked(visitor)
			q.mu.Unlock()
		})
	}
}

func (q *FairQueue) releaseLocked(visitor string) {
	q.running--
	a := serve.AddressOf(visitor)
	if q.addrRunning[a]--; q.addrRunning[a] <= 0 {
		delete(q.addrRunning, a)
	}
	if vq := q.visitors[visitor]; vq != nil {
		vq.running--
		vq.lastSeen = q.now()
	}
	q.dispatch()
}

// dispatch grants free slots to waiting visitors, round-robin, each
// within its share and its address's.
func (q *FairQueue) dispatch() {
	share := q.share()
	for q.running < q.slots && len(q.ring) > 0 {
		granted := false
		for i := 0; i < len(q.ring); i++ {
			k := (q.next + i) % len(q.ring)
			v := q.ring[k]
			vq := q.visitors[v]
			if !q.fits(v, vq, share) {
				continue
			}
			w := vq.waiters[0]
			vq.waiters = vq.waiters[1:]
			q.hold(v, vq)
			// backlogged: other visitors are active and this one wants
			// more than its share (slots held + stages still waiting)
			w.bulk = q.active > 1 && vq.running+len(vq.waiters) > q.visitorShare(serve.AddressOf(v), share)
			close(w.ch)
			if len(vq.waiters) == 0 {
				q.ring = append(q.ring[:k], q.ring[k+1:]...)
				q.next = k
			} else {
				q.next = k + 1
			}
			if len(q.ring) > 0 {
				q.next %= len(q.ring)
			} else {
				q.next = 0
			}
			granted = true
			break
		}
		if !granted {
			return
		}
	}
}

func (q *FairQueue) removeWaiter(visitor string, ch *waiter) {
	vq := q.visitors[visitor]
	for i, w := range vq.waiters {
		if w == ch {
			vq.waiters = append(vq.waiters[:i], vq.waiters[i+1:]...)
			break
		}
	}
	if len(vq.waiters) == 0 {
		for k, v := range q.ring {
			if v == visitor {
				q.ring = append(q.ring[:k], q.ring[k+1:]...)
				if q.next > k {
					q.next--
				}
				break
			}
		}
		if len(q.ring) > 0 {
			q.next %= len(q.ring)
		} else {
			q.next = 0
		}
	}
	q.dispatch()
}
