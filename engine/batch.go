package engine

// batch.go: batched decode: one forward pass over the current token of B
// independent sequences (continuous batching). Every weight matrix is read
// once per pass for all B rows; attention runs per sequence against its own
// KV cache. Each row is computed exactly as Forward computes a single
// decode step (the same kernel calls on the same row ranges), so a
// sequence's logits do not depend on what it was batched with.

import (
	"fmt"
	"math"
)

// BatchSeq is one sequence's decode step in a batch: its own scratch State
// (RoPE tables, attention weights, the logits it gets back) and KV cache,
// and the token to process at position KV.Len.
type BatchSeq struct {
	State *State
	KV    *KVCache
	Token int
	// Hooks, if not nil, sees this sequence's pass (Embedded, LayerDone with
	// MLP rows, and the logit lens;
	// AllAttention is the same as the last position for one token).
	Hooks *Hooks
	// Logits is set by ForwardBatch: the sequence's logits [vocab], in
	// State's buffer (valid until State is used again).
	Logits []float32
	// Err is set by ForwardBatch when this sequence could not run (token
	// out of range, cache full); the others still ran.
	Err error
}

// BatchState is the scratch of batched passes, for up to Cap sequences:
// the rows of every sequence side by side. Owned by one batcher.
type BatchState struct {
	cfg    Config
	Cap    int
	x, xb  []float32   // [B][dim]
	part   [][]float32 // per worker partial sums of [in][out] matrices (splitK)
	q      []float32   // [B][q_dim]
	k, v   []float32   // [B][kv_dim]
	ao     []float32   // [B][q_dim]
	proj   []float32   // [B][dim]
	hb     []float32   // [B][hidden]
	hb2    []float32   // [B][hidden]
	logits []float32   // [B][vocab]
	emb    []float32   // [dim] a widened embedding row (BF16, for hooks)
}

// NewBatchState allocates scratch for batches of up to capacity sequences.
func NewBatchState(c Config, capacity int) *BatchState {
	capacity = max(capacity, 1)
	b := &BatchState{cfg: c, Cap: capacity}
	b.x = make([]float32, capacity*c.Dim)
	b.xb = make([]float32, capacity*c.Dim)
	b.q = make([]float32, capacity*c.QDim())
	b.k = make([]float32, capacity*c.KVDim())
	b.v = make([]float32, capacity*c.KVDim())
	b.ao = make([]float32, capacity*c.QDim())
	b.proj = make([]float32, capacity*c.Dim)
	b.hb = make([]float32, capacity*c.HiddenDim)
	b.hb2 = make([]float32, capacity*c.HiddenDim)
	b.logits = make([]float32, capacity*c.VocabSize)
	b.emb = make([]float32, c.Dim)
	return b
}

// Bytes is the scratch memory the BatchState holds.
func (b *BatchState) Bytes() int64 {
	n := len(b.x) + len(b.xb) + len(b.q) + len(b.k) + len(b.v) + len(b.ao) + len(b.proj) + len(b.hb) + len(b.hb2) + len(b.logits) + len(b.emb)
	return 4 * int64(n)
}

