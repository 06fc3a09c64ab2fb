package engine

// forward.go: the forward pass: embed, every Transformer block, final norm
// and logits, for the rows of one pass (as llama2.c's run.c, every row at once).

import (
	"fmt"
	"math"
)

// Forward runs tokens through the model at positions kv.Len.., appends their
// keys and values to kv, and returns the logits of the last position. All
// tokens go through each layer together (prefill is one batched pass); a
// single token is one decode step. The returned slice is st's buffer, valid
// until st is used again.
func (m *Model) Forward(st *State, kv *KVCache, tokens []int, hooks *Hooks) ([]float32, error) {
	return m.forwardSeq(st, kv, tokens, hooks, false)
}

// ForwardAll is Forward returning the logits of every position: [T][vocab].
func (m *Model) ForwardAll(st *State, kv *KVCache, tokens []int, hooks *Hooks) ([]float32, error) {
	return m.forwardSeq(st, kv, tokens, hooks, true)
}

// forwardSeq checks one sequence's pass, sets it up in st and runs it.
func (m *Model) forwardSeq(st *State, kv *KVCache, tokens []int, hooks *Hooks, allLogits bool) ([]float32, error) {
	T := len(tokens)
	if T == 0 {
		return nil, fmt.Errorf("forward: no tokens")
	}
	if err := kv.room(T); err != nil {
		return nil, err
	}
	for t, tok := range tokens {
		if err := m.checkToken(tok, kv.Len+t); err != nil {
			return nil, err
		}
	}
	first := T - 1 // the positions whose logits are returned: the last, or all
	if allLogits {
		first = 0
	}
	n, V := T-first, m.Config.VocabSize
	st.grow(T)
	if len(st.logits) < n*V {
		st.logits = make([]float32, n*V)
	}
	st.p.start(tokens)
	st.p.add(kv, kv.Len, T, st.rec.start(hooks, T))
	m.forward(&st.acts, &st.p, first)
	st.p.tokens = nil // the caller's
	return st.logits[:n*V], nil
}

// forward runs pass p in a: every row through the embedding and each
// Transformer block, then rows first.. through the final norm and the head
// into a.logits. The hooks' record is read at the marked points only
// (record.go); attention writes the weights a record keeps into it.
func (m *Model) forward(a *acts, p *pass, first int) {
	w := &m.Weights
	R, d := len(p.tokens), m.Config.Dim
	m.embed(a, p)
	p.embedded(m, a) // inspection
	m.ropeTables(a, p)
	for l := range w.Layers {
		lw := &w.Layers[l]
		// attention sub-block: pre-norm, attention, (post-norm), residual
		m.norm(a.xb, a.x, lw.AttnNorm, lw.AttnNormBias, R)
		m.attention(a, p, lw, l)
		if lw.PostAttnNorm != nil { // Gemma3DecoderLayer: post_attention_layernorm on the sub-block's output
			m.norm(a.proj, a.proj, lw.PostAttnNorm, nil, R)
		}
		residual(a.x, a.proj, R*d)
		// feed-forward sub-block: pre-norm, MLP, (post-norm), residual
		m.norm(a.xb, a.x, lw.MLPNorm, lw.MLPNormBias, R)
		m.mlp(a, lw, R)
		if lw.PostMLPNorm != nil { // Gemma3DecoderLayer: post_feedforward_layernorm
			m.norm(a.proj, a.proj, lw.PostMLPNorm, nil, R)
		}
		residual(a.x, a.proj, R*d)
		p.layerDone(m, a, l) // inspection
	}
	p.advance()
	n := R - first
	m.norm(a.xb, a.x[first*d:], w.FinalNorm, w.FinalNormBias, n)
	m.logits(a, p, first, n)
}

// logits applies the head (unembedding) to the n normed rows in a.xb, into
// a.logits [n][vocab], and gives every logit lens reading the pass its
// readings. With a lens on, its rows join the logits in one pass over the
// head (headRows) whenever the logits are decode-kernel rows anyway, so the
// head's weights stream from memory once per step with or without the lens
// (lens.go); a long pass keeps the GEMM for its logits and reads the lens
// after it.
func (m *Model) logits(a *acts, p *pass, first, n int) {
	head := &m.Weights.Head
	d, V := m.Config.Dim, m.Config.VocabSize
	xs, outs := p.lensRows(m)
	lensOuts := outs[:len(outs):len(outs)]
	defer func() { // Gemma3ForCausalLM: final_logit_softcapping, on the lens's readings too
		m.softcapLogits(a.logits[:n*V])
		for _, o := range lensOuts {
			m.softcapLogits(o)
		}
		p.lensDone(m, a.logits, first)
	}()
	if len(xs) > 0 && !head.InOut && a.rowKernels(n) {
		for i := range n {
			xs, outs = append(xs, a.xb[i*d:(i+1)*d]), append(outs, a.logits[i*V:(i+1)*V])
		}
		p.xs, p.outs = xs, outs // keep the grown slices
		headRows(head, xs, outs)
	} else {
		a.linear(a.xb, n, a.jobsOf(linJob{a.logits, head, nil})...)
		if len(xs) > 0 {
			headRows(head, xs, outs)
		}
	}
}

// softcapLogits applies the model's final soft-cap, cap·tanh(x/cap), to
// logits (none when FinalSoftcap is 0).
func (m *Model) softcapLogits(x []float32) {
	c := m.Config.FinalSoftcap
	if c == 0 {
		return
	}
	for i, v := range x {
		x[i] = float32(c * math.Tanh(float64(v)/c))
	}
}

// residual adds a sub-block's output to the residual stream: x += out.
func residual(x, out []float32, n int) {
	addVec(x[:n], out[:n])
}

// checkToken reports a token id outside the vocabulary.
func (m *Model) checkToken(tok, pos int) error {
	if tok < 0 || tok >= m.Config.VocabSize {
		return fmt.Errorf("token id %d at position %d out of range 0..%d", tok, pos, m.Config.VocabSize-1)
	}
	return nil
}
