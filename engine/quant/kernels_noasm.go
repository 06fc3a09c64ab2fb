//go:build !amd64 || purego

package quant

// kernels_noasm.go: no assembly in this build; the pure-Go kernels run.

var simd *simdKernels

// use512 is kernels_amd64.go's AVX-512 switch; no such kernels here.
var use512 = false

// matmat4 is kernels_amd64.go's AVX-512 MatMat step; none here.
var matmat4 func(accs [][32]float32, buf []float32, xs [][]float32, c0, nc int, xp []*float32)

// matmat6 is kernels_amd64.go's six-row AVX-512 MatMat step; none here.
var matmat6 func(accs [][32]float32, buf []float32, xp []*float32, xlen, c0, nc int, pf []byte, pfl int, first bool)

// rowDequant is kernels_amd64.go's direct dequantization; none here.
func rowDequant(Type) dequantFunc { return nil }
