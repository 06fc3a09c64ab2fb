package engine

// attention_test.go: the attention weights the hooks see are the same bits
// whichever hooks ask (LayerDone alone, with AllAttention, or none), since
// attention computes them in place where the hooks read them.

import (
	"math"
	"slices"
	"testing"
)

func TestAttentionWeightsSameForEveryHook(t *testing.T) {
	for _, name := range []string{"gpt2-124M", "smollm2-135M"} {
		c := Shapes[name]
		c.NLayers, c.SeqLen = 2, 32
		m, err := RandomModel(name, c, 3)
		if err != nil {
			t.Fatal(err)
		}
		toks := []int{1, 5, 9, 200, 7, 3}
		type run struct {
			logits []float32
			last   [][][]float32   // [pass·layer][head][pos]
			all    [][][][]float32 // [pass·layer][t][head][pos]
		}
		pass := func(hooks *Hooks, r *run) {
			st := NewState(c)
			kv, _ := NewKVCache(c, c.SeqLen)
			for _, in := range [][]int{toks, {11}, {12}} { // a prefill, then two decode steps
				lg, err := m.Forward(st, kv, in, hooks)
				if err != nil {
					t.Fatal(err)
				}
				r.logits = append(r.logits, lg...)
			}
		}
		var none, last, all run
		pass(nil, &none)
		rec := func(r *run) *Hooks {
			return &Hooks{AllAttention: r == &all, LayerDone: func(l LayerInfo) {
				var heads [][]float32
				for _, a := range l.Attn {
					heads = append(heads, slices.Clone(a))
				}
				r.last = append(r.last, heads)
				var ts [][][]float32
				for _, row := range l.AttnAll {
					var hs [][]float32
					for _, a := range row {
						hs = append(hs, slices.Clone(a))
					}
					ts = append(ts, hs)
				}
				r.all = append(r.all, ts)
			}}
		}
		pass(rec(&last), &last)
		pass(rec(&all), &all)
		bits := func(s []float32) []uint32 {
			out := make([]uint32, len(s))
			for i, v := range s {
				out[i] = math.Float32bits(v)
			}
			return out
		}
		if !slices.Equal(bits(none.logits), bits(last.logits)) || !slices.Equal(bits(none.logits), bits(all.logits)) {
			t.Fatalf("%s: logits depend on the hooks", name)
		}
		for l := range last.last {
			for h := range last.last[l] {
				a, b := last.last[l][h], all.last[l][h]
				if !slices.Equal(bits(a), bits(b)) {
					t.Fatalf("%s layer %d head %d: Attn differs with AllAttention", name, l, h)
				}
				if tail := all.all[l][len(all.all[l])-1][h]; !slices.Equal(bits(a), bits(tail)) {
					t.Fatalf("%s layer %d head %d: Attn is not AttnAll's last position", name, l, h)
				}
				var sum float64
				for _, v := range a {
					sum += float64(v)
				}
				if math.Abs(sum-1) > 1e-5 {
					t.Fatalf("%s layer %d head %d: weights sum to %v", name, l, h, sum)
				}
			}
		}
	}
}

// TestAttendedHook: Attended fires once per layer after its attention, in
// layer order, with the sequence's rows and first position and a positive
// time, for a prompt, a decode step and each sequence of a batched step;
// timing changes no logit.
func TestAttendedHook(t *testing.T) {
	c := Shapes["smollm2-135M"]
	c.NLayers, c.SeqLen = 3, 32
	m, err := RandomModel("smollm2-135M", c, 5)
	if err != nil {
		t.Fatal(err)
	}
	var got []AttendedInfo
	hooks := &Hooks{Attended: func(i AttendedInfo) { got = append(got, i) }}
	st, st0 := NewState(c), NewState(c)
	kv, _ := NewKVCache(c, c.SeqLen)
	kv0, _ := NewKVCache(c, c.SeqLen)
	for _, tc := range []struct {
		toks []int
		pos0 int
	}{{[]int{1, 5, 9, 200}, 0}, {[]int{11}, 4}} {
		got = got[:0]
		lg, err := m.Forward(st, kv, tc.toks, hooks)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := m.Forward(st0, kv0, tc.toks, nil)
		if !slices.Equal(lg, want) {
			t.Fatalf("rows at %d: logits differ with the hook", tc.pos0)
		}
		if len(got) != c.NLayers {
			t.Fatalf("rows at %d: %d calls, want one per layer (%d)", tc.pos0, len(got), c.NLayers)
		}
		for l, i := range got {
			if i.Layer != l || i.Pos0 != tc.pos0 || i.Rows != len(tc.toks) || i.Elapsed <= 0 {
				t.Errorf("call %d: %+v, want layer %d, pos0 %d, %d rows, a positive time", l, i, l, tc.pos0, len(tc.toks))
			}
		}
	}
	// a batched step: each sequence with the hook hears every layer
	var a []AttendedInfo
	seqs := []*BatchSeq{
		{State: st, KV: kv, Token: 3, Hooks: &Hooks{Attended: func(i AttendedInfo) { a = append(a, i) }}},
		{State: st0, KV: kv0, Token: 3},
	}
	if err := m.ForwardBatch(NewBatchState(c, 2), seqs); err != nil {
		t.Fatal(err)
	}
	if len(a) != c.NLayers || a[0].Pos0 != 5 || a[0].Rows != 1 {
		t.Errorf("batched: %+v, want %d calls at position 5", a, c.NLayers)
	}
}
