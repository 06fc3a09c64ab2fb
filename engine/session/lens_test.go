package session

// lens_test.go: the logit lens in events (its last layer is the model's own
// top token and probability), and Inspect's tensors against the engine's.

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
)

func TestSessionLens(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 4, Lens: true})
	evs := runAll(t, s)
	var readings []*LensReading
	var logits []*LogitsInfo
	for _, e := range evs {
		switch {
		case e.Prefill != nil:
			readings = append(readings, e.Prefill.Lens)
		case e.Append != nil && e.Append.Forwarded:
			readings = append(readings, e.Append.Lens)
		case e.Logits != nil:
			logits = append(logits, e.Logits)
		}
	}
	if len(readings) != len(logits) || len(readings) == 0 {
		t.Fatalf("%d lens readings for %d logits events", len(readings), len(logits))
	}
	for i, r := range readings {
		if r == nil || len(r.Layers) != m.Config.NLayers {
			t.Fatalf("reading %d: %+v", i, r)
		}
		if r.Pos != logits[i].Pos {
			t.Errorf("reading %d at position %d, its logits at %d", i, r.Pos, logits[i].Pos)
		}
		last := r.Layers[len(r.Layers)-1].Top
		if len(last) != LensTopK || last[0].ID != logits[i].Top[0].ID || math.Abs(float64(last[0].Prob)-float64(logits[i].Top[0].Prob)) > 1e-5 {
			t.Errorf("reading %d: last layer's top %+v, the model's %+v", i, last[0], logits[i].Top[0])
		}
		for _, l := range r.Layers {
			for k := 1; k < len(l.Top); k++ {
				if l.Top[k].Prob > l.Top[k-1].Prob {
					t.Errorf("layer %d: top not in order: %+v", l.Layer, l.Top)
				}
			}
		}
	}
	// without Lens the events carry none
	s2 := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 2})
	for _, e := range runAll(t, s2) {
		if (e.Prefill != nil && e.Prefill.Lens != nil) || (e.Append != nil && e.Append.Lens != nil) {
			t.Errorf("lens sent without Config.Lens: %+v", e)
		}
	}
	// a rewind recomputes the lens of the new last position
	ev, err := s.Rewind(1)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Logits.Lens == nil || ev.Logits.Lens.Pos != ev.Logits.Pos {
		t.Errorf("rewind: lens %+v at logits position %d", ev.Logits.Lens, ev.Logits.Pos)
	}
	b, _ := json.Marshal(readings[0])
	t.Logf("one reading (%d layers): %d bytes of JSON", len(readings[0].Layers), len(b))
}

// TestSessionDeferLens: with DeferLens on, a decode step's append event
// carries no lens, and FillLens gives it, while it is the last pass, the
// very reading an eager session's same step carries; on for some tokens
// and off for others, as a thinned run asks. FillLens refuses an event
// whose pass is no longer the last, one that read its lens already, and
// one with no pass.
func TestSessionDeferLens(t *testing.T) {
	m := loadStories(t)
	cfg := Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 6, Lens: true}
	eager := newSession(t, m, cfg)
	var want []*LensReading
	for _, e := range runAll(t, eager) {
		if e.Append != nil && e.Append.Forwarded {
			want = append(want, e.Append.Lens)
		}
	}
	s := newSession(t, m, cfg)
	deferOn := func(k int) bool { return k%3 != 2 }
	k := 0
	var stale *Event
	for !s.Done() {
		s.DeferLens(deferOn(k))
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		a := ev.Append
		if a == nil {
			if stale != nil && ev.Stop == nil && s.FillLens(stale) {
				t.Error("FillLens filled an event whose pass is not the last")
			}
			continue
		}
		if !a.Forwarded {
			if s.FillLens(ev) {
				t.Error("FillLens filled an append with no forward pass")
			}
			continue
		}
		if deferOn(k) {
			if a.Lens != nil {
				t.Fatalf("token %d: deferred lens sent with the event", k)
			}
			if !s.FillLens(ev) {
				t.Fatalf("token %d: FillLens refused its own last pass", k)
			}
			if s.FillLens(ev) {
				t.Errorf("token %d: FillLens filled twice", k)
			}
			stale = &Event{Append: &AppendInfo{Forwarded: true, Pos: a.Pos}}
		} else if s.FillLens(ev) {
			t.Errorf("token %d: FillLens filled a lens read eagerly", k)
		}
		if !reflect.DeepEqual(a.Lens, want[k]) {
			got, _ := json.Marshal(a.Lens)
			exp, _ := json.Marshal(want[k])
			t.Errorf("token %d (deferred %v): lens %s, eager %s", k, deferOn(k), got, exp)
		}
		k++
	}
	if k != len(want) {
		t.Fatalf("%d forward passes, eager run had %d", k, len(want))
	}
}

