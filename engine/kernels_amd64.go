//go:build amd64 && !purego

package engine

// kernels_amd64.go: the AVX2+FMA / AVX-512 kernel set, chosen at run time by CPU features.

import "golang.org/x/sys/cpu"

//go:noescape
func gemvF32AVX2(out, w *float32, ldw int, x *float32, rows, cols int)

//go:noescape
func gemvBF16AVX2(out *float32, w *uint16, ldw int, x *float32, rows, cols int)

//go:noescape
func gemvTF32AVX2(out, w *float32, ldw int, x *float32, k, n int)

//go:noescape
func gemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

//go:noescape
func gemm6x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	k := &kernelSet{name: "avx2-fma", gemv: gemvAVX2, gemvBF16: gemvBF16AVX2w, gemvT: gemvTAVX2,
		gemmTile: gemmTileAVX2, nr: 16, simdCols: 8}
	otherKernels = append(otherKernels, k)
	if cpu.X86.HasAVX512F {
		k512 := *k
		k512.name, k512.gemmTile, k512.nr = "avx2-fma+avx512-gemm", gemmTileAVX512, 32
		k = &k512
	}
	simdKernels = k
	kern = chooseKernels(getenvKernels())
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
	if k <= 0 || n <= 0 || n%8 != 0 || ldw < n || len(out) < n || len(x) < k || len(w) < (k-1)*ldw+n {
		panic("engine: gemvT: bad shape")
	}
	gemvTF32AVX2(&out[0], &w[0], ldw, &x[0], k, n)
}

func checkGemm(k int, a []float32, lda int, bp []float32, c []float32, ldc, nr int) {
	if k <= 0 || lda < k || ldc < nr || len(a) < (gemmMR-1)*lda+k || len(bp) < k*nr || len(c) < (gemmMR-1)*ldc+nr {
		panic("engine: gemm: bad shape")
	}
}

func gemmTileAVX2(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, a, lda, bp, c, ldc, 16)
	gemm6x16AVX2(k, &a[0], lda, &bp[0], &c[0], ldc)
}

func gemmTileAVX512(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	checkGemm(k, a, lda, bp, c, ldc, 32)
	gemm6x32AVX512(k, &a[0], lda, &bp[0], &c[0], ldc)
}
