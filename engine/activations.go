package engine

// activations.go: the element-wise functions (exp, SiLU, tanh-GELU) in float32, split across workers.

import "math"

// expf is e^x in float32 (Cephes' expf: x = k·ln2 + r, |r| ≤ ln2/2, a
// degree-6 polynomial for e^r, then ·2^k), within 2 ulp of the float64
// result and several times faster than math.Exp.
//
// Every product that an add follows is rounded by an explicit float32(...)
// conversion, which the Go spec says prevents fusing the two into one FMA:
// so the result is the same with any GOAMD64 level, and the same as the
// SIMD kernels' (activations_amd64.s), which round each operation.
func expf(x float32) float32 {
	switch {
	case x != x: // NaN
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.33654: // the result is subnormal or 0: rare, take the slow path
		return float32(math.Exp(float64(x)))
	}
	k := float32(math.Floor(float64(float32(x*1.442695041) + 0.5)))
	r := x - float32(k*0.693359375) + float32(k*2.12194440e-4)
	p := float32(1.9875691500e-4)
	p = float32(p*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	p = float32(float32(p*r)*r) + r + 1
	e := int32(k)
	if e > 127 { // 2^128 is not a float32: scale in two steps
		p *= 2
		e--
	}
	return p * math.Float32frombits(uint32(e+127)<<23)
}

// silu is x·σ(x).
func silu(x float32) float32 { return x / (1 + expf(-x)) }

// geluTanh is GPT-2's GELU: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// with tanh(u) = 1 − 2/(1 + e^{2u}).
func geluTanh(x float32) float32 {
	const k = 0.7978845608028654 // sqrt(2/pi)
	// the cube term is rounded before the add: no FMA (see expf)
	u := k * (x + float32(0.044715*x*x*x))
	return 0.5 * x * (2 - 2/(1+expf(2*u)))
}

// swiglu sets hb[i] = silu(hb[i])·up[i] for i < n, split across workers.
func swiglu(hb, up []float32, n int) {
	parallelFor(n, 2048, func(_, lo, hi int) { swigluRange(hb[lo:hi], up[lo:hi]) })
}

// swigluRange is swiglu on h, u (one worker's share).
func swigluRange(h, u []float32) {
	k := kern
	for i := 0; i < len(h); {
		if k.swiglu != nil {
			i += k.swiglu(h[i:], u[i:])
		}
		// the group the kernel stopped at (or the tail): scalar
		for e := min(i+8, len(h)); i < e; i++ {
			h[i] = silu(h[i]) * u[i]
		}
	}
}

// gelu applies geluTanh to x[:n], split across workers.
func gelu(x []float32, n int) {
	parallelFor(n, 2048, func(_, lo, hi int) { geluRange(x[lo:hi]) })
}

// geluRange is gelu on s (one worker's share).
func geluRange(s []float32) {
	k := kern
	for i := 0; i < len(s); {
		if k.gelu != nil {
			i += k.gelu(s[i:])
		}
		for e := min(i+8, len(s)); i < e; i++ {
			s[i] = geluTanh(s[i])
		}
	}
}
