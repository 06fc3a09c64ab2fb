package engine

// quantized.go: weight matrices stored in ggml's block formats (F16, Q8_0,
// Q4_0, Q4_K, Q5_K, Q6_K; package quant) in the forward pass. Activations
// stay float32: every kernel dequantizes the blocks it reads (into
// registers or a small buffer) and multiplies float32 by float32, so a
// product on quantized weights is the float32 product on the dequantized
// weights up to the order of the sums (Q4_K on AVX2/AVX-512: a factored sum,
// Σ d·sc·(Σ q·x) − Σ dmin·m·(Σ x), each 4-bit q converted to float
// exactly; quant/q4kfact_amd64.go), and no whole matrix is ever
// dequantized. The embedding's rows are dequantized one token at a time.
//
// Kernels: quant.Matrix.MatVecRows for one row of activations (decode),
// MatMatRows for a batch's rows or a prefill whose activations fit in L2
// (each weight block read and dequantized once for every row, each result
// equal bit for bit to MatVecRows', so a batched decode step equals the
// lone one; linear.go, rowsForQuant), and for a longer prefill the packed
// GEMM on panels dequantized stripe by stripe (packQuantPanel). Each output
// row of MatVecRows is a function of that row alone: splitting the rows
// across workers does not change a value.
//
// Summation order: the quant kernels keep 32 partial sums per row, the
// engine's float32 gemv 16, so a quantized F16 matrix and the same values
// in F32 give products that differ in the last bits (tolerance agreed
// with package quant: relative 1e-5 of a logit's scale).

import (
	"fmt"
	"sync"

	"github.com/inferscope/inferscope/engine/quant"
)

// The block types a Mat can hold in Q.
const (
	F16  DType = 2 + iota // IEEE half precision
	Q8_0                  // 32 int8 values × one fp16 scale (8.5 bits per weight)
	Q4_0                  // 32 4-bit values × one fp16 scale (4.5 bits)
	Q4_K                  // 256-value super-blocks of 4-bit values, 6-bit sub-block scales and minimums (4.5 bits)
	Q5_K                  // as Q4_K with a fifth bit per value (5.5 bits)
	Q6_K                  // 256-value super-blocks of 6-bit values, 8-bit sub-block scales (6.56 bits)
)

var quantTypes = map[DType]quant.Type{F16: quant.F16, Q8_0: quant.Q8_0, Q4_0: quant.Q4_0, Q4_K: quant.Q4_K, Q5_K: quant.Q5_K, Q6_K: quant.Q6_K}

// quantDTypeName is the lower-case ggml name of a block type ("q4_k").
func quantDTypeName(d DType) string {
	if t, ok := quantTypes[d]; ok {
		switch t {
		case quant.Q8_0:
			return "q8_0"
		case quant.Q4_0:
			return "q4_0"
		case quant.Q4_K:
			return "q4_k"
		case quant.Q5_K:
			return "q5_k"
		case quant.Q6_K:
			return "q6_k"
		}
		return "f16"
	}
	return fmt.Sprintf("dtype %d", uint8(d))
}

// IsQuantized reports whether d is a block type (held in Mat.Q).
func (d DType) IsQuantized() bool { _, ok := quantTypes[d]; return ok }