func TestSessionInspect(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 3})
	if _, err := s.Inspect(InspectRequest{What: InspectResidual}); err == nil {
		t.Error("inspect before prefill: no error")
	}
	if _, err := s.Advance(context.Background(), UntilToken, nil); err != nil {
		t.Fatal(err)
	}
	c := m.Config
	// an independent forward pass over the same tokens gives the tensors
	ids := append(s.PromptIDs(), s.Generated()...)
	st := engine.NewState(c)
	kv, _ := engine.NewKVCache(c, c.SeqLen)
	var hidden, mlp [][]float32
	var in []float32
	hooks := &engine.Hooks{Embedded: func(e engine.EmbedInfo) { in = append([]float32(nil), e.Sum[len(e.Sum)-1]...) },
		LayerDone: func(l engine.LayerInfo) {
			hidden = append(hidden, append([]float32(nil), l.Hidden[len(l.Hidden)-1]...))
			mlp = append(mlp, append([]float32(nil), l.MLP[len(l.MLP)-1]...))
		}}
	if _, err := m.Forward(st, kv, ids, hooks); err != nil {
		t.Fatal(err)
	}
	diff := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d = max(d, math.Abs(float64(a[i]-b[i])))
		}
		return d
	}
	for l := range c.NLayers {
		r, err := s.Inspect(InspectRequest{What: InspectResidual, Layer: l})
		if err != nil {
			t.Fatal(err)
		}
		wantIn := in
		if l > 0 {
			wantIn = hidden[l-1]
		}
		if r.Pos != len(ids)-1 || diff(r.In, wantIn) > 1e-5 || diff(r.Out, hidden[l]) > 1e-5 {
			t.Errorf("layer %d residual at %d: in differs %.3g, out %.3g", l, r.Pos, diff(r.In, wantIn), diff(r.Out, hidden[l]))
		}
		mi, err := s.Inspect(InspectRequest{What: InspectMLP, Layer: l, K: 8})
		if err != nil {
			t.Fatal(err)
		}
		if len(mi.Neurons) != 8 || mi.Hidden != c.HiddenDim {
			t.Fatalf("mlp inspection %+v", mi)
		}
		var big float32
		for _, a := range mlp[l] {
			big = max(big, float32(math.Abs(float64(a))))
		}
		if n := mi.Neurons[0]; math.Abs(math.Abs(float64(n.Value))-float64(big)) > 1e-5 || math.Abs(float64(mlp[l][n.Index]-n.Value)) > 1e-5 {
			t.Errorf("layer %d: top neuron %+v, largest |activation| %g", l, n, big)
		}
	}
	// the cache's K and V for position 1 of the last layer equal the
	// independent pass's cache
	l := c.NLayers - 1
	k, err := s.Inspect(InspectRequest{What: InspectKV, Layer: l, Pos: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Keys) != c.NKVHeads || len(k.Keys[0]) != c.HeadDim {
		t.Fatalf("kv inspection: %d heads of %d", len(k.Keys), len(k.Keys[0]))
	}
	off := (l*kv.Cap + 1) * c.KVDim()
	for h := range c.NKVHeads {
		if d := diff(k.Keys[h], kv.Key[off+h*c.HeadDim:]) + diff(k.Values[h], kv.Value[off+h*c.HeadDim:]); d > 1e-5 {
			t.Errorf("kv head %d differs by %.3g", h, d)
		}
	}
	for _, bad := range []InspectRequest{{What: "weights"}, {What: InspectKV, Pos: 999}, {What: InspectResidual, Layer: c.NLayers}, {What: InspectMLP, K: 1000}} {
		if _, err := s.Inspect(bad); err == nil {
			t.Errorf("inspect %+v: no error", bad)
		} else {
			t.Logf("inspect %+v: %v", bad, err)
		}
	}
}

