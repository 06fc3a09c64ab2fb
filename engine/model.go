package engine

// model.go: Model (a loaded checkpoint) and State (one run's scratch buffers).

import "github.com/inferscope/inferscope/engine/tokenizer"

// Model is a loaded checkpoint: its shape, its read-only weights and, when
// the files carry one, its tokenizer. Safe for concurrent use by many
// Sessions, each with its own State and KVCache.
type Model struct {
	Name      string
	Source    string // file or directory it was loaded from
	Config    Config
	Weights   Weights
	Tokenizer tokenizer.Tokenizer // nil when loaded without one

	checksum checksum // of Weights, computed on first use (checksum.go)
}

// State holds one run's scratch buffers, sized for up to cap positions per
// Forward call and grown on demand. Not safe for concurrent use.
type State struct {
	cfg    Config
	cap    int
	x      []float32   // [T][dim]     residual stream
	xb     []float32   // [T][dim]     normed input to a sub-block
	q      []float32   // [T][q_dim]   queries
	k, v   []float32   // [T][kv_dim]  this pass's keys and values
	ao     []float32   // [T][q_dim]   attention output (heads concatenated)
	proj   []float32   // [T][dim]     output projection, added to x
	hb     []float32   // [T][hidden]  MLP inner activations
	hb2    []float32   // [T][hidden]  SwiGLU up branch
	att    [][]float32 // [workers][seq_len] attention scores, one per worker
	last   [][]float32 // [n_heads][seq_len] last position's weights per head
	all    []float32   // [T][n_heads][seq_len] every position's weights (on request)
	logits []float32   // [vocab] or [T][vocab]
	rcos   []float32   // [T][head_dim/2] RoPE cos of this pass's positions
	rsin   []float32   // [T][head_dim/2] RoPE sin
	emb    []float32   // [T][dim] widened embedding rows (BF16 weights, for hooks)

	// gemm scratch (prefill): per worker a packed weight panel [in][nr] and
	// an edge tile [6][nr]; the last T%6 positions zero-padded to 6 rows.
	pack, tile [][]float32
	gemmTail   []float32
	part       [][]float32 // per worker partial sums of an [in][out] decode step
}

// NewState allocates scratch for the model's shape.
func NewState(c Config) *State {
	st := &State{cfg: c}
	st.grow(1)
	st.att = make([][]float32, maxWorkers())
	for i := range st.att {
		st.att[i] = make([]float32, c.SeqLen)
	}
	st.last = make([][]float32, c.NHeads)
	for i := range st.last {
		st.last[i] = make([]float32, c.SeqLen)
	}
	st.logits = make([]float32, c.VocabSize)
	maxIn := max(c.Dim, c.HiddenDim, c.QDim())
	st.pack = make([][]float32, maxWorkers())
	st.tile = make([][]float32, maxWorkers())
	for i := range st.pack {
		st.pack[i] = make([]float32, maxIn*maxNR)
		st.tile[i] = make([]float32, gemmMR*maxNR)
	}
	st.gemmTail = make([]float32, gemmMR*maxIn)
	return st
}

func (st *State) grow(T int) {
	if T <= st.cap {
		return
	}
	c := st.cfg
	st.cap = T
	st.x = make([]float32, T*c.Dim)
	st.xb = make([]float32, T*c.Dim)
	st.q = make([]float32, T*c.QDim())
	st.k = make([]float32, T*c.KVDim())
	st.v = make([]float32, T*c.KVDim())
	st.ao = make([]float32, T*c.QDim())
	st.proj = make([]float32, T*c.Dim)
	st.hb = make([]float32, T*c.HiddenDim)
	st.hb2 = make([]float32, T*c.HiddenDim)
}

// Bytes is the scratch memory this State holds now.
func (st *State) Bytes() int64 {
	n := len(st.x) + len(st.xb) + len(st.q) + len(st.k) + len(st.v) + len(st.ao) + len(st.proj) +
		len(st.hb) + len(st.hb2) + len(st.all) + len(st.logits) + len(st.emb) + len(st.gemmTail)
	for _, a := range st.att {
		n += len(a)
	}
	for i := range st.pack {
		n += len(st.pack[i]) + len(st.tile[i])
	}
	for _, p := range st.part {
		n += len(p)
	}
	for _, a := range st.last {
		n += len(a)
	}
	return 4 * int64(n)
}

func rows(buf []float32, T, d int) [][]float32 {
	out := make([][]float32, T)
	for t := range out {
		out[t] = buf[t*d : (t+1)*d]
	}
	return out
}

// Precision is how the model's weight matrices are stored and read: "f32"
// or "bf16" (activations, norms and the KV cache are always float32).
func (m *Model) Precision() string { return m.Weights.DType().String() }

// WithWeights returns the model with its weight matrices in precision d: m
// itself when they already are, else a new Model (same name, config and
// tokenizer) whose matrices are rounded to bfloat16 (half the bytes per
// decode step) or widened to float32. m is not changed.
func (m *Model) WithWeights(d DType) *Model {
	if m.Weights.DType() == d {
		return m
	}
	w := m.Weights.toBF16()
	if d == F32 {
		w = m.Weights.toF32()
	}
	return &Model{Name: m.Name, Source: m.Source, Config: m.Config, Weights: w, Tokenizer: m.Tokenizer}
}