// ForwardBatch runs one decode step for each sequence (at most b.Cap) in
// one pass, appends each one's key and value to its cache and sets its
// Logits. A sequence that cannot run gets Err and is left out; ForwardBatch
// returns an error only for a batch it cannot run at all. Hooks are called
// on the caller's goroutine.
func (m *Model) ForwardBatch(b *BatchState, seqs []*BatchSeq) error {
	c := m.Config
	if len(seqs) > b.Cap {
		return fmt.Errorf("forward batch: %d sequences, the batch scratch holds %d", len(seqs), b.Cap)
	}
	if b.cfg != c {
		return fmt.Errorf("forward batch: scratch made for another model shape")
	}
	run := seqs[:0:0]
	for _, s := range seqs {
		s.Err, s.Logits = nil, nil
		switch {
		case s.State == nil || s.KV == nil:
			s.Err = fmt.Errorf("forward batch: sequence without state or cache")
		case s.Token < 0 || s.Token >= c.VocabSize:
			s.Err = fmt.Errorf("token id %d at position %d out of range 0..%d", s.Token, s.KV.Len, c.VocabSize-1)
		case s.KV.Len+1 > s.KV.Cap:
			s.Err = fmt.Errorf("forward: %d positions would exceed the context: %d cached + 1 new > capacity %d", s.KV.Len+1, s.KV.Len, s.KV.Cap)
		default:
			run = append(run, s)
		}
	}
	B := len(run)
	if B == 0 {
		return nil
	}
	d, V := c.Dim, c.VocabSize
	for i, s := range run {
		m.embedRow(b, s, b.x[i*d:(i+1)*d])
		m.ropeTables(s.State, 1, s.KV.Len)
	}
	for l := range m.Weights.Layers {
		lw := &m.Weights.Layers[l]
		m.norm(b.xb, b.x, lw.AttnNorm, lw.AttnNormBias, B)
		m.attentionBatch(b, run, lw, l)
		m.norm(b.xb, b.x, lw.MLPNorm, lw.MLPNormBias, B)
		m.mlpBatch(b, lw, B)
		for i, s := range run {
			if s.Hooks != nil && s.Hooks.Lens != nil {
				s.Hooks.Lens.capture(c, l, b.x[i*d:(i+1)*d])
			}
			if s.Hooks == nil || s.Hooks.LayerDone == nil {
				continue
			}
			n := s.KV.Len + 1
			hd := c.HiddenDim
			info := LayerInfo{Layer: l, Pos0: s.KV.Len, Hidden: [][]float32{b.x[i*d : (i+1)*d]}, Attn: make([][]float32, c.NHeads),
				MLP: [][]float32{b.hb[i*hd : (i+1)*hd]}, Query: b.q[i*c.QDim() : (i+1)*c.QDim()]}
			for h := range info.Attn {
				info.Attn[h] = s.State.last[h][:n]
			}
			if s.Hooks.AllAttention {
				info.AttnAll = [][][]float32{info.Attn}
			}
			s.Hooks.LayerDone(info)
		}
	}
	for _, s := range run {
		s.KV.Len++
	}
	m.norm(b.xb, b.x, m.Weights.FinalNorm, m.Weights.FinalNormBias, B)
	b.linearBatch(b.xb, B, linJob{b.logits, &m.Weights.Head, nil})
	// The logit lens of every sequence that has one: all their layers'
	// rows in one pass over the head (headRows), not a pass per sequence.
	var xs, outs [][]float32
	for i, s := range run {
		if len(s.State.logits) < V {
			s.State.logits = make([]float32, V)
		}
		s.Logits = s.State.logits[:V]
		copy(s.Logits, b.logits[i*V:(i+1)*V])
		if s.Hooks != nil && s.Hooks.Lens.ready(c) {
			x, o := s.Hooks.Lens.toRead(m)
			xs, outs = append(xs, x...), append(outs, o...)
		}
	}
	if len(xs) > 0 {
		headRows(&m.Weights.Head, xs, outs)
	}
	for _, s := range run {
		if s.Hooks != nil && s.Hooks.Lens.ready(c) {
			s.Hooks.Lens.finish(c, s.KV.Len-1, s.Logits)
		}
	}
	return nil
}

// embedRow is embed for one token of one sequence, into xr.
func (m *Model) embedRow(b *BatchState, s *BatchSeq, xr []float32) {
	d := m.Config.Dim
	pos := s.KV.Len
	copy(xr, m.Weights.TokenEmbed.Row(s.Token, xr))
	if m.Weights.PosEmbed != nil {
		p := m.Weights.PosEmbed[pos*d : (pos+1)*d]
		for i := range xr {
			xr[i] += p[i]
		}
	}
	if s.Hooks != nil && s.Hooks.Embedded != nil {
		info := EmbedInfo{Pos0: pos, Tokens: []int{s.Token}, Token: [][]float32{m.Weights.TokenEmbed.Row(s.Token, b.emb)}, Sum: [][]float32{xr}}
		if m.Weights.PosEmbed != nil {
			info.Position = [][]float32{m.Weights.PosEmbed[pos*d : (pos+1)*d]}
		}
		s.Hooks.Embedded(info)
	}
}

