package engine

// inout_bench_test.go: decode and 32-sequence batched decode of the gpt2-124M shape with the
// layers' matrices in GPT-2's real checkpoint layout ([in][out], c_attn fused) and in [out][in].

import (
	"fmt"
	"testing"

	"github.com/inferscope/inferscope/internal/cputime"
)

// realLayout returns m with every layer's matrices stored as a GPT-2
// checkpoint stores them: [in][out], q, k and v as views of one fused
// c_attn [dim][3·dim] (what the HF loader makes of the files).
func realLayout(m *Model) *Model {
	w := m.Weights
	w.Layers = make([]LayerWeights, len(m.Weights.Layers))
	for i, l := range m.Weights.Layers {
		d, q, kv := l.Wq.Cols, l.Wq.Rows, l.Wk.Rows
		ld := q + 2*kv
		fused := make([]float32, d*ld)
		for off, src := range map[int]*Mat{0: &l.Wq, q: &l.Wk, q + kv: &l.Wv} {
			for o := 0; o < src.Rows; o++ {
				for c := 0; c < d; c++ {
					fused[c*ld+off+o] = src.At(o, c)
				}
			}
		}
		l.Wq = Mat{Rows: q, Cols: d, InOut: true, Ld: ld, Off: 0, F32: fused}
		l.Wk = Mat{Rows: kv, Cols: d, InOut: true, Ld: ld, Off: q, F32: fused}
		l.Wv = Mat{Rows: kv, Cols: d, InOut: true, Ld: ld, Off: q + kv, F32: fused}
		l.Wo, l.WUp, l.WDown = inOutMat(&l.Wo), inOutMat(&l.WUp), inOutMat(&l.WDown)
		w.Layers[i] = l
	}
	return &Model{Config: m.Config, Weights: w}
}

func inOutMat(m *Mat) Mat {
	d := m.Dense()
	t := make([]float32, len(d))
	for o := 0; o < m.Rows; o++ {
		for i := 0; i < m.Cols; i++ {
			t[i*m.Rows+o] = d[o*m.Cols+i]
		}
	}
	return Mat{Rows: m.Rows, Cols: m.Cols, InOut: true, Ld: m.Rows, F32: t}
}

// BenchmarkDecodeLayouts: gpt2-124M F32 decode of one sequence (tok/s,
// and the weight bytes per step as B/s) and of 32 sequences batched
// (aggregate tok/s), with the layers [in][out] (real) and [out][in]
// (synthetic). cpu-ms/op is the process's CPU time per op.
func BenchmarkDecodeLayouts(b *testing.B) {
	m0, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, layout := range []string{"real", "synthetic"} {
		m := m0
		if layout == "real" {
			m = realLayout(m0)
		}
		for _, n := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/batch-%d", layout, n), func(b *testing.B) {
				var seqs []*BatchSeq
				for i := 0; i < n; i++ {
					kv, _ := NewKVCache(m.Config, 1024)
					st := NewState(m.Config)
					m.Forward(st, kv, []int{1, 2, 3, 4, 5, 6, 7, 8}, nil)
					seqs = append(seqs, &BatchSeq{State: st, KV: kv, Token: 9})
				}
				bs := NewBatchState(m.Config, n)
				if n == 1 {
					b.SetBytes(m.Weights.Bytes())
				}
				c0 := cputime.Process()
				for b.Loop() {
					for _, s := range seqs {
						if s.KV.Len+1 > s.KV.Cap {
							s.KV.Len = 8
						}
					}
					if n == 1 {
						s := seqs[0]
						m.Forward(s.State, s.KV, []int{s.Token}, nil)
					} else {
						m.ForwardBatch(bs, seqs)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
				b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
