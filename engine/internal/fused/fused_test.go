package fused

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// f32Exact is x·y + z rounded once to float32 through exact big.Float
// arithmetic.
func f32Exact(x, y, z float32) float32 {
	if math.IsNaN(float64(x)) || math.IsNaN(float64(y)) || math.IsNaN(float64(z)) ||
		math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) {
		return float32(float64(x)*float64(y) + float64(z))
	}
	p := new(big.Float).SetPrec(1000).SetFloat64(float64(x))
	p.Mul(p, new(big.Float).SetFloat64(float64(y)))
	p.Add(p, new(big.Float).SetFloat64(float64(z)))
	if p.Sign() == 0 { // the sign of an exact zero: IEEE's rules for x·y + z
		return float32(float64(x)*float64(y) + float64(z))
	}
	f, _ := p.Float32()
	return f
}

func TestF32(t *testing.T) {
	type c struct{ x, y, z float32 }
	cases := []c{
		// the float64 sum lands exactly halfway: rounding it again goes to even, wrongly
		{float32(math.Ldexp(1+0x1p-23, -12)), float32(math.Ldexp(1-0x1p-23, -12)), 1 + 0x1p-23},
		{float32(math.Ldexp(1+0x1p-23, -12)), float32(math.Ldexp(1+0x1p-23, -12)), 1},
		{-float32(math.Ldexp(1+0x1p-23, -12)), float32(math.Ldexp(1-0x1p-23, -12)), -(1 + 0x1p-23)},
		{1, 1, -1}, {0, -1, 0}, {float32(math.Copysign(0, -1)), 1, 0}, {3, 5, 7},
		{math.MaxFloat32, 2, -math.MaxFloat32}, {math.MaxFloat32, 2, 0},
		{0x1p-149, 0.5, 0}, {0x1p-149, 0.5, 0x1p-149}, {0x1p-126, 0x1p-20, -0x1p-149},
		{float32(math.Inf(1)), 1, 2}, {float32(math.NaN()), 1, 2},
	}
	r := rand.New(rand.NewPCG(7, 7))
	f := func() float32 {
		m := 1 + r.Float64()
		if r.IntN(2) == 0 {
			m = -m
		}
		return float32(math.Ldexp(m, r.IntN(60)-30))
	}
	for range 200000 {
		x, y := f(), f()
		// z near x·y's size and far from it, and products that nearly cancel z
		z := f()
		switch r.IntN(3) {
		case 0:
			z = -float32(float64(x) * float64(y) * (1 + (r.Float64()-0.5)*0x1p-20))
		case 1:
			z = float32(math.Ldexp(1+float64(r.IntN(1<<23))*0x1p-23, r.IntN(20)-10))
		}
		cases = append(cases, c{x, y, z})
	}
	bad := 0
	for _, tc := range cases {
		got, want := F32(tc.x, tc.y, tc.z), f32Exact(tc.x, tc.y, tc.z)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			if bad++; bad <= 5 {
				t.Errorf("F32(%g, %g, %g) = %g (%#x), want %g (%#x)", tc.x, tc.y, tc.z, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
	// the first case is the one a float64 FMA rounded again gets wrong
	tc := cases[0]
	if float32(math.FMA(float64(tc.x), float64(tc.y), float64(tc.z))) == F32(tc.x, tc.y, tc.z) {
		t.Errorf("the double-rounding case no longer rounds differently through float64: the test lost its point")
	}
}
