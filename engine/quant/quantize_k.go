package quant

// quantize_k.go: float32 rows to Q4_K super-blocks, following ggml's
// reference quantizer quantize_row_q4_K_ref and its make_qkx2_quants
// (ggml-quants.c, no importance matrix: what llama-quantize writes for a
// Q4_K tensor when it is given no imatrix), the same float32 operations
// in the same order, so the bytes equal llama.cpp's.

import (
	"encoding/binary"
	"math"
)

// nearestInt is ggml's nearest_int: round half to even (the 1.5·2^23
// trick), exact for |v| ≤ 4194303.
func nearestInt(v float32) int { return int(math.RoundToEven(float64(v))) }

// makeQKX2Quants is make_qkx2_quants(n, nmax, x, weights, L, &the_min,
// Laux, rmin, rdelta, nstep, use_mad=false): an asymmetric quantization
// x ≈ scale·L − theMin with L in 0..nmax, the scale and min refined by
// weighted least squares over nstep+1 trial scales. Every float32 product
// is converted before it is added, so none is fused into an FMA.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	n := len(x)
	minv, maxv := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < minv {
			minv = x[i]
		}
		if x[i] > maxv {
			maxv = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if minv > 0 {
		minv = 0
	}
	if maxv == minv {
		for i := range n {
			L[i] = 0
		}
		return 0, -minv
	}
	fmax := float32(nmax)
	iscale := fmax / (maxv - minv)
	scale = 1 / iscale
	var bestError float32
	for i := range n {
		l := nearestInt(float32(iscale * float32(x[i]-minv)))
		L[i] = uint8(max(0, min(nmax, l)))
		diff := float32(float32(scale*float32(L[i]))+minv) - x[i]
		diff = float32(diff * diff)
		bestError += float32(weights[i] * diff)
	}
	if nstep < 1 {
		return scale, -minv
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fmax) / (maxv - minv)
		var sumL, sumL2, sumXL float32
		for i := range n {
			l := nearestInt(float32(iscale * float32(x[i]-minv)))
			l = max(0, min(nmax, l))
			Laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := float32(float32(sumW*sumXL)-float32(sumX*sumL)) / D
			thisMin := float32(float32(sumL2*sumX)-float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range n {
				diff := float32(float32(thisScale*float32(Laux[i]))+thisMin) - x[i]
				diff = float32(diff * diff)
				curError += float32(weights[i] * diff)
			}
			if curError < bestError {
				copy(L[:n], Laux[:n])
				bestError = curError
				scale, minv = thisScale, thisMin
			}
		}
	}
	return scale, -minv
}

// quantizeQ4_K is quantize_row_q4_K_ref for one super-block of 256 values:
// each sub-block of 32 gets a scale and a min (makeQKX2Quants, values
// weighted by rms + |x|), those eight scales and eight mins are stored as
// 6-bit multiples of d = max scale/63 and dmin = max min/63, and the values
// are requantized against the stored scales: q = clamp(round((x+dm)/ds), 0, 15).
func quantizeQ4_K(y []byte, x []float32) {
	y, x = y[:144], x[:QK_K]
	var L [QK_K]uint8
	var Laux [32]uint8
	var weights [32]float32
	var mins, scales [QK_K / 32]float32
	var maxScale, maxMin float32
	for j := range QK_K / 32 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + float32(math.Abs(float64(v)))
		}
		scales[j], mins[j] = makeQKX2Quants(15, xs, weights[:], L[32*j:32*j+32], Laux[:], -1, 0.1, 20)
		maxScale = max(maxScale, scales[j])
		maxMin = max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := y[4:16]
	clear(sc)
	for j := range QK_K / 32 {
		ls := uint8(min(63, nearestInt(float32(invScale*scales[j]))))
		lm := uint8(min(63, nearestInt(float32(invMin*mins[j]))))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&0x0f | (lm&0x0f)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	binary.LittleEndian.PutUint16(y[0:], F32ToF16(maxScale/63))
	binary.LittleEndian.PutUint16(y[2:], F32ToF16(maxMin/63))
	d, dmin := halfAt(y[0:]), halfAt(y[2:])
	for j := range QK_K / 32 {
		s, m := scaleMinK4(j, sc)
		ds := d * float32(s)
		if ds == 0 {
			continue
		}
		dm := dmin * float32(m)
		for i := range 32 {
			l := nearestInt(float32(x[32*j+i]+dm) / ds)
			L[32*j+i] = uint8(max(0, min(15, l)))
		}
	}
	q := y[16:144]
	for j := 0; j < QK_K; j += 64 {
		for l := range 32 {
			q[l] = L[j+l] | L[j+l+32]<<4
		}
		q = q[32:]
	}
}
