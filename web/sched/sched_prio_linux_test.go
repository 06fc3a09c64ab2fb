package sched

// sched_prio_linux_test.go: a backlogged visitor's work runs at a lower OS
// priority (Linux).

import (
	"strings"
	"sync"
	"syscall"
	"testing"
)

// threadNice is the calling thread's nice value (Linux's getpriority
// returns 20 - nice).
func threadNice(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestRunLowPriority: the work runs on a thread at the low priority, the
// caller's thread keeps its own, concurrent calls each get a thread, and a
// panic in the work reaches the caller.
func TestRunLowPriority(t *testing.T) {
	before := threadNice(t)
	var mu sync.Mutex
	var nices []int
	var wg sync.WaitGroup
	both := make(chan struct{})
	var once sync.Once
	arrived := 0
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runLowPriority(func() {
				mu.Lock()
				nices = append(nices, threadNice(t))
				arrived++
				if arrived == 2 {
					once.Do(func() { close(both) })
				}
				mu.Unlock()
				<-both // both run at once: two threads
			})
		}()
	}
	wg.Wait()
	for _, n := range nices {
		if n != lowPrioNice {
			t.Errorf("work ran at nice %d, want %d", n, lowPrioNice)
		}
	}
	if after := threadNice(t); after != before {
		t.Errorf("the caller's thread went from nice %d to %d", before, after)
	}
	var got any
	func() {
		defer func() { got = recover() }()
		runLowPriority(func() { panic("boom") })
	}()
	err, _ := got.(error)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic in the work reached the caller as %v", got)
	}
	// the runner survives a panic
	ok := false
	runLowPriority(func() { ok = threadNice(t) == lowPrioNice })
	if !ok {
		t.Error("after a panic, work no longer runs at the low priority")
	}
}
