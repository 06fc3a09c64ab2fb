package engine

// kernels_go.go: the pure-Go kernels (the reference path, and the only one off amd64).

import "math"

func f32frombits(b uint32) float32 { return math.Float32frombits(b) }
func f32bits(f float32) uint32     { return math.Float32bits(f) }

// The pure-Go kernels add in the same order as the assembly ones (16
// partial sums per row, combined pairwise; one step per input row in
// gemvT), so the two paths differ only where the assembly fuses a multiply
// and an add into one rounding.

// gemvGo: out[r] = Σ_c w[r·ldw+c]·x[c]; cols is a multiple of 8.
func gemvGo(out, w []float32, ldw int, x []float32, rows, cols int) {
	x = x[:cols]
	for r := 0; r < rows; r++ {
		row := w[r*ldw : r*ldw+cols]
		var a [16]float32
		c := 0
		for ; c+16 <= cols; c += 16 {
			wr, xr := row[c:c+16:c+16], x[c:c+16:c+16]
			for l := range 16 {
				a[l] += wr[l] * xr[l]
			}
		}
		if c+8 <= cols {
			wr, xr := row[c:c+8:c+8], x[c:c+8:c+8]
			for l := range 8 {
				a[l] += wr[l] * xr[l]
			}
		}
		out[r] = sum16(&a)
	}
}

// sum16 combines 16 partial sums as the assembly's 4-row reduction does:
// s_l = a_l + a_{l+8}, then ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)).
func sum16(a *[16]float32) float32 {
	var s [8]float32
	for l := range 8 {
		s[l] = a[l] + a[l+8]
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// gemvBF16Go is gemvGo over bfloat16 weights, except that whole runs of 32
// columns go in pairs: lane l takes column c+2l, then c+2l+1 (the SIMD
// kernels read 32 bfloat16 as 16 pairs in one 64-byte load and widen the
// even and odd ones with a shift and a mask, against x's even and odd values,
// which costs fewer instructions per byte than widening 16 at a time; the
// bfloat16 decode streams its weights at about 7% more of the read bandwidth
// that way). The columns after the last whole 32 go as in gemvGo (16, then
// 8, lane = column within the run).
func gemvBF16Go(out []float32, w []uint16, ldw int, x []float32, rows, cols int) {
	x = x[:cols]
	for r := 0; r < rows; r++ {
		row := w[r*ldw : r*ldw+cols]
		var a [16]float32
		c := 0
		for ; c+32 <= cols; c += 32 {
			wr, xr := row[c:c+32:c+32], x[c:c+32:c+32]
			for l := range 16 {
				a[l] += math.Float32frombits(uint32(wr[2*l])<<16) * xr[2*l]
				a[l] += math.Float32frombits(uint32(wr[2*l+1])<<16) * xr[2*l+1]
			}
		}
		if c+16 <= cols {
			wr, xr := row[c:c+16:c+16], x[c:c+16:c+16]
			for l := range 16 {
				a[l] += math.Float32frombits(uint32(wr[l])<<16) * xr[l]
			}
			c += 16
		}
		if c+8 <= cols {
			wr, xr := row[c:c+8:c+8], x[c:c+8:c+8]
			for l := range 8 {
				a[l] += math.Float32frombits(uint32(wr[l])<<16) * xr[l]
			}
		}
		out[r] = sum16(&a)
	}
}

// gemvTGo: out[j] += Σ_i x[i]·w[i·ldw+j], one step per input row in order.
func gemvTGo(out, w []float32, ldw int, x []float32, k, n int) {
	out = out[:n]
	for i := 0; i < k; i++ {
		xi := x[i]
		row := w[i*ldw : i*ldw+n]
		for j, v := range row {
			out[j] += xi * v
		}
	}
}

// gemmTileGo computes one 6×16 tile from a packed panel bp [k][16].
func gemmTileGo(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	const nr, mr = 16, 6
	var acc [mr][nr]float32
	for i := 0; i < mr; i++ {
		ar := a[i*lda : i*lda+k]
		ac := &acc[i]
		for p, av := range ar {
			b := bp[p*nr : p*nr+nr : p*nr+nr]
			for j := range nr {
				ac[j] += av * b[j]
			}
		}
	}
	for i := 0; i < mr; i++ {
		copy(c[i*ldc:i*ldc+nr], acc[i][:])
	}
}

// gemmBF16Go is gemmBF16 for a 6×16 tile, what VDPBF16PS computes step by
// step: the odd pair's product, then the even one's, each exact in float32
// and added with one rounding; bfloat16 denormals read as zero and
// denormal sums flushed to zero.
func gemmBF16Go(kp int, a []uint32, lda int, bp []uint32, c []float32, ldc int) {
	gemmBF16Ref(6, 16, kp, a, lda, bp, c, ldc)
}

// gemmBF16Ref is gemmBF16 for any mr×nr tile (the tests compare the
// assembly's 12×32 tiles with it bit for bit).
func gemmBF16Ref(mr, nr, kp int, a []uint32, lda int, bp []uint32, c []float32, ldc int) {
	for i := 0; i < mr; i++ {
		ar := a[i*lda : i*lda+kp]
		for j := 0; j < nr; j++ {
			var s float32
			for p, av := range ar {
				bv := bp[p*nr+j]
				s = ftz(s + bf16DAZ(uint16(av>>16))*bf16DAZ(uint16(bv>>16)))
				s = ftz(s + bf16DAZ(uint16(av))*bf16DAZ(uint16(bv)))
			}
			c[i*ldc+j] = s
		}
	}
}

// bf16DAZ widens a bfloat16, a denormal read as zero (of its sign).
func bf16DAZ(h uint16) float32 {
	if h&0x7f80 == 0 {
		h &= 0x8000
	}
	return math.Float32frombits(uint32(h) << 16)
}

// ftz flushes a float32 denormal to zero (of its sign).
func ftz(f float32) float32 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}
