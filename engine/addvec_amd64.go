//go:build amd64 && !purego

package engine

// addvec_amd64.go: the AVX2 addVec (addvec_amd64.s).

import "golang.org/x/sys/cpu"

//go:noescape
func addVecAVX2(dst, src *float32, n int)

func init() {
	if cpu.X86.HasAVX2 {
		addVecSIMD = func(dst, src []float32, n int) {
			if n <= 0 || n%8 != 0 || len(src) < n || len(dst) < n {
				panic("engine: addVec: bad shape")
			}
			addVecAVX2(&dst[0], &src[0], n)
		}
	}
}
