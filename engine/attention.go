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
	matmul(st.q, st.xb, lw.Wq, lw.Bq, T, d, qd)  // q: [T][q_dim]
	matmul(st.k, st.xb, lw.Wk, lw.Bk, T, d, kvd) // k: [T][kv_dim]
	matmul(st.v, st.xb, lw.Wv, lw.Bv, T, d, kvd) // v: [T][kv_dim]
	for t := 0; t < T; t++ {
		m.rope(st.q[t*qd:(t+1)*qd], pos0+t)
		m.rope(st.k[t*kvd:(t+1)*kvd], pos0+t)
	}
	kc, vc := kv.layerKV(l) // [cap][kv_dim]
	copy(kc[pos0*kvd:(pos0+T)*kvd], st.k[:T*kvd])
	copy(vc[pos0*kvd:(pos0+T)*kvd], st.v[:T*kvd])

	group := c.NHeads / c.NKVHeads // query heads per key/value head
	scale := float32(1 / math.Sqrt(float64(hd)))
	S := c.SeqLen
	// One work item per (position, head).
	parallelFor(T*c.NHeads, 4, func(w, lo, hi int) {
		att := st.att[w]
		for it := lo; it < hi; it++ {
			t, h := it/c.NHeads, it%c.NHeads
			n := pos0 + t + 1 // positions visible to this query
			q := st.q[t*qd+h*hd : t*qd+(h+1)*hd]
			kvh := h / group
			for p := 0; p < n; p++ {
				att[p] = dot(q, kc[p*kvd+kvh*hd:p*kvd+(kvh+1)*hd]) * scale
			}
			softmaxInPlace(att[:n])
			out := st.ao[t*qd+h*hd : t*qd+(h+1)*hd]
			clear(out)
			for p := 0; p < n; p++ {
				a := att[p]
				vr := vc[p*kvd+kvh*hd : p*kvd+(kvh+1)*hd]
				for i := range out {
					out[i] += a * vr[i]
				}
			}
			if t == T-1 {
				copy(st.last[h][:n], att[:n])
			}
			if wantAll {
				copy(st.all[(t*c.NHeads+h)*S:(t*c.NHeads+h)*S+n], att[:n])
			}
		}
	})
	matmul(st.proj, st.ao, lw.Wo, lw.Bo, T, qd, d) // [T][dim]
	for i, v := range st.proj[:T*d] {
		st.x[i] += v
	}
}

// rope rotates the pairs of each head of vec (queries or keys of one
// position) by angles pos·θ^(−2j/head_dim). Which dimensions form a pair
// depends on the checkpoint's convention (see RopeStyle).
func (m *Model) rope(vec []float32, pos int) {
	c := m.Config
	if c.Rope == RopeNone {
		return
	}
	hd := c.HeadDim
	for h := 0; h+hd <= len(vec); h += hd {
		head := vec[h : h+hd]
		for j := 0; j < hd/2; j++ {
			freq := 1 / math.Pow(c.RopeTheta, float64(2*j)/float64(hd))
			sin, cos := math.Sincos(float64(pos) * freq)
			fc, fs := float32(cos), float32(sin)
			var a, b int
			if c.Rope == RopeAdjacent {
				a, b = 2*j, 2*j+1
			} else {
				a, b = j, j+hd/2
			}
			x0, x1 := head[a], head[b]
			head[a] = x0*fc - x1*fs
			head[b] = x0*fs + x1*fc
		}
	}
}
