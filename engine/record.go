package engine

// record.go: inspection: what a forward pass keeps for a sequence's Hooks
// (its record, nil when the hooks read nothing) and how the hooks' info
// structs are read from the record and the pass's activations. The math
// (forward.go) hands over at three points: after the embedding, after each
// block, and at the head for the logit lens.

import "time"

// record is what a pass keeps for one sequence's Hooks, in the style of
// llm.c's ActivationTensors but for inspection only: attention writes the
// weights the hooks read straight into it (every position's with
// AllAttention, else the last position's), so none is copied; the rest of
// an info struct is a view of the activations. A State owns one; a
// sequence whose hooks read nothing has a nil record and nothing is kept.
type record struct {
	hooks         *Hooks
	T             int // the sequence's rows in this pass
	heads, stride int // n_heads; positions per row of weights (the State's context)
	keepLast      bool
	keepAll       bool
	last          [][]float32 // [n_heads][stride] the last row's attention weights (LayerInfo.Attn)
	all           []float32   // [T][n_heads][stride] every row's (AllAttention, T > 1)
	emb           []float32   // [T][dim] token-embedding rows widened from BF16 (EmbedInfo.Token)
}

func newRecord(c Config) record {
	r := record{heads: c.NHeads, stride: c.SeqLen, last: make([][]float32, c.NHeads)}
	for h := range r.last {
		r.last[h] = make([]float32, c.SeqLen)
	}
	return r
}

// start readies r for a pass of T rows under hooks, or returns nil when
// the hooks read nothing of a pass.
func (r *record) start(hooks *Hooks, T int) *record {
	if hooks == nil || hooks.Embedded == nil && hooks.LayerDone == nil && hooks.Lens == nil && hooks.Attended == nil {
		return nil
	}
	r.hooks, r.T = hooks, T
	r.keepLast = hooks.LayerDone != nil
	r.keepAll = r.keepLast && hooks.AllAttention && T > 1
	if need := T * r.heads * r.stride; r.keepAll && len(r.all) < need {
		r.all = make([]float32, need)
	}
	return r
}

// weights is where attention puts row t's weights of head h over n
// positions when the record keeps them, else nil. Each (row, head) owns its
// slice, and the arithmetic does not depend on where it lies, so the
// weights are the same bits whichever hooks ask.
func (r *record) weights(t, h, n int) []float32 {
	switch {
	case r == nil || !r.keepLast:
		return nil
	case r.keepAll:
		return r.all[(t*r.heads+h)*r.stride:][:n]
	case t == r.T-1:
		return r.last[h][:n]
	}
	return nil
}

func (r *record) bytes() int64 {
	n := len(r.all) + len(r.emb)
	for _, l := range r.last {
		n += len(l)
	}
	return 4 * int64(n)
}

// embedded calls each sequence's Hooks.Embedded with the vectors that enter
// layer 0.
func (p *pass) embedded(m *Model, a *acts) {
	for i := range p.spans {
		s := &p.spans[i]
		if s.rec == nil || s.rec.hooks.Embedded == nil {
			continue
		}
		s.rec.embedded(m, a, s, p.tokens[s.r0:s.r0+s.n])
	}
}

func (r *record) embedded(m *Model, a *acts, s *span, tokens []int) {
	d := m.Config.Dim
	info := EmbedInfo{Pos0: s.pos0, Tokens: tokens, Token: make([][]float32, s.n), Sum: rows(a.x[s.r0*d:], s.n, d)}
	if m.Weights.PosEmbed != nil {
		info.Position = rows(m.Weights.PosEmbed[s.pos0*d:], s.n, d)
	}
	if len(r.emb) < s.n*d {
		r.emb = make([]float32, s.n*d)
	}
	for t, tok := range tokens {
		info.Token[t] = m.Weights.TokenEmbed.Row(tok, r.emb[t*d:(t+1)*d])
	}
	r.hooks.Embedded(info)
}

