//go:build amd64 && !purego

package quant

// q4kfact_amd64.go: Q4_K rows on the SIMD kernels as a factored sum, the Go
// side of matvecQ4_KFactAVX512, q4kUnpack4AVX512, mmQ4_KFact2AVX512 and
// mmQ4_KFactAVX512 (kernels512_amd64.s) and of their AVX2 counterparts
// (kernels_amd64.s), which compute the same sums in 8-lane halves.
//
// A Q4_K value is d·sc_s·q − dmin·m_s (sub-block s of 32 values, d·sc_s
// and dmin·m_s rounded to float32 first), so a row's dot product is
//
//	Σ_s d·sc_s·(Σ_{i∈s} q_i·x_i) − Σ_s dmin·m_s·(Σ_{i∈s} x_i).
//
// The kernels compute it in that form: the 4-bit q become floats by one
// table lookup each on AVX-512 (a mask and a conversion on AVX2; no
// per-sub-block table, no zero-extension: the loads are placed so that
// each byte lands in its own lane), the sums of x over each sub-block are
// made once per call with x's permutation (q4kPrep), and the min term is
// one multiply-add per sub-block. On AVX-512 that is 58.5 vector
// operations per row and super-block where the exact kernel (w =
// fl(d·sc·q − dmin·m), then w·x) spent 65.5, and 0.86× its time (AVX2:
// 0.83×; README). The result is the same dot product in another order and
// rounding: within q4kFactTolerance of the exact one, not equal to it bit
// for bit. Every SIMD entry point for Q4_K (MatVec, Dot, MatMat; AVX-512
// and AVX2) computes exactly these sums in exactly this order, so they
// agree with one another bit for bit, and a batched step equals a lone
// one. The pure-Go path keeps the exact form
// (q4kFactModel in the tests is the factored form in Go). One difference
// beyond rounding: where x holds ±Inf, or a sub-block's sum of x
// overflows, the factored form can give NaN (∞ − ∞, or 0·∞ for a zero
// scale) where the exact one gives ±Inf.
//
// Scratch: the prepared inputs and unpacked rows live on free lists here,
// not in MatMat's Scratch (a caller's Scratch serves the other types);
// the lists never drop what they hold, so a decode step allocates nothing
// either way. Each worker of a batched pass prepares all of its inputs
// (0.18 µs per 3072 values on AVX-512).
//
// Per row and super-block b, lane i of 16 (g = i/8, k = i mod 8) and chunk
// c = 0, 1 (qs bytes 64c…64c+63), with xp[b][c][o][h][i] =
// x[256b + 128c + 64g + 32h + 4k + o] and q[c][o][h][i] the low (h = 0)
// or high nibble of qs byte 64c + 32g + 4k + o:
//
//	A_h[i] = q[c][0][h][i]·xp[c][0][h][i], then += q[c][o][h][i]·xp[c][o][h][i] for o = 1, 2, 3 (fused)
//	tot[i] += A_0[i]·d·sc_{4c+2g}, then tot[i] += A_1[i]·d·sc_{4c+2g+1} (fused)
//
// and after both chunks, for each sub-block s of 8, macc[s] −=
// dmin·m_s·SX[b][s] (fused), SX the sum of x over the sub-block in the
// fixed order q4kPrepGo gives: p_k = ((x_4k + x_4k+1) + x_4k+2) + x_4k+3
// over its 32 values, then ((p0 + p4) + (p1 + p5)) + ((p2 + p6) + (p3 + p7)). The row's value is reduce32 of tot in lanes 0–15,
// macc in 16–23 and zeros in 24–31.

import (
	"sync"
	"unsafe"
)

//go:noescape
func matvecQ4_KFactAVX512(out *float32, w *byte, rowBytes int, xp *float32, rows int, n int)

//go:noescape
func q4kPrepAVX512(xp *float32, x *float32, n int)

//go:noescape
func matvecQ4_KFactAVX2(out *float32, w *byte, rowBytes int, xp *float32, rows int, n int)

//go:noescape
func q4kUnpackAVX2(dst *float32, w *byte, rowBytes int, n int)

//go:noescape
func mmQ4_KFactAVX2(accs *[32]float32, qb *float32, xp *float32, xstride int, n int, nsb int, first int)

//go:noescape
func q4kUnpack4AVX512(dst *float32, w *byte, rowBytes int, n int)

//go:noescape
func mmQ4_KFact2AVX512(accs *[32]float32, qb *float32, xp *float32, xstride int, pairs int, nsb int, first int)

//go:noescape
func mmQ4_KFactAVX512(accs *[32]float32, qb *float32, xp *float32, xstride int, n int, nsb int, first int)