// lensBytes runs a greedy decode with and without the lens and returns the
// JSON bytes per generated token of the decode events (logits, sample,
// append) for each.
func lensBytes(t testing.TB, m *engine.Model, prompt string, n int) (plain, lens float64) {
	for _, on := range []bool{false, true} {
		s, err := New(m, Config{Prompt: prompt, Sampling: greedy(), MaxNewTokens: n, Lens: on, StopAtEOS: new(bool)})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Advance(context.Background(), UntilStop, nil)
		if err != nil {
			t.Fatal(err)
		}
		total, tokens := 0, 0
		for _, e := range evs {
			if e.Stage != StageLogits && e.Stage != StageSample && e.Stage != StageAppend {
				continue
			}
			b, _ := json.Marshal(e)
			total += len(b)
			if e.Stage == StageAppend {
				tokens++
			}
		}
		per := float64(total) / float64(tokens)
		if on {
			lens = per
		} else {
			plain = per
		}
	}
	return plain, lens
}

// TestLensBytes: the lens adds at most 25% to the bytes of the decode
// events per token, for the stories260K model and for GPT-2 124M's layout
// (12 layers, 12 heads, GPT-2's real tokenizer and 50257-token vocabulary,
// random weights). Event bytes depend on layers, heads, vocabulary and
// positions, not on the width, so the GPT-2 case is narrowed to dim 96 to
// run in seconds (BenchmarkLensDecode times the full width).
func TestLensBytes(t *testing.T) {
	cases := []struct {
		name string
		m    func(t *testing.T) *engine.Model
	}{
		{"stories260K", loadStories},
		{"gpt2-124M-shape", func(t *testing.T) *engine.Model {
			tm, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
			if err != nil {
				t.Fatal(err)
			}
			c := engine.Shapes["gpt2-124M"]
			c.Dim, c.HeadDim, c.HiddenDim = 96, 8, 384
			m, err := engine.RandomModel("gpt2-124M-layout", c, 1)
			if err != nil {
				t.Fatal(err)
			}
			m.Tokenizer = tm.Tokenizer
			return m
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain, lens := lensBytes(t, c.m(t), "Once upon a time there was", 32)
			ratio := lens / plain
			t.Logf("%s: %.0f bytes per token without the lens, %.0f with (+%.1f%%)", c.name, plain, lens, 100*(ratio-1))
			if ratio > 1.25 {
				t.Errorf("the lens adds %.1f%% bytes per token, the budget is 25%%", 100*(ratio-1))
			}
		})
	}
}

// BenchmarkLensDecode: one decode token (forward + lens readings + logits
// + sample) of GPT-2 124M's shape, without and with the lens.
func BenchmarkLensDecode(b *testing.B) {
	tm, err := engine.LoadModel(testenv.SharedDir(b, "models/tiny-gpt2"), "")
	if err != nil {
		b.Fatal(err)
	}
	m, _ := engine.RandomModel("gpt2-124M", engine.Shapes["gpt2-124M"], 1)
	m.Tokenizer = tm.Tokenizer
	for _, on := range []bool{false, true} {
		name := "plain"
		if on {
			name = "lens"
		}
		b.Run(name, func(b *testing.B) {
			var s *Session
			for i := 0; i < b.N; i++ {
				if s == nil || s.Done() {
					b.StopTimer()
					s, _ = New(m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 200, Lens: on, StopAtEOS: new(bool)})
					s.Advance(context.Background(), UntilToken, nil)
					b.StartTimer()
				}
				if _, err := s.Advance(context.Background(), UntilToken, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
