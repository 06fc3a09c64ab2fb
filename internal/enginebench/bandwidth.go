// Package enginebench holds the bench command's measuring tools that need
// nothing inside the engine: a memory read-bandwidth probe (the bound that
// decode speed is compared with).
package enginebench

// bandwidth.go: the read-bandwidth probe: vector loads of whole cache lines
// on every thread, independent of the engine's matmul kernels.

import (
	"runtime"
	"sync"
	"time"
)

// ReadBandwidthRuns estimates how fast this machine streams memory with
// `threads` goroutines (0 = GOMAXPROCS), in bytes/second, once per run
// (runs ≥ 1). It is independent of the engine's kernels: each goroutine
// sums the 64-bit words of its share of a buffer of `bytes` (much larger
// than the caches) with the widest vector loads the CPU has (ReadProbe
// names them; plain Go where there is no assembly), so the loop does
// nothing but load and add. A caller takes the best run or the median (on
// a loaded machine the best run catches a quiet moment that a long decode
// cannot).
func ReadBandwidthRuns(bytes, threads, runs int) []float64 {
	p := NewBandwidthProbe(bytes)
	var out []float64
	for run := 0; run < max(runs, 1); run++ {
		out = append(out, p.Run(threads))
	}
	return out
}

// BandwidthProbe is the probe's buffer, kept between runs so that a caller
// can interleave single runs with the work it compares them with.
type BandwidthProbe struct {
	buf  []uint64
	sums []uint64 // per thread, one cache line apart
}

// NewBandwidthProbe allocates and touches a buffer of bytes (rounded down
// to 8; at least 8), so no run pays a page fault.
func NewBandwidthProbe(bytes int) *BandwidthProbe {
	buf := make([]uint64, max(bytes/8, 1))
	for i := range buf {
		buf[i] = uint64(i)
	}
	return &BandwidthProbe{buf: buf}
}

// Bytes is what one run reads.
func (p *BandwidthProbe) Bytes() int { return 8 * len(p.buf) }

// Run streams the whole buffer once on `threads` goroutines (0 =
// GOMAXPROCS), each reading its own contiguous share, and returns
// bytes/second.
func (p *BandwidthProbe) Run(threads int) float64 {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if len(p.sums) < 8*threads {
		p.sums = make([]uint64, 8*threads)
	}
	n := len(p.buf)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < threads; w++ {
		// shares start on a 64-byte line (8 words), as the buffer does
		lo, hi := n*w/threads&^7, n*(w+1)/threads&^7
		if w == threads-1 {
			hi = n
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.sums[w*8] += ReadSum(p.buf[lo:hi])
		}()
	}
	wg.Wait()
	return float64(8*n) / time.Since(start).Seconds()
}

// readSumVec is the vector read loop (bandwidth_amd64.s); nil where there
// is none. It takes a multiple of 32 words.
var (
	readSumVec    func(p *uint64, n int) uint64
	readProbeName = "go"
)

// ReadProbe names the probe's read loop: "avx512", "avx2" or "go".
func ReadProbe() string { return readProbeName }

// ReadSum is Σ s (wrapping), with the probe's vector loop where there is
// one: the probe's whole work on one share, exported so that the engine's
// streaming benchmark can run it on the engine's own worker pool.
func ReadSum(s []uint64) uint64 {
	var t uint64
	if n := len(s) &^ 31; readSumVec != nil && n > 0 {
		t = readSumVec(&s[0], n)
		s = s[n:]
	}
	return t + SumWords(s)
}

// SumWords adds up s in plain Go with eight independent accumulators, so
// the loop is limited by memory, not by the adds (the probe where there is
// no assembly).
func SumWords(s []uint64) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	for len(s) >= 8 {
		a0 += s[0]
		a1 += s[1]
		a2 += s[2]
		a3 += s[3]
		a4 += s[4]
		a5 += s[5]
		a6 += s[6]
		a7 += s[7]
		s = s[8:]
	}
	for _, v := range s {
		a0 += v
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}
