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
		full bool
	}{
		{"greedy-top20", SamplingParams{Temperature: 0, TopP: 1}, false},
		{"T0.8-topp0.9-top20", SamplingParams{Temperature: 0.8, TopP: 0.9}, false},
		{"greedy-fullsort", SamplingParams{Temperature: 0, TopP: 1}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if tc.full {
					NewDistribution(logits, tc.p)
				} else {
					NewDistributionTop(logits, tc.p, 20)
				}
			}
		})
	}
}
