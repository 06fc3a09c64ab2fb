//go:build amd64 && !purego

// kernels512_amd64.s: AVX-512 matrix-vector kernels for Q8_0, Q4_0, Q4_K,
// Q5_K and Q6_K, four rows at a time (each block of x loaded once for the four), and
// MatMat's AVX-512 steps. The Go wrappers are in kernels_amd64.go and
// q4kfact_amd64.go (Q4_K).
//
// Q4_K's kernels compute the factored sum q4kfact_amd64.go describes, as
// the AVX2 ones do in 8-lane halves (same bits). Every other kernel here
// gives, bit for bit, the AVX2 kernels' results (kernels_amd64.s): a
// block's 32
// values are dequantized with the same float32 operations (convert, then
// multiply by the scale, never fused), lanes 0–15 and 16–31 of a row's
// sums are one 512-bit register each (the AVX2 kernels' Y0|Y1 and Y2|Y3:
// element e of the row into lane e mod 32), each multiply-add is fused as
// there, and a row is reduced in reduce32's order: t = a_lo + a_hi
// (t_l = a_l + a_{l+16}), u_l = t_l + t_{l+8}, then REDUCE32's last steps.
//
// Registers: DI out, SI row 0's blocks, R8 row bytes, DX x, CX rows (a
// multiple of 4), BX blocks per row (the Q8_0 and Q4_0 kernels: the fp16
// table's address, the block count read from the frame); R9/R12/R13/R14 the four rows' block
// pointers, R10 x pointer, R11 block count. Z0–Z7 the four rows' sums,
// Z16–Z18 scratch, Z30/Z31 x, Z9/Z13/Z15 constants.

#include "textflag.h"

// q40table: the float32 values −8, −7, …, 7 (a Q4_0 nibble j stands for j−8).
DATA q40table<>+0(SB)/4, $0xc1000000
DATA q40table<>+4(SB)/4, $0xc0e00000
DATA q40table<>+8(SB)/4, $0xc0c00000
DATA q40table<>+12(SB)/4, $0xc0a00000
DATA q40table<>+16(SB)/4, $0xc0800000
DATA q40table<>+20(SB)/4, $0xc0400000
DATA q40table<>+24(SB)/4, $0xc0000000
DATA q40table<>+28(SB)/4, $0xbf800000
DATA q40table<>+32(SB)/4, $0x00000000
DATA q40table<>+36(SB)/4, $0x3f800000
DATA q40table<>+40(SB)/4, $0x40000000
DATA q40table<>+44(SB)/4, $0x40400000
DATA q40table<>+48(SB)/4, $0x40800000
DATA q40table<>+52(SB)/4, $0x40a00000
DATA q40table<>+56(SB)/4, $0x40c00000
DATA q40table<>+60(SB)/4, $0x40e00000
GLOBL q40table<>(SB), RODATA|NOPTR, $64

// q4kiota: the float32 values 0, 1, …, 15.
DATA q4kiota<>+0(SB)/4, $0x00000000
DATA q4kiota<>+4(SB)/4, $0x3f800000
DATA q4kiota<>+8(SB)/4, $0x40000000
DATA q4kiota<>+12(SB)/4, $0x40400000
DATA q4kiota<>+16(SB)/4, $0x40800000
DATA q4kiota<>+20(SB)/4, $0x40a00000
DATA q4kiota<>+24(SB)/4, $0x40c00000
DATA q4kiota<>+28(SB)/4, $0x40e00000
DATA q4kiota<>+32(SB)/4, $0x41000000
DATA q4kiota<>+36(SB)/4, $0x41100000
DATA q4kiota<>+40(SB)/4, $0x41200000
DATA q4kiota<>+44(SB)/4, $0x41300000
DATA q4kiota<>+48(SB)/4, $0x41400000
DATA q4kiota<>+52(SB)/4, $0x41500000
DATA q4kiota<>+56(SB)/4, $0x41600000
DATA q4kiota<>+60(SB)/4, $0x41700000
GLOBL q4kiota<>(SB), RODATA|NOPTR, $64

// PF4(off): prefetch the four rows after these, off bytes into the block
// being read (the engine's gemv kernels prefetch one row group ahead the
// same way; without it a Q8_0 matrix streams at half the BF16 kernel's rate).
#define PF4(off) \
	PREFETCHT0 off(R9)(R8*4); \
	PREFETCHT0 off(R12)(R8*4); \
	PREFETCHT0 off(R13)(R8*4); \
	PREFETCHT0 off(R14)(R8*4)

// X2Z: Z30, Z31 = the block's x values 0–15 and 16–31.
#define X2Z \
	VMOVUPS (R10), Z30; \
	VMOVUPS 64(R10), Z31

// Q80ROW(p, lo, hi): lo += d·q[0:16]·x, hi += d·q[16:32]·x for the Q8_0
// block at p. The fp16 scale d becomes float32 through the table at BX
// (f16Table: every fp16 value converted by VCVTPH2PS, so the same bits),
// read by the multiplies' broadcast operand: no vector operation for it,
// where the broadcast and conversion took three of eleven.
#define Q80ROW(p, lo, hi) \
	MOVWQZX (p), AX; \
	VPMOVSXBD 2(p), Z17; \
	VPMOVSXBD 18(p), Z18; \
	VCVTDQ2PS Z17, Z17; \
	VCVTDQ2PS Z18, Z18; \
	VMULPS.BCST (BX)(AX*4), Z17, Z17; \
	VMULPS.BCST (BX)(AX*4), Z18, Z18; \
	VFMADD231PS Z30, Z17, lo; \
	VFMADD231PS Z31, Z18, hi

// Q40ROW(p, lo, hi): the same for the Q4_0 block at p: values 0–15 the low
// nibbles, 16–31 the high ones, each minus 8, times d. The block's 16
// possible values (j−8)·d are made once from Z15 = the float32 j−8 (what
// VCVTDQ2PS gives for the integer j−8) times d (from the table at BX, as
// Q80ROW), each the product the AVX2 kernel rounds, and each nibble j
// picks its own. VPERMPS reads only an index's low four bits: the low
// nibble needs no mask, the high one a shift.
#define Q40ROW(p, lo, hi) \
	MOVWQZX (p), AX; \
	VMULPS.BCST (BX)(AX*4), Z15, Z16; \
	VPMOVZXBD 2(p), Z17; \
	VPSRLD $4, Z17, Z18; \
	VPERMPS Z16, Z17, Z17; \
	VPERMPS Z16, Z18, Z18; \
	VFMADD231PS Z30, Z17, lo; \
	VFMADD231PS Z31, Z18, hi

// RED(lo, hi, Ylo, Yhi, Xlo, Xhi, off): out[off/4] = reduce32 of the row's lo|hi.
#define RED(lo, hi, Ylo, Yhi, Xlo, Xhi, off) \
	VADDPS hi, lo, lo; \
	VEXTRACTF32X8 $1, lo, Yhi; \
	VADDPS Yhi, Ylo, Ylo; \
	VHADDPS Ylo, Ylo, Ylo; \
	VHADDPS Ylo, Ylo, Ylo; \
	VEXTRACTF128 $1, Ylo, Xhi; \
	VADDPS Xhi, Xlo, Xlo; \
	VMOVSS Xlo, off(DI)

#define PROLOGUE4 \
	MOVQ out+0(FP), DI; \
	MOVQ w+8(FP), SI; \
	MOVQ rowBytes+16(FP), R8; \
	MOVQ x+24(FP), DX; \
	MOVQ rows+32(FP), CX; \
	MOVQ n+40(FP), BX

// ROWS4_BASE zeroes the four rows' sums and points R9/R12/R13/R14 at
// their blocks, R10 at x; ROWS4_START then takes the block count from BX.
#define ROWS4_BASE \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	MOVQ SI, R9; \
	LEAQ (SI)(R8*1), R12; \
	LEAQ (SI)(R8*2), R13; \
	LEAQ (R12)(R8*2), R14; \
	MOVQ DX, R10

#define ROWS4_START \
	ROWS4_BASE; \
	MOVQ BX, R11

#define ROWS4_END \
	RED(Z0, Z1, Y0, Y1, X0, X1, 0); \
	RED(Z2, Z3, Y2, Y3, X2, X3, 4); \
	RED(Z4, Z5, Y4, Y5, X4, X5, 8); \
	RED(Z6, Z7, Y6, Y7, X6, X7, 12); \
	ADDQ $16, DI; \
	LEAQ (SI)(R8*4), SI; \
	SUBQ $4, CX

// ROWS4_STARTT is ROWS4_START for the kernels that keep the fp16 table's
// address in BX: the block count comes from the frame.
#define ROWS4_STARTT \
	ROWS4_BASE; \
	MOVQ n+40(FP), R11

// func matvecQ8_0AVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)
// rows a positive multiple of 4, n ≥ 1 blocks per row, tab f16Table.
TEXT ·matvecQ8_0AVX512(SB), NOSPLIT, $0-56
	PROLOGUE4
	MOVQ tab+48(FP), BX
q80z4:
	ROWS4_STARTT
q80zblk:
	PF4(0)
	X2Z
	Q80ROW(R9, Z0, Z1)
	Q80ROW(R12, Z2, Z3)
	Q80ROW(R13, Z4, Z5)
	Q80ROW(R14, Z6, Z7)
	ADDQ $34, R9
	ADDQ $34, R12
	ADDQ $34, R13
	ADDQ $34, R14
	ADDQ $128, R10
	DECQ R11
	JNZ  q80zblk
	ROWS4_END
	JNZ  q80z4
	VZEROUPPER
	RET

// func matvecQ4_0AVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)
TEXT ·matvecQ4_0AVX512(SB), NOSPLIT, $0-56
	PROLOGUE4
	MOVQ tab+48(FP), BX
	MOVQ $q40table<>(SB), AX
	VMOVUPS (AX), Z15
