package engine

// scalediv.go: dst[i] = (src[i]·c) / d, the attention's last division
// (its output rows by their sum, the recorded weights), eight or sixteen
// lanes at a time where the CPU has AVX2 (scalediv_amd64.s): IEEE
// multiplication and division round the same in every lane, so the bits
// are the scalar loop's.

// scaleDivSIMD does the first n (a multiple of 8) values; nil without
// the CPU features.
var scaleDivSIMD func(dst, src []float32, n int, c, d float32)

// scaleDiv sets dst[i] = float32(src[i]·c) / d for i < len(src); dst must
// hold len(src) values.
func scaleDiv(dst, src []float32, c, d float32) {
	dst = dst[:len(src)]
	i := 0
	if n := len(src) &^ 7; scaleDivSIMD != nil && n > 0 {
		scaleDivSIMD(dst, src, n, c, d)
		i = n
	}
	for ; i < len(src); i++ {
		dst[i] = float32(src[i]*c) / d
	}
}
