//go:build amd64 && !purego

package engine

// scalediv_amd64.go: the AVX2 scaleDiv (scalediv_amd64.s).

import "golang.org/x/sys/cpu"

//go:noescape
func scaleDivAVX2(dst, src *float32, n int, c, d float32)

func init() {
	if cpu.X86.HasAVX2 {
		scaleDivSIMD = func(dst, src []float32, n int, c, d float32) {
			if n <= 0 || n%8 != 0 || len(src) < n || len(dst) < n {
				panic("engine: scaleDiv: bad shape")
			}
			scaleDivAVX2(&dst[0], &src[0], n, c, d)
		}
	}
}
