package engine

// embed.go: the embedding step: token rows (plus GPT-2 position rows) into the residual stream.

import "fmt"

// embed writes the vectors that enter layer 0 for tokens at positions
// pos0.. into st.x: the token's row of the embedding table, plus (GPT-2) the
// learned vector of its position. Llama adds no position vector here; RoPE
// rotates queries and keys inside attention instead.
func (m *Model) embed(st *State, tokens []int, pos0 int, hooks *Hooks) error {
	c := m.Config
	d := c.Dim
	for t, tok := range tokens {
		if tok < 0 || tok >= c.VocabSize {
			return fmt.Errorf("token id %d at position %d out of range 0..%d", tok, pos0+t, c.VocabSize-1)
		}
		xr := st.x[t*d : (t+1)*d]
		copy(xr, m.Weights.TokenEmbed.Row(tok, xr))
		if m.Weights.PosEmbed != nil {
			p := m.Weights.PosEmbed[(pos0+t)*d : (pos0+t+1)*d]
			for i := range xr {
				xr[i] += p[i]
			}
		}
	}
	if hooks != nil && hooks.Embedded != nil {
		T := len(tokens)
		info := EmbedInfo{Pos0: pos0, Tokens: tokens, Token: make([][]float32, T), Sum: rows(st.x, T, d)}
		if m.Weights.PosEmbed != nil {
			info.Position = rows(m.Weights.PosEmbed[pos0*d:], T, d)
		}
		if len(st.emb) < T*d {
			st.emb = make([]float32, T*d)
		}
		for t, tok := range tokens {
			info.Token[t] = m.Weights.TokenEmbed.Row(tok, st.emb[t*d:(t+1)*d])
		}
		hooks.Embedded(info)
	}
	return nil
}

// Embedding forms the input vectors for tokens at positions pos0.. with the
// same step the forward pass uses, without running any layer, and hands them
// to fn (the info's slices are valid only during the call). The lab's embed
// stage shows these before prefill.
func (m *Model) Embedding(tokens []int, pos0 int, fn func(EmbedInfo)) error {
	if pos0 < 0 || pos0+len(tokens) > m.Config.SeqLen {
		return fmt.Errorf("positions %d..%d outside the context of %d", pos0, pos0+len(tokens)-1, m.Config.SeqLen)
	}
	st := &State{x: make([]float32, len(tokens)*m.Config.Dim)}
	return m.embed(st, tokens, pos0, &Hooks{Embedded: fn})
}
