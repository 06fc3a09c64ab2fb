package engine

// scalediv_test.go: scaleDiv equals the scalar loop bit for bit.

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestScaleDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 120, 257} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.ExpFloat64() * 1e-3)
		}
		if n > 3 {
			src[1], src[2], src[3] = 0, float32(math.Inf(1)), float32(math.NaN())
		}
		for _, cd := range [][2]float32{{1, 3.7}, {0.25, 1.5}, {3e-8, 7e-3}, {1, 0}} {
			got := make([]float32, n)
			scaleDiv(got, src, cd[0], cd[1])
			for i, x := range src {
				want := float32(x*cd[0]) / cd[1]
				if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
					t.Fatalf("n %d c %v d %v at %d: %v, want %v", n, cd[0], cd[1], i, got[i], want)
				}
			}
		}
	}
}