const (
	q4kXP     = 272 // floats of q4kPrep's output per super-block: 256 of x permuted, 8 sub-block sums, 8 unused
	q4kUnRow  = 336 // floats of q4kUnpack4AVX512's output per row and super-block
	q4kOver   = 3   // bytes the kernels read past a row's last block
	q4kMMSubs = 2   // super-blocks a MatMat chunk unpacks at once (4 rows: 32 KiB, in L1)
	q4kBlock  = 144 // bytes of a Q4_K super-block
)

// q4kPrep writes x (a multiple of 256 values) into xp (q4kXP floats a
// super-block) in the kernels' order: per super-block, the 256 values
// permuted as the package comment says (vector c·8 + o·2 + h of 16), then
// the eight sub-block sums, then eight zeros (q4kPrepAVX512 on AVX-512,
// q4kPrepGo otherwise: the same bits).
func q4kPrep(xp, x []float32) {
	nb := len(x) / QK_K
	if nb == 0 {
		return
	}
	xp = xp[:nb*q4kXP]
	if use512 {
		q4kPrepAVX512(&xp[0], &x[0], nb)
		return
	}
	q4kPrepGo(xp, x[:nb*QK_K])
}

// q4kPerm is the permutation of a super-block's values: xp's value j is
// x's value q4kPerm[j].
var q4kPerm = func() (p [QK_K]uint8) {
	for c := range 2 {
		for o := range 4 {
			for h := range 2 {
				for i := range 16 {
					p[(c*8+o*2+h)*16+i] = uint8(128*c + 64*(i/8) + 32*h + 4*(i%8) + o)
				}
			}
		}
	}
	return p
}()

// q4kPrepGo is q4kPrepAVX512 in Go, sums in its order (the package comment).
func q4kPrepGo(xp, x []float32) {
	for b := range len(x) / QK_K {
		xb, pb := (*[QK_K]float32)(x[b*QK_K:]), (*[q4kXP]float32)(xp[b*q4kXP:])
		for j, k := range q4kPerm {
			pb[j] = xb[k]
		}
		for s := range 8 {
			v := xb[32*s : 32*s+32]
			var p [8]float32
			for k := range p {
				p[k] = ((v[4*k] + v[4*k+1]) + v[4*k+2]) + v[4*k+3]
			}
			pb[256+s] = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]))
		}
		clear(pb[264:])
	}
}

// q4kBuf is the scratch one Q4_K MatVec call needs: x prepared, and a
// padded copy of a last row whose block the kernel would read past.
type q4kBuf struct {
	xp  []float32
	pad []byte
}

var q4kPool = freeList[q4kBuf]{}

func (b *q4kBuf) prep(x []float32, nb int) []float32 {
	if cap(b.xp) < nb*q4kXP {
		b.xp = make([]float32, nb*q4kXP)
	}
	xp := b.xp[:nb*q4kXP]
	q4kPrep(xp, x[:nb*QK_K])
	return xp
}

// rowsSafe is how many of w's rows (rb bytes apart, nb blocks each) the
// kernels can read as they stand: all, unless the last one's block ends
// within q4kOver bytes of w's capacity.
func q4kRowsSafe(w []byte, rb, rows, nb int) int {
	if cap(w) >= (rows-1)*rb+nb*q4kBlock+q4kOver {
		return rows
	}
	return rows - 1
}

// rowOne is row r of w run alone (the AVX2 kernel, one row: the AVX-512
// kernel's bits without its four-row groups), on a padded copy when r is
// not one of the first safe rows.
func (b *q4kBuf) rowOne(w []byte, rb, r, safe, nb int, xp []float32) float32 {
	var out float32
	row := w[r*rb:]
	if r >= safe {
		n := nb*q4kBlock + q4kOver
		if cap(b.pad) < n {
			b.pad = make([]byte, n)
		}
		copy(b.pad[:n], row[:nb*q4kBlock])
		row = b.pad[:n]
	}
	matvecQ4_KFactAVX2(&out, &row[0], 0, &xp[0], 1, nb)
	return out
}

// matvecQ4KFact is MatVec over rows whole Q4_K rows of nb super-blocks,
// the shape already checked.
func matvecQ4KFact(out []float32, w []byte, rb int, x []float32, rows, nb int) {
	b := q4kPool.get()
	defer q4kPool.put(b)
	xp := b.prep(x, nb)
	safe := q4kRowsSafe(w, rb, rows, nb)
	r4 := 0 // rows 0…r4−1 in four-row groups on AVX-512, the rest one at a time on AVX2
	if use512 {
		r4 = safe &^ 3
		if r4 > 0 {
			matvecQ4_KFactAVX512(&out[0], &w[0], rb, &xp[0], r4, nb)
		}
	}
	if r4 < safe {
		matvecQ4_KFactAVX2(&out[r4], &w[r4*rb], rb, &xp[0], safe-r4, nb)
	}
	if safe < rows {
		out[safe] = b.rowOne(w, rb, safe, safe, nb, xp)
	}
}

