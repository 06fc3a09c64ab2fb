//go:build amd64 && !purego

package engine

// norm_amd64.go: the AVX2 normalization loops (norm_amd64.s), called
// directly (a call through a function value would move the caller's lane
// sums to the heap).

import "golang.org/x/sys/cpu"

//go:noescape
func sumSqLanesAVX2(acc *[16]float32, x *float32, n int, mean float32)

//go:noescape
func sumLanesAVX2(acc *[16]float32, x *float32, n int)

//go:noescape
func rmsScaleAVX2(out, x, gain *float32, n int, inv, one float32)

//go:noescape
func lnScaleAVX2(out, x, gain, b *float32, n int, mean, inv float32)

// normSIMD reports whether the loops run (tests turn them off to compare).
var normSIMD = cpu.X86.HasAVX2

func normSumSq(acc *[16]float32, x []float32, mean float32) {
	if len(x) == 0 || len(x)%16 != 0 {
		panic("engine: norm sum: bad shape")
	}
	sumSqLanesAVX2(acc, &x[0], len(x), mean)
}

func normSum(acc *[16]float32, x []float32) {
	if len(x) == 0 || len(x)%16 != 0 {
		panic("engine: norm sum: bad shape")
	}
	sumLanesAVX2(acc, &x[0], len(x))
}

func normRMSScale(out, x, g []float32, inv, one float32) {
	if n := len(x); n == 0 || n%8 != 0 || len(out) < n || len(g) < n {
		panic("engine: rmsnorm: bad shape")
	}
	rmsScaleAVX2(&out[0], &x[0], &g[0], len(x), inv, one)
}

func normLNScale(out, x, g, b []float32, mean, inv float32) {
	if n := len(x); n == 0 || n%8 != 0 || len(out) < n || len(g) < n || len(b) < n {
		panic("engine: layernorm: bad shape")
	}
	lnScaleAVX2(&out[0], &x[0], &g[0], &b[0], len(x), mean, inv)
}
