//go:build amd64 && !purego

// gemvt_chain_amd64.s: decode over [in][out] matrices (GPT-2's Conv1D weights): out[j] is one chain
// of fused multiply-adds over the input rows in order, the same chain the batched tile
// (gemm12x32AVX512 then gemm12x32AccAVX512) and the prefill tiles compute, so a sequence's values do not depend on
// whether it ran alone or in a batch. Four input rows per pass over out (four dependent steps per
// vector of out, independent across vectors). The AVX-512 kernel prefetches the next four rows'
// band a line each per iteration, as the [out][in] gemv prefetches its next group of rows: a band
// is a few kilobytes of each row, too short a run for the hardware prefetcher to get ahead of
// (gpt2-124M real layout, 2 threads, `bench --paired`, four interleaved rounds: F32 decode against
// the read bound 0.809–0.857 → 0.846–0.868).

#include "textflag.h"

// func gemvTChainAVX512(out *float32, w *float32, ldw int, x *float32, k int, n int)
// out[j] = fma(x[i], w[i*ldw+j], out[j]) for i = 0..k-1 in order, j < n; n a positive multiple of 16.
TEXT ·gemvTChainAVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $2, R8
	MOVQ x+24(FP), DX
	MOVQ k+32(FP), CX
	MOVQ n+40(FP), BX

gemvTChainAVX5124rows:
	CMPQ CX, $4
	JL   gemvTChainAVX5121rows
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	VBROADCASTSS 0(DX), Z12
	VBROADCASTSS 4(DX), Z13
	VBROADCASTSS 8(DX), Z14
	VBROADCASTSS 12(DX), Z15
	XORQ AX, AX
	LEAQ (SI)(R8*4), R12 // the next four rows, prefetched a line each an iteration
	LEAQ (R8)(R8*2), R14

gemvTChainAVX5124loop:
	PREFETCHT0 (R12)
	PREFETCHT0 (R12)(R8*1)
	PREFETCHT0 (R12)(R8*2)
	PREFETCHT0 (R12)(R14*1)
	ADDQ $64, R12
	VMOVUPS (DI)(AX*4), Z0
	VFMADD231PS (SI)(AX*4), Z12, Z0
	VFMADD231PS (R9)(AX*4), Z13, Z0
	VFMADD231PS (R10)(AX*4), Z14, Z0
	VFMADD231PS (R11)(AX*4), Z15, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, BX
	JL   gemvTChainAVX5124loop
	ADDQ $16, DX
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  gemvTChainAVX5124rows

gemvTChainAVX5121rows:
	TESTQ CX, CX
	JZ    gemvTChainAVX512done
	VBROADCASTSS (DX), Z12
	XORQ AX, AX

gemvTChainAVX5121loop:
	VMOVUPS (DI)(AX*4), Z0
	VFMADD231PS (SI)(AX*4), Z12, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, BX
	JL   gemvTChainAVX5121loop
	ADDQ $4, DX
	ADDQ R8, SI
	DECQ CX
	JMP  gemvTChainAVX5121rows

gemvTChainAVX512done:
	VZEROUPPER
	RET

// func gemvTChainAVX2(out *float32, w *float32, ldw int, x *float32, k int, n int)
// gemvTChainAVX512 with 256-bit vectors; n a positive multiple of 8.
TEXT ·gemvTChainAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ ldw+16(FP), R8
	SHLQ $2, R8
	MOVQ x+24(FP), DX
	MOVQ k+32(FP), CX
	MOVQ n+40(FP), BX

gemvTChainAVX24rows:
	CMPQ CX, $4
	JL   gemvTChainAVX21rows
	LEAQ (SI)(R8*1), R9
	LEAQ (SI)(R8*2), R10
	LEAQ (R9)(R8*2), R11
	VBROADCASTSS 0(DX), Y12
	VBROADCASTSS 4(DX), Y13
	VBROADCASTSS 8(DX), Y14
	VBROADCASTSS 12(DX), Y15
	XORQ AX, AX

gemvTChainAVX24loop:
	VMOVUPS (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y12, Y0
	VFMADD231PS (R9)(AX*4), Y13, Y0
	VFMADD231PS (R10)(AX*4), Y14, Y0
	VFMADD231PS (R11)(AX*4), Y15, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL   gemvTChainAVX24loop
	ADDQ $16, DX
	LEAQ (SI)(R8*4), SI
	SUBQ $4, CX
	JMP  gemvTChainAVX24rows

gemvTChainAVX21rows:
	TESTQ CX, CX
	JZ    gemvTChainAVX2done
	VBROADCASTSS (DX), Y12
	XORQ AX, AX

gemvTChainAVX21loop:
	VMOVUPS (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y12, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL   gemvTChainAVX21loop
	ADDQ $4, DX
	ADDQ R8, SI
	DECQ CX
	JMP  gemvTChainAVX21rows

gemvTChainAVX2done:
	VZEROUPPER
	RET
