//go:build amd64 && !purego

#include "textflag.h"

// norm_amd64.s: the normalizations' loops in AVX2 (norm.go): the 16-lane sums of a row (lane
// i%16 adds in order) and the elementwise scaling, every multiply and add rounded on its own
// as the Go loops do, so the bits are theirs.

// func sumSqLanesAVX2(acc *[16]float32, x *float32, n int, mean float32)
// acc[i%16] += (x[i]−mean)·(x[i]−mean) for i < n (n a positive multiple of 16), in order of i.
TEXT ·sumSqLanesAVX2(SB), NOSPLIT, $0-28
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mean+24(FP), Y4
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1

sqloop:
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VSUBPS  Y4, Y2, Y2
	VSUBPS  Y4, Y3, Y3
	VMULPS  Y2, Y2, Y2
	VMULPS  Y3, Y3, Y3
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JNZ     sqloop
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func sumLanesAVX2(acc *[16]float32, x *float32, n int)
// acc[i%16] += x[i] for i < n (n a positive multiple of 16), in order of i.
TEXT ·sumLanesAVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1

sumloop:
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	ADDQ   $64, SI
	SUBQ   $16, CX
	JNZ    sumloop
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET

// func rmsScaleAVX2(out, x, gain *float32, n int, inv, one float32)
// out[i] = (one + gain[i])·(x[i]·inv) for i < n (n a positive multiple of 8).
TEXT ·rmsScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS inv+32(FP), Y4
	VBROADCASTSS one+36(FP), Y5

rmsloop:
	VMULPS  (SI), Y4, Y0
	VADDPS  (DX), Y5, Y1
	VMULPS  Y0, Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     rmsloop
	VZEROUPPER
	RET

// func lnScaleAVX2(out, x, gain, b *float32, n int, mean, inv float32)
// out[i] = ((x[i]−mean)·inv)·gain[i] + b[i] for i < n (n a positive multiple of 8).
TEXT ·lnScaleAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), DX
	MOVQ b+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y4
	VBROADCASTSS inv+44(FP), Y5

lnloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y4, Y0, Y0
	VMULPS  Y5, Y0, Y0
	VMULPS  (DX), Y0, Y0
	VADDPS  (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     lnloop
	VZEROUPPER
	RET
