package session

// dist_bench_test.go: the cost of one step's distribution (what the lab's
// logits stage computes besides the model), on a 32000-token vocabulary.

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkDistribution(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for _, tc := range []struct {
		name string
		p    SamplingParams
		kind string
	}{
		{"greedy-top20", SamplingParams{Temperature: 0, TopP: 1}, "top"},
		{"T0.8-topp0.9-top20", SamplingParams{Temperature: 0.8, TopP: 0.9}, "top"},
		{"greedy-fullsort", SamplingParams{Temperature: 0, TopP: 1}, "full"},
		{"text-greedy", SamplingParams{Temperature: 0, TopP: 1}, "text"},
		{"text-T0.8-topp0.9", SamplingParams{Temperature: 0.8, TopP: 0.9}, "text"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				switch tc.kind {
				case "full":
					NewDistribution(logits, tc.p)
				case "top":
					NewDistributionTop(logits, tc.p, 20)
				case "text":
					NewDistributionText(logits, tc.p)
				}
			}
		})
	}
	b.Run("rank-all", func(b *testing.B) {
		for b.Loop() {
			rankAll(logits, nil)
		}
	})
}
