//go:build amd64 && !purego

// attnkernels_amd64.s: attention's block kernels (attnkernels.go) in AVX-512 and AVX2, with
// exactly the float32 operations of the pure-Go ones in their order: the scores' and the
// weighted sums' multiply-adds fused (VFMADD231PS; fused.F32 in Go), every other multiply and add
// rounded on its own, each dot product's 16 lanes (lane d%16) combined as sum16
// (s_l = a_l + a_{l+8}, then ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7))), expAtt's steps, the
// weighted sums in position order. Masked loads and stores do a partial last group of lanes;
// they never touch memory outside the lanes asked for.

#include "textflag.h"

// expAtt's constants, one float32 each (broadcast where used).
DATA attc<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA attc<>+4(SB)/4, $0x3f000000  // 0.5
DATA attc<>+8(SB)/4, $0x3f318000  // 0.693359375
DATA attc<>+12(SB)/4, $0x395e8083 // 2.12194440e-4
DATA attc<>+16(SB)/4, $0x39506967 // 1.9875691500e-4
DATA attc<>+20(SB)/4, $0x3ab743ce // 1.3981999507e-3
DATA attc<>+24(SB)/4, $0x3c088908 // 8.3334519073e-3
DATA attc<>+28(SB)/4, $0x3d2aa9c1 // 4.1665795894e-2
DATA attc<>+32(SB)/4, $0x3e2aaaaa // 1.6666665459e-1
DATA attc<>+36(SB)/4, $0x3f000000 // 5.0000001201e-1
DATA attc<>+40(SB)/4, $0x3f800000 // 1
DATA attc<>+44(SB)/4, $0xc2aeac4f // -87.33654
DATA attc<>+48(SB)/4, $0x0000007f // 127
DATA attc<>+52(SB)/4, $0xff800000 // -Inf
// the same, eight copies each, for AVX2's memory operands: log2(e), 0.5, ln2 hi, ln2 lo, −87.33654
DATA attc8<>+0(SB)/4, $0x3fb8aa3b
DATA attc8<>+4(SB)/4, $0x3fb8aa3b
DATA attc8<>+8(SB)/4, $0x3fb8aa3b
DATA attc8<>+12(SB)/4, $0x3fb8aa3b
DATA attc8<>+16(SB)/4, $0x3fb8aa3b
DATA attc8<>+20(SB)/4, $0x3fb8aa3b
DATA attc8<>+24(SB)/4, $0x3fb8aa3b
DATA attc8<>+28(SB)/4, $0x3fb8aa3b
DATA attc8<>+32(SB)/4, $0x3f000000
DATA attc8<>+36(SB)/4, $0x3f000000
DATA attc8<>+40(SB)/4, $0x3f000000
DATA attc8<>+44(SB)/4, $0x3f000000
DATA attc8<>+48(SB)/4, $0x3f000000
DATA attc8<>+52(SB)/4, $0x3f000000
DATA attc8<>+56(SB)/4, $0x3f000000
DATA attc8<>+60(SB)/4, $0x3f000000
DATA attc8<>+64(SB)/4, $0x3f318000
DATA attc8<>+68(SB)/4, $0x3f318000
DATA attc8<>+72(SB)/4, $0x3f318000
DATA attc8<>+76(SB)/4, $0x3f318000
DATA attc8<>+80(SB)/4, $0x3f318000
DATA attc8<>+84(SB)/4, $0x3f318000
DATA attc8<>+88(SB)/4, $0x3f318000
DATA attc8<>+92(SB)/4, $0x3f318000
DATA attc8<>+96(SB)/4, $0x395e8083
DATA attc8<>+100(SB)/4, $0x395e8083
DATA attc8<>+104(SB)/4, $0x395e8083
DATA attc8<>+108(SB)/4, $0x395e8083
DATA attc8<>+112(SB)/4, $0x395e8083
DATA attc8<>+116(SB)/4, $0x395e8083
DATA attc8<>+120(SB)/4, $0x395e8083
DATA attc8<>+124(SB)/4, $0x395e8083
DATA attc8<>+128(SB)/4, $0xc2aeac4f
DATA attc8<>+132(SB)/4, $0xc2aeac4f
DATA attc8<>+136(SB)/4, $0xc2aeac4f
DATA attc8<>+140(SB)/4, $0xc2aeac4f
DATA attc8<>+144(SB)/4, $0xc2aeac4f
DATA attc8<>+148(SB)/4, $0xc2aeac4f
DATA attc8<>+152(SB)/4, $0xc2aeac4f
DATA attc8<>+156(SB)/4, $0xc2aeac4f
GLOBL attc8<>(SB), RODATA|NOPTR, $160
// AVX2 lane masks: 8 × -1 then 8 × 0; the 8 dwords at byte offset 4·(8−c) have c leading -1s
DATA attm<>+0(SB)/8, $0xffffffffffffffff
DATA attm<>+8(SB)/8, $0xffffffffffffffff
DATA attm<>+16(SB)/8, $0xffffffffffffffff
DATA attm<>+24(SB)/8, $0xffffffffffffffff
DATA attm<>+32(SB)/8, $0
DATA attm<>+40(SB)/8, $0
DATA attm<>+48(SB)/8, $0
DATA attm<>+56(SB)/8, $0
GLOBL attc<>(SB), RODATA|NOPTR, $56
GLOBL attm<>(SB), RODATA|NOPTR, $64

// ---------------------------------------------------------------- AVX-512