// attentionBatch is attention for one new position of every sequence:
// Q, K and V of all rows in one pass over the weights, then each sequence
// against its own cache, then the output projection over all rows.
func (m *Model) attentionBatch(b *BatchState, seqs []*BatchSeq, lw *LayerWeights, l int) {
	c := m.Config
	B := len(seqs)
	d, qd, kvd, hd := c.Dim, c.QDim(), c.KVDim(), c.HeadDim
	b.linearBatch(b.xb, B, linJob{b.q, &lw.Wq, lw.Bq}, linJob{b.k, &lw.Wk, lw.Bk}, linJob{b.v, &lw.Wv, lw.Bv})
	for i, s := range seqs {
		m.rope(s.State, b.q[i*qd:(i+1)*qd], 0)
		m.rope(s.State, b.k[i*kvd:(i+1)*kvd], 0)
		kc, vc := s.KV.layerKV(l)
		pos := s.KV.Len
		copy(kc[pos*kvd:(pos+1)*kvd], b.k[i*kvd:(i+1)*kvd])
		copy(vc[pos*kvd:(pos+1)*kvd], b.v[i*kvd:(i+1)*kvd])
	}
	group := c.NHeads / c.NKVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	// One work item per (sequence, head), computed as Forward computes a
	// decode step's (position, head) item.
	// The weights are computed in the sequence's State.last[h], where its
	// hooks read them (each item owns that row), so none is copied.
	parallelFor(B*c.NHeads, 1, func(_, lo, hi int) {
		for it := lo; it < hi; it++ {
			i, h := it/c.NHeads, it%c.NHeads
			s := seqs[i]
			kc, vc := s.KV.layerKV(l)
			n := s.KV.Len + 1
			q := b.q[i*qd+h*hd : i*qd+(h+1)*hd]
			kvh := h / group
			att := s.State.last[h][:n]
			gemvF32(att, kc[kvh*hd:], kvd, q, n, hd)
			for p := range att {
				att[p] *= scale
			}
			softmaxInPlace(att)
			out := b.ao[i*qd+h*hd : i*qd+(h+1)*hd]
			clear(out)
			gemvTAcc(out, vc[kvh*hd:], kvd, att, n, hd)
		}
	})
	b.linearBatch(b.ao, B, linJob{b.proj, &lw.Wo, lw.Bo})
	for i, v := range b.proj[:B*d] {
		b.x[i] += v
	}
}

// mlpBatch is mlp over B rows (the same element-wise arithmetic).
func (m *Model) mlpBatch(b *BatchState, lw *LayerWeights, B int) {
	c := m.Config
	d, hd := c.Dim, c.HiddenDim
	n := B * hd
	if !lw.WGate.Empty() {
		b.linearBatch(b.xb, B, linJob{b.hb, &lw.WGate, nil}, linJob{b.hb2, &lw.WUp, nil})
		swiglu(b.hb, b.hb2, n)
	} else {
		b.linearBatch(b.xb, B, linJob{b.hb, &lw.WUp, lw.BUp})
		gelu(b.hb, n)
	}
	b.linearBatch(b.hb, B, linJob{b.proj, &lw.WDown, lw.BDown})
	for i, v := range b.proj[:B*d] {
		b.x[i] += v
	}
}

