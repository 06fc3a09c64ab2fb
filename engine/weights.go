package engine

// weights.go: the weights: Mat (one weight matrix, F32 or BF16, either layout), per-layer
// parameters, checksum, parameter count, conversion to BF16.

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"unsafe"

	"github.com/inferscope/inferscope/engine/quant"
)

// DType is how a weight matrix stores its values.
type DType uint8

const (
	F32  DType = iota // IEEE float32
	BF16              // bfloat16: the top 16 bits of a float32 (widened in registers)
	// F16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K (quantized.go) are ggml blocks in Mat.Q.
)

func (d DType) String() string {
	switch d {
	case F32:
		return "f32"
	case BF16:
		return "bf16"
	}
	return quantDTypeName(d) // quantized.go
}

// Size is the bytes per value of F32 and BF16 (a block type's values take
// a fraction of a byte or more: see Mat.Bytes).
func (d DType) Size() int {
	if d == BF16 {
		return 2
	}
	return 4
}

// Mat is a weight matrix used as y = W·x: Rows outputs × Cols inputs.
//
// Values are row-major [Rows][Cols] ([out][in], PyTorch's nn.Linear), or,
// with InOut, [Cols][Rows] ([in][out], GPT-2's Conv1D, used as stored: the
// kernels read either layout, so no transposed copy is made). Ld is the
// stride between stored rows; Off is the first column, so a Mat can be a
// view of some columns of a wider [in][out] matrix (GPT-2's fused c_attn
// gives Wq, Wk and Wv this way). Exactly one of F32 and BF16 holds the
// data, often a view of a memory-mapped file: never write to it.
//
// A block-quantized matrix (F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K: ggml's
// formats) holds its bytes in Q instead, [out][in] (Ld = Cols, Off = 0);
// quantized.go has the code that reads it.
type Mat struct {
	Rows, Cols int
	DType      DType
	InOut      bool
	Ld, Off    int
	F32        []float32
	BF16       []uint16
	Q          *quant.Matrix
}

// NewMat wraps row-major [rows][cols] float32 data.
func NewMat(data []float32, rows, cols int) Mat {
	return Mat{Rows: rows, Cols: cols, Ld: cols, F32: data}
}

// Len is the number of values (Rows × Cols).
func (m *Mat) Len() int { return m.Rows * m.Cols }

// Empty reports whether the matrix holds nothing (an absent weight).
func (m *Mat) Empty() bool { return m.Rows == 0 || m.Cols == 0 }

// Bytes is the storage this matrix's values take.
func (m *Mat) Bytes() int64 {
	if m.Q != nil {
		return m.Q.Bytes()
	}
	return int64(m.Len()) * int64(m.DType.Size())
}

// At is W[o][i].
func (m *Mat) At(o, i int) float32 {
	if m.Q != nil {
		return m.quantAt(o, i)
	}
	idx := o*m.Ld + m.Off + i
	if m.InOut {
		idx = i*m.Ld + m.Off + o
	}
	if m.DType == BF16 {
		return bf16ToF32(m.BF16[idx])
	}
	return m.F32[idx]
}

// Row returns row r (an [out][in] matrix's r-th output, e.g. one token's
// embedding) as float32: a view when stored as F32, else widened into dst
// (which must hold Cols values).
func (m *Mat) Row(r int, dst []float32) []float32 {
	if !m.InOut && m.DType == F32 {
		s := r*m.Ld + m.Off
		return m.F32[s : s+m.Cols : s+m.Cols]
	}
	dst = dst[:m.Cols]
	if m.Q != nil {
		m.Q.Row(r, dst)
		return dst
	}
	for i := range dst {
		dst[i] = m.At(r, i)
	}
	return dst
}

// Dense returns the values as row-major [Rows][Cols] float32: the stored
// slice when it already is, else a converted copy.
func (m *Mat) Dense() []float32 {
	if m.Empty() {
		return nil
	}
	if !m.InOut && m.DType == F32 && m.Ld == m.Cols {
		return m.F32[m.Off : m.Off+m.Len()]
	}
	out := make([]float32, m.Len())
	for o := 0; o < m.Rows; o++ {
		dst := out[o*m.Cols : (o+1)*m.Cols]
		if r := m.Row(o, dst); &r[0] != &dst[0] {
			copy(dst, r)
		}
	}
	return out
}

