package engine

// stream_bench_test.go: how close the decode kernels stream weights to the plain read probe.

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/inferscope/inferscope/internal/enginebench"
)

func unsafeF32(w []uint64) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&w[0])), 2*len(w))
}
func unsafeU16(w []uint64) []uint16 { return unsafe.Slice((*uint16)(unsafe.Pointer(&w[0])), 4*len(w)) }

// BenchmarkStream reads the same 256 MB four ways, alternating in one
// run: the bandwidth probe's vector read (enginebench.ReadSum), the same read in plain
// Go (enginebench.SumWords, the probe where there is no assembly), the F32 gemv
// over it as a [rows][768] matrix, and the BF16 gemv over the same bytes
// as a [rows][1536] matrix, each split across the pool. GB/s is the bytes read.
func BenchmarkStream(b *testing.B) {
	const bytes = 256 << 20
	words := make([]uint64, bytes/8)
	for i := range words {
		// weights of a trained model's size: every 16-bit half is a
		// bfloat16 (and every float32, its upper half) of magnitude
		// 2^-7…2^-5 with a random sign and mantissa, so no weight and no
		// product with x below is subnormal (an Intel core takes a
		// microcode assist for each: an earlier pattern, whose exponents
		// went down to 2^-126, made products underflow and the BF16 gemv
		// look 0.77 of the probe where it streams at 0.9 or more)
		words[i] = uint64(i)*0x9e3779b97f4a7c15&0x80ff80ff80ff80ff | 0x3c003c003c003c00
	}
	f := unsafeF32(words)
	u := unsafeU16(words)
	const d = 768
	rowsF, rowsB := len(f)/d, len(u)/(2*d)
	x := make([]float32, 2*d)
	for i := range x {
		x[i] = 0.001 * float32(i%17)
	}
	outF, outB := make([]float32, rowsF), make([]float32, rowsB)
	sums := make([]uint64, 8*maxWorkers())
	run := map[string]func(){
		"probe": func() {
			parallelFor(len(words), 1<<16, func(w, lo, hi int) { sums[8*w] += enginebench.ReadSum(words[lo:hi]) })
		},
		"probe-go": func() {
			parallelFor(len(words), 1<<16, func(w, lo, hi int) { sums[8*w] += enginebench.SumWords(words[lo:hi]) })
		},
		"gemv-f32": func() {
			parallelForAligned(rowsF, 16, 64, func(_, lo, hi int) { gemvF32(outF[lo:hi], f[lo*d:], d, x, hi-lo, d) })
		},
		"gemv-bf16": func() {
			parallelForAligned(rowsB, 16, 64, func(_, lo, hi int) { gemvBF16(outB[lo:hi], u[lo*2*d:], 2*d, x, hi-lo, 2*d) })
		},
	}
	// prefetch: -1 the next group of rows (the default), 0 none beyond the
	// line being read, >0 that many bytes ahead in the row (AVX-512 kernels)
	for _, name := range []string{"probe", "probe-go", "gemv-f32", "gemv-bf16"} {
		for _, pf := range []int{-1, 0, 1024} {
			if (name == "probe" || name == "probe-go") && pf != -1 {
				continue
			}
			b.Run(fmt.Sprintf("%s/pf=%d", name, pf), func(b *testing.B) {
				defer func(old int) { gemvPrefetch = old }(gemvPrefetch)
				gemvPrefetch = pf
				b.SetBytes(bytes)
				for i := 0; i < b.N; i++ {
					run[name]()
				}
			})
		}
	}
}
