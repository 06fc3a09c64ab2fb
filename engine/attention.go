package engine

// attention.go: attention: queries against the KV cache, softmax weights, the weighted sum of
// values.

import "math"

// attention runs one layer's self-attention for T new positions pos0.. and
// adds its output to the residual stream st.x. Input st.xb is the normed
// stream. Keys and values of the new positions are written into the cache
// first, so position t attends to every cached position ≤ pos0+t (causal).
func (m *Model) attention(st *State, kv *KVCache, lw *LayerWeights, l, T, pos0 int, wantAll bool) {
	c := m.Config
	d, qd, kvd, hd := c.Dim, c.QDim(), c.KVDim(), c.HeadDim
	// q: [T][q_dim], k and v: [T][kv_dim], in one parallel pass
	st.linear(st.xb, T, linJob{st.q, &lw.Wq, lw.Bq}, linJob{st.k, &lw.Wk, lw.Bk}, linJob{st.v, &lw.Wv, lw.Bv})
	for t := 0; t < T; t++ {
		m.rope(st, st.q[t*qd:(t+1)*qd], t)
		m.rope(st, st.k[t*kvd:(t+1)*kvd], t)
	}
	kc, vc := kv.layerKV(l) // [cap][kv_dim]
	copy(kc[pos0*kvd:(pos0+T)*kvd], st.k[:T*kvd])
	copy(vc[pos0*kvd:(pos0+T)*kvd], st.v[:T*kvd])

	group := c.NHeads / c.NKVHeads // query heads per key/value head
	scale := float32(1 / math.Sqrt(float64(hd)))
	S := c.SeqLen
	// One work item per (position, head); items are split statically.
	parallelFor(T*c.NHeads, 1, func(w, lo, hi int) {
		for it := lo; it < hi; it++ {
			t, h := it/c.NHeads, it%c.NHeads
			n := pos0 + t + 1 // positions visible to this query
			q := st.q[t*qd+h*hd : t*qd+(h+1)*hd]
			kvh := h / group
			// The attention weights are computed where the hooks read them,
			// so none is copied afterwards: in this position's row of st.all
			// when every position's are wanted, in st.last[h] for the last
			// position (LayerDone's Attn), else in the worker's scratch.
			// Each item owns its row, and the arithmetic does not depend on
			// where the row lies, so the results are the same bits.
			att := st.att[w][:n]
			switch {
			case wantAll:
				att = st.all[(t*c.NHeads+h)*S:][:n]
			case t == T-1:
				att = st.last[h][:n]
			}
			// scores: att[p] = q·k_p (the cache rows of this head, stride kv_dim)
			gemvF32(att, kc[kvh*hd:], kvd, q, n, hd)
			for p := range att {
				att[p] *= scale
			}
			softmaxInPlace(att)
			// weighted sum: out = Σ_p att[p]·v_p
			out := st.ao[t*qd+h*hd : t*qd+(h+1)*hd]
			clear(out)
			gemvTAcc(out, vc[kvh*hd:], kvd, att, n, hd)
		}
	})
	st.linear(st.ao, T, linJob{st.proj, &lw.Wo, lw.Bo}) // [T][dim]
	for i, v := range st.proj[:T*d] {
		st.x[i] += v
	}
}

// ropeTables fills st.rcos/st.rsin [T][head_dim/2] with cos and sin of
// pos·θ^(−2j/head_dim) for positions pos0..pos0+T-1, once per forward pass
// (every layer and head uses the same angles).
func (m *Model) ropeTables(st *State, T, pos0 int) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	half := c.HeadDim / 2
	if len(st.rcos) < T*half {
		st.rcos, st.rsin = make([]float32, T*half), make([]float32, T*half)
	}
	for t := 0; t < T; t++ {
		for j := 0; j < half; j++ {
			freq := 1 / math.Pow(c.RopeTheta, float64(2*j)/float64(c.HeadDim))
			sin, cos := math.Sincos(float64(pos0+t) * freq)
			st.rcos[t*half+j], st.rsin[t*half+j] = float32(cos), float32(sin)
		}
	}
}

// rope rotates the pairs of each head of vec (queries or keys of the t-th
// position of this pass) by the angles in st's tables. Which dimensions form
// a pair depends on the checkpoint's convention (see RopeStyle).
func (m *Model) rope(st *State, vec []float32, t int) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	hd := c.HeadDim
	half := hd / 2
	fcs, fss := st.rcos[t*half:(t+1)*half], st.rsin[t*half:(t+1)*half]
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
