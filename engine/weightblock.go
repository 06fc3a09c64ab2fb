package engine

// weightblock.go: one stored block of a quantized weight matrix, taken
// apart for the model view: its stored integers, scale(s) and sub-block
// scales and mins (quant.Unpack), the float values they stand for (the
// engine's own dequantization), and, for a model quantized at load, the
// original float weights and the error of each value.

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferscope/inferscope/engine/quant"
)

// WeightMatrices are the matrix names a WeightBlockRequest takes: the
// embedding table, the unembedding (head) and each layer's projections.
var WeightMatrices = []string{"embed", "wq", "wk", "wv", "wo", "gate", "up", "down", "head"}

// WeightBlockRequest names one block: a matrix, its layer (projections
// only), an output row and the block's index along the row.
type WeightBlockRequest struct {
	Matrix string `json:"matrix"`
	Layer  int    `json:"layer"`
	Row    int    `json:"row"`
	Block  int    `json:"block"`
}

// WeightBlock is the answer: where the block sits, how it is stored and
// the values it stands for. Original and Error (original − dequantized)
// are set only when the float weights are known (quantized at load);
// otherwise OriginalNote says why they are not shown.
type WeightBlock struct {
	WeightBlockRequest
	MatrixRows    int       `json:"rows"`
	MatrixCols    int       `json:"cols"`
	Blocks        int       `json:"blocks"` // blocks per row
	Type          string    `json:"type"`   // ggml's name: "Q4_K"
	BlockSize     int       `json:"block_size"`
	BlockBytes    int       `json:"block_bytes"`
	BitsPerValue  float64   `json:"bits_per_value"`
	FirstCol      int       `json:"first_col"` // the column of the block's first value
	Formula       string    `json:"formula"`
	Quants        []int     `json:"quants"`
	Offset        int       `json:"offset"`
	D             float32   `json:"d"`
	DMin          float32   `json:"dmin,omitempty"`
	SubSize       int       `json:"sub_size,omitempty"`
	SubScales     []int     `json:"sub_scales,omitempty"`
	SubMins       []int     `json:"sub_mins,omitempty"`
	Values        []float32 `json:"values"`
	Original      []float32 `json:"original,omitempty"`
	Error         []float32 `json:"error,omitempty"`
	MaxAbsError   float64   `json:"max_abs_error,omitempty"`
	RMSError      float64   `json:"rms_error,omitempty"`
	RMSOriginal   float64   `json:"rms_original,omitempty"`
	OriginalNote  string    `json:"original_note,omitempty"`
	OriginalDType string    `json:"original_dtype,omitempty"`
}

// weightMat finds a named matrix of w.
func weightMat(w *Weights, name string, layer int) (*Mat, error) {
	switch name {
	case "embed":
		return &w.TokenEmbed, nil
	case "head":
		return &w.Head, nil
	}
	if layer < 0 || layer >= len(w.Layers) {
		return nil, fmt.Errorf("layer %d out of range: allowed 0 to %d", layer, len(w.Layers)-1)
	}
	l := &w.Layers[layer]
	switch name {
	case "wq":
		return &l.Wq, nil
	case "wk":
		return &l.Wk, nil
	case "wv":
		return &l.Wv, nil
	case "wo":
		return &l.Wo, nil
	case "gate":
		return &l.WGate, nil
	case "up":
		return &l.WUp, nil
	case "down":
		return &l.WDown, nil
	}
	return nil, fmt.Errorf("unknown matrix %q (allowed: %s)", name, strings.Join(WeightMatrices, ", "))
}

// WeightBlock takes apart one block of a block-quantized matrix. It fails,
// saying what is allowed, for an unknown matrix, a layer, row or block out
// of range, or a matrix stored as plain floats (F32, BF16, F16).
func (m *Model) WeightBlock(r WeightBlockRequest) (*WeightBlock, error) {
	w, err := weightMat(&m.Weights, r.Matrix, r.Layer)
	if err != nil {
		return nil, err
	}
	if w.Empty() {
		return nil, fmt.Errorf("this model has no %s matrix (%s uses a different MLP)", r.Matrix, m.Config.Arch)
	}
	if w.Q == nil || w.Q.Type.BlockSize() == 1 {
		return nil, fmt.Errorf("%s is stored as %s: one number per value, no blocks to show (quantized types: Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)", r.Matrix, w.DType)
	}
	t := w.Q.Type
	n, bb := t.BlockSize(), t.BlockBytes()
	nb := w.Cols / n
	if r.Row < 0 || r.Row >= w.Rows {
		return nil, fmt.Errorf("row %d out of range: %s has rows 0 to %d", r.Row, r.Matrix, w.Rows-1)
	}
	if r.Block < 0 || r.Block >= nb {
		return nil, fmt.Errorf("block %d out of range: a row of %s has blocks 0 to %d (%d values each)", r.Block, r.Matrix, nb-1, n)
	}
	off := r.Row*w.Q.RowBytes + r.Block*bb
	raw := w.Q.Data[off : off+bb]
	u, err := quant.Unpack(t, raw)
	if err != nil {
		return nil, err
	}
	vals := make([]float32, n)
	if err := quant.Dequantize(t, vals, raw); err != nil {
		return nil, err
	}
	out := &WeightBlock{WeightBlockRequest: r, MatrixRows: w.Rows, MatrixCols: w.Cols, Blocks: nb, Type: t.String(), BlockSize: n, BlockBytes: bb,
		BitsPerValue: u.Bits, FirstCol: r.Block * n, Formula: u.Formula, Quants: u.Q, Offset: u.Offset, D: u.D, DMin: u.DMin,
		SubSize: u.SubSize, SubScales: u.SubScales, SubMins: u.SubMins, Values: vals}
	if r.Matrix == "embed" || r.Matrix == "head" {
		out.Layer = 0
	}
	if m.Original == nil {
		out.OriginalNote = "The original float weights are not known: this model was loaded already quantized (" + t.String() + " in its file), so only the stored numbers and the values they stand for can be shown."
		return out, nil
	}
	o, err := weightMat(m.Original, r.Matrix, r.Layer)
	if err != nil || o.Rows != w.Rows || o.Cols != w.Cols {
		out.OriginalNote = "The original weights of this matrix are not known."
		return out, nil
	}
	row := o.Row(r.Row, make([]float32, o.Cols))[r.Block*n : (r.Block+1)*n]
	out.Original, out.Error, out.OriginalDType = append([]float32(nil), row...), make([]float32, n), o.DType.String()
	var se, so float64
	for i, v := range row {
		e := v - vals[i]
		out.Error[i] = e
		out.MaxAbsError = max(out.MaxAbsError, math.Abs(float64(e)))
		se += float64(e) * float64(e)
		so += float64(v) * float64(v)
	}
	out.RMSError, out.RMSOriginal = math.Sqrt(se/float64(n)), math.Sqrt(so/float64(n))
	return out, nil
}
