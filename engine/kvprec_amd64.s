//go:build amd64 && !purego

#include "textflag.h"

// kvprec_amd64.s: a 16-bit KV cache's rows widened to float32 for the attention kernels: IEEE
// half with VCVTPH2PS (AVX-512F, or F16C on 8 lanes), bfloat16 by zero-extending each value to
// 32 bits and shifting it into the top half. Both conversions are exact.

// func kvWidenAVX512(dst *float32, src *uint16, rows int, n int, lds int, bf int)
// dst[r·n+j] = widen(src[r·lds+j]) for r < rows, j < n (rows, n ≥ 1); bf ≠ 0: bfloat16, else
// IEEE half. The last n%16 values of a row go through masked loads and stores, which never
// touch memory outside the lanes asked for. With each 32 bytes of a row it prefetches the same
// bytes of the row kvWidenAhead rows on (a prefetch never faults, past the end included).
TEXT ·kvWidenAVX512(SB), NOSPLIT, $0-48
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  rows+16(FP), R8
	MOVQ  n+24(FP), R9
	MOVQ  lds+32(FP), R10
	SHLQ  $1, R10 // a source row in bytes
	MOVQ  bf+40(FP), R11
	MOVQ  R9, CX
	ANDQ  $15, CX
	LEAQ  (CX*4), R12 // the tail's bytes in dst
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1 // the tail's lanes (none when n%16 = 0)
	MOVQ  R10, R13
	SHLQ  $5, R13 // kvWidenAhead = 32 rows on, in bytes

widenrow:
	MOVQ SI, BX
	MOVQ R9, DX
	SHRQ $4, DX
	JZ   widentail

widenchunk:
	PREFETCHT0 (BX)(R13*1)
	TESTQ     R11, R11
	JNZ       widenchunkbf
	VCVTPH2PS (BX), Z0
	JMP       widenchunkst

widenchunkbf:
	VPMOVZXWD (BX), Z0
	VPSLLD    $16, Z0, Z0

widenchunkst:
	VMOVUPS Z0, (DI)
	ADDQ    $32, BX
	ADDQ    $64, DI
	DECQ    DX
	JNZ     widenchunk

widentail:
	KORTESTW    K1, K1
	JZ          widennext
	PREFETCHT0  (BX)(R13*1)
	VMOVDQU16.Z (BX), K1, Y1
	TESTQ       R11, R11
	JNZ         widentailbf
	VCVTPH2PS   Y1, Z0
	JMP         widentailst

widentailbf:
	VPMOVZXWD Y1, Z0
	VPSLLD    $16, Z0, Z0

widentailst:
	VMOVUPS Z0, K1, (DI)
	ADDQ    R12, DI

widennext:
	ADDQ R10, SI
	DECQ R8
	JNZ  widenrow
	VZEROUPPER
	RET

// func kvWidenAVX2(dst *float32, src *uint16, rows int, n int, lds int, bf int)
// As kvWidenAVX512 for the first n&^7 values of each row (n ≥ 8): eight at a time, with F16C's
// VCVTPH2PS for IEEE half. The caller widens the rest.
TEXT ·kvWidenAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ n+24(FP), R9
	MOVQ lds+32(FP), R10
	SHLQ $1, R10
	MOVQ bf+40(FP), R11
	MOVQ R9, CX
	ANDQ $7, CX
	LEAQ (CX*4), R12 // the values left to the caller, in dst bytes
	MOVQ R10, R13
	SHLQ $4, R13 // 16 rows on, in bytes

widen2row:
	MOVQ SI, BX
	MOVQ R9, DX
	SHRQ $3, DX

widen2chunk:
	PREFETCHT0 (BX)(R13*1)
	TESTQ     R11, R11
	JNZ       widen2chunkbf
	VCVTPH2PS (BX), Y0
	JMP       widen2chunkst

widen2chunkbf:
	VPMOVZXWD (BX), Y0
	VPSLLD    $16, Y0, Y0

widen2chunkst:
	VMOVUPS Y0, (DI)
	ADDQ    $16, BX
	ADDQ    $32, DI
	DECQ    DX
	JNZ     widen2chunk
	ADDQ    R12, DI
	ADDQ    R10, SI
	DECQ    R8
	JNZ     widen2row
	VZEROUPPER
	RET
