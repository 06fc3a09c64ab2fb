package engine

// mlp.go: the MLP block: SwiGLU (Llama) or GELU (GPT-2).

import "math"

// mlp runs one layer's feed-forward block on the normed stream st.xb and
// adds the result to st.x.
//
//	Llama (SwiGLU): W2( silu(W1 x) ⊙ W3 x )
//	GPT-2:          c_proj( gelu_tanh(c_fc x + b) ) + b
func (m *Model) mlp(st *State, lw *LayerWeights, T int) {
	c := m.Config
	d, hd := c.Dim, c.HiddenDim
	n := T * hd
	if !lw.WGate.Empty() {
		st.linear(st.xb, T, linJob{st.hb, &lw.WGate, nil}, linJob{st.hb2, &lw.WUp, nil}) // gate and up in one pass
		for i, g := range st.hb[:n] {
			st.hb[i] = g / (1 + float32(math.Exp(float64(-g)))) * st.hb2[i]
		}
	} else {
		st.linear(st.xb, T, linJob{st.hb, &lw.WUp, lw.BUp})
		const k = 0.7978845608028654 // sqrt(2/pi)
		for i, x := range st.hb[:n] {
			st.hb[i] = 0.5 * x * (1 + float32(math.Tanh(k*float64(x+0.044715*x*x*x))))
		}
	}
	st.linear(st.hb, T, linJob{st.proj, &lw.WDown, lw.BDown})
	for i, v := range st.proj[:T*d] {
		st.x[i] += v
	}
}
