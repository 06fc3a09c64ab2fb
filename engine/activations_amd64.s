//go:build amd64 && !purego

// activations_amd64.s: GELU (tanh form) and SwiGLU eight lanes at a time (AVX2), with exactly
// the float32 operations of geluTanh, silu and expf in activations.go: every multiply and add
// rounded on its own (no FMA, as Go compiles them for amd64), floor by VROUNDPS, the same
// polynomial and scaling. Each kernel stops at the first group of eight whose exponent argument
// is NaN or outside expf's fast range and returns how many values it wrote; the Go caller does
// that group with the scalar code and calls it again.

#include "textflag.h"

DATA actc<>+0(SB)/4, $0x42b17217
DATA actc<>+4(SB)/4, $0x42b17217
DATA actc<>+8(SB)/4, $0x42b17217
DATA actc<>+12(SB)/4, $0x42b17217
DATA actc<>+16(SB)/4, $0x42b17217
DATA actc<>+20(SB)/4, $0x42b17217
DATA actc<>+24(SB)/4, $0x42b17217
DATA actc<>+28(SB)/4, $0x42b17217
DATA actc<>+32(SB)/4, $0xc2aeac4f
DATA actc<>+36(SB)/4, $0xc2aeac4f
DATA actc<>+40(SB)/4, $0xc2aeac4f
DATA actc<>+44(SB)/4, $0xc2aeac4f
DATA actc<>+48(SB)/4, $0xc2aeac4f
DATA actc<>+52(SB)/4, $0xc2aeac4f
DATA actc<>+56(SB)/4, $0xc2aeac4f
DATA actc<>+60(SB)/4, $0xc2aeac4f
DATA actc<>+64(SB)/4, $0x3fb8aa3b
DATA actc<>+68(SB)/4, $0x3fb8aa3b
DATA actc<>+72(SB)/4, $0x3fb8aa3b
DATA actc<>+76(SB)/4, $0x3fb8aa3b
DATA actc<>+80(SB)/4, $0x3fb8aa3b
DATA actc<>+84(SB)/4, $0x3fb8aa3b
DATA actc<>+88(SB)/4, $0x3fb8aa3b
DATA actc<>+92(SB)/4, $0x3fb8aa3b
DATA actc<>+96(SB)/4, $0x3f000000
DATA actc<>+100(SB)/4, $0x3f000000
DATA actc<>+104(SB)/4, $0x3f000000
DATA actc<>+108(SB)/4, $0x3f000000
DATA actc<>+112(SB)/4, $0x3f000000
DATA actc<>+116(SB)/4, $0x3f000000
DATA actc<>+120(SB)/4, $0x3f000000
DATA actc<>+124(SB)/4, $0x3f000000
DATA actc<>+128(SB)/4, $0x3f318000
DATA actc<>+132(SB)/4, $0x3f318000
DATA actc<>+136(SB)/4, $0x3f318000
DATA actc<>+140(SB)/4, $0x3f318000
DATA actc<>+144(SB)/4, $0x3f318000
DATA actc<>+148(SB)/4, $0x3f318000
DATA actc<>+152(SB)/4, $0x3f318000
DATA actc<>+156(SB)/4, $0x3f318000
DATA actc<>+160(SB)/4, $0x395e8083
DATA actc<>+164(SB)/4, $0x395e8083
DATA actc<>+168(SB)/4, $0x395e8083
DATA actc<>+172(SB)/4, $0x395e8083
DATA actc<>+176(SB)/4, $0x395e8083
DATA actc<>+180(SB)/4, $0x395e8083
DATA actc<>+184(SB)/4, $0x395e8083
DATA actc<>+188(SB)/4, $0x395e8083
DATA actc<>+192(SB)/4, $0x39506967
DATA actc<>+196(SB)/4, $0x39506967
DATA actc<>+200(SB)/4, $0x39506967
DATA actc<>+204(SB)/4, $0x39506967
DATA actc<>+208(SB)/4, $0x39506967
DATA actc<>+212(SB)/4, $0x39506967
DATA actc<>+216(SB)/4, $0x39506967
DATA actc<>+220(SB)/4, $0x39506967
DATA actc<>+224(SB)/4, $0x3ab743ce
DATA actc<>+228(SB)/4, $0x3ab743ce
DATA actc<>+232(SB)/4, $0x3ab743ce
DATA actc<>+236(SB)/4, $0x3ab743ce
DATA actc<>+240(SB)/4, $0x3ab743ce
DATA actc<>+244(SB)/4, $0x3ab743ce
DATA actc<>+248(SB)/4, $0x3ab743ce
DATA actc<>+252(SB)/4, $0x3ab743ce
DATA actc<>+256(SB)/4, $0x3c088908
DATA actc<>+260(SB)/4, $0x3c088908
DATA actc<>+264(SB)/4, $0x3c088908
DATA actc<>+268(SB)/4, $0x3c088908
DATA actc<>+272(SB)/4, $0x3c088908
DATA actc<>+276(SB)/4, $0x3c088908
DATA actc<>+280(SB)/4, $0x3c088908
DATA actc<>+284(SB)/4, $0x3c088908
DATA actc<>+288(SB)/4, $0x3d2aa9c1
DATA actc<>+292(SB)/4, $0x3d2aa9c1
DATA actc<>+296(SB)/4, $0x3d2aa9c1
DATA actc<>+300(SB)/4, $0x3d2aa9c1
DATA actc<>+304(SB)/4, $0x3d2aa9c1
DATA actc<>+308(SB)/4, $0x3d2aa9c1
DATA actc<>+312(SB)/4, $0x3d2aa9c1
DATA actc<>+316(SB)/4, $0x3d2aa9c1
DATA actc<>+320(SB)/4, $0x3e2aaaaa
DATA actc<>+324(SB)/4, $0x3e2aaaaa
DATA actc<>+328(SB)/4, $0x3e2aaaaa
DATA actc<>+332(SB)/4, $0x3e2aaaaa
DATA actc<>+336(SB)/4, $0x3e2aaaaa
DATA actc<>+340(SB)/4, $0x3e2aaaaa
DATA actc<>+344(SB)/4, $0x3e2aaaaa
DATA actc<>+348(SB)/4, $0x3e2aaaaa
DATA actc<>+352(SB)/4, $0x3f000000
DATA actc<>+356(SB)/4, $0x3f000000
DATA actc<>+360(SB)/4, $0x3f000000
DATA actc<>+364(SB)/4, $0x3f000000
DATA actc<>+368(SB)/4, $0x3f000000
DATA actc<>+372(SB)/4, $0x3f000000
DATA actc<>+376(SB)/4, $0x3f000000
DATA actc<>+380(SB)/4, $0x3f000000
DATA actc<>+384(SB)/4, $0x3f800000
DATA actc<>+388(SB)/4, $0x3f800000
DATA actc<>+392(SB)/4, $0x3f800000
DATA actc<>+396(SB)/4, $0x3f800000
DATA actc<>+400(SB)/4, $0x3f800000
DATA actc<>+404(SB)/4, $0x3f800000
DATA actc<>+408(SB)/4, $0x3f800000
DATA actc<>+412(SB)/4, $0x3f800000
DATA actc<>+416(SB)/4, $0x40000000
DATA actc<>+420(SB)/4, $0x40000000
DATA actc<>+424(SB)/4, $0x40000000
DATA actc<>+428(SB)/4, $0x40000000
DATA actc<>+432(SB)/4, $0x40000000
DATA actc<>+436(SB)/4, $0x40000000
DATA actc<>+440(SB)/4, $0x40000000
DATA actc<>+444(SB)/4, $0x40000000
DATA actc<>+448(SB)/4, $0x3d372713
DATA actc<>+452(SB)/4, $0x3d372713
DATA actc<>+456(SB)/4, $0x3d372713
DATA actc<>+460(SB)/4, $0x3d372713
DATA actc<>+464(SB)/4, $0x3d372713
DATA actc<>+468(SB)/4, $0x3d372713
DATA actc<>+472(SB)/4, $0x3d372713
DATA actc<>+476(SB)/4, $0x3d372713
DATA actc<>+480(SB)/4, $0x3f4c422a
DATA actc<>+484(SB)/4, $0x3f4c422a
DATA actc<>+488(SB)/4, $0x3f4c422a
DATA actc<>+492(SB)/4, $0x3f4c422a
DATA actc<>+496(SB)/4, $0x3f4c422a
DATA actc<>+500(SB)/4, $0x3f4c422a
DATA actc<>+504(SB)/4, $0x3f4c422a
DATA actc<>+508(SB)/4, $0x3f4c422a
DATA actc<>+512(SB)/4, $0x0000007f
DATA actc<>+516(SB)/4, $0x0000007f
DATA actc<>+520(SB)/4, $0x0000007f
DATA actc<>+524(SB)/4, $0x0000007f
DATA actc<>+528(SB)/4, $0x0000007f
DATA actc<>+532(SB)/4, $0x0000007f
DATA actc<>+536(SB)/4, $0x0000007f
DATA actc<>+540(SB)/4, $0x0000007f
DATA actc<>+544(SB)/4, $0x00000001
DATA actc<>+548(SB)/4, $0x00000001
DATA actc<>+552(SB)/4, $0x00000001
DATA actc<>+556(SB)/4, $0x00000001
DATA actc<>+560(SB)/4, $0x00000001
DATA actc<>+564(SB)/4, $0x00000001
DATA actc<>+568(SB)/4, $0x00000001
DATA actc<>+572(SB)/4, $0x00000001
GLOBL actc<>(SB), RODATA|NOPTR, $576

