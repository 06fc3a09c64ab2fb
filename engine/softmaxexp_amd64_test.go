//go:build amd64 && !purego

package engine

// softmaxexp_amd64_test.go: the AVX2 and the AVX-512 softmax sums kernels
// give the same bits (TestSoftmaxExpEqualsMathExp checks the one in use
// against math.Exp and the lane order).

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestSoftmaxSumsKernelsAgree(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasPOPCNT || !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512DQ || !cpu.X86.HasAVX512VL {
		t.Skip("needs AVX2 and AVX-512 to compare the two")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, scale := range []float64{1, 3, 300} { // 300: lanes outside [−708, 709]
		for _, temp := range []float64{1, 0.7} {
			for _, store := range []bool{true, false} {
				n := 4096
				z := make([]float32, n)
				for i := range z {
					z[i] = float32(r.NormFloat64() * scale)
				}
				if scale > 100 {
					z[5], z[77] = float32(math.NaN()), float32(math.Inf(-1))
				}
				run := func(k func(u, e *float64, z *float32, n int, mx, t float64, sums *[32]float64, store bool) int) ([]float64, []float64, [32]float64, int) {
					u, e := make([]float64, n), make([]float64, n)
					var s [32]float64
					out := k(&u[0], &e[0], &z[0], n, 2, temp, &s, store)
					return u, e, s, out
				}
				u1, e1, s1, o1 := run(softmaxSumsAVX2)
				u2, e2, s2, o2 := run(softmaxSums512)
				if o1 != o2 || scale < 100 && o1 != 0 {
					t.Fatalf("scale %v t %v: outside %d and %d", scale, temp, o1, o2)
				}
				same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
				for i := range s1 {
					if o1 == 0 && !same(s1[i], s2[i]) {
						t.Fatalf("scale %v t %v: lane sum %d: %v and %v", scale, temp, i, s1[i], s2[i])
					}
				}
				if !store {
					continue
				}
				for i := range u1 {
					if !same(u1[i], u2[i]) || (u1[i] >= -708 && u1[i] <= 709) && !same(e1[i], e2[i]) {
						t.Fatalf("scale %v t %v at %d: u %v %v e %v %v", scale, temp, i, u1[i], u2[i], e1[i], e2[i])
					}
				}
			}
		}
	}
}
