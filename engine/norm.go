package engine

// norm.go: normalization of the residual stream's rows: RMSNorm (Llama and
// its relatives; Gemma's scales by 1 + weight) or LayerNorm (GPT-2); and
// the per-head RMSNorm of queries and keys (Qwen 3, Gemma 3).

import "math"

// norm applies the family's normalization to T rows.
func (m *Model) norm(out, x, g, b []float32, T int) {
	if m.Config.Arch == ArchGPT2 {
		layernorm(out, x, g, b, T, m.Config.Dim, m.Config.NormEps)
		return
	}
	rmsnorm(out, x, g, T, m.Config.Dim, m.Config.NormEps, m.Config.NormPlusOne)
}

// rmsnormRows normalizes x in place as T rows of width d with the model's
// RMSNorm (q_norm and k_norm: each head's row).
func (m *Model) rmsnormRows(x, g []float32, T, d int) {
	rmsnorm(x, x, g, T, d, m.Config.NormEps, m.Config.NormPlusOne)
}

// rmsnorm: out = x · g / sqrt(mean(x²) + eps), for each of T rows of width
// d (LlamaRMSNorm); with plusOne the gain is (1 + g) (Gemma3RMSNorm:
// output * (1.0 + weight), in float32). out may be x. Σx² is summed in 16
// lanes (sumSquares).
func rmsnorm(out, x, g []float32, T, d int, eps float32, plusOne bool) {
	var one float32
	if plusOne {
		one = 1
	}
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		ss := sumSquares(xr, 0)
		inv := float32(1 / math.Sqrt(float64(ss/float32(d)+eps)))
		i := 0
		if n := d &^ 7; normSIMD && n > 0 {
			normRMSScale(or[:n], xr[:n], g[:n], inv, one)
			i = n
		}
		for ; i < d; i++ {
			or[i] = float32(one+g[i]) * float32(xr[i]*inv)
		}
	}
}

// layernorm: out = (x - mean) / sqrt(var + eps) · g + b, per row; the mean
// and the variance are summed in 16 lanes (sumLanes, sumSquares).
func layernorm(out, x, g, b []float32, T, d int, eps float32) {
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		mean := sumLanes(xr) / float32(d)
		vr := sumSquares(xr, mean) / float32(d)
		inv := float32(1 / math.Sqrt(float64(vr+eps)))
		i := 0
		if n := d &^ 7; normSIMD && n > 0 {
			normLNScale(or[:n], xr[:n], g[:n], b[:n], mean, inv)
			i = n
		}
		for ; i < d; i++ {
			or[i] = float32(float32(float32(xr[i]-mean)*inv)*g[i]) + b[i]
		}
	}
}

// A row's sums run in 16 lanes, lane i%16 adding its values in order, and
// are combined as sum16, like a matrix-vector product's: a sequential sum
// is one dependent add after another (4 cycles each), which made the norms
// of a decode step a third of the time the other thread waited between
// regions. Every square is rounded before its add (no FMA) in every path.
// The SIMD loops (norm_amd64.s, where normSIMD) take a multiple of 16
// values for the sums and of 8 for the scalings; the Go loops do the rest.

// sumSquares is Σ (x_i − mean)² in 16 lanes.
func sumSquares(x []float32, mean float32) float32 {
	var a [16]float32
	i := 0
	if n := len(x) &^ 15; normSIMD && n > 0 {
		normSumSq(&a, x[:n], mean)
		i = n
	}
	for ; i < len(x); i++ {
		v := x[i] - mean
		a[i&15] += float32(v * v)
	}
	return sum16(&a)
}

// sumLanes is Σ x_i in 16 lanes.
func sumLanes(x []float32) float32 {
	var a [16]float32
	i := 0
	if n := len(x) &^ 15; normSIMD && n > 0 {
		normSum(&a, x[:n])
		i = n
	}
	for ; i < len(x); i++ {
		a[i&15] += x[i]
	}
	return sum16(&a)
}
