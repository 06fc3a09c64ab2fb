package engine

// kernels.go: the numeric kernel set (SIMD assembly or pure Go) and how one is chosen.
//
// Every matrix product in the engine goes through three kernels:
//
//	gemv   out[r] = Σ_c w[r·ldw+c]·x[c]            (decode: one position, W stored [out][in])
//	gemvT  out[j] += Σ_i x[i]·w[i·ldw+j]           (W stored [in][out]: GPT-2 Conv1D; one chain of steps over i in order)
//	gemm   C[6][nr] = A[6][k]·Bp[k][nr]            (prefill: a register-blocked tile over a packed panel)
//
// plus gemvBF16, gemv over bfloat16 weights widened in registers. On amd64
// with AVX2+FMA they are hand-written assembly (kernels_amd64.s); the pure-Go
// versions (kernels_go.go) run everywhere else, with the build tag purego,
// or when INFERSCOPE_KERNELS=go. Both give the same results up to the order
// of float32 additions (TestKernelPathsAgree).

import (
	"fmt"
	"os"
)

// kernelSet is one implementation of the kernels. The assembly ones need
// cols (gemv) and n (gemvT) to be multiples of 8: the wrappers below do the
// remainder in Go.
type kernelSet struct {
	name     string
	gemv     func(out, w []float32, ldw int, x []float32, rows, cols int)
	gemvBF16 func(out []float32, w []uint16, ldw int, x []float32, rows, cols int)
	gemvT    func(out, w []float32, ldw int, x []float32, k, n int)
	tCols    int // gemvT handles n a multiple of this (the wrapper does the rest in Go)
	// gemmTileAcc is gemmTile going on from c (c[i*ldc+j] += Σ_p ..., one
	// fused step per p in order), set only where gemmTile's outputs are the
	// same chains of fused steps as gemvT's (the batched [in][out] decode
	// runs it over blocks of k; inout.go); nil elsewhere.
	gemmTileAcc func(k int, a []float32, lda int, bp []float32, c []float32, ldc int)
	// gemmTail and gemmTailAcc are gemmTile and gemmTileAcc for tailMR
	// rows (< mr), each row's outputs the same bits: a batch's last
	// sequences past its whole tiles, so no padded rows are computed
	// (inout.go); nil where the set has none (the tail runs a padded tile).
	gemmTail, gemmTailAcc func(k int, a []float32, lda int, bp []float32, c []float32, ldc int)
	tailMR                int
	// gemv4 and gemv4BF16 are gemv for four vectors in one pass over the
	// rows (outs[v][r] = Σ_c w[r·ldw+c]·xs[v][c]), each value equal to
	// gemv's; nil in sets without them (the caller loops over gemv).
	gemv4     func(outs *[4][]float32, w []float32, ldw int, xs *[4][]float32, rows, cols int)
	gemv4BF16 func(outs *[4][]float32, w []uint16, ldw int, xs *[4][]float32, rows, cols int)
	// gemmTile computes a full mr×nr tile: c[i*ldc+j] = Σ_p a[i*lda+p]·bp[p*nr+j].
	gemmTile func(k int, a []float32, lda int, bp []float32, c []float32, ldc int)
	// gemmTileBias is gemmTile with bias[j] added to c[i*ldc+j] before it
	// is stored (the same bits as gemmTile then c += bias); nil in sets
	// without it.
	gemmTileBias func(k int, a []float32, lda int, bp []float32, c []float32, ldc int, bias []float32)
	nr           int // panel width of gemmTile
	mr           int // positions (rows of a) per gemmTile
	// gemmBF16 is gemmTile over bfloat16 pairs (gemm.go): a [mr][lda] and
	// bp [kp][nr] hold two bfloat16 per uint32 (inputs 2p, 2p+1), and each
	// output is Σ over pairs of the odd product then the even one, each
	// added with one rounding (VDPBF16PS; bfloat16 denormals read as zero,
	// denormal sums flushed to zero). nil where the CPU has no such
	// instruction (prefill then widens BF16 weights to float32).
	gemmBF16 func(kp int, a []uint32, lda int, bp []uint32, c []float32, ldc int)
	simdCols int // gemv/gemvT handle column counts that are multiples of this; 1 = any
	// gelu and swiglu apply geluTanh (x[i]) and silu(hb[i])·up[i] to a
	// leading run of their slices, each value bit for bit the scalar
	// function's, and return its length (a multiple of 8; they stop early
	// at a group whose exponent needs expf's slow path); nil: all scalar.
	gelu   func(x []float32) int
	swiglu func(hb, up []float32) int
}