// attnClock is the time a layer's attention starts when a sequence's hooks
// time it, else the zero time (no clock read).
func (p *pass) attnClock() time.Time {
	for i := range p.spans {
		if r := p.spans[i].rec; r != nil && r.hooks.Attended != nil {
			return time.Now()
		}
	}
	return time.Time{}
}

// attended gives each timing sequence layer l's attention time since t0.
func (p *pass) attended(l int, t0 time.Time) {
	if t0.IsZero() {
		return
	}
	el := time.Since(t0)
	for i := range p.spans {
		if s := &p.spans[i]; s.rec != nil && s.rec.hooks.Attended != nil {
			s.rec.hooks.Attended(AttendedInfo{Layer: l, Pos0: s.pos0, Rows: s.n, Elapsed: el})
		}
	}
}

// layerDone hands block l's output to each sequence's hooks: the logit
// lens keeps its last row, Hooks.LayerDone gets a LayerInfo.
func (p *pass) layerDone(m *Model, a *acts, l int) {
	for i := range p.spans {
		if s := &p.spans[i]; s.rec != nil {
			s.rec.layerDone(m, a, s, l)
		}
	}
}

func (r *record) layerDone(m *Model, a *acts, s *span, l int) {
	c := m.Config
	d, qd, last := c.Dim, c.QDim(), s.r0+s.n-1
	if r.hooks.Lens != nil {
		r.hooks.Lens.capture(c, l, a.x[last*d:(last+1)*d])
	}
	if r.hooks.LayerDone == nil {
		return
	}
	info := LayerInfo{Layer: l, Pos0: s.pos0, Hidden: rows(a.x[s.r0*d:], s.n, d), Attn: make([][]float32, c.NHeads),
		MLP: rows(a.hb[s.r0*c.HiddenDim:], s.n, c.HiddenDim), Query: a.q[last*qd : (last+1)*qd]}
	for h := range info.Attn {
		info.Attn[h] = r.weights(s.n-1, h, s.pos0+s.n)
	}
	switch {
	case r.keepAll:
		info.AttnAll = make([][][]float32, s.n)
		for t := range info.AttnAll {
			info.AttnAll[t] = make([][]float32, c.NHeads)
			for h := range c.NHeads {
				info.AttnAll[t][h] = r.weights(t, h, s.pos0+t+1)
			}
		}
	case r.hooks.AllAttention: // one row: every position's weights are the last's
		info.AttnAll = [][][]float32{info.Attn}
	}
	r.hooks.LayerDone(info)
}

// lens is the logit lens that reads span s's pass now, or nil.
func (s *span) lens(c Config) *LogitLens {
	if s.rec == nil || !s.rec.hooks.Lens.ready(c) {
		return nil
	}
	return s.rec.hooks.Lens
}

// lensRows puts every lens reading this pass through the final norm and
// returns those rows with the logits rows headRows must fill for them
// (lens.go); empty when no lens reads the pass. The slices have room for
// more rows (the pass's own logits, when the head pass is shared).
func (p *pass) lensRows(m *Model) (xs, outs [][]float32) {
	p.xs, p.outs = p.xs[:0], p.outs[:0]
	for i := range p.spans {
		if ll := p.spans[i].lens(m.Config); ll != nil {
			x, o := ll.toRead(m)
			p.xs, p.outs = append(p.xs, x...), append(p.outs, o...)
		}
	}
	return p.xs, p.outs
}

// lensDone hands each lens its reading once the head has run: the last
// layer's is the sequence's own logits, row (its last row − first) of
// logits.
func (p *pass) lensDone(m *Model, logits []float32, first int) {
	c := m.Config
	V := c.VocabSize
	for i := range p.spans {
		s := &p.spans[i]
		if ll := s.lens(c); ll != nil {
			r := s.r0 + s.n - 1 - first
			ll.finish(c, s.pos0+s.n-1, logits[r*V:(r+1)*V])
		}
	}
}
