package engine

// acts.go: a forward pass's rows: the activations every layer step reads
// and writes (acts), which sequence, position and cache each row belongs to
// (pass), and State, one run's scratch holding them.

// acts are the activations of one pass, one row per position computed, in
// the spirit of llm.c's ActivationTensors but for the layer in flight only:
// every layer reuses them. State (a lone pass) and BatchState (a batched
// decode step) each hold one; the layer functions take them and a pass.
type acts struct {
	jobs              [3]linJob                // the matrix products of one linear call (jobsOf)
	lin               linRegion                // a linear call's parallel region (linear.go)
	swigluFn          func(worker, lo, hi int) // swigluRows, bound
	geluFn            func(worker, lo, hi int) // geluRows, bound
	invFreq, invFreqL []float64                // RoPE's inverse frequencies (ropeTables), global and local layers'
	invFor            *Config                  // the config they are for
	x                 []float32                // [R][dim]     residual stream
	xb                []float32                // [R][dim]     normed input to a sub-block
	q                 []float32                // [R][q_dim]   queries
	k, v              []float32                // [R][kv_dim]  this pass's keys and values
	ao                []float32                // [R][q_dim]   attention output (heads concatenated)
	proj              []float32                // [R][dim]     a sub-block's output, added to x
	hb                []float32                // [R][hidden]  MLP inner activations
	hb2               []float32                // [R][hidden]  SwiGLU up branch
	logits            []float32                // [rows asked for][vocab]
	rcos              []float32                // [R][rotary/2] RoPE cos of each row's position
	rsin              []float32                // [R][rotary/2] RoPE sin
	rcosL             []float32                // the same for sliding layers with their own RoPE base (Gemma 3)
	rsinL             []float32
	attn              attnScratch // attention's scores and partial sums (attnkernels.go)

	// decodeRows has every linear pass compute each row as a lone decode
	// step does (batched decode: a row must not depend on its batch).
	decodeRows bool
	// GEMM scratch (a long prefill; State only): per worker a packed weight
	// panel [in][nr] and an edge tile [mr][nr]; the last T%mr positions
	// zero-padded to mr rows; xpair the pass's rows as bfloat16 pairs
	// (gemm.go's BF16 dot products; grown on first use).
	pack, tile [][]float32
	gemmTail   []float32
	xpair      []uint32
}

// alloc sizes the row buffers for R rows.
func (a *acts) alloc(c Config, R int) {
	a.x = make([]float32, R*c.Dim)
	a.xb = make([]float32, R*c.Dim)
	a.q = make([]float32, R*c.QDim())
	a.k = make([]float32, R*c.KVDim())
	a.v = make([]float32, R*c.KVDim())
	a.ao = make([]float32, R*c.QDim())
	a.proj = make([]float32, R*c.Dim)
	a.hb = make([]float32, R*c.HiddenDim)
	a.hb2 = make([]float32, R*c.HiddenDim)
}

// bytes is the scratch memory the activations hold.
func (a *acts) bytes() int64 {
	n := len(a.x) + len(a.xb) + len(a.q) + len(a.k) + len(a.v) + len(a.ao) + len(a.proj) +
		len(a.hb) + len(a.hb2) + len(a.logits) + len(a.rcos) + len(a.rsin) + len(a.rcosL) + len(a.rsinL) + len(a.gemmTail) + len(a.xpair)
	for _, s := range [][][]float32{a.pack, a.tile} {
		for _, b := range s {
			n += len(b)
		}
	}
	return 4*int64(n) + a.attn.bytes()
}

// pass is what one forward pass computes: a token per row, and for each
// sequence in it the rows it owns. Forward's pass is one sequence of T
// rows; a batched decode step's is B sequences of one row each.
type pass struct {
	tokens []int  // [R]
	spans  []span // the sequences, their rows in order
	spanOf []int  // [R] the span each row belongs to
	// the rows the logit lenses read with the head (record.go), reused
	xs, outs [][]float32
}

// span is one sequence's rows r0..r0+n-1 of a pass, at positions pos0.. of
// its cache.
type span struct {
	kv          *KVCache
	r0, n, pos0 int
	rec         *record // what its hooks read; nil when they read nothing
}

// start empties the pass for the given tokens (one per row).
func (p *pass) start(tokens []int) {
	p.tokens, p.spans, p.spanOf = tokens, p.spans[:0], p.spanOf[:0]
}

// add gives the next n rows to a sequence at kv's next positions.
func (p *pass) add(kv *KVCache, pos0, n int, rec *record) {
	p.spans = append(p.spans, span{kv: kv, r0: len(p.spanOf), n: n, pos0: pos0, rec: rec})
	for range n {
		p.spanOf = append(p.spanOf, len(p.spans)-1)
	}
}

// pos is row r's position in its sequence.
func (p *pass) pos(r int) int {
	s := &p.spans[p.spanOf[r]]
	return s.pos0 + r - s.r0
}

// maxLen is the most positions any row attends to.
func (p *pass) maxLen() int {
	n := 0
	for _, s := range p.spans {
		n = max(n, s.pos0+s.n)
	}
	return n
}

// advance records every sequence's new positions in its cache.
func (p *pass) advance() {
	for _, s := range p.spans {
		s.kv.Len = s.pos0 + s.n
	}
}

// State holds one run's scratch buffers, sized for up to cap positions per
// Forward call and grown on demand. Not safe for concurrent use.
type State struct {
	acts
	cfg Config
	cap int
	p   pass
	rec record // what the hooks read (record.go)
}

// NewState allocates scratch for the model's shape.
func NewState(c Config) *State {
	st := &State{cfg: c}
	st.grow(1)
	st.rec = newRecord(c)
	st.logits = make([]float32, c.VocabSize)
	maxIn := max(c.Dim, c.HiddenDim, c.QDim())
	st.pack = make([][]float32, maxWorkers())
	st.tile = make([][]float32, maxWorkers())
	for i := range st.pack {
		st.pack[i] = make([]float32, maxIn*maxNR)
		st.tile[i] = make([]float32, maxMR*maxNR)
	}
	st.gemmTail = make([]float32, maxMR*maxIn)
	return st
}

func (st *State) grow(T int) {
	if T <= st.cap {
		return
	}
	st.cap = T
	st.alloc(st.cfg, T)
}

// Bytes is the scratch memory this State holds now.
func (st *State) Bytes() int64 { return st.acts.bytes() + st.rec.bytes() }

func rows(buf []float32, T, d int) [][]float32 {
	out := make([][]float32, T)
	for t := range out {
		out[t] = buf[t*d : (t+1)*d]
	}
	return out
}

// swigluRows is swiglu's share lo..hi of a.hb, a.hb2.
func (a *acts) swigluRows(_, lo, hi int) { swigluRange(a.hb[lo:hi], a.hb2[lo:hi]) }

// geluRows is gelu's share lo..hi of a.hb.
func (a *acts) geluRows(_, lo, hi int) { geluRange(a.hb[lo:hi]) }

// jobsOf returns js in a's own array: a linear call's jobs then cost no
// allocation (a variadic slice that linear keeps would be one per call).
func (a *acts) jobsOf(js ...linJob) []linJob {
	return a.jobs[:copy(a.jobs[:], js)]
}
