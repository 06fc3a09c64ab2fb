package engine

// lens.go: the logit lens — the model's prediction read out of the residual
// stream after every layer: the final norm and the unembedding (LM head)
// applied to each layer's output, as if the model stopped there.

// LogitLens, set as Hooks.Lens, reads the residual stream of a forward
// pass's last position after every block through the final norm and the
// unembedding, and hands the [layer][vocab] scores to Done once the pass
// has run. It is a reading of the residual, not the model's output: only
// the last layer's reading is what the model predicts (it is the returned
// logits, copied). The caller owns it, with its scratch buffers; one
// LogitLens serves one run at a time (not safe for concurrent use).
//
// Cost: the last layer's reading is the model's own logits; the other
// layers' readings are made in the same pass over the head as the logits
// of a decode step, lone or batched (headRows), so the head's weights are streamed
// from memory once per step with or without the lens, and the lens adds
// only the arithmetic of layers−1 extra rows, done from cache.
type LogitLens struct {
	// Done receives the readings; the slices are the lens's buffers, valid
	// only during the call.
	Done func(LensInfo)
	// Defer, when set, has a pass capture its residuals but read nothing:
	// no extra head rows, no Done. Read reads the last captured pass later,
	// with the values the pass would have handed Done (a caller that shows
	// only some passes' readings pays only for those).
	Defer bool

	x      []float32   // [layers][dim] residual after each block, pass's last position
	xb     []float32   // [layers][dim] the same through the final norm
	logits []float32   // [layers][vocab]
	lrows  [][]float32 // row views of logits and x, made once
	xrows  [][]float32
	xs     [][]float32 // the normed rows headRows reads (layers but the last)
	outs   [][]float32 // their logits rows
}

// LensInfo is one forward pass's logit-lens reading.
type LensInfo struct {
	Pos    int         // the position read: the pass's last
	Logits [][]float32 // [layer][vocab]: FinalNorm + Head applied to the residual after that layer
	// Residual [layer][dim] is what was read: the residual stream after each block.
	Residual [][]float32
}

// capture keeps layer l's residual row of the pass's last position.
func (ll *LogitLens) capture(c Config, l int, row []float32) {
	if n := c.NLayers * c.Dim; len(ll.x) != n || len(ll.logits) != c.NLayers*c.VocabSize {
		ll.x, ll.xb = make([]float32, n), make([]float32, n)
		ll.logits = make([]float32, c.NLayers*c.VocabSize)
		ll.lrows, ll.xrows = rows(ll.logits, c.NLayers, c.VocabSize), rows(ll.x, c.NLayers, c.Dim)
		ll.xs = rows(ll.xb, c.NLayers-1, c.Dim)
		ll.outs = ll.lrows[:c.NLayers-1]
	}
	copy(ll.x[l*c.Dim:(l+1)*c.Dim], row)
}

// ready reports whether the lens has captured a pass and wants it read.
func (ll *LogitLens) ready(c Config) bool {
	return ll != nil && !ll.Defer && ll.captured(c)
}

// captured reports whether the lens holds a pass's residuals to read.
func (ll *LogitLens) captured(c Config) bool {
	return ll.Done != nil && len(ll.x) == c.NLayers*c.Dim && c.NLayers > 0
}

// Read reads the last pass the lens captured and calls Done, as that pass
// would have without Defer: logits are the pass's logits at its last
// position (the last layer's reading), pos that position. The other layers'
// rows are made by headRows, as in the pass, so every value is bit-identical
// to the pass's own reading. It reports false, calling nothing, when no
// pass was captured (or Done is nil). Another pass with this lens since
// the one meant overwrites what Read reads: the caller keeps track.
func (ll *LogitLens) Read(m *Model, pos int, logits []float32) bool {
	c := m.Config
	if ll == nil || !ll.captured(c) || len(logits) < c.VocabSize {
		return false
	}
	xs, outs := ll.toRead(m)
	headRows(&m.Weights.Head, xs, outs)
	for _, o := range outs {
		m.softcapLogits(o)
	}
	ll.finish(c, pos, logits)
	return true
}

// toRead puts every layer but the last through the final norm and returns
// those rows with the logits rows headRows must fill (the last layer's
// reading is the model's logits, never recomputed).
func (ll *LogitLens) toRead(m *Model) (xs, outs [][]float32) {
	m.norm(ll.xb, ll.x, m.Weights.FinalNorm, m.Weights.FinalNormBias, m.Config.NLayers-1)
	return ll.xs, ll.outs
}

// finish copies the model's logits (the pass's last position) in as the
// last layer's reading and calls Done. The other layers' rows are already
// filled (by headRows, with or without the model's logits).
func (ll *LogitLens) finish(c Config, pos int, logits []float32) {
	L, V := c.NLayers, c.VocabSize
	copy(ll.logits[(L-1)*V:L*V], logits[:V])
	ll.Done(LensInfo{Pos: pos, Logits: ll.lrows, Residual: ll.xrows})
}

// headTile is how many head rows one worker multiplies by every vector
// before moving on: 64 rows of a 768-wide F32 head are 192 KiB, so a
// tile stays in the core's L2 cache while each vector passes over it.
const headTile = 64

// headRows computes outs[i][v] = Head[v]·xs[i] for every vector xs[i]
// (len dim; outs[i] len vocab) in one pass over the head: each worker
// takes a contiguous range of vocabulary rows and walks it tile by tile,
// applying every vector to a tile while it is in cache — four vectors at
// a time where the kernel set has gemv4 (each weight loaded once for the
// four). Each value is the gemv a lone decode step computes for that row
// (the kernels reduce a row in the same order whatever the row or vector
// count), so a row of logits made here equals the one acts.linear makes for
// an [out][in] head.
func headRows(h *Mat, xs, outs [][]float32) {
	k := kern
	four := !h.InOut && h.Cols%16 == 0 && len(xs) >= 4 &&
		((h.DType == F32 && k.gemv4 != nil) || (h.DType == BF16 && k.gemv4BF16 != nil))
	parallelForAligned(h.Rows, headTile, 4*headTile, func(_, lo, hi int) {
		var o4, x4 [4][]float32
		for t0 := lo; t0 < hi; t0 += headTile {
			t1 := min(t0+headTile, hi)
			i := 0
			for ; four && i+4 <= len(xs); i += 4 {
				for v := range 4 {
					o4[v], x4[v] = outs[i+v][t0:t1], xs[i+v]
				}
				if h.DType == F32 {
					k.gemv4(&o4, h.F32[t0*h.Ld+h.Off:], h.Ld, &x4, t1-t0, h.Cols)
				} else {
					k.gemv4BF16(&o4, h.BF16[t0*h.Ld+h.Off:], h.Ld, &x4, t1-t0, h.Cols)
				}
			}
			for ; i < len(xs); i++ {
				gemvRange(linJob{out: outs[i], w: h}, xs[i], t0, t1)
			}
		}
	})
}
