package quant

// half.go: IEEE half (fp16) and bfloat16 conversions, as ggml and numpy do them.

import "math"

// F16ToF32 widens an IEEE binary16 value (exact: every half is a float32).
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // inf, NaN (payload kept)
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// subnormal: man·2⁻²⁴, exact in float32
	f := float32(man) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// F32ToF16 rounds a float32 to the nearest binary16, ties to even, with
// subnormals, overflow to ±inf and NaN kept a NaN: the conversion of numpy's
// astype(float16) and of x86's VCVTPS2PH (ggml's GGML_FP32_TO_FP16 with F16C).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		h := uint16(0x7c00 | man>>13)
		if h == 0x7c00 { // a payload only in the low bits: still a NaN
			h++
		}
		return sign | h // the payload's top bits kept, as numpy does
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// subnormal half (or zero): |f| in units of 2⁻²⁴, rounded to even; exact in float64
		v := math.RoundToEven(math.Abs(float64(f)) * (1 << 24))
		return sign | uint16(v) // v ≤ 1024: 1024 is the smallest normal, encoded the same way
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry out of the mantissa steps the exponent, to inf at the top
	}
	return sign | uint16(h)
}

// BF16ToF32 widens a bfloat16 value.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds to the nearest bfloat16, ties to even, and makes a NaN
// quiet: ggml_compute_fp32_to_bf16 (and gguf-py's BF16.quantize_blocks).
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((uint64(u) + 0x7fff + uint64(u>>16&1)) >> 16)
}
