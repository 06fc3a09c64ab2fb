package quant

// bench_test.go: single-thread weight streaming of each format.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchRows×benchCols is gpt2-124M's MLP down projection (768×3072).
const benchRows, benchCols = 768, 3072

// BenchmarkMatVec: one MatVec over a 768×3072 matrix of each type on the
// kernels in use; the MB/s column is weight bytes read per second.
func BenchmarkMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randomVec(r, benchCols)
	out := make([]float32, benchRows)
	for _, typ := range []Type{F32, BF16, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K} {
		w := randomRows(r, typ, benchRows, benchCols)
		b.Run(strings.ToLower(typ.String()), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				MatVec(typ, out, w, x, benchRows, benchCols)
			}
		})
	}
}

// BenchmarkMatMat: MatMat with n inputs against n MatVec calls; MB/s counts
// the weight bytes once per call (so n inputs at the same MB/s cost no more
// weight traffic than one).
func BenchmarkMatMat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []Type{Q8_0, Q4_K} {
		w := randomRows(r, typ, benchRows, benchCols)
		for _, n := range []int{4, 16} {
			xs, outs := make([][]float32, n), make([][]float32, n)
			for i := range xs {
				xs[i], outs[i] = randomVec(r, benchCols), make([]float32, benchRows)
			}
			b.Run(fmt.Sprintf("%s/n=%d/matmat", strings.ToLower(typ.String()), n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					MatMat(typ, outs, w, xs, benchRows, benchCols)
				}
			})
			b.Run(fmt.Sprintf("%s/n=%d/matvecs", strings.ToLower(typ.String()), n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					for i := range xs {
						MatVec(typ, outs[i], w, xs[i], benchRows, benchCols)
					}
				}
			})
		}
	}
}
