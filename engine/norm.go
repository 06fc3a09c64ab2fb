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
// output * (1.0 + weight), in float32). out may be x.
func rmsnorm(out, x, g []float32, T, d int, eps float32, plusOne bool) {
	var one float32
	if plusOne {
		one = 1
	}
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		var ss float32
		for _, v := range xr {
			ss += v * v
		}
		inv := float32(1 / math.Sqrt(float64(ss/float32(d)+eps)))
		for i, v := range xr {
			or[i] = (one + g[i]) * (v * inv)
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