// linearBatch runs the jobs on x [B][in], each output row of row s in
// jobs' out [B][rows]. The rows of each job are split across workers as
// State.linear splits a decode step's; each worker walks its rows in blocks
// small enough to stay in cache and runs the decode kernel (gemvRange) on
// each block for every sequence, so the weights come from memory once for
// all B rows and every output is the same computation as a lone decode
// step's (blocks start at multiples of 16 rows from the worker's first, so
// the kernels' 4-row and 8-column groups fall where they fall alone).
//
// [in][out] matrices side by side (GPT-2) go through splitK, as they do alone.
func (b *BatchState) linearBatch(x []float32, B int, jobs ...linJob) {
	b.part = linearRows(x, B, b.part, jobs)
}

// linearRows is linearBatch for any B rows of x (sequences of a batch, or
// the positions of a short prefill): each output is what a lone decode
// step computes for that row. part is splitK's scratch (grown and returned).
func linearRows(x []float32, B int, part [][]float32, jobs []linJob) [][]float32 {
	total := 0
	for _, j := range jobs {
		total += j.w.Rows
	}
	if inOutRun(jobs) {
		return splitK(x, B, total, jobs, part)
	}
	in := jobs[0].w.Cols
	parallelForAligned(total, 16, 64, func(_, lo, hi int) {
		// the kernel's vector tables, once per worker: passed to the kernel
		// through a func value they live on the heap (one allocation per
		// region, not per block and group of four)
		o4, x4 := new([4][]float32), new([4][]float32)
		forJobs(jobs, lo, hi, func(j linJob, lo, hi int) {
			if B == 1 {
				gemvRange(j, x, lo, hi)
				return
			}
			blk := batchBlock(j.w)
			rows := j.w.Rows
			four := gemv4For(j.w)
			for a := lo; a < hi; a += blk {
				e := min(a+blk, hi)
				s := 0
				for ; four && s+4 <= B; s += 4 {
					gemv4Range(j, x, in, s, a, e, o4, x4)
				}
				for ; s < B; s++ {
					js := linJob{out: j.out[s*rows : (s+1)*rows], w: j.w, bias: j.bias}
					gemvRange(js, x[s*in:(s+1)*in], a, e)
				}
			}
		})
	})
	return part
}

// gemv4For reports whether the kernel set can run w for four sequences in
// one pass over its rows (gemv4: each weight loaded once for the four, and
// each value the one-vector gemv's, so a row is the same as alone); the
// column count a multiple of 16, as the four-vector kernel takes it.
func gemv4For(w *Mat) bool {
	k := kern
	return !w.InOut && w.Cols%16 == 0 && ((w.DType == F32 && k.gemv4 != nil) || (w.DType == BF16 && k.gemv4BF16 != nil))
}

// gemv4Range is gemvRange for sequences s..s+3 of x [B][in] at once:
// outputs [lo, hi) of each one's rows in j.out [B][rows], then the bias, as
// gemvRange adds it.
func gemv4Range(j linJob, x []float32, in, s, lo, hi int, o4, x4 *[4][]float32) {
	w, rows := j.w, j.w.Rows
	for v := range 4 {
		o4[v] = j.out[(s+v)*rows+lo : (s+v)*rows+hi]
		x4[v] = x[(s+v)*in : (s+v+1)*in]
	}
	if w.DType == F32 {
		kern.gemv4(o4, w.F32[lo*w.Ld+w.Off:], w.Ld, x4, hi-lo, w.Cols)
	} else {
		kern.gemv4BF16(o4, w.BF16[lo*w.Ld+w.Off:], w.Ld, x4, hi-lo, w.Cols)
	}
	if j.bias != nil {
		for _, out := range o4 {
			for i, b := range j.bias[lo:hi] {
				out[i] += b
			}
		}
	}
}

// batchBlock is how many outputs of w a worker computes for every sequence
// before moving on: about 32 KiB of weights, a multiple of 16.
func batchBlock(w *Mat) int {
	per := w.Cols * w.DType.Size()
	n := (32 << 10) / max(per, 1)
	return max(16, n&^15)
}
