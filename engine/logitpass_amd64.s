//go:build amd64 && !purego

#include "textflag.h"

// func logitPassAVX2(z *float32, blocks int, sums *[16]float64, lohi *[16]float32, bmax *float32)
//
// Over blocks·16 logits: sums[l] = Σ float64(z[i]) for i ≡ l (mod 16), in
// order (Y0–Y3 hold lanes 0–3, 4–7, 8–11, 12–15); lohi[0:8] and lohi[8:16]
// the running least and greatest of each of eight float32 lanes; bmax[k]
// the greatest of z[16k : 16k+16]. VMINPS/VMAXPS differ from < and > only
// on NaN and on zeros of either sign, which the caller checks for.
TEXT ·logitPassAVX2(SB), NOSPLIT, $0-40
	MOVQ z+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ sums+16(FP), DI
	MOVQ lohi+24(FP), DX
	MOVQ bmax+32(FP), BX
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	VMOVUPS (SI), Y4 // running least
	VMOVUPS Y4, Y5   // running greatest

loop:
	VMOVUPS   (SI), Y6
	VMOVUPS   32(SI), Y7
	VCVTPS2PD (SI), Y8
	VCVTPS2PD 16(SI), Y9
	VCVTPS2PD 32(SI), Y10
	VCVTPS2PD 48(SI), Y11
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	VADDPD    Y10, Y2, Y2
	VADDPD    Y11, Y3, Y3
	VMINPS    Y6, Y4, Y4
	VMINPS    Y7, Y4, Y4
	VMAXPS    Y7, Y6, Y12 // the block's greatest, eight lanes
	VMAXPS    Y12, Y5, Y5
	VEXTRACTF128 $1, Y12, X13
	VMAXPS    X13, X12, X12
	VPERMILPS $0x4E, X12, X13
	VMAXPS    X13, X12, X12
	VPERMILPS $0xB1, X12, X13
	VMAXPS    X13, X12, X12
	VMOVSS    X12, (BX)
	ADDQ $64, SI
	ADDQ $4, BX
	DECQ CX
	JNZ  loop

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	VZEROUPPER
	RET
