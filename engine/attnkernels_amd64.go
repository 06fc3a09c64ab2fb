//go:build amd64 && !purego

package engine

// attnkernels_amd64.go: the AVX-512 and AVX2 attention block kernels
// (attnkernels_amd64.s) behind the same checks as the pure-Go ones; they
// go with the kernel sets of the same CPU features (kernels_amd64.go).

import "golang.org/x/sys/cpu"

//go:noescape
func attnScoresAVX512(s *float32, lds int, q *float32, k *float32, ldk, n, hd, heads int, scale float32, v *float32)

//go:noescape
func attnSoftmaxAVX512(s *float32, n int) (m, l float32)

//go:noescape
func attnWsumAVX512(o *float32, ldo int, e *float32, lde int, v *float32, ldv, n int, mask uint64, heads int, pk, pv *float32, acc int)

//go:noescape
func attnScoresAVX2(s *float32, lds int, q *float32, k *float32, ldk, n, hd, heads int, scale float32)

//go:noescape
func attnSoftmaxAVX2(s *float32, n int) (m, l float32)

//go:noescape
func attnWsumAVX2(o *float32, ldo int, e *float32, lde int, v *float32, ldv, n, cols, heads, acc int)

//go:noescape
func attnMixAVX2(out, os, cs *float32, nb, hd, n int)

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	attnSIMD["avx2-fma"] = &attnKernels{name: "avx2", scores: attnScoresAVX2w, softmax: attnSoftmaxAVX2w, wsum: attnWsumAVX2w, mix: attnMixAVX2w}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
		attnSIMD["avx512"] = &attnKernels{name: "avx512", scores: attnScoresAVX512w, softmax: attnSoftmaxAVX512w, wsum: attnWsumAVX512w, mix: attnMixAVX2w}
	}
}

// The wrappers check every bound the assembly relies on, so a wrong call
// panics in Go instead of reading stray memory.

func checkAttnScores(ns, lds, nq, nk, ldk, n, hd, G int) {
	if n <= 0 || hd <= 0 || G <= 0 || lds < n || ldk < hd || ns < (G-1)*lds+n || nq < G*hd || nk < (n-1)*ldk+hd {
		panic("engine: attention scores: bad shape")
	}
}

func checkAttnWsum(no, ldo, ne, lde, nv, ldv, n, hd, G int) {
	if n <= 0 || hd <= 0 || G <= 0 || ldo < hd || lde < n || ldv < hd || no < (G-1)*ldo+hd || ne < (G-1)*lde+n || nv < (n-1)*ldv+hd {
		panic("engine: attention weighted sum: bad shape")
	}
}

func attnScoresAVX512w(s []float32, lds int, q, k, v []float32, ldk, n, hd, G int, scale float32) {
	checkAttnScores(len(s), lds, len(q), len(k), ldk, n, hd, G)
	if len(v) == 0 {
		v = k // nothing to prefetch: k's rows again (never read)
	}
	n16 := n &^ 15
	if n16 > 0 {
		attnScoresAVX512(&s[0], lds, &q[0], &k[0], ldk, n16, hd, G, scale, &v[0])
	}
	switch {
	case n16 == n:
	case n >= 16:
		// the last 16 positions again: the ones done twice get the same bits
		t := n - 16
		attnScoresAVX512(&s[t], lds, &q[0], &k[t*ldk], ldk, 16, hd, G, scale, &v[t*ldk])
	default:
		attnScoresAVX2w(s, lds, q, k, v, ldk, n, hd, G, scale)
	}
}

func attnScoresAVX2w(s []float32, lds int, q, k, v []float32, ldk, n, hd, G int, scale float32) {
	checkAttnScores(len(s), lds, len(q), len(k), ldk, n, hd, G)
	n4 := n &^ 3
	if n4 > 0 {
		attnScoresAVX2(&s[0], lds, &q[0], &k[0], ldk, n4, hd, G, scale)
	}
	switch {
	case n4 == n:
	case n >= 4:
		t := n - 4 // the last 4 positions again (see attnScoresAVX512w)
		attnScoresAVX2(&s[t], lds, &q[0], &k[t*ldk], ldk, 4, hd, G, scale)
	default:
		attnScoresGo(s, lds, q, k, nil, ldk, n, hd, G, scale)
	}
}

func attnSoftmaxAVX512w(s []float32) (m, l float32) {
	if len(s) == 0 {
		panic("engine: attention softmax: no positions")
	}
	return attnSoftmaxAVX512(&s[0], len(s))
}

func attnSoftmaxAVX2w(s []float32) (m, l float32) {
	if len(s) == 0 {
		panic("engine: attention softmax: no positions")
	}
	return attnSoftmaxAVX2(&s[0], len(s))
}

// attnWsumAVX512w runs the kernel on up to four heads and 64 columns at a
// time; the first pass prefetches the rows of pk and pv (when not empty).
func attnWsumAVX512w(o []float32, ldo int, e []float32, lde int, v []float32, ldv, n, hd, G int, acc bool, pk, pv []float32) {
	a := 0
	if acc {
		a = 1
	}
	checkAttnWsum(len(o), ldo, len(e), lde, len(v), ldv, n, hd, G)
	for g := 0; g < G; g += 4 {
		for j := 0; j < hd; j += 64 {
			w := uint(min(64, hd-j))
			k, vv := &v[j], &v[j] // nothing to prefetch: rows just read
			if g == 0 && len(pk) > j {
				k = &pk[j]
			}
			if g == 0 && len(pv) > j {
				vv = &pv[j]
			}
			attnWsumAVX512(&o[g*ldo+j], ldo, &e[g*lde], lde, &v[j], ldv, n, 1<<w-1, min(4, G-g), k, vv, a)
		}
	}
}

// attnWsumAVX2w runs the kernel on up to four heads and 16 columns at a time.
func attnWsumAVX2w(o []float32, ldo int, e []float32, lde int, v []float32, ldv, n, hd, G int, acc bool, _, _ []float32) {
	a := 0
	if acc {
		a = 1
	}
	checkAttnWsum(len(o), ldo, len(e), lde, len(v), ldv, n, hd, G)
	for g := 0; g < G; g += 4 {
		for j := 0; j < hd; j += 16 {
			attnWsumAVX2(&o[g*ldo+j], ldo, &e[g*lde], lde, &v[j], ldv, n, min(16, hd-j), min(4, G-g), a)
		}
	}
}

// attnMixAVX2w runs the kernel on the columns in whole groups of 8 (the
// AVX-512 set too: a combine's rows are short) and Go on the rest.
func attnMixAVX2w(out, os, cs []float32) {
	hd := len(out)
	if len(cs) == 0 || len(os) < len(cs)*hd {
		panic("engine: attention mix: bad shape")
	}
	n := hd &^ 7
	if n > 0 {
		attnMixAVX2(&out[0], &os[0], &cs[0], len(cs), hd, n)
	}
	attnMixCols(out, os, cs, n)
}
