package engine

// kernels_go.go: the pure-Go kernels (the reference path, and the only one off amd64).

import "math"

func f32frombits(b uint32) float32 { return math.Float32frombits(b) }
func f32bits(f float32) uint32     { return math.Float32bits(f) }

// gemvGo: out[r] = Σ_c w[r·ldw+c]·x[c], four rows at a time with four
// partial sums per row (so the compiler keeps them in registers).
func gemvGo(out, w []float32, ldw int, x []float32, rows, cols int) {
	x = x[:cols]
	r := 0
	for ; r+4 <= rows; r += 4 {
		w0 := w[r*ldw : r*ldw+cols]
		w1 := w[(r+1)*ldw : (r+1)*ldw+cols]
		w2 := w[(r+2)*ldw : (r+2)*ldw+cols]
		w3 := w[(r+3)*ldw : (r+3)*ldw+cols]
		var s0, s1, s2, s3 float32
		for c, xv := range x {
			s0 += w0[c] * xv
			s1 += w1[c] * xv
			s2 += w2[c] * xv
			s3 += w3[c] * xv
		}
		out[r], out[r+1], out[r+2], out[r+3] = s0, s1, s2, s3
	}
	for ; r < rows; r++ {
		out[r] = dotGo(w[r*ldw:r*ldw+cols], x)
	}
}

func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// gemvBF16Go is gemvGo over bfloat16 weights.
func gemvBF16Go(out []float32, w []uint16, ldw int, x []float32, rows, cols int) {
	x = x[:cols]
	r := 0
	for ; r+2 <= rows; r += 2 {
		w0 := w[r*ldw : r*ldw+cols]
		w1 := w[(r+1)*ldw : (r+1)*ldw+cols]
		var s0, s1 float32
		for c, xv := range x {
			s0 += math.Float32frombits(uint32(w0[c])<<16) * xv
			s1 += math.Float32frombits(uint32(w1[c])<<16) * xv
		}
		out[r], out[r+1] = s0, s1
	}
	for ; r < rows; r++ {
		row := w[r*ldw : r*ldw+cols]
		var s float32
		for c, xv := range x {
			s += math.Float32frombits(uint32(row[c])<<16) * xv
		}
		out[r] = s
	}
}

// gemvTGo: out[j] += Σ_i x[i]·w[i·ldw+j], two input rows per pass.
func gemvTGo(out, w []float32, ldw int, x []float32, k, n int) {
	out = out[:n]
	i := 0
	for ; i+2 <= k; i += 2 {
		x0, x1 := x[i], x[i+1]
		w0 := w[i*ldw : i*ldw+n]
		w1 := w[(i+1)*ldw : (i+1)*ldw+n]
		for j := range out {
			out[j] += x0*w0[j] + x1*w1[j]
		}
	}
	for ; i < k; i++ {
		xi := x[i]
		w0 := w[i*ldw : i*ldw+n]
		for j := range out {
			out[j] += xi * w0[j]
		}
	}
}

// gemmTileGo computes one gemmMR×16 tile from a packed panel bp [k][16].
func gemmTileGo(k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	const nr = 16
	var acc [gemmMR][nr]float32
	for i := 0; i < gemmMR; i++ {
		ar := a[i*lda : i*lda+k]
		ac := &acc[i]
		for p, av := range ar {
			b := bp[p*nr : p*nr+nr : p*nr+nr]
			for j := range nr {
				ac[j] += av * b[j]
			}
		}
	}
	for i := 0; i < gemmMR; i++ {
		copy(c[i*ldc:i*ldc+nr], acc[i][:])
	}
}