// same reports whether two matrices share storage (a tied head).
func (m *Mat) same(o *Mat) bool {
	if m.DType != o.DType || m.Empty() || o.Empty() || m.Off != o.Off {
		return false
	}
	if m.Q != nil || o.Q != nil {
		return m.Q != nil && o.Q != nil && &m.Q.Data[0] == &o.Q.Data[0]
	}
	if m.DType == BF16 {
		return &m.BF16[0] == &o.BF16[0]
	}
	return &m.F32[0] == &o.F32[0]
}

// hashTo feeds the values in storage order (one stored row at a time) to h.
func (m *Mat) hashTo(h hash.Hash) {
	if m.Empty() {
		return
	}
	if m.Q != nil {
		h.Write(m.Q.Data)
		return
	}
	n, w := m.Rows, m.Cols // stored rows × width
	if m.InOut {
		n, w = m.Cols, m.Rows
	}
	for r := 0; r < n; r++ {
		s := r*m.Ld + m.Off
		if m.DType == BF16 {
			hashU16(h, m.BF16[s:s+w])
		} else {
			hashF32(h, m.F32[s:s+w])
		}
	}
}

func hashF32(h hash.Hash, s []float32) {
	if len(s) == 0 {
		return
	}
	if littleEndian {
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)))
		return
	}
	buf := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	h.Write(buf)
}

func hashU16(h hash.Hash, s []uint16) {
	if len(s) == 0 {
		return
	}
	if littleEndian {
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s)))
		return
	}
	buf := make([]byte, 2*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint16(buf[2*i:], v)
	}
	h.Write(buf)
}

// littleEndian is true on the machines where file bytes can be used as
// float32/uint16 values in place.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// LayerWeights are one Transformer block's parameters. Matrices are Mats
// (y = W·x); vectors are float32. Bias and norm-bias slices are nil where the
// family has none (Llama); WGate is empty for GPT-2.
type LayerWeights struct {
	AttnNorm, AttnNormBias []float32 // [dim]
	Wq                     Mat       // [n_heads*head_dim] × [dim]
	Bq                     []float32 // [n_heads*head_dim]
	Wk                     Mat       // [kv_dim] × [dim]
	Bk                     []float32 // [kv_dim]
	Wv                     Mat       // [kv_dim] × [dim]
	Bv                     []float32 // [kv_dim]
	Wo                     Mat       // [dim] × [n_heads*head_dim]
	Bo                     []float32 // [dim]
	MLPNorm, MLPNormBias   []float32 // [dim]
	WGate                  Mat       // [hidden] × [dim]  Llama W1 (SiLU branch); empty for GPT-2
	WUp                    Mat       // [hidden] × [dim]  Llama W3; GPT-2 c_fc
	BUp                    []float32 // [hidden]
	WDown                  Mat       // [dim] × [hidden]  Llama W2; GPT-2 mlp.c_proj
	BDown                  []float32 // [dim]
	QNorm, KNorm           []float32 // [head_dim] per-head q/k RMSNorm gains (Qwen 3, Gemma 3); nil for others
	PostAttnNorm           []float32 // [dim] norm of the attention output before the residual add (Gemma)
	PostMLPNorm            []float32 // [dim] norm of the MLP output before the residual add (Gemma)
}

func (l *LayerWeights) mats() []*Mat {
	return []*Mat{&l.Wq, &l.Wk, &l.Wv, &l.Wo, &l.WGate, &l.WUp, &l.WDown}
}

func (l *LayerWeights) vecs() [][]float32 {
	return [][]float32{l.AttnNorm, l.AttnNormBias, l.Bq, l.Bk, l.Bv, l.Bo, l.MLPNorm, l.MLPNormBias, l.BUp, l.BDown,
		l.QNorm, l.KNorm, l.PostAttnNorm, l.PostMLPNorm}
}

// Weights are a model's parameters. They are never written after load and
// are shared by every Session.
type Weights struct {
	TokenEmbed               Mat       // [vocab] × [dim]
	PosEmbed                 []float32 // [seq_len][dim] (GPT-2 only)
	Layers                   []LayerWeights
	FinalNorm, FinalNormBias []float32 // [dim]
	Head                     Mat       // [vocab] × [dim]; shares TokenEmbed's storage when tied
}

// DType is the storage type of the layer matrices (F32 or BF16, or a
// block type; where they mix types, as a quantized GGUF file's do, the one
// that holds the most of their bytes).
func (w *Weights) DType() DType {
	if len(w.Layers) == 0 {
		return w.TokenEmbed.DType
	}
	bytes := map[DType]int64{}
	best := w.Layers[0].Wq.DType
	for i := range w.Layers {
		for _, m := range w.Layers[i].mats() {
			bytes[m.DType] += m.Bytes()
			if bytes[m.DType] > bytes[best] {
				best = m.DType
			}
		}
	}
	return best
}

