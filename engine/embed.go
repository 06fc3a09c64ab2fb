package engine

// embed.go: the embedding step: token rows (plus GPT-2 position rows) into the residual stream.

import "fmt"

// embed writes the vectors that enter layer 0 for pass p's rows into a.x:
// the token's row of the embedding table (times √dim for Gemma), plus
// (GPT-2) the learned vector of its position. Llama adds no position vector here; RoPE rotates
// queries and keys inside attention instead.
func (m *Model) embed(a *acts, p *pass) {
	d := m.Config.Dim
	for r, tok := range p.tokens {
		xr := a.x[r*d : (r+1)*d]
		copy(xr, m.Weights.TokenEmbed.Row(tok, xr))
		if sc := m.Config.EmbedScale; sc != 0 { // Gemma3TextScaledWordEmbedding: × √hidden_size
			for i := range xr {
				xr[i] *= sc
			}
		}
		if m.Weights.PosEmbed != nil {
			pos := p.pos(r)
			for i, v := range m.Weights.PosEmbed[pos*d : (pos+1)*d] {
				xr[i] += v
			}
		}
	}
}

// Embedding forms the input vectors for tokens at positions pos0.. with the
// same step the forward pass uses, without running any layer, and hands them
// to fn (the info's slices are valid only during the call). The lab's embed
// stage shows these before prefill.
func (m *Model) Embedding(tokens []int, pos0 int, fn func(EmbedInfo)) error {
	T := len(tokens)
	if pos0 < 0 || pos0+T > m.Config.SeqLen {
		return fmt.Errorf("positions %d..%d outside the context of %d", pos0, pos0+T-1, m.Config.SeqLen)
	}
	for t, tok := range tokens {
		if err := m.checkToken(tok, pos0+t); err != nil {
			return err
		}
	}
	a := &acts{x: make([]float32, T*m.Config.Dim)}
	var p pass
	p.start(tokens)
	p.add(nil, pos0, T, &record{hooks: &Hooks{Embedded: fn}})
	m.embed(a, &p)
	p.embedded(m, a)
	return nil
}