// q4kMM is MatMat's scratch for Q4_K: every input prepared, and one chunk
// of four rows unpacked.
type q4kMM struct {
	xps  []float32
	qb   []float32
	accs [][32]float32
	sums []float32
	one  q4kBuf
}

var q4kMMPool = freeList[q4kMM]{}

// matMatQ4KFact is MatMat for Q4_K on the SIMD kernels (shapes already
// checked): each group of four rows is unpacked once per chunk of
// q4kMMSubs super-blocks (q floats, scales), then every input runs over it
// with the sums in matvecQ4_KFactAVX512's order (two inputs a step on
// AVX-512, two rows a step on AVX2), so outs[i] equals MatVec's bits.
// The rows past the last whole group go through MatVec's one-row path.
func matMatQ4KFact(outs [][]float32, w []byte, rb int, xs [][]float32, rows, cols int) {
	nb, n := cols/QK_K, len(xs)
	s := q4kMMPool.get()
	defer q4kMMPool.put(s)
	per := nb * q4kXP
	if cap(s.xps) < n*per {
		s.xps = make([]float32, n*per)
	}
	xps := s.xps[:n*per]
	for i, x := range xs {
		q4kPrep(xps[i*per:(i+1)*per], x[:cols])
	}
	if s.qb == nil { // on a cache line: no 64-byte store or load spans two
		raw := make([]float32, q4kMMSubs*4*q4kUnRow+16)
		off := int(-uintptr(unsafe.Pointer(&raw[0]))&63) / 4
		s.qb = raw[off : off+q4kMMSubs*4*q4kUnRow]
	}
	if cap(s.accs) < 4*n {
		s.accs, s.sums = make([][32]float32, 4*n), make([]float32, 4*n)
	}
	accs, sums := s.accs[:4*n], s.sums[:4*n]
	safe := q4kRowsSafe(w, rb, rows, nb)
	r0 := 0
	for ; r0+4 <= safe; r0 += 4 {
		for b0 := 0; b0 < nb; b0 += q4kMMSubs {
			k, first := min(q4kMMSubs, nb-b0), 0
			if b0 == 0 {
				first = 1
			}
			if !use512 {
				q4kUnpackAVX2(&s.qb[0], &w[r0*rb+b0*q4kBlock], rb, k)
				mmQ4_KFactAVX2(&accs[0], &s.qb[0], &xps[b0*q4kXP], 4*per, n, k, first)
				continue
			}
			q4kUnpack4AVX512(&s.qb[0], &w[r0*rb+b0*q4kBlock], rb, k)
			if p := n / 2; p > 0 {
				mmQ4_KFact2AVX512(&accs[0], &s.qb[0], &xps[b0*q4kXP], 4*per, p, k, first)
			}
			if n%2 == 1 {
				mmQ4_KFactAVX512(&accs[4*(n-1)], &s.qb[0], &xps[(n-1)*per+b0*q4kXP], 4*per, 1, k, first)
			}
		}
		reduceAccsAVX2w(sums, accs)
		for i, out := range outs {
			copy(out[r0:r0+4], sums[4*i:4*i+4])
		}
	}
	for ; r0 < rows; r0++ { // fewer than four rows, or a last row without room to read past
		for i, out := range outs {
			out[r0] = s.one.rowOne(w, rb, r0, safe, nb, xps[i*per:(i+1)*per])
		}
	}
}

// freeList keeps the scratch values that calls have given back, for the
// next calls to take: a sync.Pool that never drops them, so that a decode
// step allocates nothing also where sync.Pool does drop them (the race
// detector's builds, and after every collection). It holds as many values
// as calls ever ran at once (one per worker in a decode step).
type freeList[T any] struct {
	mu   sync.Mutex
	free []*T
}

func (l *freeList[T]) get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		v := l.free[n-1]
		l.free = l.free[:n-1]
		return v
	}
	return new(T)
}

func (l *freeList[T]) put(v *T) {
	l.mu.Lock()
	l.free = append(l.free, v)
	l.mu.Unlock()
}

// matMatFact is simdKernels.matmat: Q4_K (matMatQ4KFact).
func matMatFact(t Type, outs [][]float32, w []byte, rb int, xs [][]float32, rows, cols int) bool {
	if t != Q4_K {
		return false
	}
	matMatQ4KFact(outs, w, rb, xs, rows, cols)
	return true
}
