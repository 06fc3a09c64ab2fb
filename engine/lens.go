package engine

// lens.go: the logit lens — the model's prediction read out of the residual
// stream after every layer: the final norm and the unembedding (LM head)
// applied to each layer's output, as if the model stopped there.

// LogitLens, set as Hooks.Lens, reads the residual stream of a forward
// pass's last position after every block through the final norm and the
// unembedding, and hands the [layer][vocab] scores to Done once the pass
// has run. It is a reading of the residual, not the model's output: only
// the last layer's reading is what the model predicts (it equals the
// returned logits). The caller owns it, with its scratch buffers; one
// LogitLens serves one run at a time (not safe for concurrent use).
type LogitLens struct {
	// Done receives the readings; the slices are the lens's buffers, valid
	// only during the call.
	Done func(LensInfo)

	x      []float32 // [layers][dim] residual after each block, pass's last position
	xb     []float32 // [layers][dim] the same through the final norm
	logits []float32 // [layers][vocab]
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
	if n := c.NLayers * c.Dim; len(ll.x) < n {
		ll.x, ll.xb = make([]float32, n), make([]float32, n)
		ll.logits = make([]float32, c.NLayers*c.VocabSize)
	}
	copy(ll.x[l*c.Dim:(l+1)*c.Dim], row)
}

// done reads every captured layer through the final norm and the head in
// one batched product (the head's weights are streamed once for all
// layers) and calls Done.
func (ll *LogitLens) done(m *Model, st *State, pos int) {
	c := m.Config
	L := c.NLayers
	if ll.Done == nil || len(ll.x) < L*c.Dim {
		return
	}
	m.norm(ll.xb, ll.x, m.Weights.FinalNorm, m.Weights.FinalNormBias, L)
	st.linear(ll.xb[:L*c.Dim], L, linJob{ll.logits, &m.Weights.Head, nil})
	ll.Done(LensInfo{Pos: pos, Logits: rows(ll.logits, L, c.VocabSize), Residual: rows(ll.x, L, c.Dim)})
}