// Checksum is a SHA-256 over every parameter as stored, in a fixed order:
// the app shows it before and after a run to prove that inference never
// changes weights.
func (w *Weights) Checksum() [32]byte {
	h := sha256.New()
	w.TokenEmbed.hashTo(h)
	hashF32(h, w.PosEmbed)
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, v := range l.vecs() {
			hashF32(h, v)
		}
		for _, m := range l.mats() {
			m.hashTo(h)
		}
	}
	hashF32(h, w.FinalNorm)
	hashF32(h, w.FinalNormBias)
	w.Head.hashTo(h)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// NumParams counts distinct parameters (a tied head is counted once).
func (w *Weights) NumParams() int64 {
	p, _ := w.count()
	return p
}

// Bytes is the memory the parameters occupy as stored (2 bytes per BF16
// value, 4 per float32, a block type's bytes).
func (w *Weights) Bytes() int64 {
	_, b := w.count()
	return b
}

func (w *Weights) count() (params, bytes int64) {
	vec := func(s []float32) { params += int64(len(s)); bytes += 4 * int64(len(s)) }
	mat := func(m *Mat) { params += int64(m.Len()); bytes += m.Bytes() }
	mat(&w.TokenEmbed)
	vec(w.PosEmbed)
	vec(w.FinalNorm)
	vec(w.FinalNormBias)
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, v := range l.vecs() {
			vec(v)
		}
		for _, m := range l.mats() {
			mat(m)
		}
	}
	if !w.Head.same(&w.TokenEmbed) {
		mat(&w.Head)
	}
	return params, bytes
}

// toBF16 returns m rounded to bfloat16, stored [out][in] (an [in][out]
// matrix is transposed on the way, since a fresh array is written anyway).
func (m *Mat) toBF16() Mat {
	if m.Empty() {
		return Mat{}
	}
	out := make([]uint16, m.Len())
	if !m.InOut && m.DType == F32 {
		for o := 0; o < m.Rows; o++ {
			src := m.F32[o*m.Ld+m.Off : o*m.Ld+m.Off+m.Cols]
			dst := out[o*m.Cols : (o+1)*m.Cols]
			for i, v := range src {
				dst[i] = f32ToBF16(v)
			}
		}
	} else {
		row := make([]float32, m.Cols)
		for o := 0; o < m.Rows; o++ {
			for i, v := range m.Row(o, row) {
				out[o*m.Cols+i] = f32ToBF16(v)
			}
		}
	}
	return Mat{Rows: m.Rows, Cols: m.Cols, DType: BF16, Ld: m.Cols, BF16: out}
}

// toBF16 returns a copy of the weights whose matrices (embedding, head and
// every layer's projections) are rounded to bfloat16: half the bytes per
// decode step. Vectors (norms, biases, GPT-2's position table) stay float32.
// Matrices already in BF16 are shared, not copied.
func (w *Weights) toBF16() Weights {
	return w.mapMats(func(m *Mat) Mat {
		if m.DType == BF16 && !m.InOut {
			return *m
		}
		return m.toBF16()
	})
}

// toF32 returns a copy of the weights with every BF16 matrix widened to
// float32 ([out][in]); F32 matrices are shared.
func (w *Weights) toF32() Weights {
	return w.mapMats(func(m *Mat) Mat {
		if m.DType == F32 {
			return *m
		}
		return NewMat(m.Dense(), m.Rows, m.Cols)
	})
}

// mapMats returns a copy of w with every matrix replaced by conv(matrix); a
// tied head stays tied. Views of one fused matrix (GPT-2's c_attn) are
// converted one by one.
func (w *Weights) mapMats(conv func(*Mat) Mat) Weights {
	out := *w
	out.TokenEmbed = conv(&w.TokenEmbed)
	if w.Head.same(&w.TokenEmbed) {
		out.Head = out.TokenEmbed
	} else {
		out.Head = conv(&w.Head)
	}
	out.Layers = make([]LayerWeights, len(w.Layers))
	for i := range w.Layers {
		l := w.Layers[i]
		for _, m := range l.mats() {
			*m = conv(m)
		}
		out.Layers[i] = l
	}
	return out
}