q40z4:
	ROWS4_STARTT
q40zblk:
	PF4(0)
	X2Z
	Q40ROW(R9, Z0, Z1)
	Q40ROW(R12, Z2, Z3)
	Q40ROW(R13, Z4, Z5)
	Q40ROW(R14, Z6, Z7)
	ADDQ $18, R9
	ADDQ $18, R12
	ADDQ $18, R13
	ADDQ $18, R14
	ADDQ $128, R10
	DECQ R11
	JNZ  q40zblk
	ROWS4_END
	JNZ  q40z4
	VZEROUPPER
	RET

// ---- Q4_K: 144-byte super-blocks: fp16 d, dmin; 12 bytes of 6-bit scales
// and mins at 4(p); qs[128] at 16(p), bytes 32c.. holding sub-block 2c in
// their low nibbles and 2c+1 in their high ones. Value d·sc_j·q − dmin·m_j,
// with d·sc_j and dmin·m_j rounded first (dequantQ4_K, KSCALES; KSC4). ----

// ksc4: KSC4's constants: the dword shifts 0, 4, 0, 0 in every 128-bit lane
// (at 0); the word indexes of d, dmin of rows 0–3 (at 64); for each row r
// the dword indexes 2r (×8) and 2r+1 (×8) (at 128+64r); the byte masks
// 0x3f, 0x30 and 0x0f (at 384, 388, 392).
DATA ksc4<>+0(SB)/8, $0x0000000400000000
DATA ksc4<>+8(SB)/8, $0x0000000000000000
DATA ksc4<>+16(SB)/8, $0x0000000400000000
DATA ksc4<>+24(SB)/8, $0x0000000000000000
DATA ksc4<>+32(SB)/8, $0x0000000400000000
DATA ksc4<>+40(SB)/8, $0x0000000000000000
DATA ksc4<>+48(SB)/8, $0x0000000400000000
DATA ksc4<>+56(SB)/8, $0x0000000000000000
DATA ksc4<>+64(SB)/8, $0x0009000800010000
DATA ksc4<>+72(SB)/8, $0x0019001800110010
DATA ksc4<>+80(SB)/8, $0x0000000000000000
DATA ksc4<>+88(SB)/8, $0x0000000000000000
DATA ksc4<>+96(SB)/8, $0x0000000000000000
DATA ksc4<>+104(SB)/8, $0x0000000000000000
DATA ksc4<>+112(SB)/8, $0x0000000000000000
DATA ksc4<>+120(SB)/8, $0x0000000000000000
DATA ksc4<>+128(SB)/8, $0x0000000000000000
DATA ksc4<>+136(SB)/8, $0x0000000000000000
DATA ksc4<>+144(SB)/8, $0x0000000000000000
DATA ksc4<>+152(SB)/8, $0x0000000000000000
DATA ksc4<>+160(SB)/8, $0x0000000100000001
DATA ksc4<>+168(SB)/8, $0x0000000100000001
DATA ksc4<>+176(SB)/8, $0x0000000100000001
DATA ksc4<>+184(SB)/8, $0x0000000100000001
DATA ksc4<>+192(SB)/8, $0x0000000200000002
DATA ksc4<>+200(SB)/8, $0x0000000200000002
DATA ksc4<>+208(SB)/8, $0x0000000200000002
DATA ksc4<>+216(SB)/8, $0x0000000200000002
DATA ksc4<>+224(SB)/8, $0x0000000300000003
DATA ksc4<>+232(SB)/8, $0x0000000300000003
DATA ksc4<>+240(SB)/8, $0x0000000300000003
DATA ksc4<>+248(SB)/8, $0x0000000300000003
DATA ksc4<>+256(SB)/8, $0x0000000400000004
DATA ksc4<>+264(SB)/8, $0x0000000400000004
DATA ksc4<>+272(SB)/8, $0x0000000400000004
DATA ksc4<>+280(SB)/8, $0x0000000400000004
DATA ksc4<>+288(SB)/8, $0x0000000500000005
DATA ksc4<>+296(SB)/8, $0x0000000500000005
DATA ksc4<>+304(SB)/8, $0x0000000500000005
DATA ksc4<>+312(SB)/8, $0x0000000500000005
DATA ksc4<>+320(SB)/8, $0x0000000600000006
DATA ksc4<>+328(SB)/8, $0x0000000600000006
DATA ksc4<>+336(SB)/8, $0x0000000600000006
DATA ksc4<>+344(SB)/8, $0x0000000600000006
DATA ksc4<>+352(SB)/8, $0x0000000700000007
DATA ksc4<>+360(SB)/8, $0x0000000700000007
DATA ksc4<>+368(SB)/8, $0x0000000700000007
DATA ksc4<>+376(SB)/8, $0x0000000700000007
DATA ksc4<>+384(SB)/8, $0x303030303f3f3f3f
DATA ksc4<>+392(SB)/8, $0x000000000f0f0f0f
GLOBL ksc4<>(SB), RODATA|NOPTR, $400

// KSC4 stores the four rows' (R9, R12, R13, R14) d·sc_j at 80r+4j(SP) and
// dmin·m_j at 80r+32+4j(SP) (the values of KSCALES of kernels_amd64.s)
// with vector instructions for all four rows at once: each row's first
// 16 bytes in a 128-bit lane of Z16 (dwords d|dmin, a, b, c), the scale
// and min bytes made in every lane together as get_scale_min_k4 makes them
// (sc = a & 63, (a>>2 & 0x30) | (c & 15); m = b & 63, (b>>2 & 0x30) |
// (c>>4 & 15), four bytes a dword: Z17, per lane sc0…7 then m0…7), the
// four rows' d and dmin widened together (Z21: d0, dmin0, d1, …), then
// each row's sixteen bytes widened, converted and multiplied by its d (×8)
// and dmin (×8): the same products, one rounding each. The scalar version
// (one row at a time through the general registers) spent about a fifth of
// the kernel's time there. The products go to the stack as two 32-byte
// halves: a 64-byte store does not forward to the 4-byte broadcasts that
// read it (the kernel ran 1.5× slower that way). Scratch: AX, Z8,
// Z16–Z23.
#define KSCROW(X, b, r) \
	VPMOVZXBD X, Z22; \
	VCVTDQ2PS Z22, Z22; \
	VMOVDQU32 (128+64*(r))(AX), Z23; \
	VPERMPS Z21, Z23, Z23; \
	VMULPS Z23, Z22, Z22; \
	VMOVUPS Y22, (b)(SP); \
	VEXTRACTF32X8 $1, Z22, Y23; \
	VMOVUPS Y23, (b+32)(SP)

#define KSC4 \
	MOVQ $ksc4<>(SB), AX; \
	VMOVDQU32 (R9), X16; \
	VINSERTI32X4 $1, (R12), Z16, Z16; \
	VINSERTI32X4 $2, (R13), Z16, Z16; \
	VINSERTI32X4 $3, (R14), Z16, Z16; \
	VPSHUFD $0xF9, Z16, Z20; \
	VPANDD.BCST 384(AX), Z20, Z17; \
	VPSRLD $2, Z20, Z18; \
	VPANDD.BCST 388(AX), Z18, Z18; \
	VPSHUFD $0xAA, Z20, Z19; \
	VPSRLVD (AX), Z19, Z19; \
	VPTERNLOGD.BCST $0xF8, 392(AX), Z19, Z18; \
	VPUNPCKLDQ Z18, Z17, Z17; \
	VMOVDQU16 64(AX), Z21; \
	VPERMW Z16, Z21, Z21; \
	VCVTPH2PS X21, Y21; \
	KSCROW(X17, 0, 0); \
	VEXTRACTI32X4 $1, Z17, X8; \
	KSCROW(X8, 80, 1); \
	VEXTRACTI32X4 $2, Z17, X8; \
	KSCROW(X8, 160, 2); \
	VEXTRACTI32X4 $3, Z17, X8; \
	KSCROW(X8, 240, 3)

// ---- Q4_K, factored (matvecQ4_KFactAVX512, q4kUnpack4AVX512,
// mmQ4_KFactAVX512; q4kfact_amd64.go describes the sums and xp's layout).
// A 64-byte load of qs at byte offset o (0…3) puts byte 4i+o in the low
// byte of lane i: lanes 0–7 from the first 32 bytes (sub-blocks 4c, 4c+1
// of chunk c), lanes 8–15 from the next 32 (4c+2, 4c+3). VPERMPS of
// q4kiota reads an index's low four bits, so the low nibble needs no mask
// and the high one a shift; each q becomes the float32 q exactly. ----

