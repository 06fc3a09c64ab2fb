//go:build amd64 && !purego

#include "textflag.h"

// expf64_amd64.s: e^x for four float64 lanes at a time, the same
// operations in the same order as the Go runtime's math.Exp on a CPU with
// FMA (math/exp_amd64.s, its avxfma path: Shibata's reduction and Taylor
// series), so every lane equals math.Exp bit for bit.

// constants, each repeated in four lanes
DATA expc<>+0(SB)/8, $1.4426950408889634073599246810018920 // LOG2E
DATA expc<>+8(SB)/8, $1.4426950408889634073599246810018920
DATA expc<>+16(SB)/8, $1.4426950408889634073599246810018920
DATA expc<>+24(SB)/8, $1.4426950408889634073599246810018920
DATA expc<>+32(SB)/8, $0.69314718055966295651160180568695068359375 // LN2U
DATA expc<>+40(SB)/8, $0.69314718055966295651160180568695068359375
DATA expc<>+48(SB)/8, $0.69314718055966295651160180568695068359375
DATA expc<>+56(SB)/8, $0.69314718055966295651160180568695068359375
DATA expc<>+64(SB)/8, $0.28235290563031577122588448175013436025525412068e-12 // LN2L
DATA expc<>+72(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expc<>+80(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expc<>+88(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expc<>+96(SB)/8, $0.0625
DATA expc<>+104(SB)/8, $0.0625
DATA expc<>+112(SB)/8, $0.0625
DATA expc<>+120(SB)/8, $0.0625
DATA expc<>+128(SB)/8, $2.4801587301587301587e-5
DATA expc<>+136(SB)/8, $2.4801587301587301587e-5
DATA expc<>+144(SB)/8, $2.4801587301587301587e-5
DATA expc<>+152(SB)/8, $2.4801587301587301587e-5
DATA expc<>+160(SB)/8, $1.9841269841269841270e-4
DATA expc<>+168(SB)/8, $1.9841269841269841270e-4
DATA expc<>+176(SB)/8, $1.9841269841269841270e-4
DATA expc<>+184(SB)/8, $1.9841269841269841270e-4
DATA expc<>+192(SB)/8, $1.3888888888888888889e-3
DATA expc<>+200(SB)/8, $1.3888888888888888889e-3
DATA expc<>+208(SB)/8, $1.3888888888888888889e-3
DATA expc<>+216(SB)/8, $1.3888888888888888889e-3
DATA expc<>+224(SB)/8, $8.3333333333333333333e-3
DATA expc<>+232(SB)/8, $8.3333333333333333333e-3
DATA expc<>+240(SB)/8, $8.3333333333333333333e-3
DATA expc<>+248(SB)/8, $8.3333333333333333333e-3
DATA expc<>+256(SB)/8, $4.1666666666666666667e-2
DATA expc<>+264(SB)/8, $4.1666666666666666667e-2
DATA expc<>+272(SB)/8, $4.1666666666666666667e-2
DATA expc<>+280(SB)/8, $4.1666666666666666667e-2
DATA expc<>+288(SB)/8, $1.6666666666666666667e-1
DATA expc<>+296(SB)/8, $1.6666666666666666667e-1
DATA expc<>+304(SB)/8, $1.6666666666666666667e-1
DATA expc<>+312(SB)/8, $1.6666666666666666667e-1
DATA expc<>+320(SB)/8, $0.5
DATA expc<>+328(SB)/8, $0.5
DATA expc<>+336(SB)/8, $0.5
DATA expc<>+344(SB)/8, $0.5
DATA expc<>+352(SB)/8, $1.0
DATA expc<>+360(SB)/8, $1.0
DATA expc<>+368(SB)/8, $1.0
DATA expc<>+376(SB)/8, $1.0
DATA expc<>+384(SB)/8, $2.0
DATA expc<>+392(SB)/8, $2.0
DATA expc<>+400(SB)/8, $2.0
DATA expc<>+408(SB)/8, $2.0
DATA expc<>+416(SB)/8, $-708.0 // the lanes computed here: -708 ≤ x ≤ 709
DATA expc<>+424(SB)/8, $-708.0
DATA expc<>+432(SB)/8, $-708.0
DATA expc<>+440(SB)/8, $-708.0
DATA expc<>+448(SB)/8, $709.0
DATA expc<>+456(SB)/8, $709.0
DATA expc<>+464(SB)/8, $709.0
DATA expc<>+472(SB)/8, $709.0
DATA expc<>+480(SB)/8, $1023 // exponent bias (int64 lanes)
DATA expc<>+488(SB)/8, $1023
DATA expc<>+496(SB)/8, $1023
DATA expc<>+504(SB)/8, $1023
DATA expc<>+512(SB)/8, $-104.0 // float32(e^x) is 0 below
DATA expc<>+520(SB)/8, $-104.0
DATA expc<>+528(SB)/8, $-104.0
DATA expc<>+536(SB)/8, $-104.0
GLOBL expc<>(SB), RODATA, $544

// EXP4 sets Y0 = e^Y0 (four lanes, math.Exp's avxfma path) for lanes in
// [−708, 709]; it uses Y1–Y4 and X2.
#define EXP4 \
	VMULPD      expc<>+0(SB), Y0, Y1 \
	VCVTPD2DQY  Y1, X2 \
	VCVTDQ2PD   X2, Y1 \
	VFNMADD231PD expc<>+32(SB), Y1, Y0 \
	VFNMADD231PD expc<>+64(SB), Y1, Y0 \
	VMULPD      expc<>+96(SB), Y0, Y0 \
	VMOVUPD     expc<>+128(SB), Y3 \
	VFMADD213PD expc<>+160(SB), Y0, Y3 \
	VFMADD213PD expc<>+192(SB), Y0, Y3 \
	VFMADD213PD expc<>+224(SB), Y0, Y3 \
	VFMADD213PD expc<>+256(SB), Y0, Y3 \
	VFMADD213PD expc<>+288(SB), Y0, Y3 \
	VFMADD213PD expc<>+320(SB), Y0, Y3 \
	VFMADD213PD expc<>+352(SB), Y0, Y3 \
	VMULPD      Y3, Y0, Y0 \
	VADDPD      expc<>+384(SB), Y0, Y3 \
	VMULPD      Y3, Y0, Y0 \
	VADDPD      expc<>+384(SB), Y0, Y3 \
	VMULPD      Y3, Y0, Y0 \
	VADDPD      expc<>+384(SB), Y0, Y3 \
	VMULPD      Y3, Y0, Y0 \
	VADDPD      expc<>+384(SB), Y0, Y3 \
	VFMADD213PD expc<>+352(SB), Y3, Y0 \
	VPMOVSXDQ   X2, Y4 \
	VPADDQ      expc<>+480(SB), Y4, Y4 \
	VPSLLQ      $52, Y4, Y4 \
	VMULPD      Y4, Y0, Y0

// func softmaxExpF32AVX2(x *float32, n int, mx float32)
//
// For i < n (a multiple of 4): x[i] = float32(math.Exp(float64(x[i] − mx))),
// the attention softmax's exponentials. Lanes below −104 are 0 (as the
// float32 of any e^x there is); NaN stays NaN.
TEXT ·softmaxExpF32AVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS mx+16(FP), X13
	SHRQ $2, CX
	JZ   f32done

f32loop:
	VMOVUPS   (SI), X0
	VSUBPS    X13, X0, X0
	VCVTPS2PD X0, Y0
	VCMPPD    $0x11, expc<>+512(SB), Y0, Y6 // x < −104
	EXP4
	VANDNPD   Y0, Y6, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS   X0, (SI)
	ADDQ $16, SI
	DECQ CX
	JNZ  f32loop

f32done:
	VZEROUPPER
	RET

// func softmaxExpAVX2(u, e *float64, z *float32, n int, mx, t float64) (outside int)
//
// For i < n (a multiple of 4): u[i] = (float64(z[i]) − mx) / t and
// e[i] = math.Exp(u[i]). Lanes with u outside [−708, 709] (or NaN) are
// counted in outside and their e left for the caller to compute.
TEXT ·softmaxExpAVX2(SB), NOSPLIT, $0-56
	MOVQ u+0(FP), DI
	MOVQ e+8(FP), DX
	MOVQ z+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD mx+32(FP), Y13
	VBROADCASTSD t+40(FP), Y14
	XORQ R8, R8
	SHRQ $2, CX
	JZ   done

loop:
	VCVTPS2PD (SI), Y0
	VSUBPD    Y13, Y0, Y0
	VDIVPD    Y14, Y0, Y0
	VMOVUPD   Y0, (DI)

	// lanes outside the normal range
	VCMPPD    $0x1d, expc<>+416(SB), Y0, Y6 // x ≥ −708
	VCMPPD    $0x12, expc<>+448(SB), Y0, Y7 // x ≤ 709
	VANDPD    Y6, Y7, Y6
	VMOVMSKPD Y6, AX
	XORL      $0xf, AX
	POPCNTL   AX, AX
	ADDQ      AX, R8

	// BX = round(x·log2e); x −= BX·ln2 (in two parts); x /= 16
	VMULPD      expc<>+0(SB), Y0, Y1
	VCVTPD2DQY  Y1, X2
	VCVTDQ2PD   X2, Y1
	VFNMADD231PD expc<>+32(SB), Y1, Y0
	VFNMADD231PD expc<>+64(SB), Y1, Y0
	VMULPD      expc<>+96(SB), Y0, Y0

	// Taylor series
	VMOVUPD     expc<>+128(SB), Y3
	VFMADD213PD expc<>+160(SB), Y0, Y3
	VFMADD213PD expc<>+192(SB), Y0, Y3
	VFMADD213PD expc<>+224(SB), Y0, Y3
	VFMADD213PD expc<>+256(SB), Y0, Y3
	VFMADD213PD expc<>+288(SB), Y0, Y3
	VFMADD213PD expc<>+320(SB), Y0, Y3
	VFMADD213PD expc<>+352(SB), Y0, Y3
	VMULPD      Y3, Y0, Y0

	// square four times: y·(y+2)
	VADDPD      expc<>+384(SB), Y0, Y3
	VMULPD      Y3, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y3
	VMULPD      Y3, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y3
	VMULPD      Y3, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y3
	VFMADD213PD expc<>+352(SB), Y3, Y0

	// × 2^BX
	VPMOVSXDQ X2, Y4
	VPADDQ    expc<>+480(SB), Y4, Y4
	VPSLLQ    $52, Y4, Y4
	VMULPD    Y4, Y0, Y0
	VMOVUPD   Y0, (DX)

	ADDQ $16, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	MOVQ R8, outside+48(FP)
	RET

// SUMSTEP(off, accS, accU): one softmaxSumsAVX2 vector of four lanes at
// byte offset off of z (2·off of u and e), without the division by t
// (t = 1: x/1 is x). It keeps u in Y15, counts lanes outside [−708, 709]
// in R8, and adds e to accS and e·u (where e > 0) to accU.
#define SUMSTEP(off, accS, accU) \
	VCVTPS2PD off(SI), Y0 \
	VSUBPD    Y13, Y0, Y0 \
	SUMREST(off, accS, accU)

// SUMSTEPDIV is SUMSTEP with the division by t (Y14).
#define SUMSTEPDIV(off, accS, accU) \
	VCVTPS2PD off(SI), Y0 \
	VSUBPD    Y13, Y0, Y0 \
	VDIVPD    Y14, Y0, Y0 \
	SUMREST(off, accS, accU)

#define SUMREST(off, accS, accU) \
	VMOVUPD   Y0, (off*2)(DI) \
	VMOVAPD   Y0, Y15 \
	VCMPPD    $0x1d, expc<>+416(SB), Y0, Y1 \
	VCMPPD    $0x12, expc<>+448(SB), Y0, Y3 \
	VANDPD    Y1, Y3, Y1 \
	VMOVMSKPD Y1, AX \
	XORL      $0xf, AX \
	POPCNTL   AX, AX \
	ADDQ      AX, R8 \
	EXP4 \
	VMOVUPD   Y0, (off*2)(DX) \
	VADDPD    Y0, accS, accS \
	VXORPD    Y1, Y1, Y1 \
	VCMPPD    $0x1e, Y1, Y0, Y3 \
	VMULPD    Y15, Y0, Y4 \
	VANDPD    Y3, Y4, Y4 \
	VADDPD    Y4, accU, accU

// func softmaxSumsAVX2(u, e *float64, z *float32, n int, mx, t float64, sums *[32]float64, store bool) (outside int)
//
// softmaxExpAVX2 for n a multiple of 16 (u and e written only if store:
// else the first 16 of each are scratch), and the sums in the lane order
// (logitpass.go): sums[l] = Σ e[i] and sums[16+l] = Σ e[i]·u[i] over
// e[i] > 0, for i ≡ l (mod 16), in order. Y5–Y8 hold the first sums'
// lanes 0–3, 4–7, 8–11, 12–15, Y9–Y12 the second's. Lanes outside
// [−708, 709] are counted in outside; their e and the sums are then the
// caller's to redo.
TEXT ·softmaxSumsAVX2(SB), NOSPLIT, $0-72
	MOVQ $128, R10
	MOVBLZX store+56(FP), AX
	TESTL AX, AX
	JNZ  sstore
	XORQ R10, R10 // the same 128 bytes of u and e every step

sstore:
	MOVQ u+0(FP), DI
	MOVQ e+8(FP), DX
	MOVQ z+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD mx+32(FP), Y13
	VBROADCASTSD t+40(FP), Y14
	MOVQ sums+48(FP), R9
	XORQ R8, R8
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	SHRQ $4, CX
	JZ   sdone
	MOVSD t+40(FP), X0
	UCOMISD expc<>+352(SB), X0 // t = 1: no division
	JNE  sloopdiv
	JP   sloopdiv

sloop:
	SUMSTEP(0, Y5, Y9)
	SUMSTEP(16, Y6, Y10)
	SUMSTEP(32, Y7, Y11)
	SUMSTEP(48, Y8, Y12)
	ADDQ $64, SI
	ADDQ R10, DI
	ADDQ R10, DX
	DECQ CX
	JNZ  sloop
	JMP  sdone

sloopdiv:
	SUMSTEPDIV(0, Y5, Y9)
	SUMSTEPDIV(16, Y6, Y10)
	SUMSTEPDIV(32, Y7, Y11)
	SUMSTEPDIV(48, Y8, Y12)
	ADDQ $64, SI
	ADDQ R10, DI
	ADDQ R10, DX
	DECQ CX
	JNZ  sloopdiv

sdone:
	VMOVUPD Y5, (R9)
	VMOVUPD Y6, 32(R9)
	VMOVUPD Y7, 64(R9)
	VMOVUPD Y8, 96(R9)
	VMOVUPD Y9, 128(R9)
	VMOVUPD Y10, 160(R9)
	VMOVUPD Y11, 192(R9)
	VMOVUPD Y12, 224(R9)
	VZEROUPPER
	MOVQ R8, outside+64(FP)
	RET

// EXP8 is EXP4 on eight lanes (Z0; Z1–Z4 and Y2), constants broadcast.
#define EXP8 \
	VMULPD.BCST  expc<>+0(SB), Z0, Z1 \
	VCVTPD2DQ    Z1, Y2 \
	VCVTDQ2PD    Y2, Z1 \
	VFNMADD231PD.BCST expc<>+32(SB), Z1, Z0 \
	VFNMADD231PD.BCST expc<>+64(SB), Z1, Z0 \
	VMULPD.BCST  expc<>+96(SB), Z0, Z0 \
	VBROADCASTSD expc<>+128(SB), Z3 \
	VFMADD213PD.BCST expc<>+160(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+192(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+224(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+256(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+288(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+320(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+352(SB), Z0, Z3 \
	VMULPD       Z3, Z0, Z0 \
	VADDPD.BCST  expc<>+384(SB), Z0, Z3 \
	VMULPD       Z3, Z0, Z0 \
	VADDPD.BCST  expc<>+384(SB), Z0, Z3 \
	VMULPD       Z3, Z0, Z0 \
	VADDPD.BCST  expc<>+384(SB), Z0, Z3 \
	VMULPD       Z3, Z0, Z0 \
	VADDPD.BCST  expc<>+384(SB), Z0, Z3 \
	VFMADD213PD.BCST expc<>+352(SB), Z3, Z0 \
	VPMOVSXDQ    Y2, Z4 \
	VPADDQ.BCST  expc<>+480(SB), Z4, Z4 \
	VPSLLQ       $52, Z4, Z4 \
	VMULPD       Z4, Z0, Z0

// SUM8(off, accS, accU, div): softmaxSums512's eight lanes at byte offset
// off of z (2·off of u and e); div is the division by t (Z14) or nothing.
#define SUM8(off, accS, accU, div) \
	VCVTPS2PD off(SI), Z0 \
	VSUBPD    Z13, Z0, Z0 \
	div \
	VMOVUPD   Z0, (off*2)(DI) \
	VMOVAPD   Z0, Z15 \
	VCMPPD.BCST $0x1d, expc<>+416(SB), Z0, K1 \
	VCMPPD.BCST $0x12, expc<>+448(SB), Z0, K2 \
	KANDB     K1, K2, K1 \
	KMOVB     K1, AX \
	XORL      $0xff, AX \
	POPCNTL   AX, AX \
	ADDQ      AX, R8 \
	EXP8 \
	VMOVUPD   Z0, (off*2)(DX) \
	VADDPD    Z0, accS, accS \
	VXORPD    Z1, Z1, Z1 \
	VCMPPD    $0x1e, Z1, Z0, K3 \
	VMULPD    Z15, Z0, Z4 \
	VADDPD    Z4, accU, K3, accU

#define DIVT VDIVPD Z14, Z0, Z0
#define NODIV

// func softmaxSums512(u, e *float64, z *float32, n int, mx, t float64, sums *[32]float64, store bool) (outside int)
//
// softmaxSumsAVX2 on eight lanes a register: Z5 and Z6 hold the first
// sums' lanes 0–7 and 8–15, Z9 and Z10 the second's.
TEXT ·softmaxSums512(SB), NOSPLIT, $0-72
	MOVQ $128, R10
	MOVBLZX store+56(FP), AX
	TESTL AX, AX
	JNZ  zstore
	XORQ R10, R10 // the same 128 bytes of u and e every step

zstore:
	MOVQ u+0(FP), DI
	MOVQ e+8(FP), DX
	MOVQ z+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD mx+32(FP), Z13
	VBROADCASTSD t+40(FP), Z14
	MOVQ sums+48(FP), R9
	XORQ R8, R8
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	VXORPD Z9, Z9, Z9
	VXORPD Z10, Z10, Z10
	SHRQ $4, CX
	JZ   zdone
	MOVSD t+40(FP), X0
	UCOMISD expc<>+352(SB), X0 // t = 1: no division
	JNE  zloopdiv
	JP   zloopdiv

zloop:
	SUM8(0, Z5, Z9, NODIV)
	SUM8(32, Z6, Z10, NODIV)
	ADDQ $64, SI
	ADDQ R10, DI
	ADDQ R10, DX
	DECQ CX
	JNZ  zloop
	JMP  zdone

zloopdiv:
	SUM8(0, Z5, Z9, DIVT)
	SUM8(32, Z6, Z10, DIVT)
	ADDQ $64, SI
	ADDQ R10, DI
	ADDQ R10, DX
	DECQ CX
	JNZ  zloopdiv

zdone:
	VMOVUPD Z5, (R9)
	VMOVUPD Z6, 64(R9)
	VMOVUPD Z9, 128(R9)
	VMOVUPD Z10, 192(R9)
	VZEROUPPER
	MOVQ R8, outside+64(FP)
	RET