// func attnScoresAVX512(s *float32, lds int, q *float32, k *float32, ldk int, n int, hd int, heads int, scale float32, v *float32)
// s[h·lds+p] = dot16(q[h·hd:], k[p·ldk:])·scale for h < heads, p < n (n a positive multiple of
// 16, hd ≥ 1, heads ≥ 1). Sixteen positions at a time, position i in Z_i; their 16-lane sums
// are then combined by a transposing tree whose every add is one of sum16's, landing position i
// in lane i. Before each group the next group's key rows are prefetched, and this group's
// value rows (v, same stride) for the weighted sum that follows (the first 256 bytes of each).
TEXT ·attnScoresAVX512(SB), NOSPLIT, $16-80
	MOVQ s+0(FP), DI
	MOVQ ldk+32(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	VBROADCASTSS scale+64(FP), Z31
	MOVQ hd+48(FP), CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the last chunk's lanes (hd%16; none when 0)
	MOVQ v+72(FP), AX
	SUBQ k+24(FP), AX
	MOVQ AX, vd-16(SP) // v − k
	MOVQ k+24(FP), BX
	MOVQ n+40(FP), CX
	XORQ AX, AX // p0·4

scoresgroup:
	MOVQ R9, R8
	SHLQ $5, R8
	ADDQ BX, R8 // the group after next's first key row
	MOVQ BX, R11
	ADDQ vd-16(SP), R11 // this group's first value row
	MOVQ $16, R14

scorespf:
	PREFETCHT0 (R8)
	PREFETCHT0 64(R8)
	PREFETCHT0 128(R8)
	PREFETCHT0 192(R8)
	PREFETCHT1 (R11)
	PREFETCHT1 64(R11)
	PREFETCHT1 128(R11)
	PREFETCHT1 192(R11)
	ADDQ R9, R8
	ADDQ R9, R11
	DECQ R14
	JNZ  scorespf
	MOVQ q+16(FP), SI
	MOVQ heads+56(FP), R15
	LEAQ (DI)(AX*1), DX
	MOVQ DX, sh-8(SP) // this head's scores for the group

scoreshead:
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
	MOVQ BX, R8
	LEAQ (BX)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	LEAQ (R12)(R9*4), R13
	MOVQ SI, R14
	MOVQ hd+48(FP), DX
	SHRQ $4, DX
	JZ   scorestail

scoreschunk:
	VMOVUPS (R14), Z16
	VFMADD231PS (R8), Z16, Z0
	VFMADD231PS (R8)(R9*1), Z16, Z1
	VFMADD231PS (R8)(R9*2), Z16, Z2
	VFMADD231PS (R8)(R10*1), Z16, Z3
	VFMADD231PS (R11), Z16, Z4
	VFMADD231PS (R11)(R9*1), Z16, Z5
	VFMADD231PS (R11)(R9*2), Z16, Z6
	VFMADD231PS (R11)(R10*1), Z16, Z7
	VFMADD231PS (R12), Z16, Z8
	VFMADD231PS (R12)(R9*1), Z16, Z9
	VFMADD231PS (R12)(R9*2), Z16, Z10
	VFMADD231PS (R12)(R10*1), Z16, Z11
	VFMADD231PS (R13), Z16, Z12
	VFMADD231PS (R13)(R9*1), Z16, Z13
	VFMADD231PS (R13)(R9*2), Z16, Z14
	VFMADD231PS (R13)(R10*1), Z16, Z15
	ADDQ $64, R8
	ADDQ $64, R11
	ADDQ $64, R12
	ADDQ $64, R13
	ADDQ $64, R14
	DECQ DX
	JNZ  scoreschunk

scorestail:
	KORTESTW K1, K1
	JZ       scorestree
	VMOVUPS.Z (R14), K1, Z16 // the keys read under the same mask: what lies past a row (past its buffer, for the last) never enters a sum, not even as 0·NaN
	VMOVUPS.Z (R8), K1, Z17
	VFMADD231PS Z17, Z16, Z0
	VMOVUPS.Z (R8)(R9*1), K1, Z18
	VFMADD231PS Z18, Z16, Z1
	VMOVUPS.Z (R8)(R9*2), K1, Z19
	VFMADD231PS Z19, Z16, Z2
	VMOVUPS.Z (R8)(R10*1), K1, Z20
	VFMADD231PS Z20, Z16, Z3
	VMOVUPS.Z (R11), K1, Z17
	VFMADD231PS Z17, Z16, Z4
	VMOVUPS.Z (R11)(R9*1), K1, Z18
	VFMADD231PS Z18, Z16, Z5
	VMOVUPS.Z (R11)(R9*2), K1, Z19
	VFMADD231PS Z19, Z16, Z6
	VMOVUPS.Z (R11)(R10*1), K1, Z20
	VFMADD231PS Z20, Z16, Z7
	VMOVUPS.Z (R12), K1, Z17
	VFMADD231PS Z17, Z16, Z8
	VMOVUPS.Z (R12)(R9*1), K1, Z18
	VFMADD231PS Z18, Z16, Z9
	VMOVUPS.Z (R12)(R9*2), K1, Z19
	VFMADD231PS Z19, Z16, Z10
	VMOVUPS.Z (R12)(R10*1), K1, Z20
	VFMADD231PS Z20, Z16, Z11
	VMOVUPS.Z (R13), K1, Z17
	VFMADD231PS Z17, Z16, Z12
	VMOVUPS.Z (R13)(R9*1), K1, Z18
	VFMADD231PS Z18, Z16, Z13
	VMOVUPS.Z (R13)(R9*2), K1, Z19
	VFMADD231PS Z19, Z16, Z14
	VMOVUPS.Z (R13)(R10*1), K1, Z20
	VFMADD231PS Z20, Z16, Z15

scorestree:
	// s_l = a_l + a_{l+8}: positions (i, i+4) share a register, i's s in lanes 0-7
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xee, Z4, Z0, Z17
	VADDPS     Z17, Z16, Z0
	VSHUFF32X4 $0x44, Z5, Z1, Z16
	VSHUFF32X4 $0xee, Z5, Z1, Z17
	VADDPS     Z17, Z16, Z1
	VSHUFF32X4 $0x44, Z6, Z2, Z16
	VSHUFF32X4 $0xee, Z6, Z2, Z17
	VADDPS     Z17, Z16, Z2
	VSHUFF32X4 $0x44, Z7, Z3, Z16
	VSHUFF32X4 $0xee, Z7, Z3, Z17
	VADDPS     Z17, Z16, Z3
	VSHUFF32X4 $0x44, Z12, Z8, Z16
	VSHUFF32X4 $0xee, Z12, Z8, Z17
	VADDPS     Z17, Z16, Z8
	VSHUFF32X4 $0x44, Z13, Z9, Z16
	VSHUFF32X4 $0xee, Z13, Z9, Z17
	VADDPS     Z17, Z16, Z9
	VSHUFF32X4 $0x44, Z14, Z10, Z16
	VSHUFF32X4 $0xee, Z14, Z10, Z17
	VADDPS     Z17, Z16, Z10
	VSHUFF32X4 $0x44, Z15, Z11, Z16
	VSHUFF32X4 $0xee, Z15, Z11, Z17
	VADDPS     Z17, Z16, Z11
	// s0+s1, s2+s3, s4+s5, s6+s7 (adjacent lanes), twice: the quarter sums
	VSHUFPS $0x88, Z1, Z0, Z16
	VSHUFPS $0xdd, Z1, Z0, Z17
	VADDPS  Z17, Z16, Z0
	VSHUFPS $0x88, Z3, Z2, Z16
	VSHUFPS $0xdd, Z3, Z2, Z17
	VADDPS  Z17, Z16, Z2
	VSHUFPS $0x88, Z9, Z8, Z16
	VSHUFPS $0xdd, Z9, Z8, Z17
	VADDPS  Z17, Z16, Z8
	VSHUFPS $0x88, Z11, Z10, Z16
	VSHUFPS $0xdd, Z11, Z10, Z17
	VADDPS  Z17, Z16, Z10
	VSHUFPS $0x88, Z2, Z0, Z16
	VSHUFPS $0xdd, Z2, Z0, Z17
	VADDPS  Z17, Z16, Z0
	VSHUFPS $0x88, Z10, Z8, Z16
	VSHUFPS $0xdd, Z10, Z8, Z17
	VADDPS  Z17, Z16, Z8
	// the two halves: lane i is position i
	VSHUFF32X4 $0x88, Z8, Z0, Z16
	VSHUFF32X4 $0xdd, Z8, Z0, Z17
	VADDPS     Z17, Z16, Z0
	VMULPS     Z31, Z0, Z0
	MOVQ       sh-8(SP), DX
	VMOVUPS    Z0, (DX)
	MOVQ       lds+8(FP), R8
	LEAQ       (DX)(R8*4), DX
	MOVQ       DX, sh-8(SP)
	MOVQ       hd+48(FP), R8
	LEAQ       (SI)(R8*4), SI
	DECQ       R15
	JNZ        scoreshead
	ADDQ       $64, AX
	MOVQ       R9, R8
	SHLQ       $4, R8
	ADDQ       R8, BX
	SUBQ       $16, CX
	JNZ        scoresgroup
	VZEROUPPER
	RET

// EXPATT512(X, E): E = expAtt(X) for every lane; the constants in Z18-Z30. Uses Z3-Z5, K2.
#define EXPATT512(X, E) \
	VMULPS      Z20, X, Z3; \
	VADDPS      Z21, Z3, Z3; \
	VRNDSCALEPS $1, Z3, Z3; \
	VMULPS      Z22, Z3, Z4; \
	VSUBPS      Z4, X, Z4; \
	VMULPS      Z23, Z3, Z5; \
	VADDPS      Z5, Z4, Z4; \
	VMULPS      Z4, Z24, E; \
	VADDPS      Z25, E, E; \
	VMULPS      Z4, E, E; \
	VADDPS      Z26, E, E; \
	VMULPS      Z4, E, E; \
	VADDPS      Z27, E, E; \
	VMULPS      Z4, E, E; \
	VADDPS      Z28, E, E; \
	VMULPS      Z4, E, E; \
	VADDPS      Z29, E, E; \
	VMULPS      Z4, E, E; \
	VMULPS      Z4, E, E; \
	VADDPS      Z4, E, E; \
	VADDPS      Z30, E, E; \
	VCVTTPS2DQ  Z3, Z3; \
	VPADDD      Z18, Z3, Z3; \
	VPSLLD      $23, Z3, Z3; \
	VMULPS      Z3, E, E; \
	VCMPPS      $0x15, Z19, X, K2; \
	VMOVAPS.Z   E, K2, E

// func attnSoftmaxAVX512(s *float32, n int) (m float32, l float32)
// m = max s_p, s_p = expAtt(s_p − m), l = Σ s_p in 16 lanes (lane p%16) combined as sum16; n ≥ 1.
TEXT ·attnSoftmaxAVX512(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ BX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the tail's lanes
	ANDQ $-16, BX // whole groups
	VBROADCASTSS attc<>+52(SB), Z0
	XORQ AX, AX
	CMPQ AX, BX
	JGE  smmaxtail

smmax:
	VMAXPS (DI)(AX*4), Z0, Z0
	ADDQ   $16, AX
	CMPQ   AX, BX
	JLT    smmax

smmaxtail:
	VMAXPS     (DI)(AX*4), Z0, K1, Z0
	VSHUFF32X4 $0x4e, Z0, Z0, Z1
	VMAXPS     Z1, Z0, Z0
	VSHUFF32X4 $0xb1, Z0, Z0, Z1
	VMAXPS     Z1, Z0, Z0
	VSHUFPS    $0x4e, Z0, Z0, Z1
	VMAXPS     Z1, Z0, Z0
	VSHUFPS    $0xb1, Z0, Z0, Z1
	VMAXPS     Z1, Z0, Z31 // m in every lane
	VMOVSS     X31, m+16(FP)
	VPBROADCASTD attc<>+48(SB), Z18
	VBROADCASTSS attc<>+44(SB), Z19
	VBROADCASTSS attc<>+0(SB), Z20
	VBROADCASTSS attc<>+4(SB), Z21
	VBROADCASTSS attc<>+8(SB), Z22
	VBROADCASTSS attc<>+12(SB), Z23
	VBROADCASTSS attc<>+16(SB), Z24
	VBROADCASTSS attc<>+20(SB), Z25
	VBROADCASTSS attc<>+24(SB), Z26
	VBROADCASTSS attc<>+28(SB), Z27
	VBROADCASTSS attc<>+32(SB), Z28
	VBROADCASTSS attc<>+36(SB), Z29
	VBROADCASTSS attc<>+40(SB), Z30
	VPXORD Z6, Z6, Z6 // the 16 lane sums
	XORQ AX, AX
	CMPQ AX, BX
	JGE  smexptail

smexp:
	VMOVUPS (DI)(AX*4), Z1
	VSUBPS  Z31, Z1, Z1
	EXPATT512(Z1, Z2)
	VMOVUPS Z2, (DI)(AX*4)
	VADDPS  Z2, Z6, Z6
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLT     smexp

smexptail:
	KORTESTW  K1, K1
	JZ        smsum
	VMOVUPS.Z (DI)(AX*4), K1, Z1
	VSUBPS    Z31, Z1, Z1
	EXPATT512(Z1, Z2)
	VMOVUPS   Z2, K1, (DI)(AX*4)
	VADDPS    Z2, Z6, K1, Z6

smsum:
	VEXTRACTF32X8 $1, Z6, Y7
	VADDPS        Y7, Y6, Y6
	VSHUFPS       $0xb1, Y6, Y6, Y7
	VADDPS        Y7, Y6, Y6
	VSHUFPS       $0x4e, Y6, Y6, Y7
	VADDPS        Y7, Y6, Y6
	VEXTRACTF32X4 $1, Y6, X7
	VADDSS        X7, X6, X6
	VMOVSS        X6, l+20(FP)
	VZEROUPPER
	RET

// WSHEAD512(EP, A0, A1, A2, A3): one head's four 16-lane sums += e_p·v_p (v_p in Z16-Z19).
#define WSHEAD512(EP, A0, A1, A2, A3) \
	VBROADCASTSS (EP)(AX*4), Z20; \
	VFMADD231PS  Z16, Z20, A0; \
	VFMADD231PS  Z17, Z20, A1; \
	VFMADD231PS  Z18, Z20, A2; \
	VFMADD231PS  Z19, Z20, A3

#define WSLOAD512 \
	PREFETCHT1 (SI); \
	PREFETCHT1 64(SI); \
	PREFETCHT1 128(SI); \
	PREFETCHT1 192(SI); \
	PREFETCHT1 (R14); \
	PREFETCHT1 64(R14); \
	PREFETCHT1 128(R14); \
	PREFETCHT1 192(R14); \
	ADDQ R9, SI; \
	ADDQ R9, R14; \
	VMOVUPS.Z (R8), K1, Z16; \
	VMOVUPS.Z 64(R8), K2, Z17; \
	VMOVUPS.Z 128(R8), K3, Z18; \
	VMOVUPS.Z 192(R8), K4, Z19

// func attnWsumAVX512(o *float32, ldo int, e *float32, lde int, v *float32, ldv int, n int, mask uint64, heads int, pk *float32, pv *float32, acc int)
// o[h·ldo+j] = Σ_{p<n} e[h·lde+p]·v[p·ldv+j] in position order, for h < g (1 to 4) and the
// columns j < 64 whose bits are set in mask (a run from bit 0); n ≥ 1; with acc ≠ 0 the sums
// start from o's values instead of 0. With each position it prefetches (into L2) the first
// 256 bytes of a row of pk and of pv (stride ldv): the next head's keys and values, read
// while this head computes.
TEXT ·attnWsumAVX512(SB), NOSPLIT, $0-96
	MOVQ mask+56(FP), AX
	KMOVW AX, K1
	SHRQ $16, AX
	KMOVW AX, K2
	SHRQ $16, AX
	KMOVW AX, K3
	SHRQ $16, AX
	KMOVW AX, K4
	MOVQ e+16(FP), R10
	MOVQ lde+24(FP), DX
	LEAQ (R10)(DX*4), R11
	LEAQ (R11)(DX*4), R12
	LEAQ (R12)(DX*4), R13
	MOVQ v+32(FP), R8
	MOVQ ldv+40(FP), R9
	SHLQ $2, R9
	MOVQ n+48(FP), CX
	MOVQ pk+72(FP), SI
	MOVQ pv+80(FP), R14
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
	MOVQ acc+88(FP), DX
	TESTQ DX, DX
	JZ   wsgo
	MOVQ o+0(FP), DI
	MOVQ ldo+8(FP), BX
	SHLQ $2, BX
	MOVQ heads+64(FP), DX
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z 64(DI), K2, Z1
	VMOVUPS.Z 128(DI), K3, Z2
	VMOVUPS.Z 192(DI), K4, Z3
	CMPQ DX, $2
	JLT  wsgo
	ADDQ BX, DI
	VMOVUPS.Z (DI), K1, Z4
	VMOVUPS.Z 64(DI), K2, Z5
	VMOVUPS.Z 128(DI), K3, Z6
	VMOVUPS.Z 192(DI), K4, Z7
	CMPQ DX, $3
	JLT  wsgo
	ADDQ BX, DI
	VMOVUPS.Z (DI), K1, Z8
	VMOVUPS.Z 64(DI), K2, Z9
	VMOVUPS.Z 128(DI), K3, Z10
	VMOVUPS.Z 192(DI), K4, Z11
	CMPQ DX, $4
	JLT  wsgo
	ADDQ BX, DI
	VMOVUPS.Z (DI), K1, Z12
	VMOVUPS.Z 64(DI), K2, Z13
	VMOVUPS.Z 128(DI), K3, Z14
	VMOVUPS.Z 192(DI), K4, Z15

wsgo:
	XORQ AX, AX
	MOVQ heads+64(FP), DX
	CMPQ DX, $2
	JLT  ws1
	JEQ  ws2
	CMPQ DX, $3
	JEQ  ws3

ws4:
	WSLOAD512
	WSHEAD512(R10, Z0, Z1, Z2, Z3)
	WSHEAD512(R11, Z4, Z5, Z6, Z7)
	WSHEAD512(R12, Z8, Z9, Z10, Z11)
	WSHEAD512(R13, Z12, Z13, Z14, Z15)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  ws4
	JMP  wsstore

ws3:
	WSLOAD512
	WSHEAD512(R10, Z0, Z1, Z2, Z3)
	WSHEAD512(R11, Z4, Z5, Z6, Z7)
	WSHEAD512(R12, Z8, Z9, Z10, Z11)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  ws3
	JMP  wsstore

ws2:
	WSLOAD512
	WSHEAD512(R10, Z0, Z1, Z2, Z3)
	WSHEAD512(R11, Z4, Z5, Z6, Z7)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  ws2
	JMP  wsstore

ws1:
	WSLOAD512
	WSHEAD512(R10, Z0, Z1, Z2, Z3)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  ws1

wsstore:
	MOVQ o+0(FP), DI
	MOVQ ldo+8(FP), R9
	SHLQ $2, R9
	MOVQ heads+64(FP), DX
	VMOVUPS Z0, K1, (DI)
	VMOVUPS Z1, K2, 64(DI)
	VMOVUPS Z2, K3, 128(DI)
	VMOVUPS Z3, K4, 192(DI)
	CMPQ DX, $2
	JLT  wsdone
	ADDQ R9, DI
	VMOVUPS Z4, K1, (DI)
	VMOVUPS Z5, K2, 64(DI)
	VMOVUPS Z6, K3, 128(DI)
	VMOVUPS Z7, K4, 192(DI)
	CMPQ DX, $3
	JLT  wsdone
	ADDQ R9, DI
	VMOVUPS Z8, K1, (DI)
	VMOVUPS Z9, K2, 64(DI)
	VMOVUPS Z10, K3, 128(DI)
	VMOVUPS Z11, K4, 192(DI)
	CMPQ DX, $4
	JLT  wsdone
	ADDQ R9, DI
	VMOVUPS Z12, K1, (DI)
	VMOVUPS Z13, K2, 64(DI)
	VMOVUPS Z14, K3, 128(DI)
	VMOVUPS Z15, K4, 192(DI)

wsdone:
	VZEROUPPER
	RET

// ---------------------------------------------------------------- AVX2

// func attnScoresAVX2(s *float32, lds int, q *float32, k *float32, ldk int, n int, hd int, heads int, scale float32)
// As attnScoresAVX512 with n a positive multiple of 4: four positions at a time, each one's
// 16 lanes in two registers (lanes 0-7, 8-15).
TEXT ·attnScoresAVX2(SB), NOSPLIT, $0-68
	MOVQ s+0(FP), DI
	MOVQ q+16(FP), SI
	MOVQ ldk+32(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	MOVQ heads+56(FP), R15

s2head:
	MOVQ k+24(FP), BX
	MOVQ n+40(FP), CX
	MOVQ DI, AX

s2group:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ BX, R8
	MOVQ SI, R14
	MOVQ hd+48(FP), DX
	SHRQ $4, DX
	JZ   s2tail

s2chunk:
	VMOVUPS (R14), Y8
	VMOVUPS 32(R14), Y9
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS 32(R8), Y9, Y1
	VFMADD231PS (R8)(R9*1), Y8, Y2
	VFMADD231PS 32(R8)(R9*1), Y9, Y3
	VFMADD231PS (R8)(R9*2), Y8, Y4
	VFMADD231PS 32(R8)(R9*2), Y9, Y5
	VFMADD231PS (R8)(R10*1), Y8, Y6
	VFMADD231PS 32(R8)(R10*1), Y9, Y7
	ADDQ    $64, R8
	ADDQ    $64, R14
	DECQ    DX
	JNZ     s2chunk

s2tail:
	MOVQ hd+48(FP), DX
	ANDQ $15, DX
	JZ   s2tree
	// lanes 0-7: min(rem, 8); lanes 8-15: rem − 8 when positive
	MOVQ DX, R11
	CMPQ R11, $8
	JLE  s2lo
	MOVQ $8, R11

s2lo:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, R11
	SUBQ R11, R12
	VMOVUPS (R12), Y10
	SUBQ $8, DX
	JGT  s2hi
	XORQ DX, DX

s2hi:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, DX
	SUBQ DX, R12
	VMOVUPS (R12), Y11
	VMASKMOVPS (R14), Y10, Y8
	VMASKMOVPS 32(R14), Y11, Y9
	VMASKMOVPS (R8), Y10, Y12
	VFMADD231PS Y12, Y8, Y0
	VMASKMOVPS 32(R8), Y11, Y13
	VFMADD231PS Y13, Y9, Y1
	VMASKMOVPS (R8)(R9*1), Y10, Y12
	VFMADD231PS Y12, Y8, Y2
	VMASKMOVPS 32(R8)(R9*1), Y11, Y13
	VFMADD231PS Y13, Y9, Y3
	VMASKMOVPS (R8)(R9*2), Y10, Y12
	VFMADD231PS Y12, Y8, Y4
	VMASKMOVPS 32(R8)(R9*2), Y11, Y13
	VFMADD231PS Y13, Y9, Y5
	VMASKMOVPS (R8)(R10*1), Y10, Y12
	VFMADD231PS Y12, Y8, Y6
	VMASKMOVPS 32(R8)(R10*1), Y11, Y13
	VFMADD231PS Y13, Y9, Y7

s2tree:
	// s_l = a_l + a_{l+8}, then adjacent lanes twice, then the two halves
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y5, Y4, Y4
	VADDPS       Y7, Y6, Y6
	VHADDPS      Y2, Y0, Y0
	VHADDPS      Y6, Y4, Y4
	VHADDPS      Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VBROADCASTSS scale+64(FP), X1
	VMULPS       X1, X0, X0
	VMOVUPS      X0, (AX)
	ADDQ         $16, AX
	LEAQ         (BX)(R9*4), BX
	SUBQ         $4, CX
	JNZ          s2group
	MOVQ         lds+8(FP), DX
	LEAQ         (DI)(DX*4), DI
	MOVQ         hd+48(FP), DX
	LEAQ         (SI)(DX*4), SI
	DECQ         R15
	JNZ          s2head
	VZEROUPPER
	RET

// EXPATT256(X, E): E = expAtt(X) for every lane of Y registers; uses Y3-Y5.
#define EXPATT256(X, E) \
	VMULPS       attc8<>+0(SB), X, Y3; \
	VADDPS       attc8<>+32(SB), Y3, Y3; \
	VROUNDPS     $1, Y3, Y3; \
	VMULPS       attc8<>+64(SB), Y3, Y4; \
	VSUBPS       Y4, X, Y4; \
	VMULPS       attc8<>+96(SB), Y3, Y5; \
	VADDPS       Y5, Y4, Y4; \
	VMULPS       Y4, Y8, E; \
	VADDPS       Y9, E, E; \
	VMULPS       Y4, E, E; \
	VADDPS       Y10, E, E; \
	VMULPS       Y4, E, E; \
	VADDPS       Y11, E, E; \
	VMULPS       Y4, E, E; \
	VADDPS       Y12, E, E; \
	VMULPS       Y4, E, E; \
	VADDPS       Y13, E, E; \
	VMULPS       Y4, E, E; \
	VMULPS       Y4, E, E; \
	VADDPS       Y4, E, E; \
	VADDPS       Y14, E, E; \
	VCVTTPS2DQ   Y3, Y3; \
	VPADDD       Y15, Y3, Y3; \
	VPSLLD       $23, Y3, Y3; \
	VMULPS       Y3, E, E; \
	VCMPPS       $0x15, attc8<>+128(SB), X, Y3; \
	VANDPS       Y3, E, E

// func attnSoftmaxAVX2(s *float32, n int) (m float32, l float32)
// As attnSoftmaxAVX512: sixteen positions at a time in two registers (lanes 0-7, 8-15).
TEXT ·attnSoftmaxAVX2(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ BX, DX
	ANDQ $15, DX // the tail's length
	ANDQ $-16, BX
	VBROADCASTSS attc<>+52(SB), Y0
	VMOVAPS Y0, Y1
	XORQ AX, AX
	CMPQ AX, BX
	JGE  s2maxtail

s2max:
	VMAXPS (DI)(AX*4), Y0, Y0
	VMAXPS 32(DI)(AX*4), Y1, Y1
	ADDQ   $16, AX
	CMPQ   AX, BX
	JLT    s2max

s2maxtail:
	// tail masks: Y6 lanes 0-7, Y7 lanes 8-15
	MOVQ DX, R11
	CMPQ R11, $8
	JLE  s2mlo
	MOVQ $8, R11

s2mlo:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, R11
	SUBQ R11, R12
	VMOVUPS (R12), Y6
	MOVQ DX, R11
	SUBQ $8, R11
	JGT  s2mhi
	XORQ R11, R11

s2mhi:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, R11
	SUBQ R11, R12
	VMOVUPS (R12), Y7
	TESTQ DX, DX
	JZ    s2mred
	VMASKMOVPS (DI)(AX*4), Y6, Y2
	VBLENDVPS  Y6, Y2, Y0, Y2 // masked-out lanes keep the running max
	VMAXPS     Y2, Y0, Y0
	VMASKMOVPS 32(DI)(AX*4), Y7, Y3
	VBLENDVPS  Y7, Y3, Y1, Y3
	VMAXPS     Y3, Y1, Y1

s2mred:
	VMAXPS       Y1, Y0, Y0
	VPERM2F128   $1, Y0, Y0, Y1
	VMAXPS       Y1, Y0, Y0
	VSHUFPS      $0x4e, Y0, Y0, Y1
	VMAXPS       Y1, Y0, Y0
	VSHUFPS      $0xb1, Y0, Y0, Y1
	VMAXPS       Y1, Y0, Y0 // m in every lane
	VMOVSS       X0, m+16(FP)
	VBROADCASTSS attc<>+16(SB), Y8
	VBROADCASTSS attc<>+20(SB), Y9
	VBROADCASTSS attc<>+24(SB), Y10
	VBROADCASTSS attc<>+28(SB), Y11
	VBROADCASTSS attc<>+32(SB), Y12
	VBROADCASTSS attc<>+36(SB), Y13
	VBROADCASTSS attc<>+40(SB), Y14
	VPBROADCASTD attc<>+48(SB), Y15
	VXORPS Y1, Y1, Y1 // lane sums 0-7
	VXORPS Y2, Y2, Y2 // lane sums 8-15
	XORQ AX, AX
	CMPQ AX, BX
	JGE  s2exptail

s2exp:
	VMOVUPS (DI)(AX*4), Y6
	VSUBPS  Y0, Y6, Y6
	EXPATT256(Y6, Y7)
	VMOVUPS Y7, (DI)(AX*4)
	VADDPS  Y7, Y1, Y1
	VMOVUPS 32(DI)(AX*4), Y6
	VSUBPS  Y0, Y6, Y6
	EXPATT256(Y6, Y7)
	VMOVUPS Y7, 32(DI)(AX*4)
	VADDPS  Y7, Y2, Y2
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLT     s2exp

s2exptail:
	TESTQ DX, DX
	JZ    s2sum
	MOVQ  DX, R11
	CMPQ  R11, $8
	JLE   s2elo
	MOVQ  $8, R11

s2elo:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, R11
	SUBQ R11, R12
	VMOVUPS    (R12), Y6
	VMASKMOVPS (DI)(AX*4), Y6, Y6
	VSUBPS     Y0, Y6, Y6
	EXPATT256(Y6, Y7)
	VMOVUPS    (R12), Y6
	VANDPS     Y6, Y7, Y7
	VMASKMOVPS Y7, Y6, (DI)(AX*4)
	VADDPS     Y7, Y1, Y1
	SUBQ       $8, DX
	JLE        s2sum
	LEAQ       attm<>+32(SB), R12
	SHLQ       $2, DX
	SUBQ       DX, R12
	VMOVUPS    (R12), Y6
	VMASKMOVPS 32(DI)(AX*4), Y6, Y6
	VSUBPS     Y0, Y6, Y6
	EXPATT256(Y6, Y7)
	VMOVUPS    (R12), Y6
	VANDPS     Y6, Y7, Y7
	VMASKMOVPS Y7, Y6, 32(DI)(AX*4)
	VADDPS     Y7, Y2, Y2

s2sum:
	VADDPS       Y2, Y1, Y1
	VSHUFPS      $0xb1, Y1, Y1, Y2
	VADDPS       Y2, Y1, Y1
	VSHUFPS      $0x4e, Y1, Y1, Y2
	VADDPS       Y2, Y1, Y1
	VEXTRACTF128 $1, Y1, X2
	VADDSS       X2, X1, X1
	VMOVSS       X1, l+20(FP)
	VZEROUPPER
	RET

#define WSHEAD256(EP, A0, A1) \
	VBROADCASTSS (EP)(AX*4), Y12; \
	VFMADD231PS  Y8, Y12, A0; \
	VFMADD231PS  Y9, Y12, A1

// func attnWsumAVX2(o *float32, ldo int, e *float32, lde int, v *float32, ldv int, n int, cols int, heads int, acc int)
// As attnWsumAVX512 for the first cols (1 to 16) columns, g from 1 to 4.
TEXT ·attnWsumAVX2(SB), NOSPLIT, $0-80
	MOVQ cols+56(FP), DX
	MOVQ DX, R11
	CMPQ R11, $8
	JLE  w2lo
	MOVQ $8, R11

w2lo:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, R11
	SUBQ R11, R12
	VMOVUPS (R12), Y10
	SUBQ $8, DX
	JGT  w2hi
	XORQ DX, DX

w2hi:
	LEAQ attm<>+32(SB), R12
	SHLQ $2, DX
	SUBQ DX, R12
	VMOVUPS (R12), Y11
	MOVQ e+16(FP), R10
	MOVQ lde+24(FP), DX
	LEAQ (R10)(DX*4), R11
	LEAQ (R11)(DX*4), R12
	LEAQ (R12)(DX*4), R13
	MOVQ v+32(FP), R8
	MOVQ ldv+40(FP), R9
	SHLQ $2, R9
	MOVQ n+48(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ acc+72(FP), DX
	TESTQ DX, DX
	JZ   w2go
	MOVQ o+0(FP), DI
	MOVQ ldo+8(FP), BX
	SHLQ $2, BX
	MOVQ heads+64(FP), DX
	VMASKMOVPS (DI), Y10, Y0
	VMASKMOVPS 32(DI), Y11, Y1
	CMPQ DX, $2
	JLT  w2go
	ADDQ BX, DI
	VMASKMOVPS (DI), Y10, Y2
	VMASKMOVPS 32(DI), Y11, Y3
	CMPQ DX, $3
	JLT  w2go
	ADDQ BX, DI
	VMASKMOVPS (DI), Y10, Y4
	VMASKMOVPS 32(DI), Y11, Y5
	CMPQ DX, $4
	JLT  w2go
	ADDQ BX, DI
	VMASKMOVPS (DI), Y10, Y6
	VMASKMOVPS 32(DI), Y11, Y7

w2go:
	XORQ AX, AX
	MOVQ heads+64(FP), DX
	CMPQ DX, $2
	JLT  w21
	JEQ  w22
	CMPQ DX, $3
	JEQ  w23

w24:
	VMASKMOVPS (R8), Y10, Y8
	VMASKMOVPS 32(R8), Y11, Y9
	WSHEAD256(R10, Y0, Y1)
	WSHEAD256(R11, Y2, Y3)
	WSHEAD256(R12, Y4, Y5)
	WSHEAD256(R13, Y6, Y7)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  w24
	JMP  w2store

w23:
	VMASKMOVPS (R8), Y10, Y8
	VMASKMOVPS 32(R8), Y11, Y9
	WSHEAD256(R10, Y0, Y1)
	WSHEAD256(R11, Y2, Y3)
	WSHEAD256(R12, Y4, Y5)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  w23
	JMP  w2store

w22:
	VMASKMOVPS (R8), Y10, Y8
	VMASKMOVPS 32(R8), Y11, Y9
	WSHEAD256(R10, Y0, Y1)
	WSHEAD256(R11, Y2, Y3)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  w22
	JMP  w2store

w21:
	VMASKMOVPS (R8), Y10, Y8
	VMASKMOVPS 32(R8), Y11, Y9
	WSHEAD256(R10, Y0, Y1)
	ADDQ R9, R8
	INCQ AX
	CMPQ AX, CX
	JLT  w21

w2store:
	MOVQ o+0(FP), DI
	MOVQ ldo+8(FP), R9
	SHLQ $2, R9
	MOVQ heads+64(FP), DX
	VMASKMOVPS Y0, Y10, (DI)
	VMASKMOVPS Y1, Y11, 32(DI)
	CMPQ DX, $2
	JLT  w2done
	ADDQ R9, DI
	VMASKMOVPS Y2, Y10, (DI)
	VMASKMOVPS Y3, Y11, 32(DI)
	CMPQ DX, $3
	JLT  w2done
	ADDQ R9, DI
	VMASKMOVPS Y4, Y10, (DI)
	VMASKMOVPS Y5, Y11, 32(DI)
	CMPQ DX, $4
	JLT  w2done
	ADDQ R9, DI
	VMASKMOVPS Y6, Y10, (DI)
	VMASKMOVPS Y7, Y11, 32(DI)

w2done:
	VZEROUPPER
	RET

// func attnMixAVX2(out, os, cs *float32, nb, hd, n int)
//
// out[j] = Σ_b cs[b]·os[b·hd+j] for j < n (a multiple of 8), from 0 in
// block order, VMULPS then VADDPS (each rounded, as the Go loop): 32
// columns at a time, then 8.
TEXT ·attnMixAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ os+8(FP), SI
	MOVQ cs+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ hd+32(FP), R8
	SHLQ $2, R8           // a row's stride in bytes
	MOVQ n+40(FP), R10
	SHLQ $2, R10          // the columns' bytes
	XORQ R9, R9           // column j, in bytes

mixwide:
	LEAQ 128(R9), R11
	CMPQ R11, R10
	JGT  mixnarrow
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	LEAQ (SI)(R9*1), R12  // &os[j]
	XORQ R13, R13         // block b

mixwideloop:
	VBROADCASTSS (DX)(R13*4), Y15
	VMULPS (R12), Y15, Y4
	VMULPS 32(R12), Y15, Y5
	VMULPS 64(R12), Y15, Y6
	VMULPS 96(R12), Y15, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	ADDQ R8, R12
	INCQ R13
	CMPQ R13, CX
	JLT  mixwideloop
	VMOVUPS Y0, (DI)(R9*1)
	VMOVUPS Y1, 32(DI)(R9*1)
	VMOVUPS Y2, 64(DI)(R9*1)
	VMOVUPS Y3, 96(DI)(R9*1)
	MOVQ R11, R9
	JMP  mixwide

mixnarrow:
	CMPQ R9, R10
	JGE  mixdone
	VXORPS Y0, Y0, Y0
	LEAQ (SI)(R9*1), R12
	XORQ R13, R13

mixnarrowloop:
	VBROADCASTSS (DX)(R13*4), Y15
	VMULPS (R12), Y15, Y4
	VADDPS Y4, Y0, Y0
	ADDQ R8, R12
	INCQ R13
	CMPQ R13, CX
	JLT  mixnarrowloop
	VMOVUPS Y0, (DI)(R9*1)
	ADDQ $32, R9
	JMP  mixnarrow

mixdone:
	VZEROUPPER
	RET
