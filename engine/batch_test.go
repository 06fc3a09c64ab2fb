package engine

// batch_test.go: a batched decode step gives every sequence the same logits,
// bit for bit, as its lone decode step, whatever it is batched with.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// batchModels are the checkpoints the identity is checked on: Llama (F32,
// GQA, BF16), GPT-2 (Conv1D stored [in][out], biases, learned positions)
// and a random shape whose widths are not multiples of the kernels' 8.
func batchModels(t *testing.T) map[string]*Model {
	t.Helper()
	out := map[string]*Model{"stories260K": loadStories(t)}
	for _, dir := range []string{"gpt2-small-f32", "llama-gqa-untied-bf16", "llama2c-gqa-untied"} {
		m, _ := loadReference(t, filepath.Join("testdata", "reference", dir))
		out[dir] = m
	}
	odd := Config{Arch: ArchGPT2, Dim: 36, HiddenDim: 100, NLayers: 2, NHeads: 3, NKVHeads: 3, HeadDim: 12,
		VocabSize: 97, SeqLen: 64, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 0, EOS: 0}
	m, err := RandomModel("odd-gpt2", odd, 3)
	if err != nil {
		t.Fatal(err)
	}
	out["odd-gpt2"] = m
	// [out][in] weights with widths the four-sequence kernel takes (multiples
	// of 16), biases that are not zero, and a vocabulary that is not a
	// multiple of 4 rows
	wide := Config{Arch: ArchGPT2, Dim: 64, HiddenDim: 256, NLayers: 2, NHeads: 4, NKVHeads: 4, HeadDim: 16,
		VocabSize: 203, SeqLen: 64, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 0, EOS: 0}
	if m, err = RandomModel("gpt2-out-in", wide, 5); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for l := range m.Weights.Layers {
		lw := &m.Weights.Layers[l]
		for _, b := range [][]float32{lw.Bq, lw.Bk, lw.Bv, lw.Bo, lw.BUp, lw.BDown} {
			for i := range b {
				b[i] = float32(r.NormFloat64() * 0.1)
			}
		}
	}
	out["gpt2-out-in"] = m
	return out
}

type seqRun struct {
	st  *State
	kv  *KVCache
	tok int
}

// prefilled makes n sequences with different prompts, each prefilled alone.
func prefilled(t *testing.T, m *Model, n int, seed uint64) []seqRun {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	c := m.Config
	var out []seqRun
	for i := 0; i < n; i++ {
		plen := 1 + r.IntN(min(12, c.SeqLen/4))
		prompt := make([]int, plen)
		for j := range prompt {
			prompt[j] = r.IntN(c.VocabSize)
		}
		kv, err := NewKVCache(c, min(c.SeqLen, plen+8))
		if err != nil {
			t.Fatal(err)
		}
		st := NewState(c)
		logits, err := m.Forward(st, kv, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seqRun{st: st, kv: kv, tok: argmax(logits)})
	}
	return out
}

func cloneKV(kv *KVCache) *KVCache {
	c := *kv
	c.Key = append([]float32(nil), kv.Key...)
	c.Value = append([]float32(nil), kv.Value...)
	return &c
}

func TestForwardBatchBitIdentical(t *testing.T) {
	for name, m := range batchModels(t) {
		t.Run(name, func(t *testing.T) {
			const steps = 3
			seqs := prefilled(t, m, 32, 11)
			// alone: each sequence's decode steps through Forward
			alone := make([][][]float32, len(seqs))
			for i, s := range seqs {
				st, kv, tok := NewState(m.Config), cloneKV(s.kv), s.tok
				for k := 0; k < steps; k++ {
					l, err := m.Forward(st, kv, []int{tok}, nil)
					if err != nil {
						t.Fatal(err)
					}
					alone[i] = append(alone[i], append([]float32(nil), l...))
					tok = argmax(l)
				}
			}
			// batched with 0, 1 and 31 others (and an odd size), through ForwardBatch
			for _, size := range []int{1, 2, 5, 32} {
				bs := NewBatchState(m.Config, size)
				for first := 0; first+size <= len(seqs); first += size {
					batch := make([]*BatchSeq, size)
					for j := range batch {
						s := seqs[first+j]
						batch[j] = &BatchSeq{State: NewState(m.Config), KV: cloneKV(s.kv), Token: s.tok}
					}
					for k := 0; k < steps; k++ {
						if err := m.ForwardBatch(bs, batch); err != nil {
							t.Fatal(err)
						}
						for j, b := range batch {
							if b.Err != nil {
								t.Fatal(b.Err)
							}
							if i, diff := firstDiff(b.Logits, alone[first+j][k]); i >= 0 {
								t.Fatalf("batch of %d, sequence %d, step %d: logit %d is %s", size, first+j, k, i, diff)
							}
							b.Token = argmax(b.Logits)
						}
					}
					if size == 32 {
						break
					}
				}
			}
		})
	}
}

