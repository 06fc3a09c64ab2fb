package engine

// weightblock_test.go: WeightBlock shows a block's stored numbers, the
// engine's dequantized values and, quantized at load, the originals and
// errors; ByType's bytes per parameter add up to the model's.

import (
	"math"
	"strings"
	"testing"
)

func q4kModel(t *testing.T) (base, m *Model) {
	t.Helper()
	c := Config{Arch: ArchLlama, Dim: 256, HiddenDim: 352, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 64,
		VocabSize: 300, SeqLen: 64, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, TiedHead: true, BOS: 1, EOS: 2}
	base, err := RandomModel("q4k", c, 3)
	if err != nil {
		t.Fatal(err)
	}
	return base, base.WithWeights(Q4_K)
}

func TestWeightBlock(t *testing.T) {
	base, m := q4kModel(t)
	for _, r := range []WeightBlockRequest{{Matrix: "wq", Layer: 1, Row: 7, Block: 0}, {Matrix: "down", Layer: 0, Row: 255, Block: 10}, {Matrix: "embed", Row: 299, Block: 0}} {
		b, err := m.WeightBlock(r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		w, _ := weightMat(&m.Weights, r.Matrix, r.Layer)
		o, _ := weightMat(&base.Weights, r.Matrix, r.Layer)
		n := w.Q.Type.BlockSize()
		if b.Type != w.Q.Type.String() || len(b.Values) != n || len(b.Quants) != n || b.FirstCol != r.Block*n || b.Blocks != w.Cols/n {
			t.Fatalf("%+v: %s, %d values, %d quants, first col %d, %d blocks", r, b.Type, len(b.Values), len(b.Quants), b.FirstCol, b.Blocks)
		}
		row := make([]float32, w.Cols)
		w.Q.Row(r.Row, row)
		orig := o.Row(r.Row, make([]float32, o.Cols))
		var maxErr float64
		for i := range n {
			c := b.FirstCol + i
			if b.Values[i] != row[c] || b.Original[i] != orig[c] || b.Error[i] != orig[c]-row[c] {
				t.Fatalf("%+v value %d: %g / %g / %g, want %g / %g / %g", r, i, b.Values[i], b.Original[i], b.Error[i], row[c], orig[c], orig[c]-row[c])
			}
			maxErr = max(maxErr, math.Abs(float64(b.Error[i])))
		}
		if b.MaxAbsError != maxErr || b.RMSError <= 0 || b.RMSError > b.RMSOriginal/4 || b.OriginalNote != "" {
			t.Errorf("%+v: max error %g (want %g), rms %g of %g, note %q", r, b.MaxAbsError, maxErr, b.RMSError, b.RMSOriginal, b.OriginalNote)
		}
		if (b.Type == "Q4_K") != (len(b.SubScales) == 8 && len(b.SubMins) == 8 && b.SubSize == 32) {
			t.Errorf("%+v: %s with %d sub-block scales", r, b.Type, len(b.SubScales))
		}
	}
	// loaded already quantized: no originals, said plainly
	file := &Model{Name: m.Name, Config: m.Config, Weights: m.Weights, Tokenizer: m.Tokenizer}
	b, err := file.WeightBlock(WeightBlockRequest{Matrix: "wk", Layer: 0, Row: 0, Block: 0})
	if err != nil || b.Original != nil || b.Error != nil || !strings.Contains(b.OriginalNote, "not known") {
		t.Errorf("without originals: %v, %v, %q", err, b.Original, b.OriginalNote)
	}
	for _, c := range []struct {
		m    *Model
		r    WeightBlockRequest
		want string
	}{
		{m, WeightBlockRequest{Matrix: "wz"}, "allowed: embed, wq, wk, wv, wo, gate, up, down, head"},
		{m, WeightBlockRequest{Matrix: "wq", Layer: 2}, "allowed 0 to 1"},
		{m, WeightBlockRequest{Matrix: "wq", Row: 256}, "rows 0 to 255"},
		{m, WeightBlockRequest{Matrix: "wq", Block: 1}, "blocks 0 to 0"},
		{m, WeightBlockRequest{Matrix: "down", Row: -1}, "rows 0 to 255"},
		{base, WeightBlockRequest{Matrix: "wq"}, "stored as f32"},
	} {
		if _, err := c.m.WeightBlock(c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.r, err, c.want)
		}
	}
}

func TestWeightsByType(t *testing.T) {
	base, m := q4kModel(t)
	for _, c := range []struct {
		m    *Model
		want map[string]float64
	}{
		{base, map[string]float64{"f32": 4}},
		{base.WithWeights(BF16), map[string]float64{"bf16": 2, "f32": 4}},
		{base.WithWeights(Q8_0), map[string]float64{"q8_0": 34.0 / 32, "f32": 4}},
		{m, map[string]float64{"q4_k": 144.0 / 256, "q8_0": 34.0 / 32, "f32": 4}},
	} {
		bt := c.m.Weights.ByType()
		var p, b int64
		for _, x := range bt {
			p += x.Params
			b += x.Bytes
			if want, ok := c.want[x.Type]; !ok || x.BytesPerParam != want || x.Tensors == 0 {
				t.Errorf("%s: %+v, want %v bytes per parameter", c.m.Precision(), x, c.want[x.Type])
			}
		}
		if len(bt) != len(c.want) || p != c.m.Weights.NumParams() || b != c.m.Weights.Bytes() {
			t.Errorf("%s: %+v do not add up to %d parameters, %d bytes", c.m.Precision(), bt, c.m.Weights.NumParams(), c.m.Weights.Bytes())
		}
	}
}
