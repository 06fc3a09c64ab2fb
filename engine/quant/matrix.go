package quant

import "fmt"

// Matrix is a rows×cols weight matrix of one type, stored row after row
// (ggml's layout: a GGUF tensor with dims [cols, rows]); the data is used
// in place (a memory-mapped file's bytes, say).
type Matrix struct {
	Type       Type
	Rows, Cols int
	RowBytes   int    // bytes per row
	Data       []byte // Rows·RowBytes bytes
}

// NewMatrix checks that data holds exactly rows rows of cols values of
// type t and wraps it.
func NewMatrix(t Type, data []byte, rows, cols int) (*Matrix, error) {
	rb, err := t.RowBytes(cols)
	if err != nil {
		return nil, err
	}
	if rows <= 0 || rows > maxInt/rb || len(data) != rows*rb {
		return nil, fmt.Errorf("quant: a %d×%d %s matrix takes %d×%d bytes, not %d", rows, cols, t, rows, rb, len(data))
	}
	return &Matrix{Type: t, Rows: rows, Cols: cols, RowBytes: rb, Data: data}, nil
}

// MatVec is out[r] = Σ_c W[r][c]·x[c] for every row.
func (m *Matrix) MatVec(out, x []float32) { MatVec(m.Type, out, m.Data, x, m.Rows, m.Cols) }

// MatVecRows is MatVec over rows lo..hi−1 only, into out[0:hi−lo] (one
// worker's share when the rows are split across threads).
func (m *Matrix) MatVecRows(out, x []float32, lo, hi int) {
	if lo < 0 || hi < lo || hi > m.Rows {
		panic(fmt.Sprintf("quant: rows %d..%d of %d", lo, hi, m.Rows))
	}
	MatVec(m.Type, out, m.Data[lo*m.RowBytes:hi*m.RowBytes], x, hi-lo, m.Cols)
}

// MatMat is MatVec for several inputs at once, each weight block read once:
// outs[i][r] = Σ_c W[r][c]·xs[i][c], each equal to MatVec's bit for bit.
func (m *Matrix) MatMat(outs, xs [][]float32) { MatMat(m.Type, outs, m.Data, xs, m.Rows, m.Cols) }

// MatMatRows is MatMat over rows lo..hi−1 only, into outs[i][0:hi−lo].
func (m *Matrix) MatMatRows(outs, xs [][]float32, lo, hi int) {
	m.MatMatRowsWith(nil, outs, xs, lo, hi)
}

// MatMatRowsWith is MatMatRows with the caller's scratch (see Scratch; nil:
// one from a pool, as MatMatRows).
func (m *Matrix) MatMatRowsWith(sc *Scratch, outs, xs [][]float32, lo, hi int) {
	if lo < 0 || hi < lo || hi > m.Rows {
		panic(fmt.Sprintf("quant: rows %d..%d of %d", lo, hi, m.Rows))
	}
	matMat(m.Type, outs, m.Data[lo*m.RowBytes:hi*m.RowBytes], xs, hi-lo, m.Cols, sc)
}

// Row dequantizes row r into dst[0:Cols].
func (m *Matrix) Row(r int, dst []float32) {
	if r < 0 || r >= m.Rows || len(dst) < m.Cols {
		panic(fmt.Sprintf("quant: row %d of %d into %d values", r, m.Rows, len(dst)))
	}
	if err := Dequantize(m.Type, dst[:m.Cols], m.Data[r*m.RowBytes:(r+1)*m.RowBytes]); err != nil {
		panic(err.Error())
	}
}

// Bytes is the size of the stored weights.
func (m *Matrix) Bytes() int64 { return int64(m.Rows) * int64(m.RowBytes) }