// firstDiff is the first index where a and b differ in any bit, or -1.
func firstDiff(a, b []float32) (int, string) {
	if len(a) != len(b) {
		return 0, fmt.Sprintf("length %d vs %d", len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, fmt.Sprintf("%v batched vs %v alone", a[i], b[i])
		}
	}
	return -1, ""
}

// TestForwardBatchHooksAndErrors: each sequence's hooks see its own
// layers, a sequence that cannot run is reported and the others still run.
func TestForwardBatchHooksAndErrors(t *testing.T) {
	m := loadStories(t)
	seqs := prefilled(t, m, 3, 5)
	full := seqs[2]
	full.kv.Len = full.kv.Cap // no room left
	var layers [2]int
	batch := []*BatchSeq{
		{State: seqs[0].st, KV: seqs[0].kv, Token: seqs[0].tok, Hooks: &Hooks{LayerDone: func(LayerInfo) { layers[0]++ }}},
		{State: seqs[1].st, KV: seqs[1].kv, Token: m.Config.VocabSize, Hooks: &Hooks{LayerDone: func(LayerInfo) { layers[1]++ }}},
		{State: full.st, KV: full.kv, Token: 1},
	}
	before := seqs[0].kv.Len
	if err := m.ForwardBatch(NewBatchState(m.Config, 3), batch); err != nil {
		t.Fatal(err)
	}
	if batch[0].Err != nil || batch[0].Logits == nil || seqs[0].kv.Len != before+1 {
		t.Errorf("valid sequence: err %v, cache %d → %d", batch[0].Err, before, seqs[0].kv.Len)
	}
	if layers[0] != m.Config.NLayers || layers[1] != 0 {
		t.Errorf("hooks saw %v layers, want %d and 0", layers, m.Config.NLayers)
	}
	if batch[1].Err == nil || batch[2].Err == nil {
		t.Errorf("bad token err %v, full cache err %v: want both", batch[1].Err, batch[2].Err)
	}
	if err := m.ForwardBatch(NewBatchState(m.Config, 1), batch); err == nil {
		t.Error("3 sequences into scratch for 1: no error")
	}
}

