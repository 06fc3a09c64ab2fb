package session

// inspect_attention_test.go: the attention inspection shows the engine's
// own numbers — its weights equal the ones the engine's trace hooks report
// for that head and position, bit for bit; q·k/√d and the softmax of it
// agree with an independent pass's queries and cache — after prefill and
// after cached decode steps, for llama2.c's stories260K, a GQA model with
// half-split RoPE, GPT-2 layouts (learned positions, no RoPE) and, where
// ../shared has it, the real tiny GPT-2.

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
)

// refPass is what an independent run of the engine reports for the last
// position of its last pass, per layer: the queries, every head's weights
// (trace hooks) and the cache.
type refPass struct {
	q   [][]float32   // [layer][q_dim]
	w   [][][]float32 // [layer][head][pos+1]
	kv  *engine.KVCache
	pos int
}

// reference runs ids through m as the session did: one prefill pass of
// the first nPrompt tokens, then one decode pass per further token,
// recording the last pass. With batch, the decode passes go through
// ForwardBatch (the scheduler's path) instead of Forward.
func reference(t *testing.T, m *engine.Model, ids []int, nPrompt int, batch bool) *refPass {
	t.Helper()
	c := m.Config
	st := engine.NewState(c)
	kv, err := engine.NewKVCache(c, c.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	r := &refPass{kv: kv, pos: len(ids) - 1}
	hooks := &engine.Hooks{LayerDone: func(l engine.LayerInfo) {
		if l.Layer == 0 {
			r.q, r.w = nil, nil
		}
		r.q = append(r.q, append([]float32(nil), l.Query...))
		var heads [][]float32
		for _, a := range l.Attn {
			heads = append(heads, append([]float32(nil), a...))
		}
		r.w = append(r.w, heads)
	}}
	if _, err := m.Forward(st, kv, ids[:nPrompt], hooks); err != nil {
		t.Fatal(err)
	}
	bs := engine.NewBatchState(c, 1)
	for _, id := range ids[nPrompt:] {
		if batch {
			seq := &engine.BatchSeq{State: st, KV: kv, Token: id, Hooks: hooks}
			if err := m.ForwardBatch(bs, []*engine.BatchSeq{seq}); err != nil || seq.Err != nil {
				t.Fatal(err, seq.Err)
			}
		} else if _, err := m.Forward(st, kv, []int{id}, hooks); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// decodeSteps steps s through n decode passes (sample, append) after
// prefill, ending before the logits of the last one.
func decodeSteps(t *testing.T, s *Session, n int) {
	t.Helper()
	for range n {
		stepTo(t, s, StageAppend)
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Append == nil || !ev.Append.Forwarded {
			t.Fatalf("step %+v: not a forwarded append", ev)
		}
	}
	if s.Next() != StageLogits {
		t.Fatalf("after %d decode steps the next stage is %s", n, s.Next())
	}
}

// checkAttention compares every head of every layer's inspection with the
// reference and returns the largest differences seen.
func checkAttention(t *testing.T, s *Session, ref *refPass, pos0 int) (dScaled, dSoftmax, dOut float64) {
	t.Helper()
	c := s.m.Config
	hd, kvd := c.HeadDim, c.KVDim()
	for l := range c.NLayers {
		for h := range c.NHeads {
			in, err := s.Inspect(InspectRequest{What: InspectAttention, Layer: l, Head: h})
			if err != nil {
				t.Fatal(err)
			}
			a := in.Attention
			if in.Pos != ref.pos || a == nil || a.Head != h || len(a.Keys) != ref.pos+1 || a.HeadDim != hd || a.Masked != c.SeqLen-ref.pos-1 {
				t.Fatalf("layer %d head %d: inspection at %d with %d keys, want position %d", l, h, in.Pos, len(a.Keys), ref.pos)
			}
			kvh := h / (c.NHeads / c.NKVHeads)
			if a.KVHead != kvh || a.RoPE != (c.Rope != engine.RopeNone) {
				t.Errorf("layer %d head %d: kv head %d rope %v", l, h, a.KVHead, a.RoPE)
			}
			wantQ := ref.q[l][h*hd : (h+1)*hd]
			for i := range wantQ {
				if a.Query[i] != wantQ[i] {
					t.Fatalf("layer %d head %d: query[%d] %g, the engine's %g", l, h, i, a.Query[i], wantQ[i])
				}
			}
			if math.Abs(float64(a.Scale)-1/math.Sqrt(float64(hd))) > 1e-7 {
				t.Errorf("scale %g for head_dim %d", a.Scale, hd)
			}
			// independent: q·k/√d from the reference's query and cache, and
			// the softmax of it
			scaled := make([]float64, len(a.Keys))
			mx := math.Inf(-1)
			for p := range a.Keys {
				off := (l*ref.kv.Cap+p)*kvd + kvh*hd
				var dot float64
				for i, x := range wantQ {
					dot += float64(x) * float64(ref.kv.Key[off+i])
				}
				scaled[p] = dot / math.Sqrt(float64(hd))
				mx = max(mx, scaled[p])
			}
			var z float64
			for _, x := range scaled {
				z += math.Exp(x - mx)
			}
			out := make([]float64, hd)
			for p, k := range a.Keys {
				w := ref.w[l][h][p]
				if k.Pos != p || k.Weight != w {
					t.Fatalf("layer %d head %d position %d: weight %g, the engine's hooks report %g", l, h, p, k.Weight, w)
				}
				if k.Cached != (p < pos0) {
					t.Errorf("layer %d head %d position %d: cached %v, want %v (this pass began at %d)", l, h, p, k.Cached, p < pos0, pos0)
				}
				if k.Text == "" && k.Piece == "" {
					t.Errorf("position %d has no label", p)
				}
				off := (l*ref.kv.Cap+p)*kvd + kvh*hd
				for i := range hd {
					if k.Key[i] != ref.kv.Key[off+i] || k.Value[i] != ref.kv.Value[off+i] {
						t.Fatalf("layer %d head %d position %d: key/value differ from the cache", l, h, p)
					}
					out[i] += float64(w) * float64(ref.kv.Value[off+i])
				}
				dScaled = max(dScaled, math.Abs(float64(k.Scaled)-scaled[p]))
				dScaled = max(dScaled, math.Abs(float64(k.Score)*float64(a.Scale)-float64(k.Scaled)))
				dSoftmax = max(dSoftmax, math.Abs(math.Exp(scaled[p]-mx)/z-float64(w)))
			}
			for i := range out {
				dOut = max(dOut, math.Abs(float64(a.Output[i])-out[i]))
			}
			if math.Abs(float64(a.WeightSum)-1) > 1e-5 {
				t.Errorf("layer %d head %d: weights add up to %g", l, h, a.WeightSum)
			}
		}
	}
	// 1e-5 everywhere: the engine's float32 softmax (SIMD or the pure-Go
	// kernels: 1.1e-6 on the latter) against a float64 one of the same scores
	if dScaled > 1e-5 || dSoftmax > 1e-5 || dOut > 1e-5 {
		t.Errorf("largest differences: q·k/√d %.3g (budget 1e-5), softmax of it vs the engine's weights %.3g (1e-5), output %.3g (1e-5)", dScaled, dSoftmax, dOut)
	}
	return dScaled, dSoftmax, dOut
}

// smallModel is a random-weight model of shape c with stories260K's
// tokenizer (its vocabulary of 512).
func smallModel(t *testing.T, name string, c engine.Config) *engine.Model {
	t.Helper()
	m, err := engine.RandomModel(name, c, 7)
	if err != nil {
		t.Fatal(err)
	}
	m.Tokenizer = loadStories(t).Tokenizer
	return m
}

func TestInspectAttentionEqualsEngine(t *testing.T) {
	cases := []struct {
		name string
		m    func(t *testing.T) *engine.Model
	}{
		{"stories260K", loadStories},
		{"llama-gqa-rope-half", func(t *testing.T) *engine.Model {
			return smallModel(t, "gqa", engine.Config{Arch: engine.ArchLlama, Dim: 48, HiddenDim: 96, NLayers: 2, NHeads: 6, NKVHeads: 2, HeadDim: 8,
				VocabSize: 512, SeqLen: 64, NormEps: 1e-5, RopeTheta: 10000, Rope: engine.RopeHalf, BOS: 1, EOS: 2})
		}},
		{"gpt2-layout", func(t *testing.T) *engine.Model {
			return smallModel(t, "gpt2", engine.Config{Arch: engine.ArchGPT2, Dim: 48, HiddenDim: 192, NLayers: 2, NHeads: 4, NKVHeads: 4, HeadDim: 12,
				VocabSize: 512, SeqLen: 64, NormEps: 1e-5, Rope: engine.RopeNone, TiedHead: true, BOS: 1, EOS: 2})
		}},
		{"tiny-gpt2", func(t *testing.T) *engine.Model {
			m, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m(t)
			s := newSession(t, m, Config{Prompt: "Once upon a time there was", Sampling: greedy(), MaxNewTokens: 8})
			if _, err := s.Inspect(InspectRequest{What: InspectAttention}); err == nil {
				t.Error("attention before prefill: no error")
			}
			stepTo(t, s, StageLogits)
			ref := reference(t, m, s.ids, s.nPrompt, false)
			a, b, c := checkAttention(t, s, ref, 0)
			t.Logf("prefill, position %d: max |Δ| q·k/√d %.3g, softmax vs engine weights %.3g, output %.3g; weights equal the hooks' bit for bit", ref.pos, a, b, c)

			decodeSteps(t, s, 2)
			ref = reference(t, m, s.ids, s.nPrompt, false)
			a, b, c = checkAttention(t, s, ref, ref.pos)
			t.Logf("after 2 decode steps, position %d (%d cached keys + 1 new): max |Δ| q·k/√d %.3g, softmax %.3g, output %.3g", ref.pos, ref.pos, a, b, c)
			// the scheduler's batched decode reports the same queries and weights
			bref := reference(t, m, s.ids, s.nPrompt, true)
			for l := range bref.q {
				for i := range bref.q[l] {
					if bref.q[l][i] != ref.q[l][i] {
						t.Fatalf("ForwardBatch's query of layer %d differs from Forward's", l)
					}
				}
				for h := range bref.w[l] {
					for p := range bref.w[l][h] {
						if bref.w[l][h][p] != ref.w[l][h][p] {
							t.Fatalf("ForwardBatch's weights of layer %d head %d differ from Forward's", l, h)
						}
					}
				}
			}

			mc := m.Config
			for _, bad := range []struct {
				r    InspectRequest
				name string
			}{
				{InspectRequest{What: InspectAttention, Head: -1}, "head -1"},
				{InspectRequest{What: InspectAttention, Head: mc.NHeads}, "head"},
				{InspectRequest{What: InspectAttention, Layer: mc.NLayers}, "layer"},
				{InspectRequest{What: InspectAttention, Layer: -1}, "layer -1"},
			} {
				_, err := s.Inspect(bad.r)
				if err == nil || !strings.Contains(err.Error(), bad.name) {
					t.Errorf("inspect %+v: error %v, want one naming %q", bad.r, err, bad.name)
				}
			}
		})
	}
}

// After a rewind the inspection is the recomputed position's: its keys are
// all from the cache but itself.
func TestInspectAttentionAfterRewind(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 8})
	stepTo(t, s, StageLogits)
	decodeSteps(t, s, 3)
	if _, err := s.Rewind(1); err != nil {
		t.Fatal(err)
	}
	// the reference: the same passes (the rewind re-ran the last position
	// as one decode pass)
	ref := reference(t, m, s.ids, s.nPrompt, false)
	checkAttention(t, s, ref, ref.pos)
}
