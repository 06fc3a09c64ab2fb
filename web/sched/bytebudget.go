package sched

// bytebudget.go: the per-visitor byte budget. Every message the server
// sends counts against its visitor's bucket (a burst, refilled at a steady
// rate), whichever of the visitor's connections it goes to. While a
// visitor's bucket is empty, requests that only fetch data (get_logits,
// sample_n, inspect) are refused with a byte_budget error saying when to
// retry, and the stages of a run wait for the bucket to refill
// (backpressure: no event is dropped, cancel still works). A 21-byte
// get_logits that answers 43 KB is cheap to send and dear to answer; this
// is what bounds it.

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ByteBudget holds the visitors' buckets; safe for concurrent use.
type ByteBudget struct {
	mu    sync.Mutex
	rate  float64 // bytes per second
	burst float64 // bytes
	v     map[string]*byteBucket
	now   func() time.Time
}

type byteBucket struct {
	bytes float64 // left; negative: in debt (a message is never cut)
	last  time.Time
}

// sweepAt is how many buckets the map holds before full ones are dropped.
const sweepAt = 1024

func NewByteBudget(perSecond, burst int64) *ByteBudget {
	return &ByteBudget{rate: float64(perSecond), burst: float64(burst), v: map[string]*byteBucket{}, now: time.Now}
}

// bucket returns visitor's bucket, refilled to now. Call with mu held.
func (b *ByteBudget) bucket(visitor string) *byteBucket {
	now := b.now()
	k := b.v[visitor]
	if k == nil {
		if len(b.v) >= sweepAt {
			for v, o := range b.v {
				if o.bytes+now.Sub(o.last).Seconds()*b.rate >= b.burst {
					delete(b.v, v)
				}
			}
		}
		k = &byteBucket{bytes: b.burst, last: now}
		b.v[visitor] = k
		return k
	}
	k.bytes = min(b.burst, k.bytes+now.Sub(k.last).Seconds()*b.rate)
	k.last = now
	return k
}

// Charge counts n bytes sent to visitor. It never refuses: the message is
// already made and must keep its place in the stream; the debt delays
// what the visitor asks for next.
func (b *ByteBudget) Charge(visitor string, n int) {
	b.mu.Lock()
	b.bucket(visitor).bytes -= float64(n)
	b.mu.Unlock()
}

// Debt is how long visitor must wait for its bucket to be out of debt
// (0: it may be sent more now).
func (b *ByteBudget) Debt(visitor string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(visitor)
	if k.bytes >= 0 {
		return 0
	}
	return time.Duration(-k.bytes / b.rate * float64(time.Second))
}

// Wait blocks until visitor is out of debt or ctx ends; it reports whether
// it had to wait.
func (b *ByteBudget) Wait(ctx context.Context, visitor string) (bool, error) {
	waited := false
	for {
		d := b.Debt(visitor)
		if d <= 0 {
			return waited, nil
		}
		waited = true
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return waited, ctx.Err()
		}
	}
}

// Refusal is the byte_budget error's message for a data request refused
// for d.
func (b *ByteBudget) Refusal(what string, d time.Duration) string {
	return fmt.Sprintf("too much data sent to this browser: the budget per visitor is %s at once, then %s per second; this %s is refused, try again in %.1f s",
		humanBytes(b.burst), humanBytes(b.rate), what, max(d.Seconds(), 0.1))
}

func humanBytes(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%g MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%g KiB", n/(1<<10))
	}
	return fmt.Sprintf("%g bytes", n)
}