// TestForwardBatchLensBitIdentical: sequences batched with their logit
// lens on (read in one head pass for the whole batch) get every layer's
// reading bit for bit as alone, beside sequences without it.
func TestForwardBatchLensBitIdentical(t *testing.T) {
	for name, m := range batchModels(t) {
		t.Run(name, func(t *testing.T) {
			seqs := prefilled(t, m, 9, 13)
			type reading struct{ logits, resid [][]float32 }
			lensOn := func(i int) bool { return i%3 != 1 }
			// alone
			alone := make([]reading, len(seqs))
			for i, s := range seqs {
				var h *Hooks
				if lensOn(i) {
					h = &Hooks{Lens: &LogitLens{Done: func(li LensInfo) { alone[i] = reading{copyRows(li.Logits), copyRows(li.Residual)} }}}
				}
				if _, err := m.Forward(NewState(m.Config), cloneKV(s.kv), []int{s.tok}, h); err != nil {
					t.Fatal(err)
				}
			}
			// batched, two steps so the lenses' scratch is reused
			got := make([]reading, len(seqs))
			batch := make([]*BatchSeq, len(seqs))
			for i, s := range seqs {
				batch[i] = &BatchSeq{State: NewState(m.Config), KV: cloneKV(s.kv), Token: s.tok}
				if lensOn(i) {
					batch[i].Hooks = &Hooks{Lens: &LogitLens{Done: func(li LensInfo) { got[i] = reading{copyRows(li.Logits), copyRows(li.Residual)} }}}
				}
			}
			bs := NewBatchState(m.Config, len(seqs))
			for step := 0; step < 2; step++ {
				if step == 1 { // the readings of step 0 were checked below; run a second step on fresh copies
					for i, s := range seqs {
						batch[i].KV = cloneKV(s.kv)
					}
				}
				if err := m.ForwardBatch(bs, batch); err != nil {
					t.Fatal(err)
				}
				for i := range seqs {
					if !lensOn(i) {
						if got[i].logits != nil {
							t.Fatalf("sequence %d has no lens but got a reading", i)
						}
						continue
					}
					if len(got[i].logits) != m.Config.NLayers {
						t.Fatalf("sequence %d: %d layers read", i, len(got[i].logits))
					}
					for l := range got[i].logits {
						if k, diff := firstDiff(got[i].logits[l], alone[i].logits[l]); k >= 0 {
							t.Fatalf("step %d, sequence %d, layer %d: lens score %d is %s", step, i, l, k, diff)
						}
						if k, diff := firstDiff(got[i].resid[l], alone[i].resid[l]); k >= 0 {
							t.Fatalf("step %d, sequence %d, layer %d: residual %d is %s", step, i, l, k, diff)
						}
					}
					got[i] = reading{}
				}
			}
		})
	}
}

// labTraceCopy is a LayerDone hook doing what the lab's session does with
// each layer of a decode step: copy the last position's attention weights,
// residual and MLP activations, and take two norms.
func labTraceCopy(c Config) func(LayerInfo) {
	resid := make([]float32, c.NLayers*c.Dim)
	mlp := make([]float32, c.NLayers*c.HiddenDim)
	return func(l LayerInfo) {
		attn := make([][]float32, len(l.Attn))
		for h, a := range l.Attn {
			attn[h] = append([]float32(nil), a...)
		}
		T := len(l.Hidden)
		copy(resid[l.Layer*c.Dim:], l.Hidden[T-1])
		copy(mlp[l.Layer*c.HiddenDim:], l.MLP[T-1])
		var n1, n2 float64
		for _, v := range l.Hidden[T-1] {
			n1 += float64(v) * float64(v)
		}
		for _, v := range l.MLP[T-1] {
			n2 += float64(v) * float64(v)
		}
		_, _ = n1, n2
	}
}

