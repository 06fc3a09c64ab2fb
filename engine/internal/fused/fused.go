// Package fused computes x·y + z rounded once to float32, as a fused
// multiply-add instruction (VFMADD231PS) does, in portable Go: the
// reference for the engine's and package quant's multiply-adds.
package fused

import "math"

// F32 returns x·y + z rounded once to float32 (round to nearest, ties to
// even). The product is exact in float64 (24 + 24 significant bits) and
// the sum's rounding error is recovered exactly (Knuth's TwoSum), so the
// one case where rounding the float64 sum again to float32 would differ
// from a single rounding (the float64 sum landing exactly halfway between
// two float32 values while the exact sum is not) is settled by the error's
// sign. math.FMA's float64 result alone is not enough: x = 2⁻¹²(1+2⁻²³),
// y = 2⁻¹²(1−2⁻²³), z = 1+2⁻²³ rounds twice to 1+2⁻²² where the fused
// result is 1+2⁻²³ (TestF32).
func F32(x, y, z float32) float32 {
	p, c := float64(x)*float64(y), float64(z)
	s := p + c
	// s rounds to float32 as the exact sum does unless it lies exactly
	// halfway between two float32 values: for a normal float32 that is the
	// 29 bits below float32's last one reading 1000…0
	if math.Float64bits(s)&(1<<29-1) != 1<<28 && math.Abs(s) >= 0x1p-126 {
		return float32(s)
	}
	b := s - p
	e := (p - (s - b)) + (c - b) // s + e == p + c exactly
	f := float32(s)
	if e == 0 || float64(f) == s || math.IsInf(float64(f), 0) || e != e {
		return f
	}
	// s lies strictly between two float32 values; only an exact midpoint
	// can round the wrong way
	o := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), s-float64(f))))
	if s-float64(f) != float64(o)-s {
		return f
	}
	if (e > 0) == (o > f) {
		return o
	}
	return f
}
