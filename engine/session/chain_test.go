package session

import (
	"fmt"
	"math"
	"sort"
	"testing"
)

// TestSamplerChainMatchesTheReferenceCuts: the logits event's chain, step
// by step, keeps what the reference cuts over the whole sorted vocabulary
// keep, with their probability mass, and names the likeliest candidate
// each step removed (the first one past its cut).
func TestSamplerChainMatchesTheReferenceCuts(t *testing.T) {
	m := loadStories(t)
	cases := []SamplingParams{
		{Temperature: 0.8, TopP: 0.9, Seed: 1},
		{Temperature: 1.5, TopK: 20, TopP: 0.95, MinP: 0.05, Seed: 2},
		{Temperature: 1, TopK: 5, TopP: 1, Seed: 3},
		{Temperature: 2, TopP: 1, MinP: 0.1, Seed: 4},
		{Temperature: 0.5, TopK: 40, TopP: 0.5, Seed: 5},
		{Temperature: 1, TopP: 1, Seed: 6}, // no cut at all
		{Temperature: 0, TopP: 1},          // greedy
	}
	for _, p := range cases {
		t.Run(paramString(p), func(t *testing.T) {
			s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: p, MaxNewTokens: 4, TopN: 10})
			evs := stepTo(t, s, StageSample)
			l := evs[len(evs)-1].Logits
			if p.Greedy() {
				if len(l.Chain) != 1 || l.Chain[0].Rule != "greedy" || l.Chain[0].Kept != 1 || l.Chain[0].Removed == nil || l.Chain[0].Removed.Rank != 1 {
					t.Fatalf("greedy chain %+v", l.Chain)
				}
				return
			}
			probs := Softmax(s.CurrentLogits(), p.Temperature)
			sorted := append([]float64(nil), probs...)
			sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
			afterK := TopKCut(sorted, p.TopK)
			afterP := TopPCut(sorted, afterK, p.TopP)
			kept := MinPCut(sorted, afterP, p.MinP)
			want := []struct {
				rule string
				on   bool
				kept int
			}{{"temperature", p.Temperature != 1, len(sorted)}, {"top-k", p.TopK > 0, afterK}, {"top-p", p.TopP < 1, afterP}, {"min-p", p.MinP > 0, kept}}
			if len(l.Chain) != len(want) {
				t.Fatalf("chain %+v", l.Chain)
			}
			prev := len(sorted)
			for i, w := range want {
				c := l.Chain[i]
				if c.Rule != w.rule || c.On != w.on || c.Kept != w.kept {
					t.Errorf("step %d: %s on=%v kept %d, want %s on=%v kept %d", i, c.Rule, c.On, c.Kept, w.rule, w.on, w.kept)
				}
				var mass float64
				for _, x := range sorted[:w.kept] {
					mass += x
				}
				if math.Abs(c.Mass-mass) > 1e-6 {
					t.Errorf("%s: mass %.9f, want %.9f", c.Rule, c.Mass, mass)
				}
				switch {
				case w.kept < prev && c.Removed == nil:
					t.Errorf("%s removed %d candidates but names none", c.Rule, prev-w.kept)
				case w.kept < prev && (c.Removed.Rank != w.kept || math.Abs(float64(c.Removed.ProbT)-sorted[w.kept]) > 1e-6):
					t.Errorf("%s: first removed rank %d p %.6f, want rank %d p %.6f", c.Rule, c.Removed.Rank, c.Removed.ProbT, w.kept, sorted[w.kept])
				case w.kept == prev && c.Removed != nil:
					t.Errorf("%s removed nothing but names %+v", c.Rule, c.Removed)
				}
				prev = w.kept
			}
			if fmt.Sprint(l.Chain[3].Kept) != fmt.Sprint(l.Kept) {
				t.Errorf("the chain ends on %d, the event keeps %d", l.Chain[3].Kept, l.Kept)
			}
		})
	}
}
