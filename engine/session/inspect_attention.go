package session

// inspect_attention.go: the attention inspection — one head's attention at
// the current position, step by step with the engine's own numbers: its
// query (after RoPE when the model has it), every key it attends to (from
// the KV cache, marked cached or new), q·k, the scaling 1/√head_dim, the
// causal mask, the softmax weights (exactly those the engine computed) and
// the weighted sum of the values (the head's output).

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/inferscope/inferscope/engine"
)

// InspectAttention is the InspectRequest.What of one head's attention.
const InspectAttention = "attention"

// MaxAttentionVectors bounds how many positions' key and value vectors an
// attention inspection carries: with more positions in view, those of the
// MaxAttentionVectors largest weights (every position keeps its label,
// score and weight).
const MaxAttentionVectors = 256

// AttnKey is one position the query attends to.
type AttnKey struct {
	Pos   int    `json:"pos"`
	ID    int    `json:"id"`
	Text  string `json:"text"`
	Piece string `json:"token,omitempty"` // the vocabulary piece, only when Text is not whole characters
	// Cached: the key and value were computed by an earlier forward pass
	// and read from the KV cache; false: computed by this pass ("new").
	Cached bool `json:"cached"`
	// Key and Value as the cache holds them (keys after RoPE); nil past
	// MaxAttentionVectors positions.
	Key    []float32 `json:"key,omitempty"`
	Value  []float32 `json:"value,omitempty"`
	Score  float32   `json:"score"`  // q·k
	Scaled float32   `json:"scaled"` // q·k / √head_dim, what the softmax reads
	Weight float32   `json:"weight"` // the softmax weight, as the engine computed it
}

// AttentionView is one head's attention at the current position.
type AttentionView struct {
	Head    int       `json:"head"`
	KVHead  int       `json:"kv_head"` // the key/value head it reads (GQA/MQA share one among several query heads)
	HeadDim int       `json:"head_dim"`
	Query   []float32 `json:"query"` // q of the current position, after RoPE when the model uses it
	RoPE    bool      `json:"rope"`
	Scale   float32   `json:"scale"` // 1/√head_dim (Gemma: query_pre_attn_scalar^−½)
	// Keys: every position the query may see: 0..Pos, or in a
	// sliding-window layer the last Window of them (Evicted..Pos).
	Keys []AttnKey `json:"keys"`
	// Window is the layer's sliding window (0: a full-attention layer);
	// Evicted the positions 0..Evicted-1 before it, which the query may not
	// see (weight 0) and the layer's cache no longer holds.
	Window  int `json:"window,omitempty"`
	Evicted int `json:"evicted,omitempty"`
	// Softcap, when not 0, caps the scaled scores before the softmax:
	// softcap·tanh(scaled/softcap) (Gemma 2).
	Softcap float64 `json:"softcap,omitempty"`
	// Masked: positions Pos+1..Context-1 are hidden by the causal mask
	// (their score is −∞ before the softmax, their weight 0); at the last
	// position they hold nothing yet.
	Masked  int `json:"masked"`
	Context int `json:"context"`
	// Output = Σ_p Weight_p · Value_p, the head's output before the output
	// projection mixes the heads.
	Output    []float32 `json:"output"`
	WeightSum float32   `json:"weight_sum"` // Σ weights (1 up to rounding)
}

// attnView keeps, for the last pass's last position, what an attention
// inspection needs beyond the KV cache: every block's queries and every
// head's weights as the engine computed them.
type attnView struct {
	pos0 int         // the pass's first position: earlier ones came from the cache
	q    []float32   // [layers][q_dim]
	w    [][]float32 // [layers·heads][pos+1]
}

// keep copies block l's queries and attention weights of the last position.
func (a *attnView) keep(c engine.Config, l engine.LayerInfo) {
	qd := c.QDim()
	if len(a.q) != c.NLayers*qd {
		a.q = make([]float32, c.NLayers*qd)
		a.w = make([][]float32, c.NLayers*c.NHeads)
	}
	a.pos0 = l.Pos0
	copy(a.q[l.Layer*qd:(l.Layer+1)*qd], l.Query)
	for h, w := range l.Attn {
		i := l.Layer*c.NHeads + h
		a.w[i] = append(a.w[i][:0], w...)
	}
}

// inspectAttention fills out with head r.Head of block l at the current
// position.
func (s *Session) inspectAttention(r InspectRequest, out *Inspection) error {
	c := s.m.Config
	if r.Head < 0 || r.Head >= c.NHeads {
		return fmt.Errorf("head %d out of range: allowed 0 to %d", r.Head, c.NHeads-1)
	}
	v := &s.view
	l, h, pos := r.Layer, r.Head, v.pos
	n := pos + 1
	w := v.att.w[l*c.NHeads+h]
	if len(v.att.q) == 0 || len(w) != n || n > s.kv.Len {
		return fmt.Errorf("the attention of position %d is no longer in the cache: step again", pos)
	}
	hd, qd := c.HeadDim, c.QDim()
	kvh := h / (c.NHeads / c.NKVHeads)
	q := append([]float32(nil), v.att.q[l*qd+h*hd:l*qd+(h+1)*hd]...)
	scale := c.AttnScale()
	first := 0 // the first position the query sees
	if c.Sliding(l) {
		first = max(0, n-c.Window)
	}
	a := &AttentionView{Head: h, KVHead: kvh, HeadDim: hd, Query: q, RoPE: c.Rope != engine.RopeNone, Scale: scale,
		Keys: make([]AttnKey, 0, n-first), Masked: c.SeqLen - n, Context: c.SeqLen, Output: make([]float32, hd)}
	if c.Sliding(l) {
		a.Window, a.Evicted = c.Window, first
	}
	a.Softcap = c.AttnSoftcap
	// the largest weights keep their vectors
	withVec := make([]bool, n)
	if n-first <= MaxAttentionVectors {
		for p := first; p < n; p++ {
			withVec[p] = true
		}
	} else {
		idx := make([]int, 0, n-first)
		for p := first; p < n; p++ {
			idx = append(idx, p)
		}
		sort.SliceStable(idx, func(i, j int) bool { return w[idx[i]] > w[idx[j]] })
		for _, p := range idx[:MaxAttentionVectors] {
			withVec[p] = true
		}
	}
	out64 := make([]float64, hd)
	var sum float64
	for p := first; p < n; p++ {
		kr, vr, ok := s.kv.Row(l, p)
		if !ok {
			return fmt.Errorf("the attention of position %d is no longer in the cache: step again", pos)
		}
		key, val := kr[kvh*hd:(kvh+1)*hd], vr[kvh*hd:(kvh+1)*hd]
		var dot float64
		for i, x := range q {
			dot += float64(x) * float64(key[i])
		}
		for i, x := range val {
			out64[i] += float64(w[p]) * float64(x)
		}
		sum += float64(w[p])
		id := s.ids[p]
		k := AttnKey{Pos: p, ID: id, Text: string(s.m.Tokenizer.TokenBytes(id)), Cached: p < v.att.pos0,
			Score: float32(dot), Scaled: float32(dot * float64(scale)), Weight: w[p]}
		if k.Text == "" || !utf8.ValidString(k.Text) {
			k.Piece = s.m.Tokenizer.Piece(id)
		}
		if withVec[p] {
			k.Key, k.Value = append([]float32(nil), key...), append([]float32(nil), val...)
		}
		a.Keys = append(a.Keys, k)
	}
	for i, x := range out64 {
		a.Output[i] = float32(x)
	}
	a.WeightSum = float32(sum)
	out.Attention = a
	return nil
}
