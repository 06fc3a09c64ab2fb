package engine

// norm.go: normalization of the residual stream's rows: RMSNorm (Llama) or LayerNorm (GPT-2).

import "math"

// norm applies the family's normalization to T rows.
func (m *Model) norm(out, x, g, b []float32, T int) {
	if m.Config.Arch == ArchGPT2 {
		layernorm(out, x, g, b, T, m.Config.Dim, m.Config.NormEps)
		return
	}
	rmsnorm(out, x, g, T, m.Config.Dim, m.Config.NormEps)
}

// rmsnorm: out = x · g / sqrt(mean(x²) + eps), for each of T rows of width d.
func rmsnorm(out, x, g []float32, T, d int, eps float32) {
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		var ss float32
		for _, v := range xr {
			ss += v * v
		}
		inv := float32(1 / math.Sqrt(float64(ss/float32(d)+eps)))
		for i, v := range xr {
			or[i] = g[i] * (v * inv)
		}
	}
}

// layernorm: out = (x - mean) / sqrt(var + eps) · g + b, per row.
func layernorm(out, x, g, b []float32, T, d int, eps float32) {
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		var mean float32
		for _, v := range xr {
			mean += v
		}
		mean /= float32(d)
		var vr float32
		for _, v := range xr {
			vr += (v - mean) * (v - mean)
		}
		vr /= float32(d)
		inv := float32(1 / math.Sqrt(float64(vr+eps)))
		for i, v := range xr {
			or[i] = (v-mean)*inv*g[i] + b[i]
		}
	}
}
