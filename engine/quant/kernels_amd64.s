//go:build amd64 && !purego

// kernels_amd64.s: AVX2+FMA+F16C kernels for the block formats. The Go
// declarations and bound checks are in kernels_amd64.go.
//
// Every kernel turns 32 consecutive values of a row into Y4..Y7 (values
// 0–7, 8–15, 16–23, 24–31 of the group) with the same float32 operations
// as the scalar code in dequant.go (a product is fused with what follows only
// where it is exact: KVAL), so the values are bit-exact; the dequantization kernels store them, the
// matrix-vector kernels multiply-add them into the accumulators Y0..Y3
// (lanes 0–31, element e of the row into lane e mod 32) and combine the
// lanes as reduce32 does.
//
// Registers: DI out/dst, SI row/src, R8 row bytes, DX x, CX rows, BX
// blocks per row; R9 block pointer, R10 x pointer, R11 block count; AX,
// R12–R14 scratch. Y8/Y9 scales, Y10–Y12 scratch, Y13–Y15 constants.

#include "textflag.h"

// FMA4(xp, off): Y0..Y3 += Y4..Y7 · x[off/4 : off/4+32].
#define FMA4(xp, off) \
	VFMADD231PS (off)(xp), Y4, Y0; \
	VFMADD231PS (off+32)(xp), Y5, Y1; \
	VFMADD231PS (off+64)(xp), Y6, Y2; \
	VFMADD231PS (off+96)(xp), Y7, Y3

// STORE4(dp, off): dst[off/4 : off/4+32] = Y4..Y7.
#define STORE4(dp, off) \
	VMOVUPS Y4, (off)(dp); \
	VMOVUPS Y5, (off+32)(dp); \
	VMOVUPS Y6, (off+64)(dp); \
	VMOVUPS Y7, (off+96)(dp)

// REDUCE32 leaves reduce32(Y0..Y3) in X0: t = a_l + a_{l+16}, u = t_l + t_{l+8},
// ((u0+u1)+(u2+u3)) + ((u4+u5)+(u6+u7)).
#define REDUCE32 \
	VADDPS Y2, Y0, Y0; \
	VADDPS Y3, Y1, Y1; \
	VADDPS Y1, Y0, Y0; \
	VHADDPS Y0, Y0, Y0; \
	VHADDPS Y0, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0

#define ZERO4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// BCAST8(imm, Y): every byte of Y is imm8 (imm given as a 32-bit pattern).
#define BCAST32(imm, X, Y) \
	MOVL imm, AX; \
	VMOVD AX, X; \
	VPBROADCASTD X, Y

// HALF(p, off, X, Y): Y = the fp16 at off(p) as float32, in every lane.
// HALFT(p, Y) is the same for the fp16 at p through the table at R12
// (f16Table, made by this conversion: the same bits) with a broadcast
// load: no vector operation.
#define HALF(p, off, X, Y) \
	VPBROADCASTW (off)(p), X; \
	VCVTPH2PS X, Y

#define HALFT(p, Y) \
	MOVWQZX (p), AX; \
	VBROADCASTSS (R12)(AX*4), Y

// ---- F32, F16, BF16: 32 values ----

#define DQ_F32(p) \
	VMOVUPS (p), Y4; \
	VMOVUPS 32(p), Y5; \
	VMOVUPS 64(p), Y6; \
	VMOVUPS 96(p), Y7

#define DQ_F16(p) \
	VCVTPH2PS (p), Y4; \
	VCVTPH2PS 16(p), Y5; \
	VCVTPH2PS 32(p), Y6; \
	VCVTPH2PS 48(p), Y7

#define DQ_BF16(p) \
	VPMOVZXWD (p), Y4; \
	VPMOVZXWD 16(p), Y5; \
	VPMOVZXWD 32(p), Y6; \
	VPMOVZXWD 48(p), Y7; \
	VPSLLD $16, Y4, Y4; \
	VPSLLD $16, Y5, Y5; \
	VPSLLD $16, Y6, Y6; \
	VPSLLD $16, Y7, Y7

// ---- Q8_0: block of 34 bytes, fp16 d then int8 qs[32]; value d·q. The
// Q8_0 and Q4_0 kernels take f16Table's address as a last argument and
// keep it in R12. ----

#define Q80_G(p, off, Yd) \
	VPMOVSXBD (off)(p), Yd; \
	VCVTDQ2PS Yd, Yd; \
	VMULPS Y8, Yd, Yd

#define DQ_Q8_0(p) \
	HALFT(p, Y8); \
	Q80_G(p, 2, Y4); \
	Q80_G(p, 10, Y5); \
	Q80_G(p, 18, Y6); \
	Q80_G(p, 26, Y7)

// ---- Q4_0: block of 18 bytes, fp16 d then qs[16]; values 0–15 the low
// nibbles, 16–31 the high ones; value d·(q−8). Y15 = bytes 0x0f, Y14 = bytes 8. ----

