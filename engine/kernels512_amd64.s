//go:build amd64 && !purego

// kernels512_amd64.s: AVX-512 gemv kernels: one vector (decode) and four vectors at once (the
// logit lens's readings share one pass over the head), F32 and BF16 weights.
//
// Every row is reduced exactly as gemvF32AVX2 reduces it: a 512-bit accumulator holds the
// 16 partial sums that kernel keeps in two 256-bit ones (lane l = column c+l; BF16 weights: runs
// of 32 columns in pairs, lane l = column c+2l then c+2l+1, as gemvBF16AVX2 and gemvBF16Go), and
// the final sums are ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)) with s_l = a_l + a_{l+8}; so a row's
// value does not depend on which of the kernels computed it. cols is a positive multiple of 16 and rows of 4
// (the Go wrappers in kernels_amd64.go do the rest with the AVX2 kernels).

#include "textflag.h"

// RED4(z0…z3, y0…y3, x0): the four rows' sums, lane for lane as gemvF32AVX2 combines its two
// 256-bit halves and then ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)), into x0's four floats (row r in
// float r). Y28–Y31 and X28 are scratch.
#define RED4(z0, z1, z2, z3, y0, y1, y2, y3, x0) \
	VEXTRACTF32X8 $1, z0, Y28; \
	VADDPS Y28, y0, y0; \
	VEXTRACTF32X8 $1, z1, Y29; \
	VADDPS Y29, y1, y1; \
	VEXTRACTF32X8 $1, z2, Y30; \
	VADDPS Y30, y2, y2; \
	VEXTRACTF32X8 $1, z3, Y31; \
	VADDPS Y31, y3, y3; \
	VHADDPS y1, y0, y0; \
	VHADDPS y3, y2, y2; \
	VHADDPS y2, y0, y0; \
	VEXTRACTF32X4 $1, y0, X28; \
	VADDPS X28, x0, x0


// func gemvF32AVX512(out *float32, w *float32, ldw int, x *float32, rows int, cols int, pf int)
// out[r] = Σ_{c<cols} w[r*ldw+c]·x[c]; rows a multiple of 4, cols of 16. Each row is
// prefetched pf bytes ahead of the loads (pf ≥ 0; prefetches never fault).
TEXT ·gemvF32AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $2, R8
	MOVQ x+24(FP), DX
	MOVQ rows+32(FP), CX
	MOVQ cols+40(FP), BX

f32z4rows:
	TESTQ CX, CX
	JZ    f32zdone
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	MOVQ pf+48(FP), R13
	ADDQ SI, R13
	LEAQ (R13)(R8*2), R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ AX, AX

f32zloop:
	PREFETCHT0 (R13)
	PREFETCHT0 (R13)(R8*1)
	PREFETCHT0 (R14)
	PREFETCHT0 (R14)(R8*1)
	ADDQ $64, R13
	ADDQ $64, R14
	VMOVUPS (DX)(AX*4), Z8
	VFMADD231PS (SI)(AX*4), Z8, Z0
	VFMADD231PS (R9)(AX*4), Z8, Z1
	VFMADD231PS (R10)(AX*4), Z8, Z2
	VFMADD231PS (R11)(AX*4), Z8, Z3
	ADDQ $16, AX
	CMPQ AX, BX
	JL   f32zloop
	RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	ADDQ $16, DI
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  f32z4rows

f32zdone:
	VZEROUPPER
	RET

// func gemv4F32AVX512(outs *[4]*float32, w *float32, ldw int, xs *[4]*float32, rows int, cols int)
// outs[v][r] = Σ_{c<cols} w[r*ldw+c]·xs[v][c] for v < 4: each weight is loaded once for the
// four vectors (16 accumulators, Z(4v+r)). rows a multiple of 4, cols of 16.
TEXT ·gemv4F32AVX512(SB), NOSPLIT, $0-48
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $2, R8
	MOVQ xs+24(FP), AX
	MOVQ 0(AX), DX
	MOVQ 8(AX), R12
	MOVQ 16(AX), R13
	MOVQ 24(AX), R14
	MOVQ rows+32(FP), CX
	XORQ DI, DI // byte offset of the current rows in each out

f32m4rows:
	TESTQ CX, CX
	JZ    f32mdone
	MOVQ cols+40(FP), BX
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ AX, AX

