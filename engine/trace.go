package engine

// trace.go: optional forward-pass hooks (httptrace style) and the info structs they receive.

import "time"

// Hooks are optional callbacks the forward pass calls as it goes, in the
// style of net/http/httptrace: each field may be nil (off), each is called
// synchronously on the caller's goroutine, and the slices an info struct
// holds are views of the engine's scratch buffers, valid only during the
// call. Copy what you keep.
type Hooks struct {
	// Embedded fires after the input vectors are formed, before layer 0.
	Embedded func(EmbedInfo)
	// LayerDone fires after each Transformer block.
	LayerDone func(LayerInfo)
	// AllAttention asks LayerDone to carry every position's attention
	// weights, not only the last position's.
	AllAttention bool
	// Lens, when set, reads each layer's residual through the final norm
	// and the unembedding (the logit lens, lens.go).
	Lens *LogitLens
	// Attended fires after each layer's attention (the queries against the
	// cached keys, the softmax and the weighted sums; not the projections)
	// with how long it took: in a batched pass, the whole batch's attention.
	Attended func(AttendedInfo)
}

// AttendedInfo is one layer's attention in a forward pass.
type AttendedInfo struct {
	Layer   int
	Pos0    int           // position of the sequence's first row in this pass
	Rows    int           // the sequence's rows in this pass
	Elapsed time.Duration // wall time of the layer's attention, every row of the pass
}

// EmbedInfo describes the embedding stage for the positions in this pass.
type EmbedInfo struct {
	Pos0     int         // position of the first token in this pass
	Tokens   []int       // token ids, one per position
	Token    [][]float32 // [T][dim] rows of the token-embedding table
	Position [][]float32 // [T][dim] learned position vectors (GPT-2); nil with RoPE
	Sum      [][]float32 // [T][dim] what enters layer 0
}

// LayerInfo describes one Transformer block after it ran.
type LayerInfo struct {
	Layer  int
	Pos0   int         // position of the first token in this pass
	Hidden [][]float32 // [T][dim] residual stream after this block
	// Attn[h] holds head h's attention weights of the last position in this
	// pass over positions 0..Pos0+T-1 (0 before a sliding window's start).
	Attn [][]float32
	// AttnAll[t][h] is the same for every position (only with AllAttention).
	AttnAll [][][]float32
	// MLP [T][hidden] is the MLP's inner activations (after SiLU·up or GELU).
	MLP [][]float32
	// Query [q_dim] is the last position's queries in this block, every
	// head's side by side, as attention used them (after RoPE when the
	// model has it).
	Query []float32
}
