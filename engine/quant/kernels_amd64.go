//go:build amd64 && !purego

package quant

// kernels_amd64.go: the AVX2+FMA+F16C kernel set (kernels_amd64.s), used
// where the CPU has all three. The wrappers check every bound the
// assembly relies on, so a wrong call panics in Go instead of reading
// stray memory.

import (
	"fmt"
	"sync"

	"golang.org/x/sys/cpu"
)

//go:noescape
func matvecF32AVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matvecF16AVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matvecBF16AVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matvecQ8_0AVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)

//go:noescape
func matvecQ4_0AVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)

//go:noescape
func matvecQ5_KAVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matvecQ6_KAVX2(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func dequantF16AVX2(dst *float32, src *byte, n int)

//go:noescape
func dequantBF16AVX2(dst *float32, src *byte, n int)

//go:noescape
func dequantQ8_0AVX2(dst *float32, src *byte, n int, tab *float32)

//go:noescape
func dequantQ4_0AVX2(dst *float32, src *byte, n int, tab *float32)

//go:noescape
func dequantQ4_KAVX2(dst *float32, src *byte, n int)

//go:noescape
func dequantQ5_KAVX2(dst *float32, src *byte, n int)

//go:noescape
func dequantQ6_KAVX2(dst *float32, src *byte, n int)

//go:noescape
func dotAccAVX2(acc *[32]float32, w *float32, x *float32, n int)

//go:noescape
func reduceAccsAVX2(dst *float32, accs *[32]float32, n int)

//go:noescape
func dotAcc3AVX2(acc *[3][32]float32, w *float32, xs *[3]*float32, n int)

//go:noescape
func matvecQ8_0AVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)

//go:noescape
func matvecQ4_0AVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int, tab *float32)

//go:noescape
func matvecQ5_KAVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matvecQ6_KAVX512(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

//go:noescape
func matmat4AVX512(accs *[32]float32, w *float32, xs **float32, n int, steps int)

//go:noescape
func dequantQ8_0AVX512(dst *float32, src *byte, n int, tab *float32)

//go:noescape
func matmat6AVX512(accs *[32]float32, w *float32, xs **float32, n int, steps int, pf *byte, pfl int, first int, xoff int)

var simd = newAVX2()

// use512 says whether matvecAVX2 runs Q8_0, Q4_0, Q4_K, Q5_K and Q6_K rows
// four at a time on the AVX-512 kernels (kernels512_amd64.s), whose results are the
// AVX2 kernels' bit for bit (Q4_K's on both sets the factored sum of
// q4kfact_amd64.go), and MatMat its AVX-512 step; the tests turn it
// off to check the AVX2 ones. Q6_K's byte lookup also needs AVX512-VBMI
// (has512VBMI).
var use512 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ

var has512VBMI = cpu.X86.HasAVX512VBMI

var matvec512 = map[Type]matvecFunc{Q8_0: matvecQ8_0T, Q4_0: matvecQ4_0T, Q5_K: matvecQ5_KAVX512, Q6_K: matvecQ6_KAVX512}

// f16Table is every fp16 value (by its bits) as float32, converted by the
// same instruction the kernels use (VCVTPH2PS, through dequantF16AVX2), so
// a kernel that looks a scale up in it gets the bits it would convert
// itself; made on first use (256 KiB).
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var src [1 << 17]byte
	for h := range 1 << 16 {
		src[2*h], src[2*h+1] = byte(h), byte(h>>8)
	}
	t := new([1 << 16]float32)
	dequantF16AVX2(&t[0], &src[0], len(t)/32)
	return t
})

// matvecQ8_0T, matvecQ4_0T and dequantQ8_0T are the AVX-512 kernels that
// read their block scales in f16Table, given it (named functions: a
// closure made per call would allocate); matvec2… and dequant2… the AVX2
// ones.
func matvecQ8_0T(out *float32, w *byte, rowBytes int, x *float32, rows int, n int) {
	matvecQ8_0AVX512(out, w, rowBytes, x, rows, n, &f16Table()[0])
}

func matvecQ4_0T(out *float32, w *byte, rowBytes int, x *float32, rows int, n int) {
	matvecQ4_0AVX512(out, w, rowBytes, x, rows, n, &f16Table()[0])
}

func dequantQ8_0T(dst *float32, src *byte, n int) { dequantQ8_0AVX512(dst, src, n, &f16Table()[0]) }

func matvec2Q8_0T(out *float32, w *byte, rowBytes int, x *float32, rows int, n int) {
	matvecQ8_0AVX2(out, w, rowBytes, x, rows, n, &f16Table()[0])
}

