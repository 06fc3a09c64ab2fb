//go:build !amd64 || purego

package engine

// norm_other.go: no SIMD normalization loops off amd64 (norm.go's Go loops run).

var normSIMD = false

func normSumSq(*[16]float32, []float32, float32)     { panic("engine: no SIMD norm") }
func normSum(*[16]float32, []float32)                { panic("engine: no SIMD norm") }
func normRMSScale(_, _, _ []float32, _, _ float32)   { panic("engine: no SIMD norm") }
func normLNScale(_, _, _, _ []float32, _, _ float32) { panic("engine: no SIMD norm") }