#define DQ_Q4_0(p) \
	HALFT(p, Y8); \
	VMOVDQU 2(p), X9; \
	VPAND X15, X9, X10; \
	VPSRLW $4, X9, X11; \
	VPAND X15, X11, X11; \
	VPSUBB X14, X10, X10; \
	VPSUBB X14, X11, X11; \
	VPMOVSXBD X10, Y4; \
	VPSRLDQ $8, X10, X10; \
	VPMOVSXBD X10, Y5; \
	VPMOVSXBD X11, Y6; \
	VPSRLDQ $8, X11, X11; \
	VPMOVSXBD X11, Y7; \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y5, Y5; \
	VCVTDQ2PS Y6, Y6; \
	VCVTDQ2PS Y7, Y7; \
	VMULPS Y8, Y4, Y4; \
	VMULPS Y8, Y5, Y5; \
	VMULPS Y8, Y6, Y6; \
	VMULPS Y8, Y7, Y7

// ---- Q4_K and Q5_K: d, dmin, 12 bytes of 6-bit scales and mins at 4(p) ----

// KSCALES(p) stores d·sc_j at 4j(SP) and dmin·m_j at 32+4j(SP) for the
// eight sub-blocks (get_scale_min_k4, four at a time in 32-bit words, the
// eight scales and the eight mins each put together in a 64-bit register
// and moved to a vector register: not stored as two 4-byte halves and
// loaded as 8 bytes, a load the stores cannot forward).
#define KSCALES(p) \
	MOVL 4(p), AX; \
	MOVL 12(p), R13; \
	MOVL AX, R14; \
	SHRL $2, R14; \
	ANDL $0x30303030, R14; \
	MOVL R13, R12; \
	ANDL $0x0f0f0f0f, R12; \
	ORL R12, R14; \
	SHLQ $32, R14; \
	ANDL $0x3f3f3f3f, AX; \
	ORQ AX, R14; \
	VMOVQ R14, X10; \
	MOVL 8(p), R12; \
	MOVL R12, R14; \
	SHRL $2, R14; \
	ANDL $0x30303030, R14; \
	SHRL $4, R13; \
	ANDL $0x0f0f0f0f, R13; \
	ORL R13, R14; \
	SHLQ $32, R14; \
	ANDL $0x3f3f3f3f, R12; \
	ORQ R12, R14; \
	VMOVQ R14, X11; \
	HALF(p, 0, X8, Y8); \
	HALF(p, 2, X9, Y9); \
	VPMOVZXBD X10, Y10; \
	VCVTDQ2PS Y10, Y10; \
	VMULPS Y8, Y10, Y10; \
	VMOVUPS Y10, 0(SP); \
	VPMOVZXBD X11, Y11; \
	VCVTDQ2PS Y11, Y11; \
	VMULPS Y9, Y11, Y11; \
	VMOVUPS Y11, 32(SP)

// KSUB(j): Y8 = d·sc_j, Y9 = dmin·m_j in every lane.
#define KSUB(j) \
	VBROADCASTSS (4*(j))(SP), Y8; \
	VBROADCASTSS (32+4*(j))(SP), Y9

// KVAL(Yd): Yd = d1·q − m1 from the integers in Yd, in one fused step:
// d1 = d·sc (an fp16 times a 6-bit integer) has at most 17 significant bits
// and q at most 5, so d1·q is exact in float32 and the fused
// multiply-subtract rounds once where VMULPS then VSUBPS would: the same
// bits as dequantQ4_K / dequantQ5_K (TestMatVecPaths), one instruction fewer.
#define KVAL(Yd) \
	VCVTDQ2PS Yd, Yd; \
	VFMSUB213PS Y9, Y8, Yd

// Q4K_G: 8 values of sub-block 2c (NOP, A = VPAND, Y15: low nibbles) or
// 2c+1 (VPSRLD, $4: high nibbles) from qs bytes 32c+8k.. at 16(p).
#define Q4K_G(p, c, k, NOP, A, Yd) \
	VPMOVZXBD (16+32*c+8*k)(p), Yd; \
	NOP A, Yd, Yd; \
	KVAL(Yd)

#define Q4K_SUB(p, c, h, NOP, A) \
	KSUB(2*c+h); \
	Q4K_G(p, c, 0, NOP, A, Y4); \
	Q4K_G(p, c, 1, NOP, A, Y5); \
	Q4K_G(p, c, 2, NOP, A, Y6); \
	Q4K_G(p, c, 3, NOP, A, Y7)

// Q5_K: qh[32] at 16(p) (in Y12 for the whole block), qs[128] at 48(p).
// Q5K_PREP stages chunk c's 64 five-bit values as bytes: sub-block 2c's at
// 96(SP), 2c+1's at 128(SP). The fifth bit of value 64c+32h+l is bit 2c+h
// of qh[l], moved to bit 4 by the word shifts (SL, sl) and (SH, sh) and
// masked with Y14 = bytes 0x10 (no bit crosses into the kept one).
#define Q5K_PREP(p, c, SL, sl, SH, sh) \
	VMOVDQU (48+32*c)(p), Y10; \
	VPSRLW $4, Y10, Y11; \
	VPAND Y15, Y10, Y10; \
	VPAND Y15, Y11, Y11; \
	SL $sl, Y12, Y13; \
	VPAND Y14, Y13, Y13; \
	VPOR Y13, Y10, Y10; \
	SH $sh, Y12, Y13; \
	VPAND Y14, Y13, Y13; \
	VPOR Y13, Y11, Y11; \
	VMOVDQU Y10, 96(SP); \
	VMOVDQU Y11, 128(SP)