func matvec2Q4_0T(out *float32, w *byte, rowBytes int, x *float32, rows int, n int) {
	matvecQ4_0AVX2(out, w, rowBytes, x, rows, n, &f16Table()[0])
}

func dequant2Q8_0T(dst *float32, src *byte, n int) { dequantQ8_0AVX2(dst, src, n, &f16Table()[0]) }

func dequant2Q4_0T(dst *float32, src *byte, n int) { dequantQ4_0AVX2(dst, src, n, &f16Table()[0]) }

func newAVX2() *simdKernels {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		return nil
	}
	return &simdKernels{name: "avx2", dequant: dequantAVX2, matvec: matvecAVX2, matmat: matMatFact, dotAcc: dotAccAVX2w, dotAcc3: dotAcc3AVX2w, reduce: reduceAccsAVX2w}
}

type matvecFunc func(out *float32, w *byte, rowBytes int, x *float32, rows int, n int)

var matvecAsm = map[Type]matvecFunc{
	F32: matvecF32AVX2, F16: matvecF16AVX2, BF16: matvecBF16AVX2, Q8_0: matvec2Q8_0T,
	Q4_0: matvec2Q4_0T, Q5_K: matvecQ5_KAVX2, Q6_K: matvecQ6_KAVX2,
}

// matvecAVX2 runs the assembly over whole blocks (F32/F16/BF16: over the
// first cols&^31 values; matVec adds the rest).
func matvecAVX2(t Type, out []float32, w []byte, rb int, x []float32, rows, cols int) bool {
	f, ok := matvecAsm[t]
	if !ok && t != Q4_K { // Q4_K: matvecQ4KFact
		return false
	}
	l := layouts[t]
	n := cols / l.n
	if l.n == 1 {
		n = cols / 32
	}
	if rows <= 0 || len(out) < rows || len(x) < cols || rb < cols/l.n*l.bytes || len(w) < (rows-1)*rb+n*max(l.n, 32)/l.n*l.bytes {
		panic(fmt.Sprintf("quant: matvec %s: bad shape %d×%d (row %d bytes; %d bytes, %d inputs, %d outputs)", t, rows, cols, rb, len(w), len(x), len(out)))
	}
	if n == 0 {
		clear(out[:rows])
		return true
	}
	if t == Q4_K {
		matvecQ4KFact(out, w, rb, x, rows, n)
		return true
	}
	if f4, ok := matvec512[t]; ok && use512 && rows >= 4 && (t != Q6_K || has512VBMI) {
		r4 := rows &^ 3
		f4(&out[0], &w[0], rb, &x[0], r4, n)
		if r4 == rows {
			return true
		}
		out, w, rows = out[r4:], w[r4*rb:], rows-r4
	}
	f(&out[0], &w[0], rb, &x[0], rows, n)
	return true
}

// matmat4 is MatMat's inner step on AVX-512 (nil without it): for the
// group's four rows, buf holding their nc dequantized values each (row j
// at j·mmChunk), accs[j·n+i] += row j · xs[i][c0:c0+nc] in dotAcc's lanes
// and order, so each sum is dotAccAVX2's bit for bit; xp is scratch for n
// pointers.
var matmat4 = func(accs [][32]float32, buf []float32, xs [][]float32, c0, nc int, xp []*float32) {
	n := len(xs)
	if nc <= 0 || nc%32 != 0 || len(accs) < 4*n || len(buf) < 3*mmChunk+nc || len(xp) < n {
		panic(fmt.Sprintf("quant: matmat4 over %d values of %d inputs (%d sums, %d buffered)", nc, n, len(accs), len(buf)))
	}
	for i, x := range xs {
		if len(x) < c0+nc {
			panic(fmt.Sprintf("quant: matmat4: input %d has %d values, not %d", i, len(x), c0+nc))
		}
		xp[i] = &x[c0]
	}
	matmat4AVX512(&accs[0], &buf[0], &xp[0], n, nc/32)
}