// EXPF(V): Y0 = expf(Y{V}) for lanes in the fast range. Uses Y1-Y4.
#define EXPF(V) \
	VMULPS actc<>+64(SB), V, Y1; \
	VADDPS actc<>+96(SB), Y1, Y1; \
	VROUNDPS $1, Y1, Y1; \
	VMULPS actc<>+128(SB), Y1, Y2; \
	VSUBPS Y2, V, Y2; \
	VMULPS actc<>+160(SB), Y1, Y3; \
	VADDPS Y3, Y2, Y2; \
	VMOVUPS actc<>+192(SB), Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS actc<>+224(SB), Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS actc<>+256(SB), Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS actc<>+288(SB), Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS actc<>+320(SB), Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS actc<>+352(SB), Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VADDPS Y2, Y3, Y3; \
	VADDPS actc<>+384(SB), Y3, Y3; \
	VCVTTPS2DQ Y1, Y1; \
	VPCMPGTD actc<>+512(SB), Y1, Y4; \
	VADDPS Y3, Y3, Y2; \
	VBLENDVPS Y4, Y2, Y3, Y3; \
	VPAND actc<>+544(SB), Y4, Y4; \
	VPSUBD Y4, Y1, Y1; \
	VPADDD actc<>+512(SB), Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y1, Y3, Y0

