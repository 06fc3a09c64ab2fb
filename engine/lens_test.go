package engine

// lens_test.go: the logit lens — its last layer equals the model's logits,
// and every layer equals an independent float64 reading of the residual
// (and of PyTorch's residual from the reference goldens).

import (
	"math"
	"path/filepath"
	"testing"
)

// lensRef reads a residual vector the slow way, in float64: the family's
// final norm (RMSNorm or LayerNorm with bias), then every vocabulary row of
// the head.
func lensRef(m *Model, x []float64) []float64 {
	c := m.Config
	w := &m.Weights
	d := c.Dim
	n := make([]float64, d)
	if c.Arch == ArchGPT2 {
		var mean, vr float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(d)
		for _, v := range x {
			vr += (v - mean) * (v - mean)
		}
		vr /= float64(d)
		for i, v := range x {
			n[i] = (v-mean)/math.Sqrt(vr+float64(c.NormEps))*float64(w.FinalNorm[i]) + float64(w.FinalNormBias[i])
		}
	} else {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(d)+float64(c.NormEps))
		for i, v := range x {
			n[i] = v * r * float64(w.FinalNorm[i])
		}
	}
	out := make([]float64, c.VocabSize)
	for v := range out {
		var s float64
		for i := range n {
			s += float64(w.Head.At(v, i)) * n[i]
		}
		out[v] = s
	}
	return out
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestLogitLens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	if len(dirs) == 0 {
		t.Fatal("no reference models in testdata/reference")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			c := m.Config
			seq := g.Sequences[len(g.Sequences)-1]
			st := NewState(c)
			kv, _ := NewKVCache(c, c.SeqLen)
			var hidden [][]float32 // [layer][dim] engine residual of the last position
			var lens [][]float32
			calls := 0
			hooks := &Hooks{
				LayerDone: func(l LayerInfo) { hidden = append(hidden, append([]float32(nil), l.Hidden[len(l.Hidden)-1]...)) },
				Lens: &LogitLens{Done: func(li LensInfo) {
					calls++
					if li.Pos != len(seq.IDs)-2 && li.Pos != len(seq.IDs)-1 {
						t.Errorf("lens read position %d", li.Pos)
					}
					lens = copyRows(li.Logits)
				}},
			}
			// prefill all but the last token, then one decode step: the
			// lens serves both kinds of pass
			if _, err := m.Forward(st, kv, seq.IDs[:len(seq.IDs)-1], hooks); err != nil {
				t.Fatal(err)
			}
			hidden = hidden[:0]
			logits, err := m.Forward(st, kv, seq.IDs[len(seq.IDs)-1:], hooks)
			if err != nil {
				t.Fatal(err)
			}
			if calls != 2 || len(lens) != c.NLayers {
				t.Fatalf("lens called %d times with %d layers, want 2 calls and %d layers", calls, len(lens), c.NLayers)
			}
			// the last layer's reading is the model's output
			var dLast float64
			for v := range logits {
				dLast = max(dLast, math.Abs(float64(lens[c.NLayers-1][v]-logits[v])))
			}
			if dLast > 1e-5 {
				t.Errorf("last layer's lens differs from the logits by %.3g, want ≤ 1e-5", dLast)
			}
			// every layer equals an independent float64 reading of the
			// engine's residual, and of torch's (the goldens' hidden states)
			var dRef, dTorch float64
			last := len(seq.IDs) - 1
			for l := range c.NLayers {
				ref := lensRef(m, f64(hidden[l]))
				torch := lensRef(m, seq.Hidden[l+1][last])
				for v := range ref {
					dRef = max(dRef, math.Abs(float64(lens[l][v])-ref[v]))
					dTorch = max(dTorch, math.Abs(float64(lens[l][v])-torch[v]))
				}
			}
			if dRef > 1e-5 || dTorch > 1e-4 {
				t.Errorf("lens vs float64 reading of the engine's residual %.3g (want ≤ 1e-5), of torch's residual %.3g (want ≤ 1e-4)", dRef, dTorch)
			}
			t.Logf("%s: last layer vs logits %.3g; vs float64 reference %.3g; vs torch residual %.3g", g.Model, dLast, dRef, dTorch)
		})
	}
}

// TestPartParams: the parts add up to the model's parameter count.
func TestPartParams(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	for _, dir := range dirs {
		m, _ := loadReference(t, dir)
		p := m.Weights.PartParams()
		sum := p.Embedding + p.Positions + p.Blocks + p.FinalNorm + p.Unembedding
		if sum != m.Weights.NumParams() || p.Tied != m.Config.TiedHead {
			t.Errorf("%s: parts %+v add up to %d, model has %d (tied %v)", filepath.Base(dir), p, sum, m.Weights.NumParams(), m.Config.TiedHead)
		}
	}
}

// BenchmarkDecodeLens: one decode step of gpt2-124M's shape without and
// with the logit lens (12 extra readings through the 50257-row head).
func BenchmarkDecodeLens(b *testing.B) {
	m, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, lens := range []bool{false, true} {
		name := "plain"
		var h *Hooks
		if lens {
			name, h = "lens", &Hooks{Lens: &LogitLens{Done: func(LensInfo) {}}}
		}
		b.Run(name, func(b *testing.B) {
			st := NewState(m.Config)
			kv, _ := NewKVCache(m.Config, 256)
			for i := 0; i < b.N; i++ {
				if kv.Len == kv.Cap {
					kv.Truncate(0)
				}
				if _, err := m.Forward(st, kv, []int{i % 100}, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
