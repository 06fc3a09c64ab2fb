package web

// sched.go: the fair queue in front of the engine. Every piece of engine
// work a connection does (one stage, a rewind, sample_n, a resume entry,
// starting a run) first takes a slot here, keyed by visitor (client
// address). There are as many slots as cores. While several visitors are
// active, each may hold at most its share of the slots (slots / active
// visitors, at least one) and waiting visitors are served round-robin, so
// one visitor's many connections get one visitor's share of the CPU, not
// more; a visitor alone may use every slot. Work is granted one stage at a
// time, so nobody waits behind a whole 200-token run.
//
// The queue knows nothing of sessions. Batched decode steps do not take
// slots: the model's batcher admits them fairly by visitor (batching.go,
// internal/serve).
//
// Slots bound engine stages, but a stage's parallel regions keep every
// engine worker busy, and Go hands a P (a core) to another goroutine only
// when one blocks or after a 10 ms time slice. With as many Ps as engine
// workers, every goroutine that carries another visitor's request (the
// socket reader, the worker, the writer) waits for a slice behind the
// engine at each hand-off: that, not the queue, was the good client's tail
// under attack. ReserveRequestProc gives those goroutines a P of their own.

import (
	"context"
	"runtime"
	"sync"
	"time"
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
}

type visitorQueue struct {
	running  int
	waiters  []chan struct{}
	lastSeen time.Time
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
// worker, i.e. per core).
func NewFairQueue(slots int) *FairQueue {
	if slots <= 0 {
		slots = engineProcs
	}
	return &FairQueue{slots: slots, visitors: map[string]*visitorQueue{}, now: time.Now}
}

// share is how many slots one visitor may hold now: every slot when it is
// the only active visitor, else slots / active (at least one).
func (q *FairQueue) share() int {
	active := 0
	cut := q.now().Add(-activeWindow)
	for v, vq := range q.visitors {
		if vq.running > 0 || len(vq.waiters) > 0 || vq.lastSeen.After(cut) {
			active++
		} else {
			delete(q.visitors, v)
		}
	}
	return max(1, q.slots/max(1, active))
}

// Acquire waits for a slot for visitor and returns the function that gives
// it back (call it exactly once). It returns ctx's error if ctx ends first.
func (q *FairQueue) Acquire(ctx context.Context, visitor string) (release func(), err error) {
	q.mu.Lock()
	vq := q.visitors[visitor]
	if vq == nil {
		vq = &visitorQueue{}
		q.visitors[visitor] = vq
	}
	vq.lastSeen = q.now()
	// Waiters still waiting are all at their share (dispatch grants any
	// other at once), so a visitor below its share may take a free slot.
	if len(vq.waiters) == 0 && q.running < q.slots && vq.running < q.share() {
		q.running++
		vq.running++
		q.mu.Unlock()
		return q.releaser(visitor), nil
	}
	ch := make(chan struct{})
	vq.waiters = append(vq.waiters, ch)
	if len(vq.waiters) == 1 {
		q.ring = append(q.ring, visitor)
	}
	q.dispatch()
	q.mu.Unlock()
	select {
	case <-ch:
		return q.releaser(visitor), nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		select {
		case <-ch: // granted meanwhile: hand it on
			q.releaseLocked(visitor)
		default:
			q.removeWaiter(visitor, ch)
		}
		return nil, ctx.Err()
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
	if vq := q.visitors[visitor]; vq != nil {
		vq.running--
		vq.lastSeen = q.now()
	}
	q.dispatch()
}

// dispatch grants free slots to waiting visitors, round-robin, each
// within its share.
func (q *FairQueue) dispatch() {
	share := q.share()
	for q.running < q.slots && len(q.ring) > 0 {
		granted := false
		for i := 0; i < len(q.ring); i++ {
			k := (q.next + i) % len(q.ring)
			v := q.ring[k]
			vq := q.visitors[v]
			if vq.running >= share {
				continue
			}
			ch := vq.waiters[0]
			vq.waiters = vq.waiters[1:]
			vq.running++
			q.running++
			close(ch)
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

func (q *FairQueue) removeWaiter(visitor string, ch chan struct{}) {
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