// matmat6 is MatMat's six-row step on AVX-512 (nil without it): for the
// group's six rows, buf holding their nc dequantized values each (row j at
// j·mm6Chunk), accs[6i+j] += row j · xs[i][c0:c0+nc] in dotAcc's lanes
// and order, each sum dotAccAVX2's bit for bit; xp[i] points at input i's
// first value and each input has at least xlen values (matMat6 checks
// both once per call). Before each pair of inputs it prefetches pfl cache
// lines of pf (from its start on; a prefetch never faults, and pf is never
// read). With first set the sums start from zero instead of accs' values.
var matmat6 = func(accs [][32]float32, buf []float32, xp []*float32, xlen, c0, nc int, pf []byte, pfl int, first bool) {
	n := len(xp)
	if nc <= 0 || nc%32 != 0 || nc > mm6Chunk || c0 < 0 || c0+nc > xlen || n == 0 || len(accs) < mm6Rows*n || len(buf) < (mm6Rows-1)*mm6Chunk+nc || len(pf) == 0 || pfl < 0 {
		panic(fmt.Sprintf("quant: matmat6 over values %d…%d of %d inputs of %d (%d sums, %d buffered, %d prefetched)", c0, c0+nc, n, xlen, len(accs), len(buf), len(pf)))
	}
	f := 0
	if first {
		f = 1
	}
	matmat6AVX512(&accs[0], &buf[0], &xp[0], n, nc/32, &pf[0], pfl, f, 4*c0)
}

// dequantAsm is each type's AVX2 dequantization kernel (nil: none, F32),
// indexed by type.
var dequantAsm = [BF16 + 1]dequantFunc{
	F16: dequantF16AVX2, BF16: dequantBF16AVX2, Q8_0: dequant2Q8_0T,
	Q4_0: dequant2Q4_0T, Q4_K: dequantQ4_KAVX2, Q5_K: dequantQ5_KAVX2, Q6_K: dequantQ6_KAVX2,
}

// dequantKernel is the assembly that dequantizes whole blocks of t (groups
// of 32 values for F16 and BF16), or nil: AVX-512's for Q8_0 where use512,
// dequantAsm's otherwise.
func dequantKernel(t Type) dequantFunc {
	if int(t) >= len(dequantAsm) {
		return nil
	}
	if t == Q8_0 && use512 {
		return dequantQ8_0T
	}
	return dequantAsm[t]
}

// rowDequant is dequantKernel on this kernel set (nil on the pure-Go
// kernels): MatMat looks it up once a call and skips dequantAVX2's per-call
// checks.
func rowDequant(t Type) dequantFunc {
	if !useSIMD {
		return nil
	}
	return dequantKernel(t)
}

// dequantAVX2 converts len(dst) values (a multiple of the block size);
// F16/BF16 in groups of 32 with the rest in Go. F32 is left to Go.
func dequantAVX2(t Type, dst []float32, src []byte) bool {
	f := dequantKernel(t)
	if f == nil {
		return false
	}
	l := layouts[t]
	if len(dst)%l.n != 0 || len(src) < len(dst)/l.n*l.bytes {
		panic(fmt.Sprintf("quant: dequantize %s: %d values from %d bytes", t, len(dst), len(src)))
	}
	if l.n == 1 {
		main := len(dst) &^ 31
		if main > 0 {
			f(&dst[0], &src[0], main/32)
		}
		if main < len(dst) {
			dequantGo(t, dst[main:], src[main*l.bytes:])
		}
		return true
	}
	if len(dst) > 0 {
		f(&dst[0], &src[0], len(dst)/l.n)
	}
	return true
}

func dotAccAVX2w(acc *[32]float32, w, x []float32) {
	n := len(w) / 32
	if len(w)%32 != 0 || len(x) < len(w) {
		panic(fmt.Sprintf("quant: dotAcc over %d weights and %d inputs", len(w), len(x)))
	}
	if n > 0 {
		dotAccAVX2(acc, &w[0], &x[0], n)
	}
}

func reduceAccsAVX2w(dst []float32, accs [][32]float32) {
	if len(dst) < len(accs) {
		panic(fmt.Sprintf("quant: reduce %d sums into %d values", len(accs), len(dst)))
	}
	if len(accs) > 0 {
		reduceAccsAVX2(&dst[0], &accs[0], len(accs))
	}
}

func dotAcc3AVX2w(acc *[3][32]float32, w []float32, xs [3][]float32) {
	n := len(w) / 32
	if len(w)%32 != 0 || len(xs[0]) < len(w) || len(xs[1]) < len(w) || len(xs[2]) < len(w) {
		panic(fmt.Sprintf("quant: dotAcc3 over %d weights and %d, %d, %d inputs", len(w), len(xs[0]), len(xs[1]), len(xs[2])))
	}
	if n > 0 {
		xp := [3]*float32{&xs[0][0], &xs[1][0], &xs[2][0]}
		dotAcc3AVX2(acc, &w[0], &xp, n)
	}
}
