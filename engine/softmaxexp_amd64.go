//go:build amd64 && !purego

package engine

// softmaxexp_amd64.go: the AVX2+FMA softmax exponentials (expf64_amd64.s).

import "golang.org/x/sys/cpu"

//go:noescape
func softmaxExpAVX2(u, e *float64, z *float32, n int, mx, t float64) (outside int)

//go:noescape
func softmaxExpF32AVX2(x *float32, n int, mx float32)

//go:noescape
func softmaxSums512(u, e *float64, z *float32, n int, mx, t float64, sums *[32]float64, store bool) (outside int)

//go:noescape
func softmaxSumsAVX2(u, e *float64, z *float32, n int, mx, t float64, sums *[32]float64, store bool) (outside int)

// sumsWidth is the softmax sums kernel in use: 8 (AVX-512), 4 (AVX2), 0 (none).
var sumsWidth int

func init() {
	// math.Exp takes its FMA path when the CPU has AVX and FMA; the kernel
	// repeats that path, so it is used only then
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasPOPCNT {
		softmaxExpSIMD = func(u, e []float64, z []float32, n int, mx, t float64) int {
			if n <= 0 || n%4 != 0 || len(u) < n || len(e) < n || len(z) < n {
				panic("engine: softmaxExp: bad shape")
			}
			return softmaxExpAVX2(&u[0], &e[0], &z[0], n, mx, t)
		}
		// the eight-lane sums where AVX-512 is (the same bits: each lane
		// does the four-lane kernel's operations)
		sumsWidth = 4
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
			sumsWidth = 8
		}
		expShiftedSIMD = func(x []float32, mx float32) int {
			n := len(x) &^ 3
			if n > 0 {
				softmaxExpF32AVX2(&x[0], n, mx)
			}
			return n
		}
	}
}

func softmaxSumsKernel(u, e []float64, z []float32, n int, mx, t float64, sums *[32]float64) (outside int, ran bool) {
	if sumsWidth == 0 {
		return 0, false
	}
	if n <= 0 || n%16 != 0 || len(z) < n || u != nil && (len(u) < n || len(e) < n) {
		panic("engine: softmaxSums: bad shape")
	}
	var scratch [32]float64 // the sums alone: u and e go here, every step
	up, ep, store := &scratch[0], &scratch[16], false
	if u != nil {
		up, ep, store = &u[0], &e[0], true
	}
	if sumsWidth == 8 {
		return softmaxSums512(up, ep, &z[0], n, mx, t, sums, store), true
	}
	return softmaxSumsAVX2(up, ep, &z[0], n, mx, t, sums, store), true
}
