package sched

// sessioncount.go: sessions counted per key (a visitor, an address) under
// a limit: the admission check of every new websocket.

import "sync"

// VisitorCount counts something per visitor, under a limit.
type VisitorCount struct {
	mu sync.Mutex
	n  map[string]int
}

// Acquire adds one for v unless v already has limit; it reports whether it did.
func (vc *VisitorCount) Acquire(v string, limit int) (int, bool) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.n == nil {
		vc.n = map[string]int{}
	}
	if vc.n[v] >= limit {
		return vc.n[v], false
	}
	vc.n[v]++
	return vc.n[v], true
}

func (vc *VisitorCount) Release(v string) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.n[v]--; vc.n[v] <= 0 {
		delete(vc.n, v)
	}
}
