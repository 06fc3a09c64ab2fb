//go:build amd64 && !purego

#include "textflag.h"

// func scaleDivAVX2(dst, src *float32, n int, c, d float32)
//
// dst[i] = (src[i]·c) / d for i < n, n a multiple of 8.
TEXT ·scaleDivAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS c+24(FP), Y1
	VBROADCASTSS d+28(FP), Y2
	SHRQ $3, CX

loop:
	VMULPS  (SI), Y1, Y0
	VDIVPS  Y2, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER
	RET
