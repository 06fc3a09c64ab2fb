package sched

// ratelimit.go: a token bucket per visitor for HTTP endpoints that cost
// CPU (the vocabulary search): a burst, then a steady rate. Buckets of
// visitors gone quiet are dropped, so the map stays small.

import (
	"sync"
	"time"
)

type VisitorRate struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	buckets map[string]*rateBucket
	Now     func() time.Time
	swept   time.Time
}

type rateBucket struct {
	tokens float64
	last   time.Time
}

func NewVisitorRate(perSecond float64, burst int) *VisitorRate {
	return &VisitorRate{rate: perSecond, burst: float64(burst), buckets: map[string]*rateBucket{}, Now: time.Now}
}

// Allow takes one token from visitor's bucket; false when it is empty.
func (r *VisitorRate) Allow(visitor string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Now()
	if now.Sub(r.swept) > time.Minute { // a full bucket is no bucket
		for v, b := range r.buckets {
			if b.tokens+now.Sub(b.last).Seconds()*r.rate >= r.burst {
				delete(r.buckets, v)
			}
		}
		r.swept = now
	}
	b := r.buckets[visitor]
	if b == nil {
		b = &rateBucket{tokens: r.burst, last: now}
		r.buckets[visitor] = b
	}
	b.tokens = min(r.burst, b.tokens+now.Sub(b.last).Seconds()*r.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
