package engine

// linear.go: linear layers, y = W·x + b, over a pass's rows: GEMV for one
// position, the same decode kernel row by row for a batch or a short pass,
// packed GEMM for a long prefill (gemm.go); [in][out] matrices in inout.go.

import "github.com/inferscope/inferscope/engine/quant"

// linJob is one matrix of a fused linear pass: out[t][o] = Σ_i x[t][i]·W[o][i] + bias[o].
// out is [T][w.Rows]. Several jobs that read the same x (Q, K and V; gate
// and up) run as one parallel region, their rows split across workers.
type linJob struct {
	out  []float32
	w    *Mat
	bias []float32
}

// linear runs the jobs on x [T][in] (in = every job's w.Cols). With T = 1
// (decode) each worker streams its share of the weight rows once through
// the gemv kernel; a short pass, or any pass of a with decodeRows, runs
// the same kernel for every row (rowsPart); otherwise (prefill) each
// worker packs panels of nr output columns and multiplies them with
// tiles of mr positions (gemm.go). Decode and batched passes run as a's
// linRegion: they allocate nothing.
func (a *acts) linear(x []float32, T int, jobs ...linJob) {
	if (T <= inOutRowsMax || a.rowKernels(T)) && allInOut(jobs) {
		a.linearInOut(x, T, jobs) // inout.go
		return
	}
	if T == 1 {
		a.lin.start(linGemv, x, 1, jobs)
		return
	}
	if a.rowKernels(T) || rowsForQuant(jobs, T) {
		a.lin.ownScratch = a.decodeRows
		// a batch's rows, a short prefill, or a prefill of block matrices
		// whose activations fit in L2: the decode kernels over blocks of
		// rows cost less than packing the weights into panels for the GEMM
		// (and each position's values are a decode step's)
		a.lin.start(linRows, x, T, jobs)
		return
	}
	a.gemm(x, T, jobs)
}

// linMode is which body a linRegion runs.
type linMode uint8

const (
	linGemv  linMode = iota // one position: gemvRange over the worker's rows
	linRows                 // B rows with the decode kernels (rowsPart)
	linInOut                // [in][out] matrices (linearInOut, inout.go)
)

// linRegion is one linear call's parallel region, kept in acts and reused:
// its arguments are fields and its body a method value bound once, so a
// call allocates nothing (a closure over the call's arguments, handed to
// the pool, was allocated on every call: half a decode step's
// allocations). One acts runs one region at a time.
type linRegion struct {
	fn   func(worker, lo, hi int) // run, bound once
	mode linMode
	x    []float32
	B    int
	jobs []linJob
	// linInOut's: each job's first 32-output unit (units[len(jobs)] the
	// total), the tiles' input and per-worker panel and pad buffers
	units      [4]int // up to 3 jobs (acts.jobs)
	k          *kernelSet
	tile       bool
	xs         []float32
	pack, pads [][]float32
	// per worker: the four-row kernel's output and input vector tables
	// (passed to a kernel through a func value they must live on the heap)
	vec [][2][4][]float32
	// per worker: rowsQuant's input and output row tables (grown to the
	// largest B once) and, for a batched pass (ownScratch, set from
	// acts.decodeRows), its MatMat scratch: the batch state keeps it, so a
	// batched step allocates nothing even where sync.Pool drops what it is
	// given (race builds); a session's prefill borrows the pool's instead
	// of keeping up to a few hundred KiB a session
	qrows      [][2][][]float32
	qscr       []quant.Scratch
	ownScratch bool
}

// start runs the region over the jobs' rows (linGemv, linRows) and returns
// when it is done.
func (r *linRegion) start(mode linMode, x []float32, B int, jobs []linJob) {
	total := 0
	for _, j := range jobs {
		total += j.w.Rows
	}
	r.set(mode, x, B, jobs)
	parallelForAligned(total, 16, 64, r.fn)
	r.done()
}

// set fills the region's arguments (and binds fn, sizes vec, once).
func (r *linRegion) set(mode linMode, x []float32, B int, jobs []linJob) {
	if r.fn == nil {
		r.fn = r.run
	}
	if len(r.vec) < maxWorkers() {
		r.vec = make([][2][4][]float32, maxWorkers())
		r.qrows = make([][2][][]float32, maxWorkers())
		r.qscr = make([]quant.Scratch, maxWorkers())
	}
	r.mode, r.x, r.B, r.jobs = mode, x, B, jobs
}

// done drops the call's slices (the region keeps nothing of a pass alive).
func (r *linRegion) done() {
	r.x, r.jobs, r.xs = nil, nil, nil
	clear(r.vec)
}

// run is the region's body: worker w's share [lo, hi) (global rows, or
// linInOut's units).
func (r *linRegion) run(w, lo, hi int) {
	switch r.mode {
	case linInOut:
		r.inOutShare(w, lo, hi) // inout.go
	case linRows:
		base := 0
		for _, j := range r.jobs {
			if a, b := max(lo, base), min(hi, base+j.w.Rows); a < b {
				r.rowsPart(w, j, a-base, b-base)
			}
			base += j.w.Rows
		}
	default:
		base := 0
		for _, j := range r.jobs {
			if a, b := max(lo, base), min(hi, base+j.w.Rows); a < b {
				gemvRange(j, r.x, a-base, b-base)
			}
			base += j.w.Rows
		}
	}
}