// Q5K_SUB(at, j): sub-block j's 32 values from the bytes staged at at(SP).
#define Q5K_G(at, Yd) \
	VPMOVZXBD (at)(SP), Yd; \
	KVAL(Yd)

#define Q5K_SUB(at, j) \
	KSUB(j); \
	Q5K_G(at, Y4); \
	Q5K_G(at+8, Y5); \
	Q5K_G(at+16, Y6); \
	Q5K_G(at+24, Y7)

// ---- Q6_K: ql[128] at 0, qh[64] at 128, int8 scales[16] at 192, fp16 d at 208 ----

// Q6SCALES(p) stores d·scales[s] at 4s(SP), s < 16.
#define Q6SCALES(p) \
	HALF(p, 208, X8, Y8); \
	VPMOVSXBD 192(p), Y10; \
	VCVTDQ2PS Y10, Y10; \
	VMULPS Y8, Y10, Y10; \
	VMOVUPS Y10, 0(SP); \
	VPMOVSXBD 200(p), Y11; \
	VCVTDQ2PS Y11, Y11; \
	VMULPS Y8, Y11, Y11; \
	VMOVUPS Y11, 32(SP)

// Q6K_PREP stages the 128 values of half n as signed bytes q−32 at
// 96(SP), quarter qi (values 128n+32qi..) at 96+32qi: the low four bits
// from ql bytes 64n.. (quarters 0, 1: low nibbles of ql[0:32], ql[32:64];
// 2, 3: their high nibbles), the top two from qh bytes 128+32n.. (bits
// 2qi, 2qi+1), moved to bits 4–5 by a word shift and masked with Y14 =
// bytes 0x30; Y13 = bytes 32.
#define Q6K_QUARTER(LO, HS, hs, at) \
	VPAND Y15, LO, Y4; \
	HS $hs, Y12, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4; \
	VPSUBB Y13, Y4, Y4; \
	VMOVDQU Y4, (at)(SP)

#define Q6K_PREP(p, n) \
	VMOVDQU (64*n)(p), Y10; \
	VMOVDQU (64*n+32)(p), Y11; \
	VMOVDQU (128+32*n)(p), Y12; \
	Q6K_QUARTER(Y10, VPSLLW, 4, 96); \
	Q6K_QUARTER(Y11, VPSLLW, 2, 128); \
	VPSRLW $4, Y10, Y10; \
	VPSRLW $4, Y11, Y11; \
	Q6K_QUARTER(Y10, VPSLLW, 0, 160); \
	Q6K_QUARTER(Y11, VPSRLW, 2, 192)

// Q6K_Q(n, qi): the 32 values of quarter qi of half n into Y4..Y7; values
// 8k.. of the quarter use scale 8n+2qi+k/2.
#define Q6K_G(at, Ys, Yd) \
	VPMOVSXBD (at)(SP), Yd; \
	VCVTDQ2PS Yd, Yd; \
	VMULPS Ys, Yd, Yd

#define Q6K_Q(n, qi) \
	VBROADCASTSS (4*(8*n+2*qi))(SP), Y8; \
	VBROADCASTSS (4*(8*n+2*qi+1))(SP), Y9; \
	Q6K_G(96+32*qi, Y8, Y4); \
	Q6K_G(96+32*qi+8, Y8, Y5); \
	Q6K_G(96+32*qi+16, Y9, Y6); \
	Q6K_G(96+32*qi+24, Y9, Y7)

// The sub-block sequences of a K-quant block, each followed by SINK(off):
// off is the byte offset of the sub-block's values in the row (x) or dst.
#define Q4K_BLOCK(p, SINK, r) \
	KSCALES(p); \
	Q4K_SUB(p, 0, 0, VPAND, Y15); SINK(r, 0); \
	Q4K_SUB(p, 0, 1, VPSRLD, $4); SINK(r, 128); \
	Q4K_SUB(p, 1, 0, VPAND, Y15); SINK(r, 256); \
	Q4K_SUB(p, 1, 1, VPSRLD, $4); SINK(r, 384); \
	Q4K_SUB(p, 2, 0, VPAND, Y15); SINK(r, 512); \
	Q4K_SUB(p, 2, 1, VPSRLD, $4); SINK(r, 640); \
	Q4K_SUB(p, 3, 0, VPAND, Y15); SINK(r, 768); \
	Q4K_SUB(p, 3, 1, VPSRLD, $4); SINK(r, 896)

