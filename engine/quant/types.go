// Package quant holds ggml's weight block formats (Q8_0, Q4_0, Q4_K, Q5_K,
// Q6_K) and F32/F16/BF16 rows, byte for byte as ggml lays them out
// (ggml-common.h, ggml-quants.c), and the kernels that compute with them:
// dequantization, dot products, matrix-vector and multi-vector products.
//
// Activations stay float32: a kernel dequantizes each weight block to
// float32 (exactly as ggml's dequantize_row_* and gguf-py's
// gguf.quants.dequantize do) and multiplies it with float32 inputs, so a
// product on quantized weights equals the float32 product on the
// dequantized weights, up to the order of the sums. llama.cpp instead
// rounds the activations to 8 bits (Q8_0/Q8_K) before its integer dot
// products; these kernels do not.
//
// Summation order. Every dot product over a row keeps 32 partial sums:
// element e of the row goes to lane e mod 32, in increasing e, and the
// lanes are combined as t_l = a_l + a_{l+16}, u_l = t_l + t_{l+8},
// ((u0+u1)+(u2+u3)) + ((u4+u5)+(u6+u7)). (F32/F16/BF16 rows whose length
// is not a multiple of 32 add the last cols mod 32 products one after
// another to that.) The pure-Go kernels and the assembly ones follow this
// order exactly; they differ only in that the assembly fuses each
// multiply-add (one rounding instead of two), so the two agree within a
// few float32 roundings per lane and not bit for bit. Dequantization
// itself has no sums and is bit-exact on every path. The one exception to
// the order: the SIMD kernels (AVX2 and AVX-512 alike) sum Q4_K rows in
// factored form, Σ d·sc·(Σ q·x) − Σ dmin·m·(Σ x) (q4kfact_amd64.go),
// within a few roundings of the pure-Go sum; MatVec, Dot and MatMat there
// agree bit for bit.
package quant

import (
	"fmt"
	"strings"
)

// Type is a ggml tensor type id (enum ggml_type), as GGUF files store it.
type Type uint32

// The ggml types this package computes with.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q8_0 Type = 8
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	BF16 Type = 30
)

// QK_K is the number of values in a K-quant super-block.
const QK_K = 256

// typeNames are ggml's names for every type id (ggml.c type_traits), the
// ones this package does not support included, so errors can name them.
var typeNames = map[Type]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 4: "Q4_2", 5: "Q4_3", 6: "Q5_0", 7: "Q5_1",
	8: "Q8_0", 9: "Q8_1", 10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K",
	15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S", 20: "IQ4_NL",
	21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32", 27: "I64",
	28: "F64", 29: "IQ1_M", 30: "BF16", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8",
	34: "TQ1_0", 35: "TQ2_0", 36: "IQ4_NL_4_4", 37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8",
	39: "MXFP4", 40: "NVFP4", 41: "Q1_0", 42: "Q2_0",
}

// layout is one supported type's block: values per block and bytes per block.
type layout struct{ n, bytes int }

var layouts = map[Type]layout{
	F32:  {1, 4},
	F16:  {1, 2},
	BF16: {1, 2},
	Q8_0: {32, 2 + 32},                          // block_q8_0: fp16 d; int8 qs[32]
	Q4_0: {32, 2 + 16},                          // block_q4_0: fp16 d; uint8 qs[16] (two 4-bit values each)
	Q4_K: {QK_K, 2 + 2 + 12 + QK_K/2},           // block_q4_K: fp16 d, dmin; scales[12] (6-bit); qs[128]
	Q5_K: {QK_K, 2 + 2 + 12 + QK_K/8 + QK_K/2},  // block_q5_K: d, dmin; scales[12]; qh[32]; qs[128]
	Q6_K: {QK_K, QK_K/2 + QK_K/4 + QK_K/16 + 2}, // block_q6_K: ql[128]; qh[64]; int8 scales[16]; fp16 d
}

// Supported lists the types this package computes with, in ggml id order.
var Supported = []Type{F32, F16, Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, BF16}

// String is ggml's name for the type ("Q4_K"), or "type N" for an id ggml does not define.
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// IsSupported reports whether this package computes with t.
func (t Type) IsSupported() bool { _, ok := layouts[t]; return ok }

// BlockSize is the number of values per block (1 for F32/F16/BF16); 0 for an unsupported type.
func (t Type) BlockSize() int { return layouts[t].n }

// BlockBytes is the number of bytes per block; 0 for an unsupported type.
func (t Type) BlockBytes() int { return layouts[t].bytes }

// SupportedNames is "F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K", for error messages.
func SupportedNames() string {
	return "F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K"
}

// RowBytes is the size of a row of cols values of type t. It fails for an
// unsupported type, a cols that is not a positive multiple of the block
// size, or a size that overflows int.
func (t Type) RowBytes(cols int) (int, error) {
	l, ok := layouts[t]
	if !ok {
		return 0, fmt.Errorf("quant: type %s is not supported (supported: %s)", t, SupportedNames())
	}
	if cols <= 0 || cols%l.n != 0 {
		return 0, fmt.Errorf("quant: a %s row of %d values is not a positive multiple of the block size %d", t, cols, l.n)
	}
	nb := cols / l.n
	if nb > maxInt/l.bytes {
		return 0, fmt.Errorf("quant: a %s row of %d values is too large", t, cols)
	}
	return nb * l.bytes, nil
}

const maxInt = int(^uint(0) >> 1)

// ParseType reads a ggml type name, case-insensitively ("q8_0", "Q4_K", "bf16").
func ParseType(name string) (Type, error) {
	u := strings.ToUpper(name)
	for t, s := range typeNames {
		if s == u {
			if !t.IsSupported() {
				return 0, fmt.Errorf("quant: type %s is not supported (supported: %s)", s, SupportedNames())
			}
			return t, nil
		}
	}
	return 0, fmt.Errorf("quant: unknown type %q (supported: %s)", name, SupportedNames())
}
