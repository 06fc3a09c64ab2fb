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