#define Q5K_BLOCK(p, SINK, r) \
	KSCALES(p); \
	VMOVDQU 16(p), Y12; \
	Q5K_PREP(p, 0, VPSLLW, 4, VPSLLW, 3); \
	Q5K_SUB(96, 0); SINK(r, 0); \
	Q5K_SUB(128, 1); SINK(r, 128); \
	Q5K_PREP(p, 1, VPSLLW, 2, VPSLLW, 1); \
	Q5K_SUB(96, 2); SINK(r, 256); \
	Q5K_SUB(128, 3); SINK(r, 384); \
	Q5K_PREP(p, 2, VPSLLW, 0, VPSRLW, 1); \
	Q5K_SUB(96, 4); SINK(r, 512); \
	Q5K_SUB(128, 5); SINK(r, 640); \
	Q5K_PREP(p, 3, VPSRLW, 2, VPSRLW, 3); \
	Q5K_SUB(96, 6); SINK(r, 768); \
	Q5K_SUB(128, 7); SINK(r, 896)

#define Q6K_BLOCK(p, SINK, r) \
	Q6SCALES(p); \
	Q6K_PREP(p, 0); \
	Q6K_Q(0, 0); SINK(r, 0); \
	Q6K_Q(0, 1); SINK(r, 128); \
	Q6K_Q(0, 2); SINK(r, 256); \
	Q6K_Q(0, 3); SINK(r, 384); \
	Q6K_PREP(p, 1); \
	Q6K_Q(1, 0); SINK(r, 512); \
	Q6K_Q(1, 1); SINK(r, 640); \
	Q6K_Q(1, 2); SINK(r, 768); \
	Q6K_Q(1, 3); SINK(r, 896)

// ---- matrix-vector kernels ----
// Each block loop prefetches the bytes 1 KiB ahead of the block it reads
// (rows lie one after another, so across row ends too): on a matrix that
// streams from memory this is 1.2–1.7× the decode speed of leaving it to
// the hardware prefetcher (gpt2-124M, one thread).
// func matvecXAVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)
// out[r] = reduce32 of row r·x, for rows ≥ 1 rows of n ≥ 1 blocks (F32/F16/BF16:
// n groups of 32 values).

#define MATVEC_PROLOGUE \
	MOVQ out+0(FP), DI; \
	MOVQ w+8(FP), SI; \
	MOVQ rowBytes+16(FP), R8; \
	MOVQ x+24(FP), DX; \
	MOVQ rows+32(FP), CX; \
	MOVQ n+40(FP), BX

#define ROW_START \
	ZERO4; \
	MOVQ SI, R9; \
	MOVQ DX, R10; \
	MOVQ BX, R11

#define ROW_END \
	REDUCE32; \
	VMOVSS X0, (DI); \
	ADDQ $4, DI; \
	ADDQ R8, SI; \
	DECQ CX

// func dequantXAVX2(dst *float32, src *byte, n int): n ≥ 1 blocks (F16/BF16:
// groups of 32 values).
#define DEQ_PROLOGUE \
	MOVQ dst+0(FP), DI; \
	MOVQ src+8(FP), SI; \
	MOVQ n+16(FP), CX

TEXT ·matvecF32AVX2(SB), NOSPLIT, $0-48
	MATVEC_PROLOGUE
f32row:
	ROW_START
f32blk:
	PREFETCHT0 1024(R9)
	PREFETCHT0 1088(R9)
	DQ_F32(R9)
	FMA4(R10, 0)
	ADDQ $128, R9
	ADDQ $128, R10
	DECQ R11
	JNZ  f32blk
	ROW_END
	JNZ  f32row
	VZEROUPPER
	RET

TEXT ·matvecF16AVX2(SB), NOSPLIT, $0-48
	MATVEC_PROLOGUE
f16row:
	ROW_START
f16blk:
	PREFETCHT0 1024(R9)
	DQ_F16(R9)
	FMA4(R10, 0)
	ADDQ $64, R9
	ADDQ $128, R10
	DECQ R11
	JNZ  f16blk
	ROW_END
	JNZ  f16row
	VZEROUPPER
	RET

TEXT ·matvecBF16AVX2(SB), NOSPLIT, $0-48
	MATVEC_PROLOGUE
bf16row:
	ROW_START
bf16blk:
	PREFETCHT0 1024(R9)
	DQ_BF16(R9)
	FMA4(R10, 0)
	ADDQ $64, R9
	ADDQ $128, R10
	DECQ R11
	JNZ  bf16blk
	ROW_END
	JNZ  bf16row
	VZEROUPPER
	RET

TEXT ·matvecQ8_0AVX2(SB), NOSPLIT, $0-56
	MATVEC_PROLOGUE
	MOVQ tab+48(FP), R12
q80row:
	ROW_START
q80blk:
	PREFETCHT0 1024(R9)
	DQ_Q8_0(R9)
	FMA4(R10, 0)
	ADDQ $34, R9
	ADDQ $128, R10
	DECQ R11
	JNZ  q80blk
	ROW_END
	JNZ  q80row
	VZEROUPPER
	RET

