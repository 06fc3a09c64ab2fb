package engine

// kvprec.go: the KV cache's precision: float32, or 16 bits per value (IEEE
// half or bfloat16, as llama.cpp's --cache-type-k/-v f16 and bf16 keep it),
// which halves the cache's memory and the bytes attention reads per token.
// A value is rounded once, to nearest even, when its row is written; every
// reader (attention, the lab's KV panel) sees the same rounded value.

import (
	"fmt"
	"strings"

	"github.com/inferscope/inferscope/engine/quant"
)

// KVPrec is how the KV cache stores each key and value.
type KVPrec uint8

const (
	KVF32  KVPrec = iota // float32: the values as computed
	KVF16                // IEEE binary16: 10 mantissa bits, range ±65504
	KVBF16               // bfloat16: float32's range, 7 mantissa bits
)

// KVPrecs lists the precisions in the order the CLI and the lab name them.
var KVPrecs = []KVPrec{KVF32, KVF16, KVBF16}

// String is the precision's name: "f32", "f16" or "bf16".
func (p KVPrec) String() string {
	switch p {
	case KVF32:
		return "f32"
	case KVF16:
		return "f16"
	case KVBF16:
		return "bf16"
	}
	return fmt.Sprintf("KVPrec(%d)", uint8(p))
}

// Bytes is the size of one stored value (0 for an unknown precision).
func (p KVPrec) Bytes() int {
	switch p {
	case KVF32:
		return 4
	case KVF16, KVBF16:
		return 2
	}
	return 0
}

// ParseKVPrec reads a precision's name ("" is f32).
func ParseKVPrec(s string) (KVPrec, error) {
	switch strings.ToLower(s) {
	case "", "f32", "fp32", "float32":
		return KVF32, nil
	case "f16", "fp16", "float16":
		return KVF16, nil
	case "bf16", "bfloat16":
		return KVBF16, nil
	}
	return KVF32, fmt.Errorf("unknown KV cache precision %q: allowed f32, f16, bf16", s)
}

// Round replaces each value of x by its stored value: x itself for f32,
// else rounded to the nearest 16-bit value (ties to even) and widened back.
func (p KVPrec) Round(x []float32) {
	switch p {
	case KVF16:
		for i, v := range x {
			x[i] = quant.F16ToF32(quant.F32ToF16(v))
		}
	case KVBF16:
		for i, v := range x {
			x[i] = quant.BF16ToF32(quant.F32ToBF16(v))
		}
	}
}

// encode rounds src into dst's 16-bit values (p is F16 or BF16).
func (p KVPrec) encode(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	if p == KVF16 {
		for i, v := range src {
			dst[i] = quant.F32ToF16(v)
		}
		return
	}
	for i, v := range src {
		dst[i] = quant.F32ToBF16(v)
	}
}

// decode widens src's 16-bit values into dst (exact; p is F16 or BF16).
func (p KVPrec) decode(dst []float32, src []uint16) {
	kvWiden(dst[:len(src)], src, 1, len(src), len(src), p)
}

// kvWiden sets dst[r·n+j] = src[r·lds+j] widened from precision p, for r <
// rows, j < n (a block of a head's cached rows made float32 for the
// attention kernels); a SIMD version replaces it where the CPU has one
// (kvprec_amd64.go). Widening is exact, so every version gives the same
// bits.
var kvWiden = kvWidenGo

func kvWidenGo(dst []float32, src []uint16, rows, n, lds int, p KVPrec) {
	for r := range rows {
		d, s := dst[r*n:(r+1)*n], src[r*lds:r*lds+n]
		if p == KVF16 {
			for j, h := range s {
				if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
					h |= 0x200 // a NaN comes out quiet, as VCVTPH2PS makes it
				}
				d[j] = quant.F16ToF32(h)
			}
		} else {
			for j, h := range s {
				d[j] = quant.BF16ToF32(h)
			}
		}
	}
}
