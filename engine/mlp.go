package engine

// mlp.go: the MLP block: SwiGLU (Llama) or GELU (GPT-2).

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
		swiglu(st.hb, st.hb2, n)
	} else {
		st.linear(st.xb, T, linJob{st.hb, &lw.WUp, lw.BUp})
		gelu(st.hb, n)
	}
	st.linear(st.hb, T, linJob{st.proj, &lw.WDown, lw.BDown})
	for i, v := range st.proj[:T*d] {
		st.x[i] += v
	}
}
