//go:build amd64 && !purego

package engine

// kernels_amd64.go: the AVX2+FMA / AVX-512 kernel set, chosen at run time by CPU features.

import "golang.org/x/sys/cpu"

//go:noescape
func gemvF32AVX2(out, w *float32, ldw int, x *float32, rows, cols int)

//go:noescape
func gemvBF16AVX2(out *float32, w *uint16, ldw int, x *float32, rows, cols int)

//go:noescape
func gemvTChainAVX2(out, w *float32, ldw int, x *float32, k, n int)

//go:noescape
func gemvTChainAVX512(out, w *float32, ldw int, x *float32, k, n int)

//go:noescape
func gemm12x32BiasAVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int, bias *float32)

//go:noescape
func gemm12x32AccAVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func gemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func gemm6x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// gemm12_amd64.s

//go:noescape
func gemm12x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func gemm12x32BF16(k int, a *uint32, lda int, b *uint32, c *float32, ldc int)

//go:noescape
func gemm8x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func gemm8x32AccAVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// kernels512_amd64.s

//go:noescape
func gemvF32AVX512(out, w *float32, ldw int, x *float32, rows, cols, pf int)

//go:noescape
func gemvBF16AVX512(out *float32, w *uint16, ldw int, x *float32, rows, cols, pf int)

//go:noescape
func gemv4F32AVX512(outs *[4]*float32, w *float32, ldw int, xs *[4]*float32, rows, cols int)

//go:noescape
func gemv4BF16AVX512(outs *[4]*float32, w *uint16, ldw int, xs *[4]*float32, rows, cols int)

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	k := &kernelSet{name: "avx2-fma", gemv: gemvAVX2, gemvBF16: gemvBF16AVX2w, gemvT: gemvTAVX2, tCols: 8,
		gemmTile: gemmTileAVX2, nr: 16, mr: 6, simdCols: 8, gelu: geluAVX2w, swiglu: swigluAVX2w}
	otherKernels = append(otherKernels, k)
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
		k512 := *k
		k512.name, k512.gemmTile, k512.nr, k512.mr = "avx512", gemmTile12AVX512, 32, 12
		k512.gemmTileBias = gemmTile12BiasAVX512
		if cpu.X86.HasAVX512BF16 {
			k512.gemmBF16 = gemmBF16AVX512
		}
		k512.gemv, k512.gemvBF16 = gemvAVX512, gemvBF16AVX512w
		k512.gemv4, k512.gemv4BF16 = gemv4AVX512, gemv4BF16AVX512w
		k512.gemvT, k512.tCols, k512.gemmTileAcc = gemvTAVX512, 16, gemmTileAccAVX512
		k512.gemmTail, k512.gemmTailAcc, k512.tailMR = gemmTail8AVX512, gemmTail8AccAVX512, 8
		k = &k512
		otherTile6x32 = gemmTileAVX512
	}
	simdKernels = k
	kern = chooseKernels(getenvKernels())
}

// activations_amd64.s

//go:noescape
func geluAVX2(x *float32, n int) (done int)

//go:noescape
func swigluAVX2(hb, up *float32, n int) (done int)

func geluAVX2w(x []float32) int {
	if len(x) < 8 {
		return 0
	}
	return geluAVX2(&x[0], len(x))
}

func swigluAVX2w(hb, up []float32) int {
	n := min(len(hb), len(up))
	if n < 8 {
		return 0
	}
	return swigluAVX2(&hb[0], &up[0], n)
}

// The wrappers check every bound the assembly relies on, so a wrong call
// panics in Go instead of reading stray memory.

func gemvAVX2(out, w []float32, ldw int, x []float32, rows, cols int) {
	checkGemv(len(out), len(w), ldw, len(x), rows, cols)
	gemvF32AVX2(&out[0], &w[0], ldw, &x[0], rows, cols)
}

func gemvBF16AVX2w(out []float32, w []uint16, ldw int, x []float32, rows, cols int) {
	checkGemv(len(out), len(w), ldw, len(x), rows, cols)
	gemvBF16AVX2(&out[0], &w[0], ldw, &x[0], rows, cols)
}

func checkGemv(nout, nw, ldw, nx, rows, cols int) {
	if rows <= 0 || cols <= 0 || cols%8 != 0 || ldw < cols || nout < rows || nx < cols || nw < (rows-1)*ldw+cols {
		panic("engine: gemv: bad shape")
	}
}

func gemvTAVX2(out, w []float32, ldw int, x []float32, k, n int) {
	checkGemvT(len(out), len(w), ldw, len(x), k, n, 8)
	gemvTChainAVX2(&out[0], &w[0], ldw, &x[0], k, n)
}

func gemvTAVX512(out, w []float32, ldw int, x []float32, k, n int) {
	checkGemvT(len(out), len(w), ldw, len(x), k, n, 16)
	gemvTChainAVX512(&out[0], &w[0], ldw, &x[0], k, n)
}

func checkGemvT(nout, nw, ldw, nx, k, n, cols int) {
	if k <= 0 || n <= 0 || n%cols != 0 || ldw < n || nout < n || nx < k || nw < (k-1)*ldw+n {
		panic("engine: gemvT: bad shape")
	}
}

func gemmTileAccAVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 12, 32)
	gemm12x32AccAVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func gemmTail8AVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 8, 32)
	gemm8x32AVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func gemmTail8AccAVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 8, 32)
	gemm8x32AccAVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func checkGemm(k, na, lda, nbp, nc, ldc, mr, nr int) {
	if k <= 0 || lda < k || ldc < nr || na < (mr-1)*lda+k || nbp < k*nr || nc < (mr-1)*ldc+nr {
		panic("engine: gemm: bad shape")
	}
}

func gemmTileAVX2(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 6, 16)
	gemm6x16AVX2(k, &a[0], lda, &bp[0], &c[0], ldc)
}

// gemmTileAVX512 is the earlier 6×32 tile (kept for BenchmarkGemmTile's
// comparison; the avx512 set runs gemmTile12AVX512).
func gemmTileAVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 6, 32)
	gemm6x32AVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func gemmTile12AVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 12, 32)
	gemm12x32AVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func gemmTile12BiasAVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int, bias []float32) {
	checkGemm(k, len(a), lda, len(bp), len(c), ldc, 12, 32)
	if len(bias) < 32 {
		panic("engine: gemm: bad shape")
	}
	gemm12x32BiasAVX512(k, &a[0], lda, &bp[0], &c[0], ldc, &bias[0])
}

func gemmBF16AVX512(kp int, a []uint32, lda int, bp []uint32, c []float32, ldc int) {
	checkGemm(kp, len(a), lda, len(bp), len(c), ldc, 12, 32)
	gemm12x32BF16(kp, &a[0], lda, &bp[0], &c[0], ldc)
}

// The AVX-512 gemv wrappers run the 4-row, 16-column part in AVX-512 and
// any remaining rows with the AVX2 kernel (whose one-row path reduces in
// the same order), or all of it in AVX2 when cols is not a multiple of 16.

func gemvAVX512(out, w []float32, ldw int, x []float32, rows, cols int) {
	checkGemv(len(out), len(w), ldw, len(x), rows, cols)
	r4 := rows &^ 3
	if cols%16 != 0 {
		r4 = 0
	}
	if r4 > 0 {
		gemvF32AVX512(&out[0], &w[0], ldw, &x[0], r4, cols, prefetchAhead(ldw, 4))
	}
	if r4 < rows {
		gemvF32AVX2(&out[r4], &w[r4*ldw], ldw, &x[0], rows-r4, cols)
	}
}

func gemvBF16AVX512w(out []float32, w []uint16, ldw int, x []float32, rows, cols int) {
	checkGemv(len(out), len(w), ldw, len(x), rows, cols)
	r4 := rows &^ 3
	if cols%16 != 0 {
		r4 = 0
	}
	if r4 > 0 {
		gemvBF16AVX512(&out[0], &w[0], ldw, &x[0], r4, cols, prefetchAhead(ldw, 2))
	}
	if r4 < rows {
		gemvBF16AVX2(&out[r4], &w[r4*ldw], ldw, &x[0], rows-r4, cols)
	}
}

func prefetchAhead(ldw, size int) int {
	if gemvPrefetch < 0 {
		return 4 * ldw * size
	}
	return gemvPrefetch
}

// gemv4AVX512 is gemv for four vectors over the same rows: outs[v][r] for
// r < rows. Each (vector, row) value equals the one-vector gemv's.
func gemv4AVX512(outs *[4][]float32, w []float32, ldw int, xs *[4][]float32, rows, cols int) {
	op, xp, r4 := check4(outs, len(w), ldw, xs, rows, cols)
	if r4 > 0 {
		gemv4F32AVX512(&op, &w[0], ldw, &xp, r4, cols)
	}
	for v := range 4 {
		if r4 < rows {
			gemvAVX512(outs[v][r4:], w[r4*ldw:], ldw, xs[v], rows-r4, cols)
		}
	}
}

func gemv4BF16AVX512w(outs *[4][]float32, w []uint16, ldw int, xs *[4][]float32, rows, cols int) {
	op, xp, r4 := check4(outs, len(w), ldw, xs, rows, cols)
	if r4 > 0 {
		gemv4BF16AVX512(&op, &w[0], ldw, &xp, r4, cols)
	}
	for v := range 4 {
		if r4 < rows {
			gemvBF16AVX512w(outs[v][r4:], w[r4*ldw:], ldw, xs[v], rows-r4, cols)
		}
	}
}

// check4 checks a four-vector call's bounds and returns the data pointers
// and how many rows (a multiple of 4; 0 when cols is not a multiple of 16)
// the assembly may do.
func check4(outs *[4][]float32, nw, ldw int, xs *[4][]float32, rows, cols int) (op, xp [4]*float32, r4 int) {
	for v := range 4 {
		checkGemv(len(outs[v]), nw, ldw, len(xs[v]), rows, cols)
		op[v], xp[v] = &outs[v][0], &xs[v][0]
	}
	if cols%16 == 0 {
		r4 = rows &^ 3
	}
	return op, xp, r4
}
