package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNormSIMDBitExact: RMSNorm (with and without Gemma's 1 + weight) and
// LayerNorm give the same bits with the SIMD loops and with the Go ones,
// for row widths with and without a partial last group of lanes, rows
// written in place and not.
func TestNormSIMDBitExact(t *testing.T) {
	if !normSIMD {
		t.Skip("this machine/build has no SIMD norm loops: there is only the Go path")
	}
	r := rand.New(rand.NewPCG(3, 3))
	for _, d := range []int{1, 7, 8, 15, 16, 17, 33, 64, 100, 576, 768, 2055} {
		for _, T := range []int{1, 3} {
			x := make([]float32, T*d)
			g, b := make([]float32, d), make([]float32, d)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2)))
			}
			for i := range g {
				g[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			run := func(simd bool, f func(out []float32)) []float32 {
				defer func(old bool) { normSIMD = old }(normSIMD)
				normSIMD = simd
				out := make([]float32, len(x))
				f(out)
				return out
			}
			for _, tc := range []struct {
				name string
				f    func(out []float32)
			}{
				{"rmsnorm", func(out []float32) { rmsnorm(out, x, g, T, d, 1e-5, false) }},
				{"rmsnorm-plus-one", func(out []float32) { rmsnorm(out, x, g, T, d, 1e-6, true) }},
				{"rmsnorm-in-place", func(out []float32) { copy(out, x); rmsnorm(out, out, g, T, d, 1e-5, false) }},
				{"layernorm", func(out []float32) { layernorm(out, x, g, b, T, d, 1e-5) }},
				{"layernorm-in-place", func(out []float32) { copy(out, x); layernorm(out, out, g, b, T, d, 1e-5) }},
			} {
				t.Run(fmt.Sprintf("%s/d%d/T%d", tc.name, d, T), func(t *testing.T) {
					want, got := run(false, tc.f), run(true, tc.f)
					for i := range want {
						if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
							t.Fatalf("value %d: SIMD %g, Go %g", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestNormSums: the 16-lane sums against float64 sums (they are the
// norms' statistics, so a lane mix-up would show here as a wrong value).
func TestNormSums(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 15, 16, 17, 576, 3000} {
		x := make([]float32, n)
		var s, sq float64
		for i := range x {
			x[i] = float32(r.NormFloat64())
			s += float64(x[i])
			sq += float64(x[i]-0.25) * float64(x[i]-0.25)
		}
		if got := sumLanes(x); math.Abs(float64(got)-s) > 1e-5*math.Max(1, math.Abs(s))*math.Sqrt(float64(n)) {
			t.Errorf("n=%d: sumLanes %g, float64 %g", n, got, s)
		}
		if got := sumSquares(x, 0.25); math.Abs(float64(got)-sq) > 1e-6*sq*math.Sqrt(float64(n)) {
			t.Errorf("n=%d: sumSquares %g, float64 %g", n, got, sq)
		}
	}
}
