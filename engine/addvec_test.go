package engine

// addvec_test.go: addVec equals the scalar loop bit for bit, at every length
// around the kernel's 8- and 32-value steps, and leaves dst past src alone.

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAddVec(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 100, 768, 2307} {
		src, dst := make([]float32, n), make([]float32, n+3)
		for i := range src {
			src[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		}
		for i := range dst {
			dst[i] = float32(r.NormFloat64())
		}
		if n > 4 {
			src[1], src[2], dst[3], src[4] = float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1)), -dst[4]
		}
		want := append([]float32(nil), dst...)
		for i, v := range src {
			want[i] += v
		}
		addVec(dst, src)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) && !(dst[i] != dst[i] && want[i] != want[i]) {
				t.Fatalf("n %d at %d: %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}