f32mloop:
	VMOVUPS (SI)(AX*4), Z16
	VMOVUPS (R9)(AX*4), Z17
	VMOVUPS (R10)(AX*4), Z18
	VMOVUPS (R11)(AX*4), Z19
	VMOVUPS (DX)(AX*4), Z20
	VMOVUPS (R12)(AX*4), Z21
	VMOVUPS (R13)(AX*4), Z22
	VMOVUPS (R14)(AX*4), Z23
	VFMADD231PS Z16, Z20, Z0
	VFMADD231PS Z17, Z20, Z1
	VFMADD231PS Z18, Z20, Z2
	VFMADD231PS Z19, Z20, Z3
	VFMADD231PS Z16, Z21, Z4
	VFMADD231PS Z17, Z21, Z5
	VFMADD231PS Z18, Z21, Z6
	VFMADD231PS Z19, Z21, Z7
	VFMADD231PS Z16, Z22, Z8
	VFMADD231PS Z17, Z22, Z9
	VFMADD231PS Z18, Z22, Z10
	VFMADD231PS Z19, Z22, Z11
	VFMADD231PS Z16, Z23, Z12
	VFMADD231PS Z17, Z23, Z13
	VFMADD231PS Z18, Z23, Z14
	VFMADD231PS Z19, Z23, Z15
	ADDQ $16, AX
	CMPQ AX, BX
	JL   f32mloop
	MOVQ outs+0(FP), AX
	RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ 0(AX), BX
	VMOVUPS X0, (BX)(DI*1)
	RED4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4)
	MOVQ 8(AX), BX
	VMOVUPS X4, (BX)(DI*1)
	RED4(Z8, Z9, Z10, Z11, Y8, Y9, Y10, Y11, X8)
	MOVQ 16(AX), BX
	VMOVUPS X8, (BX)(DI*1)
	RED4(Z12, Z13, Z14, Z15, Y12, Y13, Y14, Y15, X12)
	MOVQ 24(AX), BX
	VMOVUPS X12, (BX)(DI*1)
	ADDQ $16, DI
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  f32m4rows

f32mdone:
	VZEROUPPER
	RET

// bf16pairs: the dword indexes of x's even values (0, 2, …, 30) and odd
// values (1, 3, …, 31) in a run of 32 held by two registers (VPERMT2PS), and
// the mask 0xffff0000 that widens a pair's odd (upper) bfloat16.
DATA bf16pairs<>+0(SB)/8, $0x0000000200000000
DATA bf16pairs<>+8(SB)/8, $0x0000000600000004
DATA bf16pairs<>+16(SB)/8, $0x0000000a00000008
DATA bf16pairs<>+24(SB)/8, $0x0000000e0000000c
DATA bf16pairs<>+32(SB)/8, $0x0000001200000010
DATA bf16pairs<>+40(SB)/8, $0x0000001600000014
DATA bf16pairs<>+48(SB)/8, $0x0000001a00000018
DATA bf16pairs<>+56(SB)/8, $0x0000001e0000001c
DATA bf16pairs<>+64(SB)/8, $0x0000000300000001
DATA bf16pairs<>+72(SB)/8, $0x0000000700000005
DATA bf16pairs<>+80(SB)/8, $0x0000000b00000009
DATA bf16pairs<>+88(SB)/8, $0x0000000f0000000d
DATA bf16pairs<>+96(SB)/8, $0x0000001300000011
DATA bf16pairs<>+104(SB)/8, $0x0000001700000015
DATA bf16pairs<>+112(SB)/8, $0x0000001b00000019
DATA bf16pairs<>+120(SB)/8, $0x0000001f0000001d
DATA bf16pairs<>+128(SB)/4, $0xffff0000
GLOBL bf16pairs<>(SB), RODATA|NOPTR, $132

// BF16XPAIRS(xr, even, odd): the 32 values at column AX of x (xr) split
// into the even and the odd ones (Z25, Z26: bf16pairs' indexes; Z27 scratch).
#define BF16XPAIRS(xr, even, odd) \
	VMOVUPS (xr)(AX*4), even; \
	VMOVUPS 64(xr)(AX*4), Z27; \
	VMOVAPS even, odd; \
	VPERMT2PS Z27, Z25, even; \
	VPERMT2PS Z27, Z26, odd

