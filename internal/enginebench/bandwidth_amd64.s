//go:build amd64 && !purego

// bandwidth_amd64.s: the read-bandwidth probe's streaming loops: 64-bit integer sums over whole
// cache lines with vector loads (AVX2, AVX-512). No multiply, no weights layout: loads and adds only.

#include "textflag.h"

// func readSumAVX512(p *uint64, n int) uint64
// Σ p[0:n] (wrapping); n is a positive multiple of 32 (four 64-byte lines per step).
TEXT ·readSumAVX512(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHLQ $3, CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3

loop512:
	VPADDQ (SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ   $256, SI
	SUBQ   $256, CX
	JNZ    loop512

	VPADDQ        Z1, Z0, Z0
	VPADDQ        Z3, Z2, Z2
	VPADDQ        Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDQ        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDQ        X1, X0, X0
	VMOVQ         X0, AX
	VZEROUPPER
	MOVQ          AX, ret+16(FP)
	RET

// func readSumAVX2(p *uint64, n int) uint64
// Σ p[0:n] (wrapping); n is a positive multiple of 32 (four 64-byte lines per step).
TEXT ·readSumAVX2(SB), NOSPLIT, $0-24
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	SHLQ  $3, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

loop256:
	VPADDQ (SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y4, Y4
	VPADDQ 160(SI), Y5, Y5
	VPADDQ 192(SI), Y6, Y6
	VPADDQ 224(SI), Y7, Y7
	ADDQ   $256, SI
	SUBQ   $256, CX
	JNZ    loop256

	VPADDQ       Y1, Y0, Y0
	VPADDQ       Y3, Y2, Y2
	VPADDQ       Y5, Y4, Y4
	VPADDQ       Y7, Y6, Y6
	VPADDQ       Y2, Y0, Y0
	VPADDQ       Y6, Y4, Y4
	VPADDQ       Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDQ       X1, X0, X0
	VMOVQ        X0, AX
	VZEROUPPER
	MOVQ         AX, ret+16(FP)
	RET
