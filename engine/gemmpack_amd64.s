//go:build amd64 && !purego

// gemmpack_amd64.s: the prefill GEMM's panel packing (gemm.go) in AVX-512: 32 rows of a
// row-major float32 matrix transposed into a [k][32] panel, 16 columns at a time as two 16×16
// transposes in registers (unpack, shuffle, two 128-bit lane shuffles). It moves values only:
// the panel holds the same bits as the scalar packing's.

#include "textflag.h"

// T16 transposes the 16×16 block in Z0-Z15 (row r in Zr) into Z0-Z15 (column c in Zc), using
// Z16-Z31.
#define T16 \
	VUNPCKLPS Z1, Z0, Z16; \
	VUNPCKHPS Z1, Z0, Z17; \
	VUNPCKLPS Z3, Z2, Z18; \
	VUNPCKHPS Z3, Z2, Z19; \
	VUNPCKLPS Z5, Z4, Z20; \
	VUNPCKHPS Z5, Z4, Z21; \
	VUNPCKLPS Z7, Z6, Z22; \
	VUNPCKHPS Z7, Z6, Z23; \
	VUNPCKLPS Z9, Z8, Z24; \
	VUNPCKHPS Z9, Z8, Z25; \
	VUNPCKLPS Z11, Z10, Z26; \
	VUNPCKHPS Z11, Z10, Z27; \
	VUNPCKLPS Z13, Z12, Z28; \
	VUNPCKHPS Z13, Z12, Z29; \
	VUNPCKLPS Z15, Z14, Z30; \
	VUNPCKHPS Z15, Z14, Z31; \
	VSHUFPS $0x44, Z18, Z16, Z0; \
	VSHUFPS $0xee, Z18, Z16, Z1; \
	VSHUFPS $0x44, Z19, Z17, Z2; \
	VSHUFPS $0xee, Z19, Z17, Z3; \
	VSHUFPS $0x44, Z22, Z20, Z4; \
	VSHUFPS $0xee, Z22, Z20, Z5; \
	VSHUFPS $0x44, Z23, Z21, Z6; \
	VSHUFPS $0xee, Z23, Z21, Z7; \
	VSHUFPS $0x44, Z26, Z24, Z8; \
	VSHUFPS $0xee, Z26, Z24, Z9; \
	VSHUFPS $0x44, Z27, Z25, Z10; \
	VSHUFPS $0xee, Z27, Z25, Z11; \
	VSHUFPS $0x44, Z30, Z28, Z12; \
	VSHUFPS $0xee, Z30, Z28, Z13; \
	VSHUFPS $0x44, Z31, Z29, Z14; \
	VSHUFPS $0xee, Z31, Z29, Z15; \
	VSHUFF32X4 $0x44, Z4, Z0, Z16; \
	VSHUFF32X4 $0xee, Z4, Z0, Z17; \
	VSHUFF32X4 $0x44, Z12, Z8, Z18; \
	VSHUFF32X4 $0xee, Z12, Z8, Z19; \
	VSHUFF32X4 $0x44, Z5, Z1, Z20; \
	VSHUFF32X4 $0xee, Z5, Z1, Z21; \
	VSHUFF32X4 $0x44, Z13, Z9, Z22; \
	VSHUFF32X4 $0xee, Z13, Z9, Z23; \
	VSHUFF32X4 $0x44, Z6, Z2, Z24; \
	VSHUFF32X4 $0xee, Z6, Z2, Z25; \
	VSHUFF32X4 $0x44, Z14, Z10, Z26; \
	VSHUFF32X4 $0xee, Z14, Z10, Z27; \
	VSHUFF32X4 $0x44, Z7, Z3, Z28; \
	VSHUFF32X4 $0xee, Z7, Z3, Z29; \
	VSHUFF32X4 $0x44, Z15, Z11, Z30; \
	VSHUFF32X4 $0xee, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z18, Z16, Z0; \
	VSHUFF32X4 $0xdd, Z18, Z16, Z4; \
	VSHUFF32X4 $0x88, Z19, Z17, Z8; \
	VSHUFF32X4 $0xdd, Z19, Z17, Z12; \
	VSHUFF32X4 $0x88, Z22, Z20, Z1; \
	VSHUFF32X4 $0xdd, Z22, Z20, Z5; \
	VSHUFF32X4 $0x88, Z23, Z21, Z9; \
	VSHUFF32X4 $0xdd, Z23, Z21, Z13; \
	VSHUFF32X4 $0x88, Z26, Z24, Z2; \
	VSHUFF32X4 $0xdd, Z26, Z24, Z6; \
	VSHUFF32X4 $0x88, Z27, Z25, Z10; \
	VSHUFF32X4 $0xdd, Z27, Z25, Z14; \
	VSHUFF32X4 $0x88, Z30, Z28, Z3; \
	VSHUFF32X4 $0xdd, Z30, Z28, Z7; \
	VSHUFF32X4 $0x88, Z31, Z29, Z11; \
	VSHUFF32X4 $0xdd, Z31, Z29, Z15