// BF16WPAIRS(row, even, odd): the 32 bfloat16 at column AX of row widened,
// the even ones (each pair's low half, shifted up) and the odd ones (the
// high half, masked by Z24).
#define BF16WPAIRS(row, even, odd) \
	VMOVDQU32 (row)(AX*2), odd; \
	VPSLLD $16, odd, even; \
	VPANDD Z24, odd, odd

// func gemvBF16AVX512(out *float32, w *uint16, ldw int, x *float32, rows int, cols int, pf int)
// out[r] = Σ_{c<cols} w[r*ldw+c]·x[c] in gemvBF16Go's order (runs of 32 in pairs, then one
// run of 16); rows a multiple of 4, cols of 16. Each row is prefetched pf bytes ahead of the
// loads (pf ≥ 0; prefetches never fault), a line an iteration.
TEXT ·gemvBF16AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $1, R8
	MOVQ x+24(FP), DX
	MOVQ rows+32(FP), CX
	MOVQ cols+40(FP), BX
	MOVQ $bf16pairs<>(SB), AX
	VMOVDQU32 (AX), Z25
	VMOVDQU32 64(AX), Z26
	VPBROADCASTD 128(AX), Z24
	LEAQ -32(BX), R12 // the last column a run of 32 may start at

bf16z4rows:
	TESTQ CX, CX
	JZ    bf16zdone
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	MOVQ pf+48(FP), R13
	ADDQ SI, R13
	LEAQ (R13)(R8*2), R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ AX, AX

bf16zloop:
	CMPQ AX, R12
	JG   bf16ztail
	PREFETCHT0 (R13)
	PREFETCHT0 (R13)(R8*1)
	PREFETCHT0 (R14)
	PREFETCHT0 (R14)(R8*1)
	ADDQ $64, R13
	ADDQ $64, R14
	BF16XPAIRS(DX, Z8, Z10)
	BF16WPAIRS(SI, Z20, Z16)
	BF16WPAIRS(R9, Z21, Z17)
	BF16WPAIRS(R10, Z22, Z18)
	BF16WPAIRS(R11, Z23, Z19)
	VFMADD231PS Z20, Z8, Z0
	VFMADD231PS Z21, Z8, Z1
	VFMADD231PS Z22, Z8, Z2
	VFMADD231PS Z23, Z8, Z3
	VFMADD231PS Z16, Z10, Z0
	VFMADD231PS Z17, Z10, Z1
	VFMADD231PS Z18, Z10, Z2
	VFMADD231PS Z19, Z10, Z3
	ADDQ $32, AX
	JMP  bf16zloop

bf16ztail: // a last run of 16 columns: lane l = column AX+l
	CMPQ AX, BX
	JGE  bf16zsum
	VMOVUPS (DX)(AX*4), Z8
	VPMOVZXWD (SI)(AX*2), Z16
	VPSLLD $16, Z16, Z16
	VPMOVZXWD (R9)(AX*2), Z17
	VPSLLD $16, Z17, Z17
	VPMOVZXWD (R10)(AX*2), Z18
	VPSLLD $16, Z18, Z18
	VPMOVZXWD (R11)(AX*2), Z19
	VPSLLD $16, Z19, Z19
	VFMADD231PS Z16, Z8, Z0
	VFMADD231PS Z17, Z8, Z1
	VFMADD231PS Z18, Z8, Z2
	VFMADD231PS Z19, Z8, Z3

bf16zsum:
	RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	ADDQ $16, DI
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  bf16z4rows

bf16zdone:
	VZEROUPPER
	RET

// BF16X4PAIRS(xr, a0, a1, a2, a3): one vector's 32 values at column AX
// against the four rows' pairs (even in Z16–Z19, odd in Z20–Z23), into the
// rows' accumulators a0–a3: every even product, then every odd one.
#define BF16X4PAIRS(xr, a0, a1, a2, a3) \
	BF16XPAIRS(xr, Z28, Z29); \
	VFMADD231PS Z16, Z28, a0; \
	VFMADD231PS Z17, Z28, a1; \
	VFMADD231PS Z18, Z28, a2; \
	VFMADD231PS Z19, Z28, a3; \
	VFMADD231PS Z20, Z29, a0; \
	VFMADD231PS Z21, Z29, a1; \
	VFMADD231PS Z22, Z29, a2; \
	VFMADD231PS Z23, Z29, a3

