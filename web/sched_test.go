package web

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestFairQueueAloneUsesEverySlot(t *testing.T) {
	q := NewFairQueue(4)
	var rel []func()
	for i := 0; i < 4; i++ {
		r, err := q.Acquire(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := q.Acquire(ctx, "a"); err == nil {
		t.Fatal("a fifth slot of four was granted")
	}
	for _, r := range rel {
		r()
	}
	if q.running != 0 || len(q.ring) != 0 {
		t.Errorf("after release: running %d, ring %v", q.running, q.ring)
	}
}

// TestFairQueueSharesAcrossVisitors: visitor h floods the queue; visitor g
// still gets a slot at once, h never holds more than its share while g is
// active, and waiting visitors are served in turn.
func TestFairQueueSharesAcrossVisitors(t *testing.T) {
	q := NewFairQueue(2)
	// h takes both slots while alone
	h1, _ := q.Acquire(context.Background(), "h")
	h2, _ := q.Acquire(context.Background(), "h")
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	hold := make(chan struct{})
	for i := 0; i < 8; i++ { // eight more from h queue up
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := q.Acquire(context.Background(), "h")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, "h")
			mu.Unlock()
			<-hold
			r()
		}()
	}
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.visitors["h"].waiters) == 8 })
	gotG := make(chan func())
	go func() {
		r, _ := q.Acquire(context.Background(), "g")
		mu.Lock()
		order = append(order, "g")
		mu.Unlock()
		gotG <- r
	}()
	waitFor(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.visitors["g"] != nil && len(q.visitors["g"].waiters) == 1
	})
	h1() // one of h's slots frees: g is next, not h's queue
	g := <-gotG
	h2() // h now holds 0 of its 1-slot share: one h waiter runs
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 2 })
	q.mu.Lock()
	if hr := q.visitors["h"].running; hr != 1 {
		t.Errorf("h holds %d slots while g is active, want its share 1", hr)
	}
	q.mu.Unlock()
	// while g holds its slot, g's next request waits for g's own release,
	// and is granted before h's queue when it does
	g()
	r, err := q.Acquire(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	r()
	close(hold)
	wg.Wait()
	if order[0] != "g" {
		t.Errorf("grant order %v, want g first", order)
	}
	if q.running != 0 {
		t.Errorf("running %d after all released", q.running)
	}
}

func TestFairQueueCancelledWaiterLeaves(t *testing.T) {
	q := NewFairQueue(1)
	r, _ := q.Acquire(context.Background(), "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := q.Acquire(ctx, "b"); done <- err }()
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.ring) == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled wait returned a slot")
	}
	r()
	r2, err := q.Acquire(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	r2()
	if q.running != 0 || len(q.ring) != 0 {
		t.Errorf("running %d ring %v", q.running, q.ring)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
