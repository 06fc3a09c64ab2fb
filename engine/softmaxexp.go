package engine

// softmaxexp.go: a softmax's exponentials, u = (z − max)/t and e^u for
// every logit, equal bit for bit to computing them one at a time with
// math.Exp — four lanes at a time with AVX2+FMA (softmaxexp_amd64.go),
// where math.Exp itself takes its FMA path and the vector kernel repeats
// its operations in its order.

import "math"

// softmaxExpSIMD computes the first n (a multiple of 4) entries and
// returns how many lanes it left for math.Exp (u outside [−708, 709], or
// NaN); nil without the CPU features.
var softmaxExpSIMD func(u, e []float64, z []float32, n int, mx, t float64) int

// expShiftedSIMD sets x[i] = float32(math.Exp(float64(x[i] − mx))) for a
// prefix of x and returns its length; nil without the CPU features.
var expShiftedSIMD func(x []float32, mx float32) int

// expShifted sets x[i] = float32(math.Exp(float64(x[i] − mx))) for every
// i: the attention softmax's exponentials, bit for bit.
func expShifted(x []float32, mx float32) {
	done := 0
	if expShiftedSIMD != nil {
		done = expShiftedSIMD(x, mx)
	}
	for i := done; i < len(x); i++ {
		x[i] = float32(math.Exp(float64(x[i] - mx)))
	}
}

// SoftmaxExp sets u[i] = (float64(z[i]) − mx) / t and e[i] = math.Exp(u[i])
// for every i < len(z); u and e must hold len(z) values.
func SoftmaxExp(u, e []float64, z []float32, mx, t float64) {
	n := len(z)
	u, e = u[:n], e[:n]
	done := 0
	if softmaxExpSIMD != nil && n >= 4 {
		done = n &^ 3
		if softmaxExpSIMD(u, e, z, done, mx, t) > 0 {
			for i, x := range u[:done] {
				if !(x >= -708 && x <= 709) {
					e[i] = math.Exp(x)
				}
			}
		}
	}
	for i := done; i < n; i++ {
		u[i] = (float64(z[i]) - mx) / t
		e[i] = math.Exp(u[i])
	}
}

// softmaxSumsKernel is softmaxExpSIMD for n a multiple of 16, also filling
// sums with SoftmaxSums's sixteen lanes of each sum (u and e nil: the sums
// alone), and reports whether it ran (false without the CPU features:
// softmaxexp_amd64.go, softmaxexp_other.go). When it returns outside > 0
// (lanes left for math.Exp) the exponentials and the sums are the
// caller's to redo. A direct call, not a function value, so sums stays on
// the caller's stack.

// softmaxSumsGo, set by tests, takes the Go path on any CPU.
var softmaxSumsGo bool

// SoftmaxSums is SoftmaxExp, and returns what a softmax and its entropy
// need of the exponentials: Σ e[i], and Σ e[i]·u[i] over the e[i] > 0
// (the entropy is log Σe − Σe·u / Σe), both in the lane order (LaneSum),
// computed as the exponentials are. With u and e nil it returns the sums
// alone (nothing is written for each logit, nothing allocated).
func SoftmaxSums(u, e []float64, z []float32, mx, t float64) (sum, eu float64) {
	n, n16 := len(z), len(z)&^15
	one := func(i int) (x, y float64) { // logit i's u and e, stored when asked
		x = (float64(z[i]) - mx) / t
		y = math.Exp(x)
		if u != nil {
			u[i], e[i] = x, y
		}
		return x, y
	}
	var s [32]float64
	outside, ran := 0, false
	if !softmaxSumsGo && n16 > 0 {
		outside, ran = softmaxSumsKernel(u, e, z, n16, mx, t, &s)
	}
	if !ran || outside > 0 {
		// no kernel, or lanes it left for math.Exp: every value here, one
		// at a time, into the same lanes
		s = [32]float64{}
		for i := range n16 {
			x, y := one(i)
			s[i%16] += y
			s[16+i%16] = addPositive(s[16+i%16], y, x)
		}
	}
	sum, eu = CombineLanes((*[16]float64)(s[:16])), CombineLanes((*[16]float64)(s[16:]))
	for i := n16; i < n; i++ {
		x, y := one(i)
		sum, eu = sum+y, addPositive(eu, y, x)
	}
	return sum, eu
}

// addPositive is acc + e·u where e > 0, else acc (where e^u is 0, u may be
// −Inf).
func addPositive(acc, e, u float64) float64 {
	if e > 0 {
		return acc + float64(e*u) // rounded product, as the kernels: no fused multiply-add
	}
	return acc
}