// func gemv4BF16AVX512(outs *[4]*float32, w *uint16, ldw int, xs *[4]*float32, rows int, cols int)
// outs[v][r] = Σ_{c<cols} w[r*ldw+c]·xs[v][c] for v < 4: each weight is loaded once for the
// four vectors (16 accumulators, Z(4v+r)), in gemvBF16Go's order (runs of 32 in pairs,
// then one run of 16). rows a multiple of 4, cols of 16.
TEXT ·gemv4BF16AVX512(SB), NOSPLIT, $0-48
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $1, R8
	MOVQ xs+24(FP), AX
	MOVQ 0(AX), DX
	MOVQ 8(AX), R12
	MOVQ 16(AX), R13
	MOVQ 24(AX), R14
	MOVQ rows+32(FP), CX
	XORQ DI, DI // byte offset of the current rows in each out
	MOVQ $bf16pairs<>(SB), BX
	VMOVDQU32 (BX), Z25
	VMOVDQU32 64(BX), Z26
	VPBROADCASTD 128(BX), Z24

bf16m4rows:
	TESTQ CX, CX
	JZ    bf16mdone
	MOVQ cols+40(FP), BX
	SUBQ $32, BX // the last column a run of 32 may start at
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ AX, AX

bf16mloop:
	CMPQ AX, BX
	JG   bf16mtail
	BF16WPAIRS(SI, Z16, Z20)
	BF16WPAIRS(R9, Z17, Z21)
	BF16WPAIRS(R10, Z18, Z22)
	BF16WPAIRS(R11, Z19, Z23)
	BF16X4PAIRS(DX, Z0, Z1, Z2, Z3)
	BF16X4PAIRS(R12, Z4, Z5, Z6, Z7)
	BF16X4PAIRS(R13, Z8, Z9, Z10, Z11)
	BF16X4PAIRS(R14, Z12, Z13, Z14, Z15)
	ADDQ $32, AX
	JMP  bf16mloop

bf16mtail: // a last run of 16 columns: lane l = column AX+l
	CMPQ AX, cols+40(FP)
	JGE  bf16msum
	VPMOVZXWD (SI)(AX*2), Z16
	VPSLLD $16, Z16, Z16
	VPMOVZXWD (R9)(AX*2), Z17
	VPSLLD $16, Z17, Z17
	VPMOVZXWD (R10)(AX*2), Z18
	VPSLLD $16, Z18, Z18
	VPMOVZXWD (R11)(AX*2), Z19
	VPSLLD $16, Z19, Z19
	VMOVUPS (DX)(AX*4), Z20
	VMOVUPS (R12)(AX*4), Z21
	VMOVUPS (R13)(AX*4), Z22
	VMOVUPS (R14)(AX*4), Z23
	VFMADD231PS Z16, Z20, Z0
	VFMADD231PS Z17, Z20, Z1
	VFMADD231PS Z18, Z20, Z2
	VFMADD231PS Z19, Z20, Z3
	VFMADD231PS Z16, Z21, Z4
	VFMADD231PS Z17, Z21, Z5
	VFMADD231PS Z18, Z21, Z6
	VFMADD231PS Z19, Z21, Z7
	VFMADD231PS Z16, Z22, Z8
	VFMADD231PS Z17, Z22, Z9
	VFMADD231PS Z18, Z22, Z10
	VFMADD231PS Z19, Z22, Z11
	VFMADD231PS Z16, Z23, Z12
	VFMADD231PS Z17, Z23, Z13
	VFMADD231PS Z18, Z23, Z14
	VFMADD231PS Z19, Z23, Z15

bf16msum:
	MOVQ outs+0(FP), AX
	RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ 0(AX), BX
	VMOVUPS X0, (BX)(DI*1)
	RED4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4)
	MOVQ 8(AX), BX
	VMOVUPS X4, (BX)(DI*1)
	RED4(Z8, Z9, Z10, Z11, Y8, Y9, Y10, Y11, X8)
	MOVQ 16(AX), BX
	VMOVUPS X8, (BX)(DI*1)
	RED4(Z12, Z13, Z14, Z15, Y12, Y13, Y14, Y15, X12)
	MOVQ 24(AX), BX
	VMOVUPS X12, (BX)(DI*1)
	ADDQ $16, DI
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  bf16m4rows

bf16mdone:
	VZEROUPPER
	RET