// inOutRowsMax is the longest pass of [in][out] matrices (a real GPT-2
// checkpoint's Conv1D layers) that runs on linearInOut's tiles, which read
// the weights row by row as they are stored, instead of the packed GEMM,
// whose panels gather 32 columns from every input row (a 128-byte piece of
// each of `in` rows kilobytes apart: every panel touches hundreds of pages,
// and a prompt's pass packs the whole model). gpt2-124M real-layout
// directory, 2 threads, time to first token (`bench --prompt-tokens T`):
// T = 9 101 → 57 ms, 16 108 → 65, 32 129 → 82, 64 169 → 125, 128 226 →
// 215; at 192 and beyond the GEMM is as fast or faster. Each position's
// values are then a lone decode step's, as with the decode kernels.
const inOutRowsMax = 128

// rowsMaxT is the longest pass that acts.linear runs with the decode
// kernels (rowsPart) instead of the packed GEMM: for short passes packing
// the weights costs more than the GEMM saves (`bench --prompt-tokens 8`:
// stories15M 2003 → 3456 tok/s, gpt2-124M 156 → 488 tok/s; 6 tokens 2.0×
// and 2.3×). Longer prompts keep the GEMM.
const rowsMaxT = 8

// quantRowsMax is the most activations (T·in floats, 1 MiB) a prefill of
// block matrices runs through MatMatRows instead of the packed GEMM, where
// MatMat multiplies at the GEMM's rate (quant.MatMatAtFMARate): every
// weight block is dequantized once for all T positions and no panel is
// packed, while the T inputs, which each group of six weight rows reads
// again, still fit in L2 (gpt2-124M Q8_0, 2 threads: 16 tokens 4.7× faster
// than packing; all 512 tokens on rows 0.64× the GEMM; README, "Prefill
// on quantized files").
const quantRowsMax = 1 << 18

// rowsForQuant reports whether a pass of T positions over jobs runs on the
// rows path because every matrix is block-quantized and small enough a
// pass (quantRowsMax).
func rowsForQuant(jobs []linJob, T int) bool {
	if !quant.MatMatAtFMARate() {
		return false
	}
	for _, j := range jobs {
		if j.w.Q == nil || T*j.w.Cols > quantRowsMax {
			return false
		}
	}
	return true
}

// rowKernels reports whether a's linear passes run T rows with the decode
// kernels (rowsPart), each row's values a lone decode step's.
func (a *acts) rowKernels(T int) bool { return T <= rowsMaxT || a.decodeRows }

// rowsPart (linRegion's linRows) runs the jobs on B rows of x [B][in]
// (sequences of a batch, or the positions of a short prefill), each output
// what a lone decode step computes for that row, with each weight read
// from memory once for all B rows. The rows of each job are split across
// workers as a decode step's are; each worker walks its rows in blocks
// small enough to stay in cache and runs the decode kernel (gemvRange) on
// each block for every row (blocks start at multiples of 16 rows from the
// worker's first, so the kernels' 4-row and 8-column groups fall where
// they fall alone). (Passes of [in][out] matrices alone go through
// linearInOut.) rowsPart is worker w's part [lo, hi) of job j.
func (r *linRegion) rowsPart(w int, j linJob, lo, hi int) {
	x, B := r.x, r.B
	if B == 1 {
		gemvRange(j, x, lo, hi)
		return
	}
	if j.w.Q != nil { // block-quantized (quantized.go)
		var sc *quant.Scratch // nil: MatMat's pool
		if r.ownScratch {
			sc = &r.qscr[w]
		}
		rowsQuant(j, x, B, lo, hi, &r.qrows[w], sc)
		return
	}
	in := j.w.Cols
	o4, x4 := &r.vec[w][0], &r.vec[w][1]
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
			addVec(out, j.bias[lo:hi])
		}
	}
}

// batchBlock is how many outputs of w a worker computes for every sequence
// before moving on: about 32 KiB of weights, a multiple of 16.
func batchBlock(w *Mat) int {
	per := w.Cols * w.DType.Size()
	if w.Q != nil {
		per = quantBatchRowBytes(w)
	}
	n := (32 << 10) / max(per, 1)
	return max(16, n&^15)
}

// gemvRange computes outputs [lo, hi) of one job for a single position.
func gemvRange(j linJob, x []float32, lo, hi int) {
	w := j.w
	if w.Q != nil { // block-quantized (quantized.go)
		gemvQuant(j, x, lo, hi)
		return
	}
	out := j.out[lo:hi]
	switch {
	case w.InOut && w.DType == F32: // as linearInOut computes it
		clear(out)
		gemvTAcc(out, w.F32[w.Off+lo:], w.Ld, x, w.Cols, hi-lo)
	case w.InOut: // not produced by the loaders; kept correct anyway
		for o := lo; o < hi; o++ {
			var s float32
			for i := 0; i < w.Cols; i++ {
				s += w.At(o, i) * x[i]
			}
			out[o-lo] = s
		}
	case w.DType == BF16:
		gemvBF16(out, w.BF16[lo*w.Ld+w.Off:], w.Ld, x, hi-lo, w.Cols)
	default:
		gemvF32(out, w.F32[lo*w.Ld+w.Off:], w.Ld, x, hi-lo, w.Cols)
	}
	if j.bias != nil {
		addVec(out, j.bias[lo:hi])
	}
}
