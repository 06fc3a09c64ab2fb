package engine

// bf16_test.go: BF16 weights: the kernels are exact on the rounded values, and the tolerance against the fp32 torch goldens.

import (
	"math"
	"path/filepath"
	"testing"
)

// TestBF16Weights converts every reference model to BF16 and checks:
//   - the BF16 kernels compute exactly what float32 kernels compute on the
//     same rounded weights (widened back to float32): logits within 1e-5;
//   - against the torch goldens (computed from the original weights) the
//     logits move by no more than bf16's rounding allows: relative step
//     2^-9 per weight, which on these models moves logits by ≤ 1.3% of the
//     largest logit magnitude: the test allows 2.5% and logs the figure.
func TestBF16Weights(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			seq := g.Sequences[len(g.Sequences)-1]
			logitsOf := func(w Weights) []float32 {
				mm := &Model{Config: m.Config, Weights: w}
				st := NewState(m.Config)
				kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
				out, err := mm.ForwardAll(st, kv, seq.IDs, nil)
				if err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), out...)
			}
			bf := m.Weights.toBF16()
			if bf.DType() != BF16 || bf.Bytes() >= m.Weights.Bytes() && m.Weights.DType() == F32 {
				t.Fatalf("toBF16: dtype %s, %d bytes (was %d)", bf.DType(), bf.Bytes(), m.Weights.Bytes())
			}
			widened := bf.toF32()
			got, exact := logitsOf(bf), logitsOf(widened)
			var dExact, dTorch, top float64
			for i := range got {
				dExact = max(dExact, math.Abs(float64(got[i]-exact[i])))
			}
			V := m.Config.VocabSize
			for p, want := range seq.Logits {
				for i, w := range want {
					dTorch = max(dTorch, math.Abs(float64(got[p*V+i])-w))
					top = max(top, math.Abs(w))
				}
			}
			t.Logf("bf16 vs f32 kernels on the same rounded weights %.3g; bf16 vs torch fp32 %.3g (largest |logit| %.3g)", dExact, dTorch, top)
			if dExact > 1e-5 {
				t.Errorf("bf16 kernels vs f32 kernels on the same weights: %.3g, want ≤ 1e-5", dExact)
			}
			if dTorch > 0.025*top {
				t.Errorf("bf16 vs torch fp32: %.3g, want ≤ 2.5%% of the largest logit (%.3g)", dTorch, 0.025*top)
			}
		})
	}
}