// BenchmarkDecodeBatch: decode tokens per second alone (one Forward per
// sequence) and batched, on the gpt2-124M shape.
func BenchmarkDecodeBatch(b *testing.B) {
	m, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 8, 32} {
		mk := func() []*BatchSeq {
			var out []*BatchSeq
			for i := 0; i < n; i++ {
				kv, _ := NewKVCache(m.Config, 1024)
				st := NewState(m.Config)
				m.Forward(st, kv, []int{1, 2, 3, 4, 5, 6, 7, 8}, nil)
				out = append(out, &BatchSeq{State: st, KV: kv, Token: 9})
			}
			return out
		}
		b.Run(fmt.Sprintf("alone-%d", n), func(b *testing.B) {
			seqs := mk()
			for b.Loop() {
				for _, s := range seqs {
					if s.KV.Len+1 > s.KV.Cap {
						s.KV.Len = 8
					}
					m.Forward(s.State, s.KV, []int{s.Token}, nil)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
		// plain, every sequence with per-layer traces copied (trace), and
		// with the logit lens on too (lab), as the lab's sessions run
		for _, kind := range []string{"", "trace", "lab"} {
			name := fmt.Sprintf("batched-%d", n)
			if kind != "" {
				name = fmt.Sprintf("batched-%s-%d", kind, n)
			}
			b.Run(name, func(b *testing.B) {
				seqs := mk()
				for _, s := range seqs {
					switch kind {
					case "trace":
						s.Hooks = &Hooks{LayerDone: labTraceCopy(m.Config)}
					case "lab":
						s.Hooks = &Hooks{LayerDone: labTraceCopy(m.Config), Lens: &LogitLens{Done: func(LensInfo) {}}}
					}
				}
				bs := NewBatchState(m.Config, n)
				for b.Loop() {
					for _, s := range seqs {
						if s.KV.Len+1 > s.KV.Cap {
							s.KV.Len = 8
						}
					}
					m.ForwardBatch(bs, seqs)
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}

// TestShortPrefillIsDecodeSteps: a pass of up to rowsMaxT positions runs
// the decode kernels (rowsPart, linear.go), so every position's logits and cached
// keys and values equal those of decoding the tokens one at a time, bit
// for bit; a longer pass uses the GEMM and agrees to the reference
// tolerance.
func TestShortPrefillIsDecodeSteps(t *testing.T) {
	for name, m := range batchModels(t) {
		for _, T := range []int{2, 5, rowsMaxT, rowsMaxT + 3} {
			tokens := make([]int, T)
			for i := range tokens {
				tokens[i] = (7*i + 3) % m.Config.VocabSize
			}
			st, kv := NewState(m.Config), mustKV(t, m.Config)
			all, err := m.ForwardAll(st, kv, tokens, nil)
			if err != nil {
				t.Fatal(err)
			}
			all = append([]float32(nil), all...)
			st1, kv1 := NewState(m.Config), mustKV(t, m.Config)
			V := m.Config.VocabSize
			for p, tok := range tokens {
				lg, err := m.Forward(st1, kv1, []int{tok}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range lg {
					w := all[p*V+i]
					if T <= rowsMaxT && v != w {
						t.Fatalf("%s T=%d: position %d logit %d: pass %v, one at a time %v", name, T, p, i, w, v)
					}
					if d := float64(v - w); d > 1e-4 || d < -1e-4 {
						t.Fatalf("%s T=%d: position %d logit %d: pass %v, one at a time %v", name, T, p, i, w, v)
					}
				}
			}
			if T <= rowsMaxT {
				for l := range m.Config.NLayers {
					k0, v0, _ := kv.layerKV(l)
					k1, v1, _ := kv1.layerKV(l)
					n := T * m.Config.KVDim()
					for i := range n {
						if k0[i] != k1[i] || v0[i] != v1[i] {
							t.Fatalf("%s T=%d: layer %d cache entry %d differs", name, T, l, i)
						}
					}
				}
			}
		}
	}
}

func mustKV(t *testing.T, c Config) *KVCache {
	t.Helper()
	kv, err := NewKVCache(c, min(c.SeqLen, 64))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// TestForwardBatchLogitsWithLensBeside: with a logit lens on for some
// sequences of a batch, the head pass reads their lens rows beside every
// sequence's logits (one pass over the head): each sequence's logits,
// with or without a lens, stay bit for bit its lone decode step's.
func TestForwardBatchLogitsWithLensBeside(t *testing.T) {
	for name, m := range batchModels(t) {
		t.Run(name, func(t *testing.T) {
			seqs := prefilled(t, m, 6, 17)
			batch := make([]*BatchSeq, len(seqs))
			for i, s := range seqs {
				batch[i] = &BatchSeq{State: NewState(m.Config), KV: cloneKV(s.kv), Token: s.tok}
				if i%2 == 0 {
					batch[i].Hooks = &Hooks{Lens: &LogitLens{Done: func(LensInfo) {}}}
				}
			}
			if err := m.ForwardBatch(NewBatchState(m.Config, len(seqs)), batch); err != nil {
				t.Fatal(err)
			}
			for i, s := range seqs {
				alone, err := m.Forward(NewState(m.Config), cloneKV(s.kv), []int{s.tok}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if k, diff := firstDiff(batch[i].Logits, alone); k >= 0 {
					t.Fatalf("sequence %d (lens %v): logit %d is %s", i, i%2 == 0, k, diff)
				}
			}
		})
	}
}
