package engine

// pool.go: the worker pool: persistent goroutines that run the parallel regions (static partition).

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool runs one parallel region at a time on n workers: the calling
// goroutine is worker 0, workers 1..n-1 are goroutines started once and kept.
// Between regions a worker spins briefly (a decode step has dozens of
// regions a few microseconds apart), then sleeps on a condition variable,
// so an idle engine costs no CPU.
//
// Each worker has its own static share of a region (the same rows every
// step). A worker claims its share before running it; when the caller has
// finished its own share it claims and runs any share whose worker has not
// woken yet, so a descheduled worker (a busy machine) delays nothing. A
// caller that finds the pool busy (another session's region is running)
// runs its region alone on its own goroutine: sessions never block one
// another here.
//
// A region counts the goroutines computing regions beside it (callers: on
// the pool or alone) and leaves them their cores: with k others it uses at
// most n-k workers (at least one, its caller). So a server running several
// sessions' stages at once keeps about one busy thread per core, and one
// session's stage never takes the whole machine from another's (or from
// the goroutines carrying requests); a lone caller, such as a batched pass
// with nothing beside it, still gets every worker.
type pool struct {
	n    int
	busy sync.Mutex // held by the caller whose region runs on the pool

	gen atomic.Uint32          // bumped to start a region
	cur atomic.Pointer[region] // the region of the latest gen

	parkMu   sync.Mutex
	park     *sync.Cond
	sleepers int

	callers atomic.Int32 // goroutines inside parallelFor now

	reg region // the one region in flight (busy held), reused: a step allocates nothing
}

// region is one parallel region: body on worker share w of [0, n) (see
// share) for each w.
type region struct {
	body                     func(worker, lo, hi int)
	n, align, units, workers int
	claimed                  []atomic.Bool // share w has been taken (by worker w or the caller)
	finished                 atomic.Int32  // shares done
}

// share runs worker w's static share of the region's items.
func (r *region) share(w int) {
	if w >= r.workers {
		return
	}
	lo := min(r.units*w/r.workers*r.align, r.n)
	hi := min(r.units*(w+1)/r.workers*r.align, r.n)
	if lo < hi {
		r.body(w, lo, hi)
	}
}

// spinFor is how long a worker polls for the next region before it sleeps:
// long enough to bridge the serial steps between a decode step's regions
// and between a streamed run's steps (the lab's logits and sample stages
// and its messages: some tens of microseconds; a worker that sleeps there
// wakes late for the next pass's first regions, and a thinned 250-token run
// of the default model on 2 threads ran at 0.67 of the bare loop with 20 µs,
// 0.85 with 100 µs), short enough that an idle or oversubscribed machine
// loses little to it (a region whose worker sleeps is run by its caller;
// see run).
const spinFor = 100 * time.Microsecond

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
		r := p.cur.Load()
		if r != nil && r.claimed[id].CompareAndSwap(false, true) {
			r.share(id)
			r.finished.Add(1)
		}
	}
}

// wait returns once gen differs from seen.
func (p *pool) wait(seen uint32) uint32 {
	var start time.Time
	for i := 0; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i&63 == 63 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				break
			}
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

// run runs every worker share of [0, n) (region.share) and returns when
// all are done. It reports false, having run nothing, when the pool is
// busy. The region is the pool's own, reused: its fields are set before its
// shares are released (claimed reset, an atomic store), so a worker still
// holding it from the last region that claims a share runs this region's.
func (p *pool) run(body func(worker, lo, hi int), n, align, units, workers int) bool {
	if !p.busy.TryLock() {
		return false
	}
	r := &p.reg
	if len(r.claimed) != p.n {
		r.claimed = make([]atomic.Bool, p.n)
	}
	r.body, r.n, r.align, r.units, r.workers = body, n, align, units, workers
	r.finished.Store(0)
	r.claimed[0].Store(true)
	for w := 1; w < p.n; w++ {
		r.claimed[w].Store(false)
	}
	p.cur.Store(r)
	p.gen.Add(1)
	p.parkMu.Lock()
	if p.sleepers > 0 {
		p.park.Broadcast()
	}
	p.parkMu.Unlock()
	r.share(0)
	r.finished.Add(1)
	for w := 1; w < p.n; w++ { // shares no worker has started
		if r.claimed[w].CompareAndSwap(false, true) {
			r.share(w)
			r.finished.Add(1)
		}
	}
	for i := 0; r.finished.Load() != int32(p.n); i++ {
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	p.cur.Store(nil)
	r.body = nil // keep nothing of the region alive
	p.busy.Unlock()
	return true
}

// parallelFor splits [0,n) into one contiguous chunk per worker, each a
// multiple of align items (but the last), and runs fn(worker, lo, hi) on
// each: a static partition, so the same worker gets the same rows every
// step. It uses fewer workers while other goroutines compute regions (see
// pool). With fewer than minWork items per worker, or when the pool is busy
// with another session's region, it runs fn(0, 0, n) on the caller's
// goroutine. How the work is split into items never depends on how many
// workers run it, so results are bit-identical either way (pool_test.go).
// Hooks are always called from the caller's goroutine, never here.
func parallelFor(n, minWork int, fn func(worker, lo, hi int)) {
	parallelForAligned(n, 1, minWork, fn)
}

func parallelForAligned(n, align, minWork int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	p := getPool()
	others := int(p.callers.Add(1)) - 1 // computing regions beside this one
	defer p.callers.Add(-1)
	units := (n + align - 1) / align
	workers := min(p.n-others, units, max(n/max(minWork, 1), 1))
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	if !p.run(fn, n, align, units, workers) {
		fn(0, 0, n)
	}
}

// maxWorkers is how many workers a parallel region may use (worker ids are
// below this).
func maxWorkers() int { return getPool().n }
