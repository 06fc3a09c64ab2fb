//go:build !amd64 || purego

package quant

// kernels_noasm.go: no assembly in this build; the pure-Go kernels run.

var simd *simdKernels
