package engine

// headrows_bench_test.go: the shared head pass (headRows) alone, for 1 and 12 vectors.

import (
	"fmt"
	"testing"
)

// BenchmarkHeadRows: gpt2-124M's head (50257 × 768) applied to n vectors in
// one pass; GFLOP/s counts 2 flops per weight per vector.
func BenchmarkHeadRows(b *testing.B) {
	const V, d = 50257, 768
	w := make([]float32, V*d)
	for i := range w {
		w[i] = float32(i%13) * 0.01
	}
	h := NewMat(w, V, d)
	for _, n := range []int{1, 12} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			xs, outs := make([][]float32, n), make([][]float32, n)
			for i := range xs {
				xs[i], outs[i] = make([]float32, d), make([]float32, V)
				for j := range xs[i] {
					xs[i][j] = float32((i+j)%7) * 0.1
				}
			}
			for i := 0; i < b.N; i++ {
				headRows(&h, xs, outs)
			}
			b.ReportMetric(2*float64(n)*V*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
