package engine

// pool.go: the worker pool: persistent goroutines that run the parallel regions (static partition).

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// pool runs one parallel region at a time on n workers: the calling
// goroutine is worker 0, workers 1..n-1 are goroutines started once and kept.
// Between regions a worker spins briefly (a decode step has dozens of
// regions a few microseconds apart), then sleeps on a condition variable,
// so an idle engine costs no CPU. A caller that finds the pool busy (another
// session's region is running) runs its region alone on its own goroutine
// instead of waiting: sessions never block one another here.
type pool struct {
	n    int
	busy sync.Mutex // held by the caller whose region runs on the pool

	gen  atomic.Uint32 // bumped to start a region
	left atomic.Int32  // workers 1..n-1 still running the region
	fn   func(w int)   // the region; written before gen is bumped

	parkMu   sync.Mutex
	park     *sync.Cond
	sleepers int
}

// spinLimit is how many polls a worker makes before it sleeps (tens of µs).
const spinLimit = 1 << 15

var (
	thePool     *pool
	thePoolOnce sync.Once
)

// The workers start with the package (they sleep until the first region),
// so they exist before any test takes a goroutine snapshot.
func init() { getPool() }

func getPool() *pool {
	thePoolOnce.Do(func() {
		p := &pool{n: max(runtime.GOMAXPROCS(0), 1)}
		p.park = sync.NewCond(&p.parkMu)
		for w := 1; w < p.n; w++ {
			go p.worker(w)
		}
		thePool = p
	})
	return thePool
}

func (p *pool) worker(id int) {
	var seen uint32
	for {
		seen = p.wait(seen)
		p.fn(id)
		p.left.Add(-1)
	}
}

// wait returns once gen differs from seen.
func (p *pool) wait(seen uint32) uint32 {
	for i := 0; i < spinLimit; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	p.parkMu.Lock()
	p.sleepers++
	for p.gen.Load() == seen {
		p.park.Wait()
	}
	p.sleepers--
	g := p.gen.Load()
	p.parkMu.Unlock()
	return g
}

// run calls fn(w) for every worker w in 0..n-1 and returns when all are
// done. It reports false, having run nothing, when the pool is busy.
func (p *pool) run(fn func(w int)) bool {
	if !p.busy.TryLock() {
		return false
	}
	p.fn = fn
	p.left.Store(int32(p.n - 1))
	p.gen.Add(1)
	p.parkMu.Lock()
	if p.sleepers > 0 {
		p.park.Broadcast()
	}
	p.parkMu.Unlock()
	fn(0)
	for i := 0; p.left.Load() != 0; i++ {
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	p.fn = nil
	p.busy.Unlock()
	return true
}

// parallelFor splits [0,n) into one contiguous chunk per worker, each a
// multiple of align items (but the last), and runs fn(worker, lo, hi) on
// each: a static partition, so the same worker gets the same rows every
// step. With fewer than minWork items per worker, or when the pool is busy
// with another session's region, it runs fn(0, 0, n) on the caller's
// goroutine. Hooks are always called from the caller's goroutine, never here.
func parallelFor(n, minWork int, fn func(worker, lo, hi int)) {
	parallelForAligned(n, 1, minWork, fn)
}

func parallelForAligned(n, align, minWork int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	p := getPool()
	units := (n + align - 1) / align
	workers := min(p.n, units, max(n/max(minWork, 1), 1))
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	ok := p.run(func(w int) {
		if w >= workers {
			return
		}
		lo := min(units*w/workers*align, n)
		hi := min(units*(w+1)/workers*align, n)
		if lo < hi {
			fn(w, lo, hi)
		}
	})
	if !ok {
		fn(0, 0, n)
	}
}

// maxWorkers is how many workers a parallel region may use (worker ids are
// below this).
func maxWorkers() int { return getPool().n }
