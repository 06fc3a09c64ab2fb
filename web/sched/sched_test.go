package sched

// sched_test.go: the fair queue shares slots across addresses and
// visitors.

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

// fakeQueue is a queue with a clock the test moves.
func fakeQueue(slots int) (q *FairQueue, advance func(time.Duration)) {
	q = NewFairQueue(slots)
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	q.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	return q, func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

type grant struct {
	release func()
	bulk    bool
}

// acquireAsync starts an acquire for visitor and waits until it is queued
// or granted; the grant arrives on the channel.
func acquireAsync(t *testing.T, q *FairQueue, visitor string) <-chan grant {
	t.Helper()
	out := make(chan grant, 1)
	q.mu.Lock()
	before := q.running
	if vq := q.visitors[visitor]; vq != nil {
		before += len(vq.waiters)
	}
	q.mu.Unlock()
	go func() {
		r, bulk, err := q.acquire(context.Background(), visitor)
		if err != nil {
			t.Error(err)
			close(out)
			return
		}
		out <- grant{r, bulk}
	}()
	waitFor(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		n := q.running
		if vq := q.visitors[visitor]; vq != nil {
			n += len(vq.waiters)
		}
		return n > before
	})
	return out
}

// TestFairQueueBacklogIsLowPriority: a grant is backlogged (its work runs
// at low priority) only while another visitor is active and the visitor
// wants more than its share.
func TestFairQueueBacklogIsLowPriority(t *testing.T) {
	q, advance := fakeQueue(2)
	h1, h2 := <-acquireAsync(t, q, "h"), <-acquireAsync(t, q, "h")
	alone := acquireAsync(t, q, "h") // waits: both slots are h's
	h1.release()
	ha := <-alone
	if h1.bulk || h2.bulk || ha.bulk {
		t.Fatal("a lone visitor's grant was backlogged")
	}
	// h holds both slots (share 2 while alone) and queues two more; g arrives
	hw1, hw2 := acquireAsync(t, q, "h"), acquireAsync(t, q, "h")
	gw := acquireAsync(t, q, "g")
	h2.release() // g is served first: h holds 1, its share with g active
	g := <-gw
	if g.bulk {
		t.Error("g's grant (its first, nothing else waiting) was backlogged")
	}
	ha.release() // h's turn: it holds 1 and has 1 more waiting, over its share
	hb := <-hw1
	if !hb.bulk {
		t.Error("h's grant while g is active and h has more waiting was not backlogged")
	}
	g.release()
	// g goes quiet: after the active window h is alone again
	advance(2 * activeWindow)
	hb.release()
	hc := <-hw2
	if hc.bulk {
		t.Error("h's grant after g left was backlogged")
	}
	hc.release()
	if q.running != 0 {
		t.Errorf("running %d after all released", q.running)
	}
}

// TestRunUsesLowPriorityForBacklog: Run hands backlogged work to the
// low-priority runner and runs the rest on the caller; a cancelled wait
// runs nothing.
func TestRunUsesLowPriorityForBacklog(t *testing.T) {
	q, _ := fakeQueue(1)
	var low []string
	q.lowPrio = func(f func()) { low = append(low, "x"); f() }
	g, _ := q.Acquire(context.Background(), "g") // g holds the only slot
	results := make(chan string, 2)
	for i := 0; i < 2; i++ { // h queues two: over its share while g is active
		go q.Run(context.Background(), "h", func() { results <- "h" })
	}
	waitFor(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.visitors["h"] != nil && len(q.visitors["h"].waiters) == 2
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := q.Run(ctx, "c", func() { ran = true }); err == nil || ran {
		t.Fatalf("Run with a cancelled context: err %v, ran %v", err, ran)
	}
	g()
	<-results
	<-results
	if len(low) != 1 { // the first of h's two was backlogged, the second had nothing behind it
		t.Errorf("%d of h's stages at low priority, want 1", len(low))
	}
	low = nil
	if err := q.Run(context.Background(), "g", func() {}); err != nil || len(low) != 0 {
		t.Errorf("g's stage with nothing waiting: err %v, low priority %d", err, len(low))
	}
}

// TestFairQueueTwoLevel: shares are per address first, then per visitor
// within an address (internal/serve/visitor.go). A class of visitors
// behind one address holds one address's share of the slots while a lone
// machine at another address is active, and a lone machine's one visitor
// is not outweighed by the class's many.
func TestFairQueueTwoLevel(t *testing.T) {
	cases := []struct {
		name string
		held []string // visitors holding a slot each, granted in order
		ask  string   // then: may this visitor take one more at once?
		ok   bool
	}{
		{"a class alone may use every slot", []string{"n|1", "n|2", "n|3"}, "n|4", true},
		{"a lone machine beside a class gets its address's share", []string{"n|1", "n|2"}, "l", true},
		{"the class stops at its address's share while the lone machine is active", []string{"l", "n|1", "n|2"}, "n|3", false},
		{"the lone machine also stops at its share", []string{"l", "n|1", "l"}, "l", false},
		{"a class's visitors split its address's share", []string{"n|1", "n|1", "n|2"}, "n|1", false},
		{"another visitor of the class may still take one", []string{"n|1", "n|1", "n|2"}, "n|2", true},
		{"plain address keys still work", []string{"a"}, "b", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := NewFairQueue(4)
			var rel []func()
			for _, v := range c.held {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				r, err := q.Acquire(ctx, v)
				cancel()
				if err != nil {
					// a holder refused by its share: the case's premise is
					// "held" only for what is granted
					continue
				}
				rel = append(rel, r)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // an already-ended context is refused even when a slot is free
			if _, err := q.Acquire(ctx, c.ask); err == nil {
				t.Fatal("a cancelled context got a slot")
			}
			q.mu.Lock()
			vq := q.visitors[c.ask]
			if vq == nil {
				vq = &visitorQueue{}
			}
			got := q.running < q.slots && q.fits(c.ask, vq, q.share())
			q.mu.Unlock()
			if got != c.ok {
				t.Errorf("after %v: %s may take a slot = %v, want %v", c.held, c.ask, got, c.ok)
			}
			for _, r := range rel {
				r()
			}
			if q.running != 0 || len(q.addrRunning) != 0 {
				t.Errorf("after release: running %d, per address %v", q.running, q.addrRunning)
			}
		})
	}
}