// q4kpidx: VPERMPS indexes from the eight d·sc_j to chunk c's S vectors:
// (sc0×8, sc2×8), (sc1×8, sc3×8), (sc4×8, sc6×8), (sc5×8, sc7×8).
DATA q4kpidx<>+0(SB)/8, $0x0000000000000000
DATA q4kpidx<>+8(SB)/8, $0x0000000000000000
DATA q4kpidx<>+16(SB)/8, $0x0000000000000000
DATA q4kpidx<>+24(SB)/8, $0x0000000000000000
DATA q4kpidx<>+32(SB)/8, $0x0000000200000002
DATA q4kpidx<>+40(SB)/8, $0x0000000200000002
DATA q4kpidx<>+48(SB)/8, $0x0000000200000002
DATA q4kpidx<>+56(SB)/8, $0x0000000200000002
DATA q4kpidx<>+64(SB)/8, $0x0000000100000001
DATA q4kpidx<>+72(SB)/8, $0x0000000100000001
DATA q4kpidx<>+80(SB)/8, $0x0000000100000001
DATA q4kpidx<>+88(SB)/8, $0x0000000100000001
DATA q4kpidx<>+96(SB)/8, $0x0000000300000003
DATA q4kpidx<>+104(SB)/8, $0x0000000300000003
DATA q4kpidx<>+112(SB)/8, $0x0000000300000003
DATA q4kpidx<>+120(SB)/8, $0x0000000300000003
DATA q4kpidx<>+128(SB)/8, $0x0000000400000004
DATA q4kpidx<>+136(SB)/8, $0x0000000400000004
DATA q4kpidx<>+144(SB)/8, $0x0000000400000004
DATA q4kpidx<>+152(SB)/8, $0x0000000400000004
DATA q4kpidx<>+160(SB)/8, $0x0000000600000006
DATA q4kpidx<>+168(SB)/8, $0x0000000600000006
DATA q4kpidx<>+176(SB)/8, $0x0000000600000006
DATA q4kpidx<>+184(SB)/8, $0x0000000600000006
DATA q4kpidx<>+192(SB)/8, $0x0000000500000005
DATA q4kpidx<>+200(SB)/8, $0x0000000500000005
DATA q4kpidx<>+208(SB)/8, $0x0000000500000005
DATA q4kpidx<>+216(SB)/8, $0x0000000500000005
DATA q4kpidx<>+224(SB)/8, $0x0000000700000007
DATA q4kpidx<>+232(SB)/8, $0x0000000700000007
DATA q4kpidx<>+240(SB)/8, $0x0000000700000007
DATA q4kpidx<>+248(SB)/8, $0x0000000700000007
GLOBL q4kpidx<>(SB), RODATA|NOPTR, $256

#define Q4KFLOADIDX \
	MOVQ $q4kiota<>(SB), AX; \
	VMOVUPS (AX), Z13; \
	MOVQ $q4kpidx<>(SB), AX; \
	VMOVUPS (AX), Z24; \
	VMOVUPS 64(AX), Z25; \
	VMOVUPS 128(AX), Z26; \
	VMOVUPS 192(AX), Z27

// FCHUNK(p, b, c, tot): chunk c (qs bytes 64c…64c+63) of the row at p,
// whose d·sc_j are at b(SP): A_lo = Σ_o q_lo[o]·xp (a multiply, then three
// fused multiply-adds, o = 0…3), A_hi likewise, then tot += A_lo·S_lo and
// tot += A_hi·S_hi (fused).
#define FCHUNK(p, b, c, ilo, ihi, tot) \
	VMOVUPS (b)(SP), Y20; \
	VPERMPS Z20, ilo, Z21; \
	VPERMPS Z20, ihi, Z22; \
	VMOVDQU32 (16+64*(c))(p), Z16; \
	VMOVDQU32 (17+64*(c))(p), Z17; \
	VMOVDQU32 (18+64*(c))(p), Z18; \
	VMOVDQU32 (19+64*(c))(p), Z19; \
	VPERMPS Z13, Z16, Z28; \
	VMULPS (512*(c)+0)(R10), Z28, Z8; \
	VPERMPS Z13, Z17, Z29; \
	VFMADD231PS (512*(c)+128)(R10), Z29, Z8; \
	VPERMPS Z13, Z18, Z28; \
	VFMADD231PS (512*(c)+256)(R10), Z28, Z8; \
	VPERMPS Z13, Z19, Z29; \
	VFMADD231PS (512*(c)+384)(R10), Z29, Z8; \
	VPSRLD $4, Z16, Z16; \
	VPSRLD $4, Z17, Z17; \
	VPSRLD $4, Z18, Z18; \
	VPSRLD $4, Z19, Z19; \
	VPERMPS Z13, Z16, Z28; \
	VMULPS (512*(c)+64)(R10), Z28, Z9; \
	VPERMPS Z13, Z17, Z29; \
	VFMADD231PS (512*(c)+192)(R10), Z29, Z9; \
	VPERMPS Z13, Z18, Z28; \
	VFMADD231PS (512*(c)+320)(R10), Z28, Z9; \
	VPERMPS Z13, Z19, Z29; \
	VFMADD231PS (512*(c)+448)(R10), Z29, Z9; \
	VFMADD231PS Z21, Z8, tot; \
	VFMADD231PS Z22, Z9, tot

// FROW(p, b, tot, macc): one super-block of the row at p: both chunks, then
// macc −= dmin·m ⊙ SX (eight lanes, fused).
#define FROW(p, b, tot, macc) \
	FCHUNK(p, b, 0, Z24, Z25, tot); \
	FCHUNK(p, b, 1, Z26, Z27, tot); \
	VMOVUPS (b+32)(SP), Y20; \
	VFNMADD231PS 1024(R10), Y20, macc

// func matvecQ4_KFactAVX512(out *float32, w *byte, rowBytes int, xp *float32, rows int, n int)
// rows a positive multiple of 4 (rowBytes 0 runs one row four times), n ≥ 1
// super-blocks a row, xp the input prepared by q4kPrep (272 floats a
// super-block). Reads up to 3 bytes past each row's last block.
TEXT ·matvecQ4_KFactAVX512(SB), $320-48
	PROLOGUE4
	Q4KFLOADIDX
q4kfz4:
	ROWS4_START
q4kfblk:
	PF4(0)
	PF4(64)
	PF4(128)
	KSC4
	FROW(R9, 0, Z0, Y4)
	FROW(R12, 80, Z1, Y5)
	FROW(R13, 160, Z2, Y6)
	FROW(R14, 240, Z3, Y7)
	ADDQ $144, R9
	ADDQ $144, R12
	ADDQ $144, R13
	ADDQ $144, R14
	ADDQ $1088, R10
	DECQ R11
	JNZ  q4kfblk
	RED(Z0, Z4, Y0, Y4, X0, X4, 0)
	RED(Z1, Z5, Y1, Y5, X1, X5, 4)
	RED(Z2, Z6, Y2, Y6, X2, X6, 8)
	RED(Z3, Z7, Y3, Y7, X3, X7, 12)
	ADDQ $16, DI
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JNZ  q4kfz4
	VZEROUPPER
	RET

// UNROW(p, b, d): row p's super-block (d·sc_j at b(SP), dmin·m_j at
// b+32(SP)) into the 1344 bytes at d: the 16 q vectors at 64(8c+2o+h),
// S_lo(c), S_hi(c) at 1024+128c and +64, dmin·m_j at 1280 (the values
// matvecQ4_KFactAVX512 computes in registers).
#define UNCHUNK(p, d, c) \
	VMOVDQU32 (16+64*(c))(p), Z16; \
	VMOVDQU32 (17+64*(c))(p), Z17; \
	VMOVDQU32 (18+64*(c))(p), Z18; \
	VMOVDQU32 (19+64*(c))(p), Z19; \
	VPERMPS Z13, Z16, Z28; \
	VMOVUPS Z28, (512*(c)+0)(d); \
	VPERMPS Z13, Z17, Z29; \
	VMOVUPS Z29, (512*(c)+128)(d); \
	VPERMPS Z13, Z18, Z28; \
	VMOVUPS Z28, (512*(c)+256)(d); \
	VPERMPS Z13, Z19, Z29; \
	VMOVUPS Z29, (512*(c)+384)(d); \
	VPSRLD $4, Z16, Z16; \
	VPSRLD $4, Z17, Z17; \
	VPSRLD $4, Z18, Z18; \
	VPSRLD $4, Z19, Z19; \
	VPERMPS Z13, Z16, Z28; \
	VMOVUPS Z28, (512*(c)+64)(d); \
	VPERMPS Z13, Z17, Z29; \
	VMOVUPS Z29, (512*(c)+192)(d); \
	VPERMPS Z13, Z18, Z28; \
	VMOVUPS Z28, (512*(c)+320)(d); \
	VPERMPS Z13, Z19, Z29; \
	VMOVUPS Z29, (512*(c)+448)(d)

#define UNROW(p, b, d) \
	VMOVUPS (b)(SP), Y20; \
	VPERMPS Z20, Z24, Z21; \
	VMOVUPS Z21, 1024(d); \
	VPERMPS Z20, Z25, Z21; \
	VMOVUPS Z21, 1088(d); \
	VPERMPS Z20, Z26, Z21; \
	VMOVUPS Z21, 1152(d); \
	VPERMPS Z20, Z27, Z21; \
	VMOVUPS Z21, 1216(d); \
	VMOVUPS (b+32)(SP), Y21; \
	VMOVUPS Y21, 1280(d); \
	UNCHUNK(p, d, 0); \
	UNCHUNK(p, d, 1)

// func q4kUnpack4AVX512(dst *float32, w *byte, rowBytes int, n int)
// Four rows (rowBytes apart; 0 repeats one) of n super-blocks into dst:
// super-block b of row r at 5376b + 1344r bytes. Reads up to 3 bytes past
// each row's last block.
TEXT ·q4kUnpack4AVX512(SB), $320-32
	MOVQ dst+0(FP), DI
	MOVQ w+8(FP), R9
	MOVQ rowBytes+16(FP), R8
	MOVQ n+24(FP), R11
	LEAQ (R9)(R8*1), R12
	LEAQ (R9)(R8*2), R13
	LEAQ (R12)(R8*2), R14
	Q4KFLOADIDX
q4kunblk:
	KSC4
	UNROW(R9, 0, DI)
	LEAQ 1344(DI), DX
	UNROW(R12, 80, DX)
	LEAQ 2688(DI), DX
	UNROW(R13, 160, DX)
	LEAQ 4032(DI), DX
	UNROW(R14, 240, DX)
	ADDQ $144, R9
	ADDQ $144, R12
	ADDQ $144, R13
	ADDQ $144, R14
	ADDQ $5376, DI
	DECQ R11
	JNZ  q4kunblk
	VZEROUPPER
	RET

