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
