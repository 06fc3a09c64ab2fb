package engine

// attention.go: self-attention: queries and keys rotated by RoPE, scored
// against the KV cache, softmax weights, the weighted sum of values.

import "math"

// attention runs one layer's self-attention for every row of pass p and
// leaves its output projection in a.proj (the caller adds it to the
// residual). Input a.xb is the normed stream. A row at position pos attends
// to the positions ≤ pos of its own sequence (causal), and in a sliding
// layer to the last Window of them only. A layer that keeps every position
// has the new rows' keys and values written into the cache first and reads
// them from there; a sliding layer's ring is read first (this pass's rows
// come from a.k, a.v) and written after, so no row loses a key it needs.
func (m *Model) attention(a *acts, p *pass, lw *LayerWeights, l int) {
	c := m.Config
	R, H := len(p.tokens), c.NHeads
	qd, kvd, hd := c.QDim(), c.KVDim(), c.HeadDim
	// q: [R][q_dim], k and v: [R][kv_dim], in one pass over the weights
	// (biases: Qwen2Attention's q, k and v; GPT-2's c_attn)
	a.linear(a.xb, R, a.jobsOf(linJob{a.q, &lw.Wq, lw.Bq}, linJob{a.k, &lw.Wk, lw.Bk}, linJob{a.v, &lw.Wv, lw.Bv})...)
	if lw.QNorm != nil {
		// Qwen3Attention, Gemma3Attention: q_norm and k_norm, an RMSNorm
		// over each head's head_dim values, before RoPE
		m.rmsnormRows(a.q, lw.QNorm, R*H, hd)
		m.rmsnormRows(a.k, lw.KNorm, R*c.NKVHeads, hd)
	}
	local := c.Sliding(l)
	for r := range R {
		m.rope(a, a.q[r*qd:(r+1)*qd], r, local)
		m.rope(a, a.k[r*kvd:(r+1)*kvd], r, local)
	}
	for _, s := range p.spans {
		if s.kv.Prec != KVF32 { // a 16-bit cache: every reader sees the rounded values, this pass's rows too
			s.kv.Prec.Round(a.k[s.r0*kvd : (s.r0+s.n)*kvd])
			s.kv.Prec.Round(a.v[s.r0*kvd : (s.r0+s.n)*kvd])
		}
		if !s.kv.ring(l) {
			s.kv.put(l, s.pos0, s.n, a.k[s.r0*kvd:], a.v[s.r0*kvd:])
		}
	}
	t0 := p.attnClock()
	a.attend(c, p, l) // scores, softmax, weighted sums into a.ao (attnkernels.go)
	p.attended(l, t0)
	for _, s := range p.spans {
		if s.kv.ring(l) { // the last rows of the pass enter the window's ring
			slots := s.kv.Slots(l)
			for t := max(0, s.n-slots); t < s.n; t++ {
				r := (s.r0 + t) * kvd
				s.kv.put(l, (s.pos0+t)%slots, 1, a.k[r:], a.v[r:])
			}
		}
	}
	a.linear(a.ao, R, a.jobsOf(linJob{a.proj, &lw.Wo, lw.Bo})...) // [R][dim]
}

// kvRun is a run of n consecutive positions' keys and values (rows of
// stride kv_dim, from one head's offset), the i-th onward of those a query
// sees: float32 rows in k, v, or a 16-bit cache's in k16, v16 (prec).
type kvRun struct {
	i, n     int
	k, v     []float32
	k16, v16 []uint16
	prec     KVPrec
}

// kvRuns finds the keys and values of positions first..last of span s in
// layer l, head offset ho: one run from the cache when the layer keeps every
// position (this pass's already written), else the ring's rows of earlier
// passes (wrapping once at most) and this pass's rows of k and v.
func (s *span) kvRuns(l, first, last, ho, kvd int, k, v []float32) (runs [3]kvRun, n int) {
	kc, vc, slots := s.kv.layerKV(l)
	kh, vh, _ := s.kv.layerKV16(l)
	cache := func(i, c, sl int) kvRun {
		if kh != nil {
			return kvRun{i: i, n: c, k16: kh[sl*kvd+ho:], v16: vh[sl*kvd+ho:], prec: s.kv.Prec}
		}
		return kvRun{i: i, n: c, k: kc[sl*kvd+ho:], v: vc[sl*kvd+ho:]}
	}
	if !s.kv.ring(l) {
		runs[0] = cache(0, last-first+1, first)
		return runs, 1
	}
	p, cached := first, min(last+1, s.pos0)
	for p < cached {
		sl := p % slots
		c := min(cached-p, slots-sl)
		runs[n] = cache(p-first, c, sl)
		n++
		p += c
	}
	if p <= last {
		r := s.r0 + p - s.pos0
		runs[n] = kvRun{i: p - first, n: last - p + 1, k: k[r*kvd+ho:], v: v[r*kvd+ho:]}
		n++
	}
	return runs, n
}

// ropeTables fills a.rcos/a.rsin [R][rotary/2] with cos and sin of
// pos·freq_j for each row's position, once per forward pass (every layer
// and head uses the same angles); with sliding layers of their own RoPE
// base (Gemma 3) also a.rcosL/a.rsinL. Angles are float64, rounded once.
func (m *Model) ropeTables(a *acts, p *pass) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	R, half := len(p.tokens), c.Rotary()/2
	fill := func(cos, sin []float32, inv []float64) ([]float32, []float32) {
		if len(cos) < R*half {
			cos, sin = make([]float32, R*half), make([]float32, R*half)
		}
		for r := range R {
			pos := float64(p.pos(r))
			for j, f := range inv {
				s, c := math.Sincos(pos * f)
				cos[r*half+j], sin[r*half+j] = float32(c), float32(s)
			}
		}
		return cos, sin
	}
	if a.invFor != &m.Config { // computed once per model (a pass would allocate them)
		a.invFreq, a.invFreqL, a.invFor = c.ropeInvFreq(false), c.ropeInvFreq(true), &m.Config
	}
	a.rcos, a.rsin = fill(a.rcos, a.rsin, a.invFreq)
	if c.RopeLocalTheta > 0 && c.Window > 0 {
		a.rcosL, a.rsinL = fill(a.rcosL, a.rsinL, a.invFreqL)
	}
}

// rope rotates the pairs of each head of vec (queries or keys of row r of
// this pass) by the angles in a's tables (a sliding layer's own, local).
// Which dimensions form a pair depends on the checkpoint's convention (see
// RopeStyle); with a partial rotary width (Phi-3's partial_rotary_factor)
// only the first Rotary() dimensions turn, paired within them
// (apply_rotary_pos_emb's q_rot, q_pass).
func (m *Model) rope(a *acts, vec []float32, r int, local bool) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	hd := c.HeadDim
	half := c.Rotary() / 2
	cs, ss := a.rcos, a.rsin
	if local && c.RopeLocalTheta > 0 {
		cs, ss = a.rcosL, a.rsinL
	}
	fcs, fss := cs[r*half:(r+1)*half], ss[r*half:(r+1)*half]
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
