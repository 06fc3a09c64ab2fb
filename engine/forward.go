package engine

// forward.go: the forward pass: embed, every Transformer block, final norm and logits.

import "fmt"

// Forward runs tokens through the model at positions kv.Len.., appends their
// keys and values to kv, and returns the logits of the last position. All
// tokens go through each layer together (prefill is one batched pass); a
// single token is one decode step. The returned slice is st's buffer, valid
// until st is used again.
func (m *Model) Forward(st *State, kv *KVCache, tokens []int, hooks *Hooks) ([]float32, error) {
	return m.forward(st, kv, tokens, hooks, false)
}

// ForwardAll is Forward returning the logits of every position: [T][vocab].
func (m *Model) ForwardAll(st *State, kv *KVCache, tokens []int, hooks *Hooks) ([]float32, error) {
	return m.forward(st, kv, tokens, hooks, true)
}

func (m *Model) forward(st *State, kv *KVCache, tokens []int, hooks *Hooks, allLogits bool) ([]float32, error) {
	c := m.Config
	T := len(tokens)
	if T == 0 {
		return nil, fmt.Errorf("forward: no tokens")
	}
	pos0 := kv.Len
	if pos0+T > kv.Cap {
		return nil, fmt.Errorf("forward: %d positions would exceed the context: %d cached + %d new > capacity %d", pos0+T, pos0, T, kv.Cap)
	}
	st.grow(T)
	d := c.Dim
	if err := m.embed(st, tokens, pos0, hooks); err != nil {
		return nil, err
	}
	m.ropeTables(st, T, pos0)
	wantAll := hooks != nil && hooks.AllAttention && hooks.LayerDone != nil
	if wantAll {
		if need := T * c.NHeads * c.SeqLen; len(st.all) < need {
			st.all = make([]float32, need)
		}
	}
	for l := range m.Weights.Layers {
		lw := &m.Weights.Layers[l]
		// attention sub-block (pre-norm, residual)
		m.norm(st.xb, st.x, lw.AttnNorm, lw.AttnNormBias, T)
		m.attention(st, kv, lw, l, T, pos0, wantAll)
		// feed-forward sub-block (pre-norm, residual)
		m.norm(st.xb, st.x, lw.MLPNorm, lw.MLPNormBias, T)
		m.mlp(st, lw, T)
		if hooks != nil && hooks.Lens != nil {
			hooks.Lens.capture(c, l, st.x[(T-1)*d:T*d])
		}
		if hooks != nil && hooks.LayerDone != nil {
			qd := c.QDim()
			info := LayerInfo{Layer: l, Pos0: pos0, Hidden: rows(st.x, T, d), Attn: make([][]float32, c.NHeads), MLP: rows(st.hb, T, c.HiddenDim),
				Query: st.q[(T-1)*qd : T*qd]}
			for h := range info.Attn {
				if wantAll { // the last position's row (attention keeps it only there)
					off := ((T-1)*c.NHeads + h) * c.SeqLen
					info.Attn[h] = st.all[off : off+pos0+T]
				} else {
					info.Attn[h] = st.last[h][:pos0+T]
				}
			}
			if wantAll {
				info.AttnAll = make([][][]float32, T)
				for t := range info.AttnAll {
					info.AttnAll[t] = make([][]float32, c.NHeads)
					for h := range c.NHeads {
						off := (t*c.NHeads + h) * c.SeqLen
						info.AttnAll[t][h] = st.all[off : off+pos0+t+1]
					}
				}
			}
			hooks.LayerDone(info)
		}
	}
	kv.Len = pos0 + T

	// final norm and LM head: only the positions whose logits we return
	first := T - 1
	if allLogits {
		first = 0
	}
	n := T - first
	m.norm(st.xb, st.x[first*d:], m.Weights.FinalNorm, m.Weights.FinalNormBias, n)
	V := c.VocabSize
	if len(st.logits) < n*V {
		st.logits = make([]float32, n*V)
	}
	head := &m.Weights.Head
	var lens *LogitLens
	if hooks != nil && hooks.Lens.ready(c) {
		lens = hooks.Lens
	}
	if lens != nil && n == 1 && !head.InOut {
		// one pass over the head for the logits and the lens's other layers
		xs, outs := lens.toRead(m)
		headRows(head, append(xs, st.xb[:d]), append(outs, st.logits[:V]))
	} else {
		st.linear(st.xb, n, linJob{st.logits, head, nil})
		if lens != nil {
			xs, outs := lens.toRead(m)
			headRows(head, xs, outs)
		}
	}
	if lens != nil {
		lens.finish(c, pos0+T-1, st.logits[(n-1)*V:n*V])
	}
	return st.logits[:n*V], nil
}

// norm applies the family's normalization to T rows.
func (m *Model) norm(out, x, g, b []float32, T int) {
	if m.Config.Arch == ArchGPT2 {
		layernorm(out, x, g, b, T, m.Config.Dim, m.Config.NormEps)
		return
	}
	rmsnorm(out, x, g, T, m.Config.Dim, m.Config.NormEps)
}