// MMA(q, xo, o): A_r (o = 0: =, else +=) q_r·x for the four rows, x the
// xp vector at xo(R10), q_r at q + 1344r(R11).
#define MMLO(q, xo, FIRST) \
	VMOVUPS xo(R10), Z16; \
	FIRST (q)(R11), Z16, Z8; \
	FIRST (q+1344)(R11), Z16, Z9; \
	FIRST (q+2688)(R11), Z16, Z10; \
	FIRST (q+4032)(R11), Z16, Z11

#define MMHI(q, xo, FIRST) \
	VMOVUPS xo(R10), Z17; \
	FIRST (q)(R11), Z17, Z12; \
	FIRST (q+1344)(R11), Z17, Z13; \
	FIRST (q+2688)(R11), Z17, Z14; \
	FIRST (q+4032)(R11), Z17, Z15

#define MMSCALE(s) \
	VFMADD231PS (s)(R11), Z8, Z0; \
	VFMADD231PS (s+1344)(R11), Z9, Z1; \
	VFMADD231PS (s+2688)(R11), Z10, Z2; \
	VFMADD231PS (s+4032)(R11), Z11, Z3; \
	VFMADD231PS (s+64)(R11), Z12, Z0; \
	VFMADD231PS (s+1408)(R11), Z13, Z1; \
	VFMADD231PS (s+2752)(R11), Z14, Z2; \
	VFMADD231PS (s+4096)(R11), Z15, Z3

#define MMCHUNK(c) \
	MMLO(512*(c)+0, 512*(c)+0, VMULPS); \
	MMLO(512*(c)+128, 512*(c)+128, VFMADD231PS); \
	MMLO(512*(c)+256, 512*(c)+256, VFMADD231PS); \
	MMLO(512*(c)+384, 512*(c)+384, VFMADD231PS); \
	MMHI(512*(c)+64, 512*(c)+64, VMULPS); \
	MMHI(512*(c)+192, 512*(c)+192, VFMADD231PS); \
	MMHI(512*(c)+320, 512*(c)+320, VFMADD231PS); \
	MMHI(512*(c)+448, 512*(c)+448, VFMADD231PS); \
	MMSCALE(1024+128*(c))

// func mmQ4_KFactAVX512(accs *[32]float32, qb *float32, xp *float32, xstride int, n int, nsb int, first int)
// For each of n inputs i (xp + i·xstride bytes, q4kPrep's layout, already
// offset to the chunk) and the four rows unpacked at qb (q4kUnpack4AVX512,
// nsb super-blocks): accs[4i+r] lanes 0–15 += the row's chunk sums and
// lanes 16–23 −= its min terms, in matvecQ4_KFactAVX512's order and
// roundings, so that reducing them gives its bits; lanes 24–31 are
// stored as zeros. With first set the sums start from zero instead of
// accs' values.
TEXT ·mmQ4_KFactAVX512(SB), NOSPLIT, $0-56
	MOVQ accs+0(FP), DI
	MOVQ qb+8(FP), SI
	MOVQ xp+16(FP), DX
	MOVQ xstride+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ nsb+40(FP), BX
	MOVQ first+48(FP), AX
mmq4kin:
	TESTQ AX, AX
	JNZ  mmq4kzero
	VMOVUPS 0(DI), Z0
	VMOVUPS 128(DI), Z1
	VMOVUPS 256(DI), Z2
	VMOVUPS 384(DI), Z3
	VMOVUPS 64(DI), Y4
	VMOVUPS 192(DI), Y5
	VMOVUPS 320(DI), Y6
	VMOVUPS 448(DI), Y7
	JMP  mmq4kgo
mmq4kzero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
mmq4kgo:
	MOVQ DX, R10
	MOVQ SI, R11
	MOVQ BX, R9
mmq4kblk:
	MMCHUNK(0)
	MMCHUNK(1)
	VMOVUPS 1024(R10), Y18
	VFNMADD231PS 1280(R11), Y18, Y4
	VFNMADD231PS 2624(R11), Y18, Y5
	VFNMADD231PS 3968(R11), Y18, Y6
	VFNMADD231PS 5312(R11), Y18, Y7
	ADDQ $1088, R10
	ADDQ $5376, R11
	DECQ R9
	JNZ  mmq4kblk
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 128(DI)
	VMOVUPS Z2, 256(DI)
	VMOVUPS Z3, 384(DI)
	VMOVUPS Z4, 64(DI)
	VMOVUPS Z5, 192(DI)
	VMOVUPS Z6, 320(DI)
	VMOVUPS Z7, 448(DI)
	ADDQ $512, DI
	ADDQ R8, DX
	DECQ CX
	JNZ  mmq4kin
	VZEROUPPER
	RET

// q4kprepidx: q4kPrepAVX512's VPERMI2PS indexes, 4k+o in lanes k and 8+k
// for o = 0…3 (at 64o), and the final order of the eight sums (at 256).
DATA q4kprepidx<>+0(SB)/8, $0x0000000400000000
DATA q4kprepidx<>+8(SB)/8, $0x0000000c00000008
DATA q4kprepidx<>+16(SB)/8, $0x0000001400000010
DATA q4kprepidx<>+24(SB)/8, $0x0000001c00000018
DATA q4kprepidx<>+32(SB)/8, $0x0000000400000000
DATA q4kprepidx<>+40(SB)/8, $0x0000000c00000008
DATA q4kprepidx<>+48(SB)/8, $0x0000001400000010
DATA q4kprepidx<>+56(SB)/8, $0x0000001c00000018
DATA q4kprepidx<>+64(SB)/8, $0x0000000500000001
DATA q4kprepidx<>+72(SB)/8, $0x0000000d00000009
DATA q4kprepidx<>+80(SB)/8, $0x0000001500000011
DATA q4kprepidx<>+88(SB)/8, $0x0000001d00000019
DATA q4kprepidx<>+96(SB)/8, $0x0000000500000001
DATA q4kprepidx<>+104(SB)/8, $0x0000000d00000009
DATA q4kprepidx<>+112(SB)/8, $0x0000001500000011
DATA q4kprepidx<>+120(SB)/8, $0x0000001d00000019
DATA q4kprepidx<>+128(SB)/8, $0x0000000600000002
DATA q4kprepidx<>+136(SB)/8, $0x0000000e0000000a
DATA q4kprepidx<>+144(SB)/8, $0x0000001600000012
DATA q4kprepidx<>+152(SB)/8, $0x0000001e0000001a
DATA q4kprepidx<>+160(SB)/8, $0x0000000600000002
DATA q4kprepidx<>+168(SB)/8, $0x0000000e0000000a
DATA q4kprepidx<>+176(SB)/8, $0x0000001600000012
DATA q4kprepidx<>+184(SB)/8, $0x0000001e0000001a
DATA q4kprepidx<>+192(SB)/8, $0x0000000700000003
DATA q4kprepidx<>+200(SB)/8, $0x0000000f0000000b
DATA q4kprepidx<>+208(SB)/8, $0x0000001700000013
DATA q4kprepidx<>+216(SB)/8, $0x0000001f0000001b
DATA q4kprepidx<>+224(SB)/8, $0x0000000700000003
DATA q4kprepidx<>+232(SB)/8, $0x0000000f0000000b
DATA q4kprepidx<>+240(SB)/8, $0x0000001700000013
DATA q4kprepidx<>+248(SB)/8, $0x0000001f0000001b
DATA q4kprepidx<>+256(SB)/8, $0x0000000800000000
DATA q4kprepidx<>+264(SB)/8, $0x0000000c00000004
DATA q4kprepidx<>+272(SB)/8, $0x0000000a00000002
DATA q4kprepidx<>+280(SB)/8, $0x0000000e00000006
GLOBL q4kprepidx<>(SB), RODATA|NOPTR, $288

// PV(P0, P1, Q0, Q1, io, dst): the xp vector whose lanes 0–7 are P0|P1's
// values 4k+o and lanes 8–15 Q0|Q1's, stored at dst(DI), left in Z20.
#define PV(P0, P1, Q0, Q1, io, dst) \
	VMOVAPS io, Z20; \
	VPERMI2PS P1, P0, Z20; \
	VMOVAPS io, Z21; \
	VPERMI2PS Q1, Q0, Z21; \
	VINSERTF32X8 $1, Y21, Z20, Z20; \
	VMOVUPS Z20, dst(DI)

// PCH(c, h, P0, P1, Q0, Q1, v): the four vectors (c, o, h), o = 0…3, and
// their sum ((o0 + o1) + o2) + o3 in v.
#define PCH(c, h, P0, P1, Q0, Q1, v) \
	PV(P0, P1, Q0, Q1, Z16, (512*(c)+64*(h))); \
	VMOVAPS Z20, v; \
	PV(P0, P1, Q0, Q1, Z17, (512*(c)+128+64*(h))); \
	VADDPS Z20, v, v; \
	PV(P0, P1, Q0, Q1, Z18, (512*(c)+256+64*(h))); \
	VADDPS Z20, v, v; \
	PV(P0, P1, Q0, Q1, Z19, (512*(c)+384+64*(h))); \
	VADDPS Z20, v, v

// func q4kPrepAVX512(xp *float32, x *float32, n int)
// x's n super-blocks into xp, 272 floats each (q4kfact_amd64.go): the 256
// values permuted, then the eight sub-block sums, then eight zeros. A
// sub-block's sum: its four xp vectors' lanes added as above (8 partial
// sums of 4), then those 8 added pairwise across 128-bit lanes ((0+1),
// (2+3); then their two sums: p0+p1 of each half; then the last pair).
TEXT ·q4kPrepAVX512(SB), NOSPLIT, $0-24
	MOVQ xp+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ $q4kprepidx<>(SB), AX
	VMOVUPS (AX), Z16
	VMOVUPS 64(AX), Z17
	VMOVUPS 128(AX), Z18
	VMOVUPS 192(AX), Z19
	VMOVUPS 256(AX), Y26
	VPXORD Z27, Z27, Z27
