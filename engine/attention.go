package engine

// attention.go: self-attention: queries and keys rotated by RoPE, scored
// against the KV cache, softmax weights, the weighted sum of values.

import "math"

// attention runs one layer's self-attention for every row of pass p and
// leaves its output projection in a.proj (the caller adds it to the
// residual). Input a.xb is the normed stream. Keys and values of the new
// rows are written into their sequences' caches first, so a row at
// position pos attends to every cached position ≤ pos of its own sequence
// (causal).
func (m *Model) attention(a *acts, p *pass, lw *LayerWeights, l int) {
	c := m.Config
	R := len(p.tokens)
	qd, kvd := c.QDim(), c.KVDim()
	// q: [R][q_dim], k and v: [R][kv_dim], in one pass over the weights
	a.linear(a.xb, R, linJob{a.q, &lw.Wq, lw.Bq}, linJob{a.k, &lw.Wk, lw.Bk}, linJob{a.v, &lw.Wv, lw.Bv})
	for r := range R {
		m.rope(a, a.q[r*qd:(r+1)*qd], r)
		m.rope(a, a.k[r*kvd:(r+1)*kvd], r)
	}
	for _, s := range p.spans {
		kc, vc := s.kv.layerKV(l) // [cap][kv_dim]
		copy(kc[s.pos0*kvd:(s.pos0+s.n)*kvd], a.k[s.r0*kvd:(s.r0+s.n)*kvd])
		copy(vc[s.pos0*kvd:(s.pos0+s.n)*kvd], a.v[s.r0*kvd:(s.r0+s.n)*kvd])
	}
	a.attend(c, p, l)                                // scores, softmax, weighted sums into a.ao (attnkernels.go)
	a.linear(a.ao, R, linJob{a.proj, &lw.Wo, lw.Bo}) // [R][dim]
}

// ropeTables fills a.rcos/a.rsin [R][head_dim/2] with cos and sin of
// pos·θ^(−2j/head_dim) for each row's position, once per forward pass
// (every layer and head uses the same angles).
func (m *Model) ropeTables(a *acts, p *pass) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	R, half := len(p.tokens), c.HeadDim/2
	if len(a.rcos) < R*half {
		a.rcos, a.rsin = make([]float32, R*half), make([]float32, R*half)
	}
	for r := range R {
		pos := p.pos(r)
		for j := 0; j < half; j++ {
			freq := 1 / math.Pow(c.RopeTheta, float64(2*j)/float64(c.HeadDim))
			sin, cos := math.Sincos(float64(pos) * freq)
			a.rcos[r*half+j], a.rsin[r*half+j] = float32(cos), float32(sin)
		}
	}
}

// rope rotates the pairs of each head of vec (queries or keys of row r of
// this pass) by the angles in a's tables. Which dimensions form
// a pair depends on the checkpoint's convention (see RopeStyle).
func (m *Model) rope(a *acts, vec []float32, r int) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	hd := c.HeadDim
	half := hd / 2
	fcs, fss := a.rcos[r*half:(r+1)*half], a.rsin[r*half:(r+1)*half]
	for h := 0; h+hd <= len(vec); h += hd {
		head := vec[h : h+hd]
		for j := 0; j < half; j++ {
			fc, fs := fcs[j], fss[j]
			var a, b int
			if c.Rope == RopeAdjacent {
				a, b = 2*j, 2*j+1
			} else {
				a, b = j, j+half
			}
			x0, x1 := head[a], head[b]
			head[a] = x0*fc - x1*fs
			head[b] = x0*fs + x1*fc
		}
	}
}

// softmaxInPlace turns x into probabilities (max-subtracted for stability).
func softmaxInPlace(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	expShifted(x, mx) // float32(math.Exp(float64(v − mx))), four at a time
	var sum float32
	for _, e := range x {
		sum += e
	}
	for i := range x {
		x[i] /= sum
	}
}
