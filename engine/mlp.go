package engine

// mlp.go: the MLP block: SwiGLU (Llama, Mistral, Qwen, Phi-3), GeGLU
// (Gemma) or GELU (GPT-2).

// mlp runs one layer's feed-forward block on the R normed rows in a.xb and
// leaves its output in a.proj (the caller adds it to the residual).
//
//	SwiGLU (LlamaMLP):  down( silu(gate x) ⊙ up x )
//	GeGLU (Gemma3MLP):  down( gelu_tanh(gate x) ⊙ up x )   (hidden_activation gelu_pytorch_tanh)
//	GPT-2:              c_proj( gelu_tanh(c_fc x + b) ) + b
//
// Phi-3's fused gate_up_proj is two views of one matrix (gate the first
// half of its rows, up the second, as Phi3MLP's chunk(2)), run as these two.
func (m *Model) mlp(a *acts, lw *LayerWeights, R int) {
	n := R * m.Config.HiddenDim
	switch {
	case lw.WGate.Empty():
		a.linear(a.xb, R, a.jobsOf(linJob{a.hb, &lw.WUp, lw.BUp})...)
		if a.geluFn == nil { // bound once (see swigluFn)
			a.geluFn = a.geluRows
		}
		parallelFor(n, 2048, a.geluFn) // gelu on a.hb
	case m.Config.MLP == MLPGeGLU:
		a.linear(a.xb, R, a.jobsOf(linJob{a.hb, &lw.WGate, nil}, linJob{a.hb2, &lw.WUp, nil})...)
		if a.geluFn == nil { // bound once (see swigluFn)
			a.geluFn = a.geluRows
		}
		parallelFor(n, 2048, a.geluFn) // gelu on a.hb
		mulInPlace(a.hb, a.hb2, n)
	default:
		a.linear(a.xb, R, a.jobsOf(linJob{a.hb, &lw.WGate, nil}, linJob{a.hb2, &lw.WUp, nil})...) // gate and up in one pass
		if a.swigluFn == nil {                                                                    // bound once: a closure per call would be allocated per call
			a.swigluFn = a.swigluRows
		}
		parallelFor(n, 2048, a.swigluFn) // swiglu on a.hb, a.hb2
	}
	a.linear(a.hb, R, a.jobsOf(linJob{a.proj, &lw.WDown, lw.BDown})...)
}

// mulInPlace sets x[i] *= y[i] for i < n.
func mulInPlace(x, y []float32, n int) {
	for i, v := range y[:n] {
		x[i] *= v
	}
}
