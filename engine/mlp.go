package engine

// mlp.go: the MLP block: SwiGLU (Llama) or GELU (GPT-2).

// mlp runs one layer's feed-forward block on the R normed rows in a.xb and
// leaves its output in a.proj (the caller adds it to the residual).
//
//	Llama (SwiGLU): W2( silu(W1 x) ⊙ W3 x )
//	GPT-2:          c_proj( gelu_tanh(c_fc x + b) ) + b
func (m *Model) mlp(a *acts, lw *LayerWeights, R int) {
	n := R * m.Config.HiddenDim
	if !lw.WGate.Empty() {
		a.linear(a.xb, R, linJob{a.hb, &lw.WGate, nil}, linJob{a.hb2, &lw.WUp, nil}) // gate and up in one pass
		swiglu(a.hb, a.hb2, n)
	} else {
		a.linear(a.xb, R, linJob{a.hb, &lw.WUp, lw.BUp})
		gelu(a.hb, n)
	}
	a.linear(a.hb, R, linJob{a.proj, &lw.WDown, lw.BDown})
}
