package engine

// attnmix.go: the weighted sum of one head's block results that a long
// context's attention ends with (attnCombine), out[j] = Σ_b c_b·o_b[j] in
// block order, each product rounded before its add. The SIMD sets do 8
// columns at a time (attnMixAVX2, attnkernels_amd64.s) with the same
// operations in the same order, so the same bits. As a Go loop it was most
// of the combine, which runs on the caller while the other workers wait:
// 3.5 µs a layer for SmolLM2's 9 heads of 8 blocks at depth 2000.

// attnMixGo sets out[j] = Σ_b cs[b]·os[b·len(out)+j] for j < len(out),
// the sum starting from 0 and going in block order, each product rounded
// on its own; os holds len(cs) rows of len(out) values.
func attnMixGo(out, os, cs []float32) { attnMixCols(out, os, cs, 0) }

// attnMixCols is attnMixGo for columns j0.. only.
func attnMixCols(out, os, cs []float32, j0 int) {
	hd := len(out)
	_ = os[len(cs)*hd-1]
	for j := j0; j < hd; j++ {
		var a float32
		for b, c := range cs {
			a += float32(c * os[b*hd+j])
		}
		out[j] = a
	}
}
