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

func init() {
	// math.Exp takes its FMA path when the CPU has AVX and FMA; the kernel
	// repeats that path, so it is used only then
	// the eight-lane sums where AVX-512 is (the same bits: each lane does
	// the four-lane kernel's operations)
	has512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasPOPCNT {
		softmaxExpSIMD = func(u, e []float64, z []float32, n int, mx, t float64) int {
			if n <= 0 || n%4 != 0 || len(u) < n || len(e) < n || len(z) < n {
				panic("engine: softmaxExp: bad shape")
			}
			return softmaxExpAVX2(&u[0], &e[0], &z[0], n, mx, t)
		}
		softmaxSumsSIMD = func(u, e []float64, z []float32, n int, mx, t float64, sums *[32]float64) int {
			if n <= 0 || n%16 != 0 || len(z) < n || u != nil && (len(u) < n || len(e) < n) {
				panic("engine: softmaxSums: bad shape")
			}
			kernel := softmaxSumsAVX2
			if has512 {
				kernel = softmaxSums512
			}
			if u == nil { // the sums alone
				var scratch [32]float64
				return kernel(&scratch[0], &scratch[16], &z[0], n, mx, t, sums, false)
			}
			return kernel(&u[0], &e[0], &z[0], n, mx, t, sums, true)
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