// LOAD16(off): Z0-Z15 = 16 floats at byte offset off of rows 0-15 from SI, R10, R11, R12 (4 rows
// each, stride R8; R9 = 3·R8).
#define LOAD16(off) \
	VMOVUPS off(SI), Z0; \
	VMOVUPS off(SI)(R8*1), Z1; \
	VMOVUPS off(SI)(R8*2), Z2; \
	VMOVUPS off(SI)(R9*1), Z3; \
	VMOVUPS off(R10), Z4; \
	VMOVUPS off(R10)(R8*1), Z5; \
	VMOVUPS off(R10)(R8*2), Z6; \
	VMOVUPS off(R10)(R9*1), Z7; \
	VMOVUPS off(R11), Z8; \
	VMOVUPS off(R11)(R8*1), Z9; \
	VMOVUPS off(R11)(R8*2), Z10; \
	VMOVUPS off(R11)(R9*1), Z11; \
	VMOVUPS off(R12), Z12; \
	VMOVUPS off(R12)(R8*1), Z13; \
	VMOVUPS off(R12)(R8*2), Z14; \
	VMOVUPS off(R12)(R9*1), Z15

// STORE16(off): column c (Zc) to DI + c·128 + off.
#define STORE16(off) \
	VMOVUPS Z0, 0+off(DI); \
	VMOVUPS Z1, 128+off(DI); \
	VMOVUPS Z2, 256+off(DI); \
	VMOVUPS Z3, 384+off(DI); \
	VMOVUPS Z4, 512+off(DI); \
	VMOVUPS Z5, 640+off(DI); \
	VMOVUPS Z6, 768+off(DI); \
	VMOVUPS Z7, 896+off(DI); \
	VMOVUPS Z8, 1024+off(DI); \
	VMOVUPS Z9, 1152+off(DI); \
	VMOVUPS Z10, 1280+off(DI); \
	VMOVUPS Z11, 1408+off(DI); \
	VMOVUPS Z12, 1536+off(DI); \
	VMOVUPS Z13, 1664+off(DI); \
	VMOVUPS Z14, 1792+off(DI); \
	VMOVUPS Z15, 1920+off(DI)

// func packRows32AVX512(dst *float32, src *float32, ld int, n16 int)
// dst[c·32+j] = src[j·ld+c] for j < 32, c < 16·n16 (n16 ≥ 1).
TEXT ·packRows32AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
	LEAQ (R11)(R8*4), R12
	MOVQ R8, R13
	SHLQ $4, R13 // 16 rows
	MOVQ n16+24(FP), CX

packloop:
	LOAD16(0)
	T16
	STORE16(0)
	ADDQ R13, SI
	ADDQ R13, R10
	ADDQ R13, R11
	ADDQ R13, R12
	LOAD16(0)
	T16
	STORE16(64)
	SUBQ R13, SI
	SUBQ R13, R10
	SUBQ R13, R11
	SUBQ R13, R12
	ADDQ $64, SI
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $64, R12
	ADDQ $2048, DI
	DECQ CX
	JNZ  packloop
	VZEROUPPER
	RET

// func packBand32AVX512(dst *float32, src *float32, np int, dstride int, pf int)
// dst[p·dstride : p·dstride+32] = src[32p : 32p+32] for p < np (one input row's band into np
// panels), prefetching the band pf bytes past src (a later row's) as it goes: a band is a few
// kilobytes of its row, too short a run for the hardware prefetcher to reach ahead of.
TEXT ·packBand32AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ np+16(FP), CX
	MOVQ dstride+24(FP), R8
	SHLQ $2, R8
	MOVQ pf+32(FP), R9
	ADDQ SI, R9

pb32loop:
	PREFETCHT0 (R9)
	PREFETCHT0 64(R9)
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, SI
	ADDQ $128, R9
	ADDQ R8, DI
	DECQ CX
	JNZ  pb32loop
	VZEROUPPER
	RET
