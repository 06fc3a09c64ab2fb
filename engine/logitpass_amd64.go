//go:build amd64 && !purego

package engine

// logitpass_amd64.go: the AVX2 logits pass (logitpass_amd64.s).

import "golang.org/x/sys/cpu"

//go:noescape
func logitPassAVX2(z *float32, blocks int, sums *[16]float64, lohi *[16]float32, bmax *float32)

var haveLogitPass = cpu.X86.HasAVX2

func logitPassKernel(z []float32, n int, sums *[16]float64, lohi *[16]float32, bmax []float32) bool {
	if !haveLogitPass {
		return false
	}
	if n <= 0 || n%16 != 0 || len(z) < n || len(bmax) < n/16 {
		panic("engine: logitPass: bad shape")
	}
	logitPassAVX2(&z[0], n/16, sums, lohi, &bmax[0])
	return true
}
