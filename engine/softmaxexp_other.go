//go:build !amd64 || purego

package engine

// softmaxexp_other.go: no softmax sums kernel (SoftmaxSums's Go path).

func softmaxSumsKernel([]float64, []float64, []float32, int, float64, float64, *[32]float64) (int, bool) {
	return 0, false
}
