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

// TestLensSharesHeadPass: with the lens on, a decode step's head pass also
// reads every other layer (headRows, vocabulary tiles split across the
// workers); the model's logits stay bit-identical to a step without the
// lens, the last layer's reading is those logits, and every layer's
// reading is bit-identical to the head applied on its own (st.linear) to
// that layer's normed residual. Shapes with a vocabulary of many tiles, in
// F32 and BF16, on the kernel set in use.
func TestLensSharesHeadPass(t *testing.T) {
	small := map[string]Config{
		"gpt2":  {Arch: ArchGPT2, Dim: 64, HiddenDim: 256, NLayers: 3, NHeads: 4, NKVHeads: 4, HeadDim: 16, VocabSize: 3001, SeqLen: 32, NormEps: 1e-5, Rope: RopeNone, TiedHead: true},
		"llama": {Arch: ArchLlama, Dim: 48, HiddenDim: 128, NLayers: 4, NHeads: 4, NKVHeads: 2, HeadDim: 12, VocabSize: 2050, SeqLen: 32, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf},
	}
	for name, c := range small {
		for _, dt := range []DType{F32, BF16} {
			t.Run(name+"/"+dt.String(), func(t *testing.T) {
				m32, err := RandomModel(name, c, 3)
				if err != nil {
					t.Fatal(err)
				}
				m := m32.WithWeights(dt)
				var got [][]float32
				var resid [][]float32
				h := &Hooks{Lens: &LogitLens{Done: func(li LensInfo) { got, resid = copyRows(li.Logits), copyRows(li.Residual) }}}
				stA, stB := NewState(c), NewState(c)
				kvA, _ := NewKVCache(c, c.SeqLen)
				kvB, _ := NewKVCache(c, c.SeqLen)
				toks := []int{5, 17, 2000, 3, 999, 42}
				if _, err := m.Forward(stA, kvA, toks[:3], h); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Forward(stB, kvB, toks[:3], nil); err != nil {
					t.Fatal(err)
				}
				for _, tok := range toks[3:] {
					with, err := m.Forward(stA, kvA, []int{tok}, h)
					if err != nil {
						t.Fatal(err)
					}
					without, _ := m.Forward(stB, kvB, []int{tok}, nil)
					for v := range without {
						if with[v] != without[v] {
							t.Fatalf("token %d: logit %d is %v with the lens, %v without", tok, v, with[v], without[v])
						}
						if got[c.NLayers-1][v] != with[v] {
							t.Fatalf("token %d: last layer's reading %v ≠ logit %v at %d", tok, got[c.NLayers-1][v], with[v], v)
						}
					}
					// each layer alone through the final norm and the head
					st := NewState(c)
					xb := make([]float32, c.Dim)
					one := make([]float32, c.VocabSize)
					for l := range c.NLayers {
						m.norm(xb, resid[l], m.Weights.FinalNorm, m.Weights.FinalNormBias, 1)
						st.linear(xb, 1, linJob{one, &m.Weights.Head, nil})
						for v := range one {
							if got[l][v] != one[v] {
								t.Fatalf("token %d layer %d: reading %v ≠ head alone %v at %d", tok, l, got[l][v], one[v], v)
							}
						}
					}
				}
			})
		}
	}
}