// gemvPrefetch is how far ahead the AVX-512 gemv prefetches each row:
// < 0 means the same columns of the next four rows (the next group: the
// one-vector decode kernel walks four rows side by side), ≥ 0 that many
// bytes ahead in the row.
var gemvPrefetch = -1

// maxMR is the most rows (positions) of any kernel set's gemm tile.
const maxMR = 12

// maxNR is the widest gemm panel of any kernel set (scratch is sized for it).
const maxNR = 32

var goKernels = kernelSet{name: "go", gemv: gemvGo, gemvBF16: gemvBF16Go, gemvT: gemvTGo, tCols: 1, gemmTile: gemmTileGo, nr: 16, mr: 6,
	gemmBF16: gemmBF16Go, simdCols: 8}

// simdKernels is set by an architecture file when the CPU supports it;
// otherKernels are further sets this CPU can run (tests check them too).
var (
	simdKernels  *kernelSet
	otherKernels []*kernelSet
)

// otherTile6x32 is the earlier 6×32 AVX-512 gemm tile where the CPU runs
// it (BenchmarkGemmTile compares the 12×32 one with it); nil elsewhere.
var otherTile6x32 func(k int, a []float32, lda int, bp []float32, c []float32, ldc int)

// kern is the kernel set in use: pure Go until an architecture file's init
// finds a SIMD set and calls chooseKernels.
var kern = &goKernels

func getenvKernels() string { return os.Getenv("INFERSCOPE_KERNELS") }

func chooseKernels(env string) *kernelSet {
	switch env {
	case "go":
		return &goKernels
	case "", "auto", "simd":
		if simdKernels != nil {
			return simdKernels
		}
		return &goKernels
	}
	fmt.Fprintf(os.Stderr, "inferscope: INFERSCOPE_KERNELS=%q not understood (allowed: go, auto); using auto\n", env)
	return chooseKernels("auto")
}

// KernelPath names the kernels in use: "go" (pure Go) or the SIMD set
// (e.g. "avx2-fma", "avx512").
func KernelPath() string { return kern.name }

// useKernels switches the kernel set (tests compare paths); it returns the
// previous one. Not safe while a forward pass runs.
func useKernels(k *kernelSet) *kernelSet { old := kern; kern = k; return old }

// gemvF32 is gemv for any column count.
func gemvF32(out, w []float32, ldw int, x []float32, rows, cols int) {
	if rows == 0 {
		return
	}
	k := kern
	main := cols - cols%k.simdCols
	if main > 0 {
		k.gemv(out, w, ldw, x, rows, main)
	} else {
		clear(out[:rows])
	}
	if main < cols {
		for r := 0; r < rows; r++ {
			row := w[r*ldw+main : r*ldw+cols]
			s := out[r]
			for c, v := range row {
				s += v * x[main+c]
			}
			out[r] = s
		}
	}
}

// gemvBF16 is gemv over bfloat16 weights for any column count.
func gemvBF16(out []float32, w []uint16, ldw int, x []float32, rows, cols int) {
	if rows == 0 {
		return
	}
	k := kern
	main := cols - cols%k.simdCols
	if main > 0 {
		k.gemvBF16(out, w, ldw, x, rows, main)
	} else {
		clear(out[:rows])
	}
	if main < cols {
		for r := 0; r < rows; r++ {
			row := w[r*ldw+main : r*ldw+cols]
			s := out[r]
			for c, v := range row {
				s += bf16ToF32(v) * x[main+c]
			}
			out[r] = s
		}
	}
}

// gemvTAcc adds Σ_i x[i]·w[i·ldw + j] to out[j] for j < n, i < k, in order of i
// (the first tCols-multiple of columns with the kernel set's fused steps).
func gemvTAcc(out, w []float32, ldw int, x []float32, k, n int) {
	if k == 0 || n == 0 {
		return
	}
	ks := kern
	main := n - n%ks.tCols
	if main > 0 {
		ks.gemvT(out, w, ldw, x, k, main)
	}
	if main < n {
		gemvTGo(out[main:], w[main:], ldw, x, k, n-main)
	}
}

// bf16ToF32 widens a bfloat16 (the top half of a float32).
func bf16ToF32(h uint16) float32 { return f32frombits(uint32(h) << 16) }

// f32ToBF16 rounds to the nearest bfloat16 (ties to even); NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	b := f32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a quiet NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