// INRANGE(V, L): jump to L unless every lane of V is in [lo, hi] (NaN is not). Uses Y1, Y2, R9.
#define INRANGE(V, L) \
	VCMPPS $0x12, actc<>+0(SB), V, Y1; \
	VMOVUPS actc<>+32(SB), Y2; \
	VCMPPS $0x12, V, Y2, Y2; \
	VANDPS Y2, Y1, Y1; \
	VMOVMSKPS Y1, R9; \
	CMPQ R9, $0xff; \
	JNE L

// func geluAVX2(x *float32, n int) (done int)
// x[i] = geluTanh(x[i]) for i < done (a multiple of 8, ≤ n).
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	XORQ AX, AX

geluloop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  geludone
	VMOVUPS (DI)(AX*4), Y5
	VMULPS actc<>+448(SB), Y5, Y6
	VMULPS Y5, Y6, Y6
	VMULPS Y5, Y6, Y6
	VADDPS Y6, Y5, Y6
	VMULPS actc<>+480(SB), Y6, Y6
	VADDPS Y6, Y6, Y6
	INRANGE(Y6, geludone)
	EXPF(Y6)
	VADDPS actc<>+384(SB), Y0, Y0
	VMOVUPS actc<>+416(SB), Y7
	VDIVPS Y0, Y7, Y0
	VSUBPS Y0, Y7, Y0
	VMULPS actc<>+96(SB), Y5, Y5
	VMULPS Y0, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	MOVQ DX, AX
	JMP  geluloop

geludone:
	MOVQ AX, done+16(FP)
	VZEROUPPER
	RET

// func swigluAVX2(hb, up *float32, n int) (done int)
// hb[i] = silu(hb[i])·up[i] for i < done (a multiple of 8, ≤ n).
TEXT ·swigluAVX2(SB), NOSPLIT, $0-32
	MOVQ hb+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

swigluloop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  swigludone
	VMOVUPS (DI)(AX*4), Y5
	VXORPS Y6, Y6, Y6
	VSUBPS Y5, Y6, Y6
	INRANGE(Y6, swigludone)
	EXPF(Y6)
	VADDPS actc<>+384(SB), Y0, Y0
	VDIVPS Y0, Y5, Y5
	VMULPS (SI)(AX*4), Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	MOVQ DX, AX
	JMP  swigluloop

swigludone:
	MOVQ AX, done+24(FP)
	VZEROUPPER
	RET
