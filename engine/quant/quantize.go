package quant

// quantize.go: float32 rows to blocks, following ggml's reference
// quantizers (quantize_row_*_ref in ggml-quants.c) and gguf-py's
// quantize_blocks, which give the same bytes.

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Quantize writes len(src) values (a multiple of t's block size) as type t
// into dst, which must be exactly their size. It supports F32, F16, BF16,
// Q8_0, Q4_0 and Q4_K (quantize_k.go).
func Quantize(t Type, dst []byte, src []float32) error {
	if len(src) == 0 {
		if len(dst) != 0 {
			return fmt.Errorf("quant: Quantize: %d bytes for 0 values", len(dst))
		}
		return nil
	}
	n, err := t.RowBytes(len(src))
	if err != nil {
		return err
	}
	if len(dst) != n {
		return fmt.Errorf("quant: Quantize: %d %s values take %d bytes, not %d", len(src), t, n, len(dst))
	}
	switch t {
	case F32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case F16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(v))
		}
	case BF16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
		}
	case Q8_0:
		for b := 0; b < len(src)/32; b++ {
			quantizeQ8_0(dst[34*b:34*b+34], src[32*b:32*b+32])
		}
	case Q4_0:
		for b := 0; b < len(src)/32; b++ {
			quantizeQ4_0(dst[18*b:18*b+18], src[32*b:32*b+32])
		}
	case Q4_K:
		for b := 0; b < len(src)/QK_K; b++ {
			quantizeQ4_K(dst[144*b:144*b+144], src[QK_K*b:QK_K*b+QK_K])
		}
	default:
		return fmt.Errorf("quant: quantizing to %s is not implemented (F32, F16, BF16, Q8_0, Q4_0 and Q4_K are)", t)
	}
	return nil
}

// quantizeQ8_0 is quantize_row_q8_0_ref for one block: d = max|x|/127,
// q = round(x/d) (half away from zero), d stored as fp16.
func quantizeQ8_0(y []byte, x []float32) {
	x = x[:32]
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, F32ToF16(d))
	for j, v := range x {
		y[2+j] = byte(int8(math.Round(float64(v * id))))
	}
}

// quantizeQ4_0 is quantize_row_q4_0_ref for one block: d = m/−8 for m the
// value of largest magnitude (the first such), q = min(15, trunc(x/d + 8.5)).
func quantizeQ4_0(y []byte, x []float32) {
	x = x[:32]
	var amax, vmax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); amax < a {
			amax, vmax = a, v
		}
	}
	d := vmax / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, F32ToF16(d))
	for j := range 16 {
		x0 := float32(x[j]*id) + 8.5 // the conversion stops a fused multiply-add
		x1 := float32(x[16+j]*id) + 8.5
		y[2+j] = byte(min(15, int8(x0))) | byte(min(15, int8(x1)))<<4
	}
}
