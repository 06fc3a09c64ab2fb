package engine

// batch.go: batched decode: one forward pass over the current token of B
// independent sequences (continuous batching). Every weight matrix is read
// once per pass for all B rows; attention runs per sequence against its own
// KV cache. The pass is Forward's (forward.go), with one row per sequence
// and every linear pass computing each row as a lone decode step does (the
// same kernel calls on the same row ranges), so a sequence's logits do not
// depend on what it was batched with: they equal, bit for bit, Forward's
// for that single decode step.

import "fmt"

// BatchSeq is one sequence's decode step in a batch: its own scratch State
// (what its hooks read, the logits it gets back) and KV cache, and the
// token to process at position KV.Len.
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
	acts
	cfg    Config
	Cap    int
	p      pass
	tokens []int       // [B] the pass's tokens
	run    []*BatchSeq // the pass's sequences (those without Err), reused
}

// NewBatchState allocates scratch for batches of up to capacity sequences.
func NewBatchState(c Config, capacity int) *BatchState {
	capacity = max(capacity, 1)
	b := &BatchState{cfg: c, Cap: capacity}
	b.alloc(c, capacity)
	b.logits = make([]float32, capacity*c.VocabSize)
	b.decodeRows = true
	return b
}

// Bytes is the scratch memory the BatchState holds.
func (b *BatchState) Bytes() int64 { return b.acts.bytes() }

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
	run := b.run[:0]
	for _, s := range seqs {
		s.Err, s.Logits = nil, nil
		if s.State == nil || s.KV == nil {
			s.Err = fmt.Errorf("forward batch: sequence without state or cache")
		} else if s.Err = m.checkToken(s.Token, s.KV.Len); s.Err == nil {
			s.Err = s.KV.room(1)
		}
		if s.Err == nil {
			run = append(run, s)
		}
	}
	b.run = run
	defer clear(b.run) // keep no sequence alive
	if len(run) == 0 {
		return nil
	}
	b.tokens = b.tokens[:0]
	for _, s := range run {
		b.tokens = append(b.tokens, s.Token)
	}
	b.p.start(b.tokens)
	for _, s := range run {
		b.p.add(s.KV, s.KV.Len, 1, s.State.rec.start(s.Hooks, 1))
	}
	m.forward(&b.acts, &b.p, 0)
	V := c.VocabSize
	for i, s := range run {
		if len(s.State.logits) < V {
			s.State.logits = make([]float32, V)
		}
		s.Logits = s.State.logits[:V]
		copy(s.Logits, b.logits[i*V:(i+1)*V])
	}
	return nil
}