q4kprepblk:
	VMOVUPS 0(SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	VMOVUPS 512(SI), Z8
	VMOVUPS 576(SI), Z9
	VMOVUPS 640(SI), Z10
	VMOVUPS 704(SI), Z11
	VMOVUPS 768(SI), Z12
	VMOVUPS 832(SI), Z13
	VMOVUPS 896(SI), Z14
	VMOVUPS 960(SI), Z15
	PCH(0, 0, Z0, Z1, Z4, Z5, Z22)
	PCH(0, 1, Z2, Z3, Z6, Z7, Z23)
	PCH(1, 0, Z8, Z9, Z12, Z13, Z24)
	PCH(1, 1, Z10, Z11, Z14, Z15, Z25)
	// Z22: sub-blocks 0 | 2, Z23: 1 | 3, Z24: 4 | 6, Z25: 5 | 7 (8 lanes each)
	VSHUFF32X4 $0x88, Z23, Z22, Z20
	VSHUFF32X4 $0xDD, Z23, Z22, Z21
	VADDPS Z21, Z20, Z22 // 128-bit lanes: 0, 2, 1, 3
	VSHUFF32X4 $0x88, Z25, Z24, Z20
	VSHUFF32X4 $0xDD, Z25, Z24, Z21
	VADDPS Z21, Z20, Z24 // 4, 6, 5, 7
	VSHUFPS $0x88, Z24, Z22, Z20
	VSHUFPS $0xDD, Z24, Z22, Z21
	VADDPS Z21, Z20, Z22
	VPERMILPS $0xB1, Z22, Z20
	VADDPS Z20, Z22, Z22 // lane 4L + e: sub-block (0, 2, 1, 3)[L] for e < 2, (4, 6, 5, 7)[L] else
	VPERMPS Z22, Z26, Z20
	VMOVUPS Y20, 1024(DI)
	VMOVUPS Y27, 1056(DI)
	ADDQ $1024, SI
	ADDQ $1088, DI
	DECQ CX
	JNZ  q4kprepblk
	VZEROUPPER
	RET

// MM2Q(c, h, o, OP): the four rows' A (OP: VMULPS for o = 0, then
// VFMADD231PS) of vector (c, o, h) for two inputs: x in Z24 (input 0, at
// R10) and Z25 (input 1, at R12), each row's q (at R11, 1344 bytes a row)
// loaded once for both. A: Z16–Z19 (input 0), Z20–Z23 (input 1).
#define MM2Q(c, h, o, OP) \
	VMOVUPS ((8*(c)+2*(o)+(h))*64)(R10), Z24; \
	VMOVUPS ((8*(c)+2*(o)+(h))*64)(R12), Z25; \
	VMOVUPS ((8*(c)+2*(o)+(h))*64)(R11), Z26; \
	OP Z24, Z26, Z16; \
	OP Z25, Z26, Z20; \
	VMOVUPS ((8*(c)+2*(o)+(h))*64+1344)(R11), Z26; \
	OP Z24, Z26, Z17; \
	OP Z25, Z26, Z21; \
	VMOVUPS ((8*(c)+2*(o)+(h))*64+2688)(R11), Z26; \
	OP Z24, Z26, Z18; \
	OP Z25, Z26, Z22; \
	VMOVUPS ((8*(c)+2*(o)+(h))*64+4032)(R11), Z26; \
	OP Z24, Z26, Z19; \
	OP Z25, Z26, Z23

// MM2S(c, h): tot += A·S_h(c) for the four rows and two inputs (tot:
// Z0–Z3 input 0, Z4–Z7 input 1), each S loaded once for both.
#define MM2S(c, h) \
	VMOVUPS (1024+128*(c)+64*(h))(R11), Z28; \
	VFMADD231PS Z28, Z16, Z0; \
	VFMADD231PS Z28, Z20, Z4; \
	VMOVUPS (1024+128*(c)+64*(h)+1344)(R11), Z28; \
	VFMADD231PS Z28, Z17, Z1; \
	VFMADD231PS Z28, Z21, Z5; \
	VMOVUPS (1024+128*(c)+64*(h)+2688)(R11), Z28; \
	VFMADD231PS Z28, Z18, Z2; \
	VFMADD231PS Z28, Z22, Z6; \
	VMOVUPS (1024+128*(c)+64*(h)+4032)(R11), Z28; \
	VFMADD231PS Z28, Z19, Z3; \
	VFMADD231PS Z28, Z23, Z7

// MM2CH(c, h): chunk c's nibble h, all four o, then its scaling.
#define MM2CH(c, h) \
	MM2Q(c, h, 0, VMULPS); \
	MM2Q(c, h, 1, VFMADD231PS); \
	MM2Q(c, h, 2, VFMADD231PS); \
	MM2Q(c, h, 3, VFMADD231PS); \
	MM2S(c, h)

// MM2MIN(r, M0, M1): row r's min sums −= dmin·m ⊙ SX for both inputs (SX in Y24, Y25).
#define MM2MIN(r, M0, M1) \
	VMOVUPS (1280+1344*(r))(R11), Y26; \
	VFNMADD231PS Y24, Y26, M0; \
	VFNMADD231PS Y25, Y26, M1

// MM2LOAD(r) and MM2STORE(r): row r's sums of both inputs from and to
// accs (input 0 at 128r, input 1 at 512+128r; the min sums' upper lanes,
// zero, stored as 24–31).
#define MM2LOAD(r, T0, M0, T1, M1) \
	VMOVUPS (128*(r))(DI), T0; \
	VMOVUPS (128*(r)+64)(DI), M0; \
	VMOVUPS (512+128*(r))(DI), T1; \
	VMOVUPS (512+128*(r)+64)(DI), M1

#define MM2STORE(r, T0, M0, T1, M1) \
	VMOVUPS T0, (128*(r))(DI); \
	VMOVUPS M0, (128*(r)+64)(DI); \
	VMOVUPS T1, (512+128*(r))(DI); \
	VMOVUPS M1, (512+128*(r)+64)(DI)

// func mmQ4_KFact2AVX512(accs *[32]float32, qb *float32, xp *float32, xstride int, pairs int, nsb int, first int)
// mmQ4_KFactAVX512 for 2·pairs inputs, two at a time: each q and S vector
// loaded once for both. Each (row, input)'s sums take the same operations
// in the same order as there (A_lo whole, then its scaling, then A_hi's:
// the scalings are the only steps that touch tot, and stay in order).
TEXT ·mmQ4_KFact2AVX512(SB), NOSPLIT, $0-56
	MOVQ accs+0(FP), DI
	MOVQ qb+8(FP), SI
	MOVQ xp+16(FP), DX
	MOVQ xstride+24(FP), R8
	MOVQ pairs+32(FP), CX
	MOVQ nsb+40(FP), BX
	MOVQ first+48(FP), AX
mmq4k2in:
	TESTQ AX, AX
	JNZ  mmq4k2zero
	MM2LOAD(0, Z0, Y8, Z4, Y12)
	MM2LOAD(1, Z1, Y9, Z5, Y13)
	MM2LOAD(2, Z2, Y10, Z6, Y14)
	MM2LOAD(3, Z3, Y11, Z7, Y15)
	JMP  mmq4k2go
mmq4k2zero:
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
mmq4k2go:
	MOVQ DX, R10
	LEAQ (DX)(R8*1), R12
	MOVQ SI, R11
	MOVQ BX, R9
mmq4k2blk:
	MM2CH(0, 0)
	MM2CH(0, 1)
	MM2CH(1, 0)
	MM2CH(1, 1)
	VMOVUPS 1024(R10), Y24
	VMOVUPS 1024(R12), Y25
	MM2MIN(0, Y8, Y12)
	MM2MIN(1, Y9, Y13)
	MM2MIN(2, Y10, Y14)
	MM2MIN(3, Y11, Y15)
	ADDQ $1088, R10
	ADDQ $1088, R12
	ADDQ $5376, R11
	DECQ R9
	JNZ  mmq4k2blk
	MM2STORE(0, Z0, Z8, Z4, Z12)
	MM2STORE(1, Z1, Z9, Z5, Z13)
	MM2STORE(2, Z2, Z10, Z6, Z14)
	MM2STORE(3, Z3, Z11, Z7, Z15)
	ADDQ $1024, DI
	LEAQ (DX)(R8*2), DX
	DECQ CX
	JNZ  mmq4k2in
	VZEROUPPER
	RET

// ---- Q6_K: 210-byte super-blocks: ql[128] at 0, qh[64] at 128, int8
// scales[16] at 192, fp16 d at 208 (dequantQ6_K). A half n of 128 values
// is four quarters of 32: quarter qi takes the low (qi < 2) or high
// nibbles of ql[64n+32(qi&1) ..] and bits 2qi, 2qi+1 of qh[32n ..]; values
// 0–15 of a quarter use scale 8n+2qi, 16–31 scale 8n+2qi+1, so each of a
// row's two sum registers takes one scale per quarter. ----

// q6ktable: the bytes j−32 for j = 0…63 (VPERMB reads only an index's low
// six bits, so the bits above the six need no masking).
DATA q6ktable<>+0(SB)/8, $0xe7e6e5e4e3e2e1e0
DATA q6ktable<>+8(SB)/8, $0xefeeedecebeae9e8
DATA q6ktable<>+16(SB)/8, $0xf7f6f5f4f3f2f1f0
DATA q6ktable<>+24(SB)/8, $0xfffefdfcfbfaf9f8
DATA q6ktable<>+32(SB)/8, $0x0706050403020100
DATA q6ktable<>+40(SB)/8, $0x0f0e0d0c0b0a0908
DATA q6ktable<>+48(SB)/8, $0x1716151413121110
DATA q6ktable<>+56(SB)/8, $0x1f1e1d1c1b1a1918
GLOBL q6ktable<>(SB), RODATA|NOPTR, $64

// Q6SC(p, b) stores row p's d·scales[s] at b+4s(SP) (Q6SCALES of
// kernels_amd64.s: the same product, one rounding).
#define Q6SC(p, b) \
	VPBROADCASTW 208(p), Y16; \
	VCVTPH2PS Y16, Z16; \
	VPMOVSXBD 192(p), Z17; \
	VCVTDQ2PS Z17, Z17; \
	VMULPS Z16, Z17, Z17; \
	VMOVUPS Z17, (b)(SP)

// Q6PREP(p, n, at) stages half n of row p as signed bytes q−32, quarter
// qi at at+32qi(SP). Z12 = qh[32n:32n+32] | its bytes shifted right by 2,
// so bits 0–1 (quarters 0, 1) after a shift left by 4 and bits 4–5
// (quarters 2, 3) as they are sit at bits 4–5; VPTERNLOGD $0xD8 takes
// bits 0–3 from the nibbles and the rest from the qh bits (Z15 = bytes
// 0x0f selects), VPERMB maps the six-bit q to q−32 (Z9, q6ktable).
#define Q6PREP(p, n, at) \
	VMOVDQU64 (64*(n))(p), Z10; \
	VMOVDQU (128+32*(n))(p), Y12; \
	VPSRLW $2, Y12, Y13; \
	VINSERTI64X4 $1, Y13, Z12, Z12; \
	VPSLLW $4, Z12, Z11; \
	VPTERNLOGD $0xD8, Z15, Z10, Z11; \
	VPERMB Z9, Z11, Z11; \
	VMOVDQU64 Z11, (at)(SP); \
	VPSRLW $4, Z10, Z10; \
	VPTERNLOGD $0xD8, Z15, Z10, Z12; \
	VPERMB Z9, Z12, Z12; \
	VMOVDQU64 Z12, (at+64)(SP)

// Q6Q(at, sc, lo, hi): lo += s·q[0:16]·x, hi += s'·q[16:32]·x for the 32
// values staged at at(SP), s and s' the scales at sc(SP) and sc+4(SP).
#define Q6Q(at, sc, lo, hi) \
	VPMOVSXBD (at)(SP), Z17; \
	VPMOVSXBD (at+16)(SP), Z18; \
	VCVTDQ2PS Z17, Z17; \
	VCVTDQ2PS Z18, Z18; \
	VMULPS.BCST (sc)(SP), Z17, Z17; \
	VMULPS.BCST (sc+4)(SP), Z18, Z18; \
	VFMADD231PS Z30, Z17, lo; \
	VFMADD231PS Z31, Z18, hi

// Q6QUART(n, qi): x for quarter qi of half n, then the four rows (scales
// of row j at 64j(SP), its staged half at 256+128j(SP)).
#define Q6QUART(n, qi) \
	VMOVUPS (512*(n)+128*(qi))(R10), Z30; \
	VMOVUPS (512*(n)+128*(qi)+64)(R10), Z31; \
	Q6Q(256+32*(qi), 4*(8*(n)+2*(qi)), Z0, Z1); \
	Q6Q(384+32*(qi), 64+4*(8*(n)+2*(qi)), Z2, Z3); \
	Q6Q(512+32*(qi), 128+4*(8*(n)+2*(qi)), Z4, Z5); \
	Q6Q(640+32*(qi), 192+4*(8*(n)+2*(qi)), Z6, Z7)

#define Q6HALF(n) \
	Q6PREP(R9, n, 256); \
	Q6PREP(R12, n, 384); \
	Q6PREP(R13, n, 512); \
	Q6PREP(R14, n, 640); \
	Q6QUART(n, 0); \
	Q6QUART(n, 1); \
	Q6QUART(n, 2); \
	Q6QUART(n, 3)

// func matvecQ6_KAVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)
TEXT ·matvecQ6_KAVX512(SB), $768-48
	PROLOGUE4
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVQ $q6ktable<>(SB), AX
	VMOVDQU64 (AX), Z9
q6kz4:
	ROWS4_START
q6kzblk:
	PF4(0)
	PF4(64)
	PF4(128)
	PF4(192)
	Q6SC(R9, 0)
	Q6SC(R12, 64)
	Q6SC(R13, 128)
	Q6SC(R14, 192)
	Q6HALF(0)
	Q6HALF(1)
	ADDQ $210, R9
	ADDQ $210, R12
	ADDQ $210, R13
	ADDQ $210, R14
	ADDQ $1024, R10
	DECQ R11
	JNZ  q6kzblk
	ROWS4_END
	JNZ  q6kz4
	VZEROUPPER
	RET

// ---- MatMat's dot products: four rows of dequantized weights (L1) against
// n inputs. ----

// MMW: the bytes between the group's rows in MatMat's buffer (mmChunk·4).
#define MMW 2048

// MMROW(off, a0, a1, a2, a3): row off/MMW of the group (Z20, Z21 its 32
// weights) into the two inputs' sums a0|a1 (input i) and a2|a3 (input i+1).
#define MMROW(off, a0, a1, a2, a3) \
	VMOVUPS (off)(R11), Z20; \
	VMOVUPS (off+64)(R11), Z21; \
	VFMADD231PS Z16, Z20, a0; \
	VFMADD231PS Z17, Z21, a1; \
	VFMADD231PS Z18, Z20, a2; \
	VFMADD231PS Z19, Z21, a3

// MMROW3(off, a0, …, a5): row off/MMW into three inputs' sums (x in
// Z24|Z25, Z26|Z27, Z28|Z29; the row's weights in Z30, Z31).
#define MMROW3(off, a0, a1, a2, a3, a4, a5) \
	VMOVUPS (off)(R11), Z30; \
	VMOVUPS (off+64)(R11), Z31; \
	VFMADD231PS Z24, Z30, a0; \
	VFMADD231PS Z25, Z31, a1; \
	VFMADD231PS Z26, Z30, a2; \
	VFMADD231PS Z27, Z31, a3; \
	VFMADD231PS Z28, Z30, a4; \
	VFMADD231PS Z29, Z31, a5

// MMLD3(r, a0, …, a5) loads (MMST3 stores) one row's sums for three
// inputs, the row's at r.
#define MMLD3(r, a0, a1, a2, a3, a4, a5) \
	VMOVUPS (r), a0; \
	VMOVUPS 64(r), a1; \
	VMOVUPS 128(r), a2; \
	VMOVUPS 192(r), a3; \
	VMOVUPS 256(r), a4; \
	VMOVUPS 320(r), a5

#define MMST3(r, a0, a1, a2, a3, a4, a5) \
	VMOVUPS a0, (r); \
	VMOVUPS a1, 64(r); \
	VMOVUPS a2, 128(r); \
	VMOVUPS a3, 192(r); \
	VMOVUPS a4, 256(r); \
	VMOVUPS a5, 320(r)

// MMROW1(off, a0, a1): the same for one input (Z16|Z17).
#define MMROW1(off, a0, a1) \
	VMOVUPS (off)(R11), Z20; \
	VMOVUPS (off+64)(R11), Z21; \
	VFMADD231PS Z16, Z20, a0; \
	VFMADD231PS Z17, Z21, a1

// func matmat4AVX512(accs *[32]float32, w *float32, xs **float32, n int, steps int)
// For rows j < 4 and inputs i < n: accs[j·n+i][l] += w[j·512+e]·xs[i][e]
// (fused) for e ≡ l mod 32, e < 32·steps, in increasing e: dotAccAVX2's
// sums for each row and input, bit for bit (lanes 0–15 and 16–31 one
// register each). Inputs go three at a time (each weight loaded once for
// the three, each input value once for the four rows), then two or one.
// steps ≥ 1, n ≥ 1.
TEXT ·matmat4AVX512(SB), NOSPLIT, $0-40
	MOVQ accs+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ xs+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ steps+32(FP), BX
	MOVQ CX, R8
	SHLQ $7, R8 // a row's sums: n·128 bytes
	MOVQ DI, AX
mmtriple:
	CMPQ CX, $3
	JLT  mmpair
	MOVQ AX, R13
	MMLD3(R13, Z0, Z1, Z2, Z3, Z4, Z5)
	ADDQ R8, R13
	MMLD3(R13, Z6, Z7, Z8, Z9, Z10, Z11)
	ADDQ R8, R13
	MMLD3(R13, Z12, Z13, Z14, Z15, Z16, Z17)
	ADDQ R8, R13
	MMLD3(R13, Z18, Z19, Z20, Z21, Z22, Z23)
	MOVQ (DX), R9
	MOVQ 8(DX), R10
	MOVQ 16(DX), R14
	MOVQ SI, R11
	MOVQ BX, R12
mmtriplestep:
	VMOVUPS (R9), Z24
	VMOVUPS 64(R9), Z25
	VMOVUPS (R10), Z26
	VMOVUPS 64(R10), Z27
	VMOVUPS (R14), Z28
	VMOVUPS 64(R14), Z29
	MMROW3(0, Z0, Z1, Z2, Z3, Z4, Z5)
	MMROW3(MMW, Z6, Z7, Z8, Z9, Z10, Z11)
	MMROW3(2*MMW, Z12, Z13, Z14, Z15, Z16, Z17)
	MMROW3(3*MMW, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R14
	ADDQ $128, R11
	DECQ R12
	JNZ  mmtriplestep
	MOVQ AX, R13
	MMST3(R13, Z0, Z1, Z2, Z3, Z4, Z5)
	ADDQ R8, R13
	MMST3(R13, Z6, Z7, Z8, Z9, Z10, Z11)
	ADDQ R8, R13
	MMST3(R13, Z12, Z13, Z14, Z15, Z16, Z17)
	ADDQ R8, R13
	MMST3(R13, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ $384, AX
	ADDQ $24, DX
	SUBQ $3, CX
	JMP  mmtriple
mmpair:
	CMPQ CX, $2
	JLT  mmone
	LEAQ (AX)(R8*2), R13
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	VMOVUPS (AX)(R8*1), Z4
	VMOVUPS 64(AX)(R8*1), Z5
	VMOVUPS 128(AX)(R8*1), Z6
	VMOVUPS 192(AX)(R8*1), Z7
	VMOVUPS (R13), Z8
	VMOVUPS 64(R13), Z9
	VMOVUPS 128(R13), Z10
	VMOVUPS 192(R13), Z11
	VMOVUPS (R13)(R8*1), Z12
	VMOVUPS 64(R13)(R8*1), Z13
	VMOVUPS 128(R13)(R8*1), Z14
	VMOVUPS 192(R13)(R8*1), Z15
	MOVQ (DX), R9
	MOVQ 8(DX), R10
	MOVQ SI, R11
	MOVQ BX, R12
mmpairstep:
	VMOVUPS (R9), Z16
	VMOVUPS 64(R9), Z17
	VMOVUPS (R10), Z18
	VMOVUPS 64(R10), Z19
	MMROW(0, Z0, Z1, Z2, Z3)
	MMROW(MMW, Z4, Z5, Z6, Z7)
	MMROW(2*MMW, Z8, Z9, Z10, Z11)
	MMROW(3*MMW, Z12, Z13, Z14, Z15)
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	DECQ R12
	JNZ  mmpairstep
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	VMOVUPS Z4, (AX)(R8*1)
	VMOVUPS Z5, 64(AX)(R8*1)
	VMOVUPS Z6, 128(AX)(R8*1)
	VMOVUPS Z7, 192(AX)(R8*1)
	VMOVUPS Z8, (R13)
	VMOVUPS Z9, 64(R13)
	VMOVUPS Z10, 128(R13)
	VMOVUPS Z11, 192(R13)
	VMOVUPS Z12, (R13)(R8*1)
	VMOVUPS Z13, 64(R13)(R8*1)
	VMOVUPS Z14, 128(R13)(R8*1)
	VMOVUPS Z15, 192(R13)(R8*1)
	ADDQ $256, AX
	ADDQ $16, DX
	SUBQ $2, CX
	JMP  mmpair
mmone:
	TESTQ CX, CX
	JZ   mmdone
	LEAQ (AX)(R8*2), R13
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS (AX)(R8*1), Z4
	VMOVUPS 64(AX)(R8*1), Z5
	VMOVUPS (R13), Z8
	VMOVUPS 64(R13), Z9
	VMOVUPS (R13)(R8*1), Z12
	VMOVUPS 64(R13)(R8*1), Z13
	MOVQ (DX), R9
	MOVQ SI, R11
	MOVQ BX, R12
mmonestep:
	VMOVUPS (R9), Z16
	VMOVUPS 64(R9), Z17
	MMROW1(0, Z0, Z1)
	MMROW1(MMW, Z4, Z5)
	MMROW1(2*MMW, Z8, Z9)
	MMROW1(3*MMW, Z12, Z13)
	ADDQ $128, R9
	ADDQ $128, R11
	DECQ R12
	JNZ  mmonestep
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z4, (AX)(R8*1)
	VMOVUPS Z5, 64(AX)(R8*1)
	VMOVUPS Z8, (R13)
	VMOVUPS Z9, 64(R13)
	VMOVUPS Z12, (R13)(R8*1)
	VMOVUPS Z13, 64(R13)(R8*1)
mmdone:
	VZEROUPPER
	RET

// func dequantQ8_0AVX512(dst *float32, src *byte, n int, tab *float32)
// dequantQ8_0AVX2 with 16 values a register: each value converted exactly
// from its int8, then multiplied by the block's scale (one rounding, as
// there; the scale from the fp16 table tab, as Q80ROW), so the values are
// the same bit for bit. n ≥ 1.
TEXT ·dequantQ8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), BX
dq80z:
	MOVWQZX (SI), AX
	VPMOVSXBD 2(SI), Z4
	VPMOVSXBD 18(SI), Z5
	VCVTDQ2PS Z4, Z4
	VCVTDQ2PS Z5, Z5
	VMULPS.BCST (BX)(AX*4), Z4, Z4
	VMULPS.BCST (BX)(AX*4), Z5, Z5
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, 64(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  dq80z
	VZEROUPPER
	RET

// M6W: the bytes between the rows of MatMat's six-row buffer (mm6Chunk·4).
#define M6W 3072

// M6ROW(off, a0, a1, a2, a3): row off/M6W of the six (its 32 weights in
// Z28, Z29) into input i's sums a0|a1 (x in Z24|Z25) and input i+1's
// a2|a3 (x in Z26|Z27).
#define M6ROW(off, a0, a1, a2, a3) \
	VMOVUPS (off)(R11), Z28; \
	VMOVUPS (off+64)(R11), Z29; \
	VFMADD231PS Z24, Z28, a0; \
	VFMADD231PS Z25, Z29, a1; \
	VFMADD231PS Z26, Z28, a2; \
	VFMADD231PS Z27, Z29, a3

// M6STEP(o): one step of 32 values, o bytes past the pointers: both
// inputs' values, then the six rows.
#define M6STEP(o) \
	VMOVUPS (o)(R9), Z24; \
	VMOVUPS (o+64)(R9), Z25; \
	VMOVUPS (o)(R10), Z26; \
	VMOVUPS (o+64)(R10), Z27; \
	M6ROW(o, Z0, Z1, Z2, Z3); \
	M6ROW(o+M6W, Z4, Z5, Z6, Z7); \
	M6ROW(o+2*M6W, Z8, Z9, Z10, Z11); \
	M6ROW(o+3*M6W, Z12, Z13, Z14, Z15); \
	M6ROW(o+4*M6W, Z16, Z17, Z18, Z19); \
	M6ROW(o+5*M6W, Z20, Z21, Z22, Z23)

// M6ROW1(off, a0, a1): the same for one input (Z24|Z25).
#define M6ROW1(off, a0, a1) \
	VMOVUPS (off)(R11), Z28; \
	VMOVUPS (off+64)(R11), Z29; \
	VFMADD231PS Z24, Z28, a0; \
	VFMADD231PS Z25, Z29, a1

// M6LD(off, a0, a1, a2, a3) loads (M6ST stores) row off/128's sums for
// the pair's two inputs: input i's at off(AX), input i+1's 768 bytes on.
#define M6LD(off, a0, a1, a2, a3) \
	VMOVUPS (off)(AX), a0; \
	VMOVUPS (off+64)(AX), a1; \
	VMOVUPS (off+768)(AX), a2; \
	VMOVUPS (off+832)(AX), a3

#define M6ST(off, a0, a1, a2, a3) \
	VMOVUPS a0, (off)(AX); \
	VMOVUPS a1, (off+64)(AX); \
	VMOVUPS a2, (off+768)(AX); \
	VMOVUPS a3, (off+832)(AX)

// func matmat6AVX512(accs *[32]float32, w *float32, xs **float32, n int, steps int, pf *byte, pfl int, first int, xoff int)
// For rows j < 6 and inputs i < n: accs[6i+j][l] += w[j·768+e]·xs[i][xoff/4+e]
// (fused) for e ≡ l mod 32, e < 32·steps, in increasing e: dotAccAVX2's
// sums for each row and input, bit for bit (an input's six sums side by
// side). Inputs go two at a time: the 24 registers Z0–Z23 hold six rows ×
// two inputs × 32 lanes for all the steps, each step loads the two inputs'
// 32 values once for the six rows and each row's 32 weights once for the
// two inputs (16 loads for 24 multiply-adds; the weights stay in L1, the
// inputs come from L2). Before each pair it prefetches pfl cache lines
// from pf on (the next group's weight bytes, read by the next
// dequantization). With first ≠ 0 the sums start from zero (accs is only
// written). steps ≥ 1, n ≥ 1.
TEXT ·matmat6AVX512(SB), NOSPLIT, $0-72
	MOVQ xoff+64(FP), R8
	MOVQ accs+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ xs+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ steps+32(FP), BX
	MOVQ pf+40(FP), R14
	MOVQ pfl+48(FP), DI
	MOVQ first+56(FP), R13
m6pair:
	CMPQ CX, $2
	JLT  m6one
	MOVQ DI, R12
m6pf:
	TESTQ R12, R12
	JZ    m6pfdone
	PREFETCHT0 (R14)
	ADDQ  $64, R14
	DECQ  R12
	JMP   m6pf
m6pfdone:
	TESTQ R13, R13
	JZ    m6pairld
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
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	JMP  m6pairgo
m6pairld:
	M6LD(0, Z0, Z1, Z2, Z3)
	M6LD(128, Z4, Z5, Z6, Z7)
	M6LD(256, Z8, Z9, Z10, Z11)
	M6LD(384, Z12, Z13, Z14, Z15)
	M6LD(512, Z16, Z17, Z18, Z19)
	M6LD(640, Z20, Z21, Z22, Z23)
m6pairgo:
	MOVQ (DX), R9
	MOVQ 8(DX), R10
	ADDQ R8, R9
	ADDQ R8, R10
	MOVQ SI, R11
	MOVQ BX, R12
	TESTQ $1, R12
	JZ    m6pairstep
	M6STEP(0)
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	DECQ R12
	JZ   m6pairdone
m6pairstep:
	M6STEP(0)
	M6STEP(128)
	ADDQ $256, R9
	ADDQ $256, R10
	ADDQ $256, R11
	SUBQ $2, R12
	JNZ  m6pairstep
m6pairdone:
	M6ST(0, Z0, Z1, Z2, Z3)
	M6ST(128, Z4, Z5, Z6, Z7)
	M6ST(256, Z8, Z9, Z10, Z11)
	M6ST(384, Z12, Z13, Z14, Z15)
	M6ST(512, Z16, Z17, Z18, Z19)
	M6ST(640, Z20, Z21, Z22, Z23)
	ADDQ $1536, AX
	ADDQ $16, DX
	SUBQ $2, CX
	JMP  m6pair
m6one:
	TESTQ CX, CX
	JZ    m6done
	TESTQ R13, R13
	JZ    m6oneld
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	JMP  m6onego
m6oneld:
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z4
	VMOVUPS 192(AX), Z5
	VMOVUPS 256(AX), Z8
	VMOVUPS 320(AX), Z9
	VMOVUPS 384(AX), Z12
	VMOVUPS 448(AX), Z13
	VMOVUPS 512(AX), Z16
	VMOVUPS 576(AX), Z17
	VMOVUPS 640(AX), Z20
	VMOVUPS 704(AX), Z21
m6onego:
	MOVQ (DX), R9
	ADDQ R8, R9
	MOVQ SI, R11
	MOVQ BX, R12
m6onestep:
	VMOVUPS (R9), Z24
	VMOVUPS 64(R9), Z25
	M6ROW1(0, Z0, Z1)
	M6ROW1(M6W, Z4, Z5)
	M6ROW1(2*M6W, Z8, Z9)
	M6ROW1(3*M6W, Z12, Z13)
	M6ROW1(4*M6W, Z16, Z17)
	M6ROW1(5*M6W, Z20, Z21)
	ADDQ $128, R9
	ADDQ $128, R11
	DECQ R12
	JNZ  m6onestep
	VMOVUPS Z0, 0(AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z4, 128(AX)
	VMOVUPS Z5, 192(AX)
	VMOVUPS Z8, 256(AX)
	VMOVUPS Z9, 320(AX)
	VMOVUPS Z12, 384(AX)
	VMOVUPS Z13, 448(AX)
	VMOVUPS Z16, 512(AX)
	VMOVUPS Z17, 576(AX)
	VMOVUPS Z20, 640(AX)
	VMOVUPS Z21, 704(AX)
m6done:
	VZEROUPPER
	RET

// ---- Q5_K: 176-byte super-blocks: fp16 d, dmin; 12 bytes of 6-bit scales
// and mins at 4(p) (KSC4, as Q4_K); qh[32] at 16(p); qs[128] at 48(p).
// Sub-block j's value l is d·sc_j·q − dmin·m_j with q = its nibble (low
// for even j, high for odd, of qs[32(j/2)+l]) plus 16 times bit j of
// qh[l] (dequantQ5_K). Each sub-block's 32 possible values are made once
// (two registers, from 0…15 and 16…31) and a five-bit index picks one
// (VPERMI2PS): the values the AVX2 kernel computes one by one. ----

// q5kiota16: the float32 values 16, 17, …, 31.
DATA q5kiota16<>+0(SB)/4, $0x41800000
DATA q5kiota16<>+4(SB)/4, $0x41880000
DATA q5kiota16<>+8(SB)/4, $0x41900000
DATA q5kiota16<>+12(SB)/4, $0x41980000
DATA q5kiota16<>+16(SB)/4, $0x41a00000
DATA q5kiota16<>+20(SB)/4, $0x41a80000
DATA q5kiota16<>+24(SB)/4, $0x41b00000
DATA q5kiota16<>+28(SB)/4, $0x41b80000
DATA q5kiota16<>+32(SB)/4, $0x41c00000
DATA q5kiota16<>+36(SB)/4, $0x41c80000
DATA q5kiota16<>+40(SB)/4, $0x41d00000
DATA q5kiota16<>+44(SB)/4, $0x41d80000
DATA q5kiota16<>+48(SB)/4, $0x41e00000
DATA q5kiota16<>+52(SB)/4, $0x41e80000
DATA q5kiota16<>+56(SB)/4, $0x41f00000
DATA q5kiota16<>+60(SB)/4, $0x41f80000
GLOBL q5kiota16<>(SB), RODATA|NOPTR, $64

// Q5IDX(LO, HI, at): the 32 index bytes of sub-blocks 2c (from the qs
// bytes in Y9 and the qh bytes in Y10, shifted so bit 2c sits at bit 4)
// and 2c+1 (Y11: qh with bit 2c+1 at bit 4) at at(SP) and at+32(SP): bits
// 0–3 the nibble, bit 4 the qh bit (VPTERNLOGD $0xD8 with Y15 = bytes 0x0f
// takes bits 0–3 from the nibbles, the rest from the qh bytes; VPERMI2PS
// reads bits 0–4 only).
#define Q5IDX(at) \
	VPTERNLOGD $0xD8, Y15, Y9, Y10; \
	VMOVDQU Y10, (at)(SP); \
	VPSRLW $4, Y9, Y9; \
	VPTERNLOGD $0xD8, Y15, Y9, Y11; \
	VMOVDQU Y11, (at+32)(SP)

// Q5PREP(p, hs) stages row p's eight sub-blocks of index bytes at hs+32j(SP).
// The word shifts move bit k of each qh byte to bit 4 of the same byte.
#define Q5PREP(p, hs) \
	VMOVDQU 16(p), Y8; \
	VMOVDQU 48(p), Y9; \
	VPSLLW $4, Y8, Y10; \
	VPSLLW $3, Y8, Y11; \
	Q5IDX(hs); \
	VMOVDQU 80(p), Y9; \
	VPSLLW $2, Y8, Y10; \
	VPSLLW $1, Y8, Y11; \
	Q5IDX(hs+64); \
	VMOVDQU 112(p), Y9; \
	VMOVDQU Y8, Y10; \
	VPSRLW $1, Y8, Y11; \
	Q5IDX(hs+128); \
	VMOVDQU 144(p), Y9; \
	VPSRLW $2, Y8, Y10; \
	VPSRLW $3, Y8, Y11; \
	Q5IDX(hs+192)

// Q5KROW(b, hs, c, lo, hi): sub-blocks 2c and 2c+1 of a row (scales at
// b(SP), index bytes at hs(SP)) into lo, hi; Z13 = 0…15, Z12 = 16…31.
#define Q5KROW(b, hs, c, lo, hi) \
	VBROADCASTSS (b+8*(c))(SP), Z16; \
	VBROADCASTSS (b+8*(c))(SP), Z19; \
	VFMSUB213PS.BCST (b+32+8*(c))(SP), Z13, Z16; \
	VFMSUB213PS.BCST (b+32+8*(c))(SP), Z12, Z19; \
	VBROADCASTSS (b+8*(c)+4)(SP), Z20; \
	VBROADCASTSS (b+8*(c)+4)(SP), Z21; \
	VFMSUB213PS.BCST (b+36+8*(c))(SP), Z13, Z20; \
	VFMSUB213PS.BCST (b+36+8*(c))(SP), Z12, Z21; \
	VPMOVZXBD (hs+64*(c))(SP), Z22; \
	VPMOVZXBD (hs+64*(c)+16)(SP), Z23; \
	VPMOVZXBD (hs+64*(c)+32)(SP), Z17; \
	VPMOVZXBD (hs+64*(c)+48)(SP), Z18; \
	VPERMI2PS Z19, Z16, Z22; \
	VPERMI2PS Z19, Z16, Z23; \
	VPERMI2PS Z21, Z20, Z17; \
	VPERMI2PS Z21, Z20, Z18; \
	VFMADD231PS Z26, Z22, lo; \
	VFMADD231PS Z27, Z23, hi; \
	VFMADD231PS Z28, Z17, lo; \
	VFMADD231PS Z29, Z18, hi

#define Q5KPAIR(c) \
	VMOVUPS (256*(c))(R10), Z26; \
	VMOVUPS (256*(c)+64)(R10), Z27; \
	VMOVUPS (256*(c)+128)(R10), Z28; \
	VMOVUPS (256*(c)+192)(R10), Z29; \
	Q5KROW(0, 320, c, Z0, Z1); \
	Q5KROW(80, 576, c, Z2, Z3); \
	Q5KROW(160, 832, c, Z4, Z5); \
	Q5KROW(240, 1088, c, Z6, Z7)

// func matvecQ5_KAVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)
// Row j's scales at 80j(SP) (KSC4), its index bytes at 320+256j(SP).
TEXT ·matvecQ5_KAVX512(SB), $1344-48
	PROLOGUE4
	MOVQ $q4kiota<>(SB), AX
	VMOVUPS (AX), Z13
	MOVQ $q5kiota16<>(SB), AX
	VMOVUPS (AX), Z12
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Y15
q5kz4:
	ROWS4_START
q5kzblk:
	PF4(0)
	PF4(64)
	PF4(128)
	KSC4
	Q5PREP(R9, 320)
	Q5PREP(R12, 576)
	Q5PREP(R13, 832)
	Q5PREP(R14, 1088)
	Q5KPAIR(0)
	Q5KPAIR(1)
	Q5KPAIR(2)
	Q5KPAIR(3)
	ADDQ $176, R9
	ADDQ $176, R12
	ADDQ $176, R13
	ADDQ $176, R14
	ADDQ $1024, R10
	DECQ R11
	JNZ  q5kzblk
	ROWS4_END
	JNZ  q5kz4
	VZEROUPPER
	RET
