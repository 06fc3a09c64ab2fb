package quant

// kernels.go: the public kernels (Dequantize, Dot, MatVec, MatMat), their
// bound checks, and the pure-Go paths they fall back on.

import (
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// simd is the assembly kernel set where this build and CPU have one
// (kernels_amd64.go), nil otherwise; useSIMD says whether it is in use
// (INFERSCOPE_KERNELS=go turns it off, as it does the engine's).
var useSIMD = simd != nil && os.Getenv("INFERSCOPE_KERNELS") != "go"

// simdKernels are the assembly entry points for one instruction set.
type simdKernels struct {
	name string
	// dequant converts n whole blocks of src into dst, exactly as dequantGo does.
	dequant func(t Type, dst []float32, src []byte) bool
	// matvec is MatVec over the first n32·32 values of each row (F32/F16/BF16)
	// or over whole rows (block types); it reports false for a type it lacks.
	matvec func(t Type, out []float32, w []byte, rowBytes int, x []float32, rows, cols int) bool
	// matmat is MatMat for the types whose kernels factor the sum (Q4_K)
	// and so cannot share the dequantizing path below; it reports
	// false for any other type (nil: none).
	matmat func(t Type, outs [][]float32, w []byte, rb int, xs [][]float32, rows, cols int) bool
	// dotAcc adds w[i]·x[i] to lane i mod 32 of acc (fused), len(w) a multiple of 32.
	dotAcc func(acc *[32]float32, w, x []float32)
	// dotAcc3 is dotAcc for three inputs at once (nil: none), each result
	// the same as dotAcc's.
	dotAcc3 func(acc *[3][32]float32, w []float32, xs [3][]float32)
	// reduce sets dst[i] = reduce32(&accs[i]), bit for bit.
	reduce func(dst []float32, accs [][32]float32)
}

// KernelPath names the kernels in use: "go" or the instruction set
// ("avx2", or "avx2+avx512" where Q8_0, Q4_0, Q4_K, Q5_K and Q6_K rows run on the
// AVX-512 kernels, which give the AVX2 ones' results bit for bit; Q4_K's on
// both a factored sum, q4kfact_amd64.go).
func KernelPath() string {
	if !useSIMD {
		return "go"
	}
	if use512 {
		return simd.name + "+avx512"
	}
	return simd.name
}

// Dequantize converts the blocks in src to len(dst) float32 values (a
// multiple of t's block size; src exactly their bytes), exactly as ggml's
// dequantize_row_* does.
func Dequantize(t Type, dst []float32, src []byte) error {
	if len(dst) == 0 {
		if !t.IsSupported() {
			return fmt.Errorf("quant: type %s is not supported (supported: %s)", t, SupportedNames())
		}
		if len(src) != 0 {
			return fmt.Errorf("quant: Dequantize: %d bytes for 0 values", len(src))
		}
		return nil
	}
	n, err := t.RowBytes(len(dst))
	if err != nil {
		return err
	}
	if len(src) != n {
		return fmt.Errorf("quant: Dequantize: %d %s values take %d bytes, not %d", len(dst), t, n, len(src))
	}
	if useSIMD && simd.dequant(t, dst, src) {
		return nil
	}
	dequantGo(t, dst, src)
	return nil
}

// checkMat panics unless w holds rows rows of cols values of type t, x at
// least cols values and out at least rows; it returns the row size.
func checkMat(t Type, nout, nw int, nx, rows, cols int) int {
	rb, err := t.RowBytes(cols)
	if err != nil {
		panic(err.Error())
	}
	if rows < 0 || nout < rows || nx < cols || rows > 0 && nw/rb < rows {
		panic(fmt.Sprintf("quant: bad shape: %d×%d %s needs %d bytes (have %d), %d inputs (have %d), %d outputs (have %d)",
			rows, cols, t, rows*rb, nw, cols, nx, rows, nout))
	}
	return rb
}

// Dot is Σ_i w_i·x_i over the len(x) values stored in w (len(x) a
// multiple of t's block size, w exactly their bytes), in the summation
// order the package comment describes.
func Dot(t Type, w []byte, x []float32) float32 {
	var out [1]float32
	rb := checkMat(t, 1, len(w), len(x), 1, len(x))
	if len(w) != rb {
		panic(fmt.Sprintf("quant: Dot: %d %s values take %d bytes, not %d", len(x), t, rb, len(w)))
	}
	matVec(t, out[:], w, rb, x, 1, len(x))
	return out[0]
}

// MatVec is out[r] = Σ_c W[r][c]·x[c] for r < rows, W the rows×cols
// matrix of type t stored row after row in w. It panics on a shape that
// does not fit the slices.
func MatVec(t Type, out []float32, w []byte, x []float32, rows, cols int) {
	rb := checkMat(t, len(out), len(w), len(x), rows, cols)
	if rows == 0 {
		return
	}
	matVec(t, out, w, rb, x, rows, cols)
}

func matVec(t Type, out []float32, w []byte, rb int, x []float32, rows, cols int) {
	if useSIMD && simd.matvec(t, out, w, rb, x, rows, cols) {
		if t.BlockSize() == 1 && cols%32 != 0 {
			addTails(t, out, w, rb, x, rows, cols)
		}
		return
	}
	matVecGo(t, out, w, rb, x, rows, cols)
}

// addTails adds the last cols mod 32 products of each F32/F16/BF16 row to
// out[r], one after another.
func addTails(t Type, out []float32, w []byte, rb int, x []float32, rows, cols int) {
	main := cols &^ 31
	var tmp [32]float32
	tl := tmp[:cols-main]
	for r := range rows {
		row := w[r*rb : (r+1)*rb]
		dequantGo(t, tl, row[main*t.BlockBytes():])
		out[r] += tailDot(tl, x[main:cols])
	}
}

func tailDot(w, x []float32) float32 {
	var s float32
	x = x[:len(w)]
	for i := range w {
		s += float32(w[i] * x[i])
	}
	return s
}

// acc32 adds w[l]·x[l] to a[l], rounding the product before the sum (the
// explicit conversion keeps the compiler from fusing them).
func acc32(a *[32]float32, w, x []float32) {
	w, x = w[:32], x[:32]
	for l := range 32 {
		a[l] += float32(w[l] * x[l])
	}
}

// reduce32 combines the 32 lanes in the package's fixed order.
func reduce32(a *[32]float32) float32 {
	var t [16]float32
	for l := range 16 {
		t[l] = a[l] + a[l+16]
	}
	var u [8]float32
	for l := range 8 {
		u[l] = t[l] + t[l+8]
	}
	return ((u[0] + u[1]) + (u[2] + u[3])) + ((u[4] + u[5]) + (u[6] + u[7]))
}

// matVecGo is the pure-Go MatVec: each block dequantized with the scalar
// code, then multiplied lane by lane.
func matVecGo(t Type, out []float32, w []byte, rb int, x []float32, rows, cols int) {
	l := layouts[t]
	var tmp [QK_K]float32
	for r := range rows {
		row := w[r*rb : (r+1)*rb]
		var a [32]float32
		if l.n == 1 {
			main := cols &^ 31
			for c := 0; c < main; c += 32 {
				dequantGo(t, tmp[:32], row[c*l.bytes:])
				acc32(&a, tmp[:32], x[c:])
			}
			out[r] = reduce32(&a)
			if main < cols {
				dequantGo(t, tmp[:cols-main], row[main*l.bytes:])
				out[r] += tailDot(tmp[:cols-main], x[main:cols])
			}
			continue
		}
		blk := tmp[:l.n]
		for b := 0; b < cols/l.n; b++ {
			dequantGo(t, blk, row[b*l.bytes:])
			xb := x[b*l.n:]
			for i := 0; i < l.n; i += 32 {
				acc32(&a, blk[i:], xb[i:])
			}
		}
		out[r] = reduce32(&a)
	}
}

// MatMat on AVX-512 works on groups of mm6Rows rows, mm6Chunk values of
// each at a time: it dequantizes those into an L1 buffer, then runs every
// input's values over them, two inputs at a time, with the sums of the six
// rows and two inputs held in registers for the whole chunk (matmat6):
// each weight block is read and dequantized once in all, each input value
// is loaded once per six rows. The rows left over (fewer than six), and
// every row on the other kernel sets, go mmRows at a time with mmChunk
// values (matmat4 on AVX-512; dotAcc3 and dotAcc otherwise).
const (
	mm6Chunk = 768 // a multiple of every block size; matmat6AVX512 takes rows mm6Chunk·4 bytes apart (M6W)
	mm6Rows  = 6
	mmChunk  = 512 // a multiple of every block size; matmat4AVX512 takes rows mmChunk·4 bytes apart (MMW)
	mmRows   = 4
)

type mmScratch struct {
	accs [][32]float32 // row j of the group, input i: accs[j·n+i] (four-row path), accs[6i+j] (matMat6)
	buf  []float32     // mm6Rows·mm6Chunk values, 64-byte aligned
	xp   []*float32    // the kernels' input pointers
	sums []float32     // a group's reduced sums, in accs' order
}

// newMMScratch's buffer starts on a cache line: a 512-bit load of a
// buffered row then never spans two lines (one at an offset of 24 bytes,
// as a field after a slice header lands, does on every load).
func newMMScratch() *mmScratch {
	raw := make([]float32, mm6Rows*mm6Chunk+16)
	off := int(-uintptr(unsafe.Pointer(&raw[0]))&63) / 4
	return &mmScratch{buf: raw[off : off+mm6Rows*mm6Chunk]}
}

// mmPool holds MatMat's scratch for callers that keep none (Scratch).
var mmPool = sync.Pool{New: func() any { return newMMScratch() }}

// Scratch is MatMat's working memory (an L1-sized buffer of dequantized
// rows and the running sums, grown to the most inputs seen). A caller that
// keeps one per thread and passes it to MatMatRowsWith makes a batched
// pass allocate nothing, also where sync.Pool drops what it is given (the
// race detector's builds). The zero value is ready to use; one Scratch
// serves one call at a time.
type Scratch struct{ mm *mmScratch }

func (s *Scratch) get() *mmScratch {
	if s.mm == nil {
		s.mm = newMMScratch()
	}
	return s.mm
}

// dequantFunc converts n blocks at src (groups of 32 values for the 16-bit
// floats) into dst: an assembly kernel's signature (rowDequant).
type dequantFunc func(dst *float32, src *byte, n int)

// mmKernels are MatMat's inner steps for one kernel set.
type mmKernels struct {
	dotAcc  func(acc *[32]float32, w, x []float32)
	dotAcc3 func(acc *[3][32]float32, w []float32, xs [3][]float32)
	dequant func(t Type, dst []float32, src []byte)
	reduce  func(dst []float32, accs [][32]float32)
}

var mmGo = mmKernels{dotAcc: acc32Slice, dequant: dequantGo, reduce: reduceGo}

func mmKernelSet() mmKernels {
	if !useSIMD {
		return mmGo
	}
	return mmKernels{dotAcc: simd.dotAcc, dotAcc3: simd.dotAcc3, reduce: simd.reduce,
		dequant: func(t Type, dst []float32, src []byte) {
			if !simd.dequant(t, dst, src) {
				dequantGo(t, dst, src)
			}
		}}
}

// MatMatAtFMARate reports whether MatMat runs on the AVX-512 six-row step
// (matmat6), which multiplies as fast per value as the engine's packed
// float32 GEMM: a caller with few inputs may then skip packing panels.
func MatMatAtFMARate() bool { return useSIMD && use512 && matmat6 != nil }

// MatMat is MatVec for len(xs) input vectors at once: outs[i][r] = Σ_c
// W[r][c]·xs[i][c]. It reads and dequantizes each weight block once for
// all the inputs; every outs[i][r] equals MatVec's for xs[i], bit for bit.
func MatMat(t Type, outs [][]float32, w []byte, xs [][]float32, rows, cols int) {
	matMat(t, outs, w, xs, rows, cols, nil)
}

// matMat is MatMat with the caller's scratch (nil: one from mmPool).
func matMat(t Type, outs [][]float32, w []byte, xs [][]float32, rows, cols int, scr *Scratch) {
	if len(outs) != len(xs) {
		panic(fmt.Sprintf("quant: MatMat: %d outputs for %d inputs", len(outs), len(xs)))
	}
	var rb int
	for i := range xs {
		rb = checkMat(t, len(outs[i]), len(w), len(xs[i]), rows, cols)
	}
	if rows == 0 || len(xs) == 0 {
		return
	}
	if len(xs) == 1 {
		matVec(t, outs[0], w, rb, xs[0], rows, cols)
		return
	}
	if useSIMD && simd.matmat != nil && simd.matmat(t, outs, w, rb, xs, rows, cols) {
		return
	}
	n := len(xs)
	var sc *mmScratch
	if scr != nil {
		sc = scr.get()
	} else {
		sc = mmPool.Get().(*mmScratch)
		defer mmPool.Put(sc)
	}
	if cap(sc.accs) < n*mm6Rows {
		sc.accs = make([][32]float32, n*mm6Rows)
	}
	if cap(sc.xp) < n {
		sc.xp, sc.sums = make([]*float32, n), make([]float32, n*mm6Rows)
	}
	k := mmKernelSet()
	l := layouts[t]
	main := cols
	if l.n == 1 {
		main = cols &^ 31
	}
	r0 := 0
	if main == cols && MatMatAtFMARate() {
		r0 = matMat6(t, outs, w, rb, xs, rows, main, sc, k)
	}
	accs := sc.accs[:n*mmRows]
	for ; r0 < rows; r0 += mmRows {
		nr := min(mmRows, rows-r0)
		clear(accs)
		for c0 := 0; c0 < main; c0 += mmChunk {
			nc := min(mmChunk, main-c0)
			for j := range nr {
				row := w[(r0+j)*rb : (r0+j+1)*rb]
				k.dequant(t, sc.buf[j*mmChunk:j*mmChunk+nc], row[c0/l.n*l.bytes:(c0+nc)/l.n*l.bytes])
			}
			if nr == mmRows && useSIMD && use512 && matmat4 != nil {
				matmat4(accs, sc.buf[:], xs, c0, nc, sc.xp[:n])
				continue
			}
			mmStep(k, accs, sc.buf[:], mmChunk, nr, xs, c0, nc)
		}
		mmFinish(t, k, outs, w, rb, xs, r0, nr, cols, main, accs, sc)
	}
}

// matMat6 runs MatMat's whole groups of six rows on AVX-512 (matmat6;
// the sums input by input, accs[6i+j]) and returns the number of rows done.
// The inputs' pointers are taken once (each chunk is an offset from them),
// and a block type's rows are dequantized by its kernel directly: a group's
// chunk is a few microseconds of multiply-adds, and the per-call checks,
// lookups and copies around it took 7–11% of a 32-input pass.
func matMat6(t Type, outs [][]float32, w []byte, rb int, xs [][]float32, rows, main int, sc *mmScratch, k mmKernels) int {
	n, l := len(xs), layouts[t]
	accs, sums := sc.accs[:n*mm6Rows], sc.sums[:n*mm6Rows]
	xp := sc.xp[:n]
	for i, x := range xs {
		if len(x) < main {
			panic(fmt.Sprintf("quant: MatMat: input %d has %d values, not %d", i, len(x), main))
		}
		xp[i] = &x[0]
	}
	dq := rowDequant(t) // nil: k.dequant, row by row
	per32 := max(l.n, 32)
	nch := (main + mm6Chunk - 1) / mm6Chunk
	pairs := max(n/2, 1)
	r0 := 0
	for ; r0+mm6Rows <= rows; r0 += mm6Rows {
		// the next group's weight bytes, a share of them prefetched
		// during each chunk's pairs of inputs
		next := w[min((r0+mm6Rows)*rb, len(w)-1):min((r0+2*mm6Rows)*rb, len(w))]
		per := (len(next) + nch - 1) / nch
		for c, c0 := 0, 0; c0 < main; c, c0 = c+1, c0+mm6Chunk {
			nc := min(mm6Chunk, main-c0)
			src := r0*rb + c0/l.n*l.bytes
			for j := range mm6Rows {
				if dq != nil {
					// checkMat held w to rows·rb bytes: the chunk's nc/l.n blocks are in row r0+j
					dq(&sc.buf[j*mm6Chunk], &w[src+j*rb], nc/per32)
					continue
				}
				row := w[(r0+j)*rb : (r0+j+1)*rb]
				k.dequant(t, sc.buf[j*mm6Chunk:j*mm6Chunk+nc], row[c0/l.n*l.bytes:(c0+nc)/l.n*l.bytes])
			}
			pf := next[min(c*per, len(next)-1):]
			pfl := (min(per, len(pf)) + 64*pairs - 1) / (64 * pairs)
			matmat6(accs, sc.buf, xp, main, c0, nc, pf, pfl, c == 0)
		}
		k.reduce(sums, accs)
		for i, out := range outs {
			o, s := out[r0:r0+mm6Rows:r0+mm6Rows], sums[i*mm6Rows:i*mm6Rows+mm6Rows]
			o[0], o[1], o[2], o[3], o[4], o[5] = s[0], s[1], s[2], s[3], s[4], s[5]
		}
	}
	return r0
}

// mmStep adds nc values of nr buffered rows (row j at buf[j·stride]) times
// every input's values c0… to accs[j·n+i], with dotAcc (three inputs at a
// time with dotAcc3 where the set has it).
func mmStep(k mmKernels, accs [][32]float32, buf []float32, stride, nr int, xs [][]float32, c0, nc int) {
	n := len(xs)
	i := 0
	if k.dotAcc3 != nil {
		for ; i+3 <= n; i += 3 {
			x3 := [3][]float32{xs[i][c0 : c0+nc], xs[i+1][c0 : c0+nc], xs[i+2][c0 : c0+nc]}
			for j := range nr {
				k.dotAcc3((*[3][32]float32)(accs[j*n+i:j*n+i+3]), buf[j*stride:j*stride+nc], x3)
			}
		}
	}
	for ; i < n; i++ {
		for j := range nr {
			k.dotAcc(&accs[j*n+i], buf[j*stride:j*stride+nc], xs[i][c0:c0+nc])
		}
	}
}

// mmFinish reduces rows r0…r0+nr−1's sums into outs (one reduce call for
// all of them), adding the products past main (an F32/F16/BF16 row's last
// cols mod 32) one after another.
func mmFinish(t Type, k mmKernels, outs [][]float32, w []byte, rb int, xs [][]float32, r0, nr, cols, main int, accs [][32]float32, sc *mmScratch) {
	n, l := len(xs), layouts[t]
	sums := sc.sums[:nr*n]
	k.reduce(sums, accs[:nr*n])
	if cols == main {
		for i, out := range outs {
			out = out[r0 : r0+nr]
			for j := range out {
				out[j] = sums[j*n+i]
			}
		}
		return
	}
	for j := range nr {
		r := r0 + j
		tl := sc.buf[:cols-main]
		dequantGo(t, tl, w[r*rb+main*l.bytes:(r+1)*rb])
		for i := range n {
			outs[i][r] = sums[j*n+i] + tailDot(tl, xs[i][main:cols])
		}
	}
}

// reduceGo is simdKernels.reduce in Go.
func reduceGo(dst []float32, accs [][32]float32) {
	dst = dst[:len(accs)]
	for i := range accs {
		dst[i] = reduce32(&accs[i])
	}
}

// acc32Slice is dotAcc in Go: acc32 over each 32 values.
func acc32Slice(a *[32]float32, w, x []float32) {
	for i := 0; i+32 <= len(w); i += 32 {
		acc32(a, w[i:], x[i:])
	}
}
