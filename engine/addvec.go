package engine

// addvec.go: dst[i] += src[i], the biases and residual additions, thirty-two
// lanes an iteration where the CPU has AVX2 (addvec_amd64.s): IEEE addition
// rounds the same in every lane, so the bits are the scalar loop's. A
// batched pass adds each of its 32 rows' biases to every output; as Go loops
// those additions were about a twentieth of a batched quantized step.

// addVecSIMD does the first n (a multiple of 8) values; nil without the
// CPU features.
var addVecSIMD func(dst, src []float32, n int)

// addVec sets dst[i] += src[i] for i < len(src); dst must hold len(src)
// values.
func addVec(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if n := len(src) &^ 7; addVecSIMD != nil && n > 0 {
		addVecSIMD(dst, src, n)
		i = n
	}
	for ; i < len(src); i++ {
		dst[i] += src[i]
	}
}
