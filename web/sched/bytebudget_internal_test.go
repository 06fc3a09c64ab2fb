package sched

// bytebudget_internal_test.go: the byte budget's token bucket.

import (
	"testing"
	"time"
)

// TestByteBudgetBucket: the bucket starts full, goes into debt (a message
// is never cut), refills at the rate up to the burst, and is kept per
// visitor; full buckets are swept when the map grows.
func TestByteBudgetBucket(t *testing.T) {
	now := time.Unix(0, 0)
	b := NewByteBudget(1000, 5000) // 1000 B/s, burst 5000 B
	b.now = func() time.Time { return now }
	steps := []struct {
		name    string
		visitor string
		advance time.Duration
		charge  int
		debt    time.Duration
	}{
		{"full at first", "a", 0, 0, 0},
		{"within the burst", "a", 0, 4000, 0},
		{"into debt", "a", 0, 3000, 2 * time.Second},
		{"refilling", "a", time.Second, 0, time.Second},
		{"out of debt", "a", time.Second, 0, 0},
		{"another visitor is untouched", "b", 0, 5000, 0},
		{"refill stops at the burst", "a", time.Hour, 5001, time.Millisecond},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.charge > 0 {
			b.Charge(s.visitor, s.charge)
		}
		if got := b.Debt(s.visitor); got != s.debt {
			t.Errorf("%s: debt %v, want %v", s.name, got, s.debt)
		}
	}
	for i := range sweepAt + 10 {
		b.Charge(string(rune('A'+i)), 1)
		now = now.Add(time.Second)
	}
	if len(b.v) > sweepAt+1 {
		t.Errorf("%d buckets kept, want full ones swept at %d", len(b.v), sweepAt)
	}
}