TEXT ·matvecQ4_0AVX2(SB), NOSPLIT, $0-56
	MATVEC_PROLOGUE
	MOVQ tab+48(FP), R12
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x08080808, X14, Y14)
q40row:
	ROW_START
q40blk:
	PREFETCHT0 1024(R9)
	DQ_Q4_0(R9)
	FMA4(R10, 0)
	ADDQ $18, R9
	ADDQ $128, R10
	DECQ R11
	JNZ  q40blk
	ROW_END
	JNZ  q40row
	VZEROUPPER
	RET

TEXT ·matvecQ5_KAVX2(SB), NOSPLIT, $224-48
	MATVEC_PROLOGUE
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x10101010, X14, Y14)
q5krow:
	ROW_START
q5kblk:
	PREFETCHT0 1024(R9)
	PREFETCHT0 1088(R9)
	PREFETCHT0 1152(R9)
	Q5K_BLOCK(R9, FMA4, R10)
	ADDQ $176, R9
	ADDQ $1024, R10
	DECQ R11
	JNZ  q5kblk
	ROW_END
	JNZ  q5krow
	VZEROUPPER
	RET

TEXT ·matvecQ6_KAVX2(SB), NOSPLIT, $224-48
	MATVEC_PROLOGUE
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x30303030, X14, Y14)
	BCAST32($0x20202020, X13, Y13)
q6krow:
	ROW_START
q6kblk:
	PREFETCHT0 1024(R9)
	PREFETCHT0 1088(R9)
	PREFETCHT0 1152(R9)
	PREFETCHT0 1216(R9)
	Q6K_BLOCK(R9, FMA4, R10)
	ADDQ $210, R9
	ADDQ $1024, R10
	DECQ R11
	JNZ  q6kblk
	ROW_END
	JNZ  q6krow
	VZEROUPPER
	RET

// ---- dequantization kernels (DEQ_PROLOGUE above) ----

TEXT ·dequantF16AVX2(SB), NOSPLIT, $0-24
	DEQ_PROLOGUE
df16:
	DQ_F16(SI)
	STORE4(DI, 0)
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  df16
	VZEROUPPER
	RET

TEXT ·dequantBF16AVX2(SB), NOSPLIT, $0-24
	DEQ_PROLOGUE
dbf16:
	DQ_BF16(SI)
	STORE4(DI, 0)
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  dbf16
	VZEROUPPER
	RET

TEXT ·dequantQ8_0AVX2(SB), NOSPLIT, $0-32
	DEQ_PROLOGUE
	MOVQ tab+24(FP), R12
dq80:
	DQ_Q8_0(SI)
	STORE4(DI, 0)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  dq80
	VZEROUPPER
	RET

TEXT ·dequantQ4_0AVX2(SB), NOSPLIT, $0-32
	DEQ_PROLOGUE
	MOVQ tab+24(FP), R12
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x08080808, X14, Y14)
dq40:
	DQ_Q4_0(SI)
	STORE4(DI, 0)
	ADDQ $18, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  dq40
	VZEROUPPER
	RET

TEXT ·dequantQ4_KAVX2(SB), NOSPLIT, $96-24
	DEQ_PROLOGUE
	BCAST32($0x0f0f0f0f, X15, Y15)
dq4k:
	Q4K_BLOCK(SI, STORE4, DI)
	ADDQ $144, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  dq4k
	VZEROUPPER
	RET

TEXT ·dequantQ5_KAVX2(SB), NOSPLIT, $224-24
	DEQ_PROLOGUE
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x10101010, X14, Y14)
dq5k:
	Q5K_BLOCK(SI, STORE4, DI)
	ADDQ $176, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  dq5k
	VZEROUPPER
	RET

TEXT ·dequantQ6_KAVX2(SB), NOSPLIT, $224-24
	DEQ_PROLOGUE
	BCAST32($0x0f0f0f0f, X15, Y15)
	BCAST32($0x30303030, X14, Y14)
	BCAST32($0x20202020, X13, Y13)
dq6k:
	Q6K_BLOCK(SI, STORE4, DI)
	ADDQ $210, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  dq6k
	VZEROUPPER
	RET

