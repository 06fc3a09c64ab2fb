//go:build !amd64 || purego

package engine

// logitpass_other.go: no logits-pass kernel (the Go path, logitpass.go).

const haveLogitPass = false

func logitPassKernel([]float32, int, *[16]float64, *[16]float32, []float32) bool { return false }
