package web_test

// batching_test.go: the fair queue and the batcher compose — a decode step
// waiting for its pass holds no engine slot, so a pass can hold more
// sessions than there are slots.

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/ws"
)

// TestBatchesAreNotCappedBySlots: with one engine slot and six sessions
// stepping at once, passes still hold several sessions' steps (before,
// each step held the slot while it waited for its pass, so no pass could
// hold more than one), and every run's events arrive in order.
func TestBatchesAreNotCappedBySlots(t *testing.T) {
	cat, _ := batchingCatalog(t, true, serve.Options{MaxBatch: 16, MaxWait: 20 * time.Millisecond})
	ts := serveCatalog(t, web.Options{Catalog: cat, EngineSlots: 1, Limits: ws.Limits{MaxSessionsPerVisitor: 16, MsgsPerSecond: 1e4, Burst: 1e4}})
	var wg sync.WaitGroup
	for i := range 6 {
		w := dial(t, ts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runToEnd(t, w, fmt.Sprintf("Once upon a time %d", i), 40) // fails on a lost or reordered event
		}()
	}
	wg.Wait()
	st := cat.SchedulerStats()
	if len(st) != 1 {
		t.Fatalf("%d schedulers", len(st))
	}
	largest := 0
	for _, tk := range st[0].Ticks {
		largest = max(largest, tk.Size)
	}
	if largest < 2 || st[0].Steps < 6 {
		t.Fatalf("largest pass %d steps (want ≥ 2 with 1 engine slot), %d steps in all", largest, st[0].Steps)
	}
	t.Logf("%d passes for %d steps, largest %d", st[0].Passes, st[0].Steps, largest)
}