// func dotAccAVX2(acc *[32]float32, w *float32, x *float32, n int)
// acc[l] += w[i]·x[i] (fused) for i ≡ l mod 32, i < 32n, n ≥ 1.
TEXT ·dotAccAVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
dacc:
	DQ_F32(SI)
	FMA4(DX, 0)
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ CX
	JNZ  dacc
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func dotAcc3AVX2(acc *[3][32]float32, w *float32, xs *[3]*float32, n int)
// dotAccAVX2 for three inputs over the same weights (each weight loaded
// once): acc[i][l] += w[j]·xs[i][j] (fused), j ≡ l mod 32, j < 32n, n ≥ 1.
// Each acc[i] ends as dotAccAVX2 would leave it, bit for bit.
TEXT ·dotAcc3AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ xs+16(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ n+24(FP), CX
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	VMOVUPS 256(DI), Y8
	VMOVUPS 288(DI), Y9
	VMOVUPS 320(DI), Y10
	VMOVUPS 352(DI), Y11
dacc3:
	VMOVUPS (SI), Y12
	VMOVUPS 32(SI), Y13
	VMOVUPS 64(SI), Y14
	VMOVUPS 96(SI), Y15
	VFMADD231PS (R8), Y12, Y0
	VFMADD231PS 32(R8), Y13, Y1
	VFMADD231PS 64(R8), Y14, Y2
	VFMADD231PS 96(R8), Y15, Y3
	VFMADD231PS (R9), Y12, Y4
	VFMADD231PS 32(R9), Y13, Y5
	VFMADD231PS 64(R9), Y14, Y6
	VFMADD231PS 96(R9), Y15, Y7
	VFMADD231PS (R10), Y12, Y8
	VFMADD231PS 32(R10), Y13, Y9
	VFMADD231PS 64(R10), Y14, Y10
	VFMADD231PS 96(R10), Y15, Y11
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $128, R10
	DECQ CX
	JNZ  dacc3
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	VZEROUPPER
	RET

// RU(p, off, Y): Y = u of the sums at off(p): t_l = a_l + a_{l+16}, u_l =
// t_l + t_{l+8} (REDUCE32's first three additions; Y12, Y13 scratch).
#define RU(p, off, Y) \
	VMOVUPS (off)(p), Y; \
	VMOVUPS (off+32)(p), Y12; \
	VADDPS (off+64)(p), Y, Y; \
	VADDPS (off+96)(p), Y12, Y12; \
	VADDPS Y12, Y, Y

// func reduceAccsAVX2(dst *float32, accs *[32]float32, n int)
// dst[i] = reduce32(&accs[i]) for i < n (n ≥ 1), in REDUCE32's order.
// Eight sums at a time: each one's u (RU), then VHADDPS across them: the
// first gives u0+u1, u2+u3 (and u4+u5, u6+u7 in the upper half), the
// second (u0+u1)+(u2+u3) and (u4+u5)+(u6+u7) for four sums, and the two
// halves are added last: the same additions as REDUCE32's, one sum per
// lane. The rest one at a time.
TEXT ·reduceAccsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ accs+8(FP), SI
	MOVQ n+16(FP), CX
racc8:
	CMPQ CX, $8
	JLT  racc1
	RU(SI, 0, Y0)
	RU(SI, 128, Y1)
	RU(SI, 256, Y2)
	RU(SI, 384, Y3)
	RU(SI, 512, Y4)
	RU(SI, 640, Y5)
	RU(SI, 768, Y6)
	RU(SI, 896, Y7)
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $1024, SI
	SUBQ $8, CX
	JMP  racc8
racc1:
	TESTQ CX, CX
	JZ   raccdone
racc:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	REDUCE32
	VMOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ $128, SI
	DECQ CX
	JNZ  racc
raccdone:
	VZEROUPPER
	RET

// ---- Q4_K, factored (matvecQ4_KFactAVX2, q4kUnpackAVX2, mmQ4_KFactAVX2):
// the sums of q4kfact_amd64.go in 8-lane halves, lane for lane the
// operations of the AVX-512 kernels, so the results are theirs bit for
// bit. Half g = 0 is their lanes 0–7 (qs bytes 64c…64c+31 of chunk c),
// g = 1 lanes 8–15 (64c+32…): a 32-byte load at byte offset o puts byte
// 4i+o of the half in lane i; q = that byte's low nibble (mask Y15 =
// dwords 15) or, shifted right by 4, its high one, converted exactly.
// Vector (c, o, h) of xp and of the unpacked rows is at 64(8c + 2o + h),
// its half g 32g further. ----

// FQ2(c, g, o, SINK, A, B): the low and high nibbles of load o of half g
// of chunk c (row at R9) as floats in Y11 and Y10, then SINK(c, g, o, A, B).
#define FQ2(c, g, o, SINK, A, B) \
	VMOVDQU (16+64*(c)+32*(g)+(o))(R9), Y10; \
	VPAND Y15, Y10, Y11; \
	VCVTDQ2PS Y11, Y11; \
	VPSRLD $4, Y10, Y10; \
	VPAND Y15, Y10, Y10; \
	VCVTDQ2PS Y10, Y10; \
	SINK(c, g, o, A, B)

// FMUL0, FMUL: A_lo (A) and A_hi (B) = (o = 0), or += (o > 0), q·x (x at R10).
#define FMUL0(c, g, o, A, B) \
	VMULPS ((8*(c)+2*(o))*64+32*(g))(R10), Y11, A; \
	VMULPS ((8*(c)+2*(o)+1)*64+32*(g))(R10), Y10, B

#define FMUL(c, g, o, A, B) \
	VFMADD231PS ((8*(c)+2*(o))*64+32*(g))(R10), Y11, A; \
	VFMADD231PS ((8*(c)+2*(o)+1)*64+32*(g))(R10), Y10, B

// FSTORE: the two as floats into the unpacked row at DI.
#define FSTORE(c, g, o, A, B) \
	VMOVUPS Y11, ((8*(c)+2*(o))*64+32*(g))(DI); \
	VMOVUPS Y10, ((8*(c)+2*(o)+1)*64+32*(g))(DI)

// FG2(c, g, Alo, Ahi, tot): half g of chunk c: A over the four loads,
// then tot += A_lo·d·sc_{4c+2g}, tot += A_hi·d·sc_{4c+2g+1} (KSCALES's, at SP).
#define FG2(c, g, Alo, Ahi, tot) \
	FQ2(c, g, 0, FMUL0, Alo, Ahi); \
	FQ2(c, g, 1, FMUL, Alo, Ahi); \
	FQ2(c, g, 2, FMUL, Alo, Ahi); \
	FQ2(c, g, 3, FMUL, Alo, Ahi); \
	VBROADCASTSS (4*(4*(c)+2*(g)))(SP), Y14; \
	VFMADD231PS Y14, Alo, tot; \
	VBROADCASTSS (4*(4*(c)+2*(g)+1))(SP), Y14; \
	VFMADD231PS Y14, Ahi, tot

// func matvecQ4_KFactAVX2(out *float32, w *byte, rowBytes int, xp *float32, rows int, n int)
// One row at a time: Y0|Y1 its 16 chunk sums, Y2 its 8 min sums, Y3 zero,
// so REDUCE32 combines them as the AVX-512 kernel's RED does. xp as
// matvecQ4_KFactAVX512's; reads up to 3 bytes past each row's last block.
TEXT ·matvecQ4_KFactAVX2(SB), NOSPLIT, $96-48
	MATVEC_PROLOGUE
	MOVL $15, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
q4kfrow:
	ROW_START
q4kfblk2:
	PREFETCHT0 1024(R9)
	PREFETCHT0 1088(R9)
	PREFETCHT0 1152(R9)
	KSCALES(R9)
	FG2(0, 0, Y4, Y6, Y0)
	FG2(0, 1, Y5, Y7, Y1)
	FG2(1, 0, Y4, Y6, Y0)
	FG2(1, 1, Y5, Y7, Y1)
	VMOVUPS 32(SP), Y14
	VFNMADD231PS 1024(R10), Y14, Y2
	ADDQ $144, R9
	ADDQ $1088, R10
	DECQ R11
	JNZ  q4kfblk2
	ROW_END
	JNZ  q4kfrow
	VZEROUPPER
	RET

// USC(c): chunk c's scale vectors (d·sc_{4c} | d·sc_{4c+2} at 1024+128c,
// d·sc_{4c+1} | d·sc_{4c+3} 64 further) into the unpacked row at DI.
#define USC(c) \
	VBROADCASTSS (16*(c))(SP), Y14; \
	VMOVUPS Y14, (1024+128*(c))(DI); \
	VBROADCASTSS (16*(c)+8)(SP), Y14; \
	VMOVUPS Y14, (1024+128*(c)+32)(DI); \
	VBROADCASTSS (16*(c)+4)(SP), Y14; \
	VMOVUPS Y14, (1088+128*(c))(DI); \
	VBROADCASTSS (16*(c)+12)(SP), Y14; \
	VMOVUPS Y14, (1088+128*(c)+32)(DI)

#define UG2(c, g) \
	FQ2(c, g, 0, FSTORE, _, _); \
	FQ2(c, g, 1, FSTORE, _, _); \
	FQ2(c, g, 2, FSTORE, _, _); \
	FQ2(c, g, 3, FSTORE, _, _)

// func q4kUnpackAVX2(dst *float32, w *byte, rowBytes int, n int)
// q4kUnpack4AVX512's output, the same values: four rows (rowBytes apart; 0
// repeats one) of n super-blocks, super-block b of row r at 5376b + 1344r
// bytes of dst. Reads up to 3 bytes past each row's last block.
TEXT ·q4kUnpackAVX2(SB), NOSPLIT, $96-32
	MOVQ dst+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ rowBytes+16(FP), R8
	MOVL $15, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVQ $4, CX
q4kunrow:
	MOVQ SI, R9
	MOVQ DX, DI
	MOVQ n+24(FP), R11
q4kunblk2:
	KSCALES(R9)
	USC(0)
	USC(1)
	VMOVUPS 32(SP), Y14
	VMOVUPS Y14, 1280(DI)
	UG2(0, 0)
	UG2(0, 1)
	UG2(1, 0)
	UG2(1, 1)
	ADDQ $144, R9
	ADDQ $5376, DI
	DECQ R11
	JNZ  q4kunblk2
	ADDQ R8, SI
	ADDQ $1344, DX
	DECQ CX
	JNZ  q4kunrow
	VZEROUPPER
	RET

// MQ2(r, v, OP): rows r and r+1 (unpacked at R11, 1344 bytes apart), the
// input's vector v = 8c + 2o + h (halves in Y12, Y13, at R10): their A
// halves (Y6|Y7, Y8|Y9) = (OP VMULPS) or += (VFMADD231PS) q·x.
#define MQ2(r, v, OP) \
	VMOVUPS (64*(v))(R10), Y12; \
	VMOVUPS (64*(v)+32)(R10), Y13; \
	OP (1344*(r)+64*(v))(R11), Y12, Y6; \
	OP (1344*(r)+64*(v)+32)(R11), Y13, Y7; \
	OP (1344*(r)+1344+64*(v))(R11), Y12, Y8; \
	OP (1344*(r)+1344+64*(v)+32)(R11), Y13, Y9

// MCH2(r, c, h): chunk c's nibble h for rows r, r+1: A over o = 0…3,
// then their chunk sums (Y0|Y1, Y2|Y3) += A·S_h(c).
#define MCH2(r, c, h) \
	MQ2(r, 8*(c)+(h), VMULPS); \
	MQ2(r, 8*(c)+2+(h), VFMADD231PS); \
	MQ2(r, 8*(c)+4+(h), VFMADD231PS); \
	MQ2(r, 8*(c)+6+(h), VFMADD231PS); \
	VFMADD231PS (1344*(r)+1024+128*(c)+64*(h))(R11), Y6, Y0; \
	VFMADD231PS (1344*(r)+1024+128*(c)+64*(h)+32)(R11), Y7, Y1; \
	VFMADD231PS (1344*(r)+2368+128*(c)+64*(h))(R11), Y8, Y2; \
	VFMADD231PS (1344*(r)+2368+128*(c)+64*(h)+32)(R11), Y9, Y3

// Rows r, r+1 for the current input: MLOAD2 (or MZERO2 when first) their
// sums from accs, MBLOCK2 one super-block, MSTORE2 the sums back (lanes
// 24–31 stored as zeros).
#define MLOAD2(r) \
	VMOVUPS (128*(r))(DI), Y0; \
	VMOVUPS (128*(r)+32)(DI), Y1; \
	VMOVUPS (128*(r)+128)(DI), Y2; \
	VMOVUPS (128*(r)+160)(DI), Y3; \
	VMOVUPS (128*(r)+64)(DI), Y4; \
	VMOVUPS (128*(r)+192)(DI), Y5

#define MZERO2 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5

#define MBLOCK2(r) \
	MCH2(r, 0, 0); \
	MCH2(r, 0, 1); \
	MCH2(r, 1, 0); \
	MCH2(r, 1, 1); \
	VMOVUPS 1024(R10), Y12; \
	VFNMADD231PS (1344*(r)+1280)(R11), Y12, Y4; \
	VFNMADD231PS (1344*(r)+2624)(R11), Y12, Y5; \
	ADDQ $1088, R10; \
	ADDQ $5376, R11

#define MSTORE2(r) \
	VXORPS Y12, Y12, Y12; \
	VMOVUPS Y0, (128*(r))(DI); \
	VMOVUPS Y1, (128*(r)+32)(DI); \
	VMOVUPS Y4, (128*(r)+64)(DI); \
	VMOVUPS Y12, (128*(r)+96)(DI); \
	VMOVUPS Y2, (128*(r)+128)(DI); \
	VMOVUPS Y3, (128*(r)+160)(DI); \
	VMOVUPS Y5, (128*(r)+192)(DI); \
	VMOVUPS Y12, (128*(r)+224)(DI)

// func mmQ4_KFactAVX2(accs *[32]float32, qb *float32, xp *float32, xstride int, n int, nsb int, first int)
// mmQ4_KFactAVX512 in 8-lane halves, two rows at a time (Y0|Y1, Y2|Y3 the
// two rows' chunk sums, Y4, Y5 their min sums, Y6–Y9 their A halves):
// each (row, input)'s operations and their order are the AVX-512 kernels'.
TEXT ·mmQ4_KFactAVX2(SB), NOSPLIT, $0-56
	MOVQ accs+0(FP), DI
	MOVQ qb+8(FP), SI
	MOVQ xp+16(FP), DX
	MOVQ xstride+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ nsb+40(FP), BX
	MOVQ first+48(FP), AX
mmq4k2vin:
	TESTQ AX, AX
	JNZ  mmq4kvazero
	MLOAD2(0)
	JMP  mmq4kvago
mmq4kvazero:
	MZERO2
mmq4kvago:
	MOVQ DX, R10
	MOVQ SI, R11
	MOVQ BX, R9
mmq4kvablk:
	MBLOCK2(0)
	DECQ R9
	JNZ  mmq4kvablk
	MSTORE2(0)
	TESTQ AX, AX
	JNZ  mmq4kvbzero
	MLOAD2(2)
	JMP  mmq4kvbgo
mmq4kvbzero:
	MZERO2
mmq4kvbgo:
	MOVQ DX, R10
	MOVQ SI, R11
	MOVQ BX, R9
mmq4kvbblk:
	MBLOCK2(2)
	DECQ R9
	JNZ  mmq4kvbblk
	MSTORE2(2)
	ADDQ $512, DI
	ADDQ R8, DX
	DECQ CX
	JNZ  mmq4k2vin
	VZEROUPPER
	RET
