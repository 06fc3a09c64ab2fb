package quant

// bench_test.go: single-thread weight streaming of each format.
//
// Each benchmark also reports cpu-ns/op, the process's CPU time per
// operation: on a machine shared with other work the wall-clock ns/op
// counts the time the thread waited for a core, CPU time does not.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/cputime"
)

// loopCPU runs f b.N times (b.Loop) and reports the CPU time per call.
func loopCPU(b *testing.B, f func()) {
	c0, n := cputime.Process(), 0
	for b.Loop() {
		f()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64(cputime.Process()-c0)/float64(n), "cpu-ns/op")
	}
}

// kernelSets are the kernel sets a benchmark compares on this machine:
// "avx2" (one row at a time) and, where the CPU has it, "avx512" (four
// rows at a time for the types that have such a kernel); "go" elsewhere.
func kernelSets() []string {
	switch {
	case simd == nil || !useSIMD:
		return []string{"go"}
	case use512:
		return []string{"avx2", "avx512"}
	}
	return []string{"avx2"}
}

// withKernels runs f with the named kernel set in use.
func withKernels(set string, f func()) {
	defer func(old bool) { use512 = old }(use512)
	use512 = set == "avx512"
	f()
}

// benchRows×benchCols is gpt2-124M's MLP down projection (768×3072).
const benchRows, benchCols = 768, 3072

// BenchmarkMatVec: one MatVec over a 768×3072 matrix of each type on each
// kernel set (kernelSets: avx2 and avx512 side by side in one run); the
// MB/s column is weight bytes read per second.
//
//	go test ./engine/quant -run - -bench 'MatVec/q6_k' -count 5
func BenchmarkMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randomVec(r, benchCols)
	out := make([]float32, benchRows)
	for _, typ := range []Type{F32, BF16, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K} {
		w := randomRows(r, typ, benchRows, benchCols)
		for _, set := range kernelSets() {
			b.Run(strings.ToLower(typ.String())+"/"+set, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				withKernels(set, func() {
					loopCPU(b, func() { MatVec(typ, out, w, x, benchRows, benchCols) })
				})
			})
		}
	}
}

// BenchmarkMatVecLarge is BenchmarkMatVec on a 16384×3072 matrix (41 MB
// of Q6_K), far past the L2 cache: the weights stream from memory, as a
// model's do in decode.
//
//	go test ./engine/quant -run - -bench MatVecLarge -count 3 -benchtime 20x
func BenchmarkMatVecLarge(b *testing.B) {
	const rows, cols = 16384, 3072
	r := rand.New(rand.NewPCG(1, 3))
	x := randomVec(r, cols)
	out := make([]float32, rows)
	for _, typ := range []Type{Q8_0, Q4_0, Q4_K, Q6_K} {
		w := randomRows(r, typ, rows, cols)
		for _, set := range kernelSets() {
			b.Run(strings.ToLower(typ.String())+"/"+set, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				withKernels(set, func() {
					loopCPU(b, func() { MatVec(typ, out, w, x, rows, cols) })
				})
			})
		}
	}
}

// BenchmarkMatMat: MatMat with n inputs against n MatVec calls; MB/s counts
// the weight bytes once per call (so n inputs at the same MB/s cost no more
// weight traffic than one).
func BenchmarkMatMat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []Type{Q8_0, Q4_K} {
		w := randomRows(r, typ, benchRows, benchCols)
		for _, n := range []int{4, 16, 32} {
			xs, outs := make([][]float32, n), make([][]float32, n)
			for i := range xs {
				xs[i], outs[i] = randomVec(r, benchCols), make([]float32, benchRows)
			}
			b.Run(fmt.Sprintf("%s/n=%d/matmat", strings.ToLower(typ.String()), n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				loopCPU(b, func() { MatMat(typ, outs, w, xs, benchRows, benchCols) })
			})
			b.Run(fmt.Sprintf("%s/n=%d/matvecs", strings.ToLower(typ.String()), n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				loopCPU(b, func() {
					for i := range xs {
						MatVec(typ, outs[i], w, xs[i], benchRows, benchCols)
					}
				})
			})
		}
	}
}

// BenchmarkMatMat6Kernel: the six-row AVX-512 step alone (matmat6) over one
// 768-value chunk, for 2 inputs (everything in L1) and 32 (the inputs from
// L2, as in a batched pass); GFLOP/s from the CPU time.
//
//	go test ./engine/quant -run - -bench MatMat6Kernel -count 3
func BenchmarkMatMat6Kernel(b *testing.B) {
	if matmat6 == nil || !use512 || !useSIMD {
		b.Skip("no AVX-512 six-row kernel on this machine")
	}
	r := rand.New(rand.NewPCG(1, 4))
	for _, n := range []int{2, 32} {
		xs := make([][]float32, n)
		for i := range xs {
			xs[i] = randomVec(r, mm6Chunk)
		}
		accs, xp := make([][32]float32, mm6Rows*n), make([]*float32, n)
		for i := range xs {
			xp[i] = &xs[i][0]
		}
		sc := mmPool.Get().(*mmScratch)
		copy(sc.buf, randomVec(r, len(sc.buf)))
		pf := make([]byte, 64)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c0, k := cputime.Process(), 0
			for b.Loop() {
				matmat6(accs, sc.buf, xp, mm6Chunk, 0, mm6Chunk, pf, 0, k == 0)
				k++
			}
			if k > 0 {
				b.ReportMetric(float64(2*mm6Rows*n*mm6Chunk)/(float64(cputime.Process()-c0)/float64(k)), "GFLOP/s")
			}
		})
		mmPool.Put(sc)
	}
}
