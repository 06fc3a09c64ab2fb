//go:build amd64 && !purego

package engine

// gemmpack_amd64.go: the AVX-512 panel packing (gemmpack_amd64.s) behind
// bound checks; packPanel uses it for full panels of 32 float32 rows.

import "golang.org/x/sys/cpu"

//go:noescape
func packRows32AVX512(dst *float32, src *float32, ld int, n16 int)

//go:noescape
func packBand32AVX512(dst *float32, src *float32, np int, dstride int, pf int)

func init() {
	if cpu.X86.HasAVX512F {
		packRows32 = packRows32AVX512w
		packBand32 = packBand32AVX512w
	}
}

// packBand32AVX512w copies np pieces of 32 floats of src (contiguous) to
// dst at a stride of dstride, prefetching pf bytes past src.
func packBand32AVX512w(dst, src []float32, np, dstride, pf int) {
	if np <= 0 {
		return
	}
	if dstride < 32 || len(src) < 32*np || len(dst) < (np-1)*dstride+32 {
		panic("engine: pack band: bad shape")
	}
	packBand32AVX512(&dst[0], &src[0], np, dstride, pf)
}

// packRows32AVX512w packs columns 0..16·⌊in/16⌋−1 of 32 rows (stride ld)
// of src into dst [in][32] and returns how many columns it did.
func packRows32AVX512w(dst, src []float32, ld, in int) int {
	n16 := in / 16
	if n16 == 0 {
		return 0
	}
	if ld < in || len(src) < 31*ld+in || len(dst) < 32*in {
		panic("engine: pack rows: bad shape")
	}
	packRows32AVX512(&dst[0], &src[0], ld, n16)
	return 16 * n16
}