// BenchmarkDecodeLens: one decode step of gpt2-124M's shape without the
// logit lens ("plain"), with it ("lens": the other 11 layers read in the
// head pass the logits need anyway), and with the previous session's way
// ("lens-separate": the 12 readings as a separate batched product through
// the prefill GEMM after the step) as a same-run baseline. Run with
// -count ≥ 5 and compare medians; the variants interleave per count.
func BenchmarkDecodeLens(b *testing.B) {
	m, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	c := m.Config
	for _, mode := range []string{"plain", "lens", "lens-separate"} {
		b.Run(mode, func(b *testing.B) {
			var h *Hooks
			var resid, xb, lg []float32
			switch mode {
			case "lens":
				h = &Hooks{Lens: &LogitLens{Done: func(LensInfo) {}}}
			case "lens-separate":
				resid, xb = make([]float32, c.NLayers*c.Dim), make([]float32, c.NLayers*c.Dim)
				lg = make([]float32, c.NLayers*c.VocabSize)
				h = &Hooks{LayerDone: func(li LayerInfo) { copy(resid[li.Layer*c.Dim:], li.Hidden[len(li.Hidden)-1]) }}
			}
			st := NewState(c)
			kv, _ := NewKVCache(c, 256)
			for i := 0; i < b.N; i++ {
				if kv.Len == kv.Cap {
					kv.Truncate(0)
				}
				if _, err := m.Forward(st, kv, []int{i % 100}, h); err != nil {
					b.Fatal(err)
				}
				if mode == "lens-separate" {
					m.norm(xb, resid, m.Weights.FinalNorm, m.Weights.FinalNormBias, c.NLayers)
					st.linear(xb, c.NLayers, linJob{lg, &m.Weights.Head, nil})
				}
			}
		})
	}
}

// TestLensDeferredRead: a pass with Defer set captures its residuals and
// reads nothing (Done is not called); Read afterwards hands Done the
// reading the pass would have given, bit for bit — after a lone decode
// step (where the eager reading shares the head pass with the logits) and
// after a batched one. Read with nothing captured reports false.
func TestLensDeferredRead(t *testing.T) {
	for name, m := range batchModels(t) {
		t.Run(name, func(t *testing.T) {
			c := m.Config
			if (&LogitLens{Done: func(LensInfo) {}}).Read(m, 0, make([]float32, c.VocabSize)) {
				t.Fatal("Read with nothing captured reported true")
			}
			for _, s := range prefilled(t, m, 4, 21) {
				var eager, deferred [][]float32
				calls := 0
				he := &Hooks{Lens: &LogitLens{Done: func(li LensInfo) { eager = copyRows(li.Logits) }}}
				ld := &LogitLens{Defer: true, Done: func(li LensInfo) { calls++; deferred = copyRows(li.Logits) }}
				hd := &Hooks{Lens: ld}
				logitsE, err := m.Forward(NewState(c), cloneKV(s.kv), []int{s.tok}, he)
				if err != nil {
					t.Fatal(err)
				}
				stD, kvD := NewState(c), cloneKV(s.kv)
				logitsD, err := m.Forward(stD, kvD, []int{s.tok}, hd)
				if err != nil {
					t.Fatal(err)
				}
				if calls != 0 {
					t.Fatalf("a deferred pass called Done %d times", calls)
				}
				if k, diff := firstDiff(logitsD, logitsE); k >= 0 {
					t.Fatalf("logits with a deferred lens: %d is %s", k, diff)
				}
				check := func(how string) {
					t.Helper()
					if !ld.Read(m, kvD.Len-1, logitsD) || calls != 1 {
						t.Fatalf("%s: Read reported false or called Done %d times", how, calls)
					}
					for l := range eager {
						if k, diff := firstDiff(deferred[l], eager[l]); k >= 0 {
							t.Fatalf("%s: layer %d: deferred score %d is %s", how, l, k, diff)
						}
					}
					calls = 0
				}
				check("lone step")
				// the same step batched with another sequence
				bs := NewBatchState(c, 2)
				kvD = cloneKV(s.kv)
				batch := []*BatchSeq{{State: NewState(c), KV: kvD, Token: s.tok, Hooks: hd}, {State: NewState(c), KV: cloneKV(s.kv), Token: s.tok}}
				if err := m.ForwardBatch(bs, batch); err != nil {
					t.Fatal(err)
				}
				if calls != 0 {
					t.Fatalf("a deferred batched pass called Done %d times", calls)
				}
				logitsD = batch[0].Logits
				check("batched step")
			}
		})
	}
}