// ParseDType reads a weight precision by name: "f32", "bf16", "f16",
// "q8_0", "q4_0", "q4_k", "q5_k", "q6_k" (any case).
func ParseDType(s string) (DType, error) {
	for _, d := range []DType{F32, BF16, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K} {
		if equalFold(s, d.String()) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("weight precision %q not known (known: f32, bf16, f16, q8_0, q4_0, q4_k, q5_k, q6_k)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// dtypeOfQuant is the DType of a ggml type (F32 and BF16 included); ok is
// false for a type the engine does not compute with.
func dtypeOfQuant(t quant.Type) (DType, bool) {
	switch t {
	case quant.F32:
		return F32, true
	case quant.BF16:
		return BF16, true
	}
	for d, q := range quantTypes {
		if q == t {
			return d, true
		}
	}
	return 0, false
}

// QuantMat wraps a block-quantized matrix (rows × cols, [out][in]) as a Mat.
// The data is used in place: never write to it.
func QuantMat(q *quant.Matrix) (Mat, error) {
	d, ok := dtypeOfQuant(q.Type)
	if !ok || !d.IsQuantized() {
		return Mat{}, fmt.Errorf("a %s matrix is not a block type the engine computes with (%s)", q.Type, "F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K")
	}
	return Mat{Rows: q.Rows, Cols: q.Cols, DType: d, Ld: q.Cols, Q: q}, nil
}

// quantRows returns rows lo..hi−1 of a block-quantized matrix (a view of
// its bytes): GPT-2's fused attn_qkv gives Wq, Wk and Wv this way.
func quantRows(m Mat, lo, hi int) Mat {
	q := *m.Q
	q.Rows, q.Data = hi-lo, q.Data[lo*q.RowBytes:hi*q.RowBytes]
	m.Rows, m.Q = hi-lo, &q
	return m
}

// quantAt is W[o][i] of a block matrix: the block holding it, dequantized.
func (m *Mat) quantAt(o, i int) float32 {
	if o < 0 || o >= m.Rows || i < 0 || i >= m.Cols {
		panic(fmt.Sprintf("mat: element (%d, %d) of %d×%d", o, i, m.Rows, m.Cols))
	}
	t := m.Q.Type
	n, bb := t.BlockSize(), t.BlockBytes()
	b := i / n
	var buf [quant.QK_K]float32
	off := o*m.Q.RowBytes + b*bb
	if err := quant.Dequantize(t, buf[:n], m.Q.Data[off:off+bb]); err != nil {
		panic(err.Error())
	}
	return buf[i%n]
}

// gemvQuant is gemvRange for a block matrix: outputs [lo, hi) of one job
// for a single position.
func gemvQuant(j linJob, x []float32, lo, hi int) {
	w := j.w
	out := j.out[lo:hi]
	w.Q.MatVecRows(out, x[:w.Cols], lo, hi)
	if j.bias != nil {
		addVec(out, j.bias[lo:hi])
	}
}

// rowsQuant is linRegion.rowsPart's inner loop for a block matrix: outputs [lo, hi)
// of one job for each of B rows of x [B][in] in one MatMatRows call, which
// walks the rows in groups small enough for its buffers to stay in L1 and
// dequantizes each block of weights once for all B rows (every value
// MatVecRows' for that row: what a lone decode step gets).
// tabs and sc are the worker's row tables and MatMat scratch (reused: a
// batched step allocates nothing; sc nil: MatMat's pool).
func rowsQuant(j linJob, x []float32, B, lo, hi int, tabs *[2][][]float32, sc *quant.Scratch) {
	w, rows, in := j.w, j.w.Rows, j.w.Cols
	if cap(tabs[0]) < B {
		tabs[0], tabs[1] = make([][]float32, B), make([][]float32, B)
	}
	xs, outs := tabs[0][:B], tabs[1][:B]
	for s := range B {
		xs[s] = x[s*in : (s+1)*in]
		outs[s] = j.out[s*rows+lo : s*rows+hi]
	}
	w.Q.MatMatRowsWith(sc, outs, xs, lo, hi)
	if j.bias != nil {
		for _, out := range outs {
			addVec(out, j.bias[lo:hi])
		}
	}
}

// packQuantPanel is packPanel for a block matrix: outputs o0..o0+n−1 as an
// [in][nr] panel (columns past n zero). It dequantizes the panel's rows
// one stripe of quant.QK_K inputs at a time into a small buffer (n rows of
// 256 values: L1-sized), one Dequantize call a row and stripe, then writes
// the stripe's panel rows in order, nr values each; no row or matrix is
// ever widened whole. (It dequantized one block at a time and scattered
// each value with a stride of nr floats: 85% of a 16-token Q8_0 prefill.)
func packQuantPanel(bp []float32, w *Mat, o0, n, nr int) {
	in, q := w.Cols, w.Q
	t := q.Type
	bn, bb := t.BlockSize(), t.BlockBytes()
	const step = quant.QK_K // a multiple of every block size
	sp := stripePool.Get().(*[]float32)
	if cap(*sp) < nr*step {
		*sp = make([]float32, nr*step)
	}
	buf := (*sp)[:nr*step]
	for c := 0; c < in; c += step {
		k := min(step, in-c)
		for j := 0; j < n; j++ {
			row := q.Data[(o0+j)*q.RowBytes : (o0+j+1)*q.RowBytes]
			if err := quant.Dequantize(t, buf[j*step:j*step+k], row[c/bn*bb:(c+k)/bn*bb]); err != nil {
				panic(err.Error())
			}
		}
		for i := 0; i < k; i++ {
			d := bp[(c+i)*nr : (c+i+1)*nr]
			for j := range d[:n] {
				d[j] = buf[j*step+i]
			}
			clear(d[n:])
		}
	}
	stripePool.Put(sp)
}

// stripePool holds packQuantPanel's stripe buffers (nr·QK_K values).
var stripePool = sync.Pool{New: func() any { return new([]float32) }}

// quantBatchRowBytes is a block matrix's bytes per row, for batchBlock.
func quantBatchRowBytes(w *Mat) int { return w.Q.RowBytes }

// quantizeMat returns m's values in block type d, [out][in]: quant.Quantize
// over each row (ggml's reference quantizer, as llama-quantize writes
// Q8_0 and Q4_0). ok is false when the rows are not a whole number of
// blocks; m is then kept as it is.
func quantizeMat(m *Mat, d DType) (Mat, bool, error) {
	if m.Empty() {
		return Mat{}, true, nil
	}
	t := quantTypes[d]
	rb, err := t.RowBytes(m.Cols)
	if err != nil {
		return *m, false, nil
	}
	data := make([]byte, m.Rows*rb)
	row := make([]float32, m.Cols)
	for o := 0; o < m.Rows; o++ {
		if err := quant.Quantize(t, data[o*rb:(o+1)*rb], m.Row(o, row)); err != nil {
			return Mat{}, false, err
		}
	}
	q, err := quant.NewMatrix(t, data, m.Rows, m.Cols)
	if err != nil {
		return Mat{}, false, err
	}
	out, err := QuantMat(q)
	return out, err == nil, err
}

// Quantized returns the model with its weight matrices (embedding, head,
// every layer's projections) quantized to d (Q8_0, Q4_0 or Q4_K: the types
// quant.Quantize writes) at load, as llama.cpp's quantizer writes them;
// norms, biases and GPT-2's position table stay float32. A matrix whose
// rows are not a whole number of d's blocks stays as it is, except that
// for Q4_K (256-value super-blocks) such a matrix is Q8_0 when its rows
// are whole 32-value blocks (llama-quantize falls back to a 32-value type
// the same way). The result keeps m's weights as Original; m is not changed.
func (m *Model) Quantized(d DType) (*Model, error) {
	if d != Q8_0 && d != Q4_0 && d != Q4_K {
		return nil, fmt.Errorf("quantizing to %s is not supported (q8_0, q4_0 and q4_k are)", d)
	}
	var err error
	w := m.Weights.mapMats(func(x *Mat) Mat {
		if err != nil || x.DType == d {
			return *x
		}
		q, ok, e := quantizeMat(x, d)
		if !ok && e == nil && d == Q4_K && x.DType != Q8_0 {
			q, ok, e = quantizeMat(x, Q8_0)
		}
		if e != nil {
			err = e
		}
		if !ok {
			return *x
		}
		return q
	})
	if err != nil {
		return nil, fmt.Errorf("quantize %s to %s: %w", m.Name, d, err)
	}
	orig := m.Original
	if orig == nil {
		orig = &m.Weights
	}
	return &Model{Name: m.Name, Source: m.Source, Config: m.Config, Weights: w, Tokenizer: m.Tokenizer, GGUF: m.GGUF, Original: orig}, nil
}
