//go:build !engineonly

package main

// bench_concurrent_test.go: bench --concurrent on a tiny random model: the
// figures are there, and the batched figures count only the timed steps
// (every session's untimed first step is left out), and every length up to
// the context runs.

import (
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/serve"
)

func TestBenchConcurrentTimesTheSteadyState(t *testing.T) {
	c := engine.Config{Arch: engine.ArchGPT2, Dim: 32, HiddenDim: 64, NLayers: 2, NHeads: 2, NKVHeads: 2, HeadDim: 16,
		VocabSize: 50, SeqLen: 64, NormEps: 1e-5, Rope: engine.RopeNone, TiedHead: true}
	m, err := engine.RandomModel("tiny", c, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n, gen = 6, 5
	r, err := benchConcurrent(m, n, 4, gen, serve.Options{MaxBatch: n, MaxWait: 0})
	if err != nil {
		t.Fatal(err)
	}
	if r.AggBatched <= 0 || r.AggUnbatched <= 0 || r.Speedup <= 0 || r.ITLp50Batched <= 0 || r.ITLp99Unbatched <= 0 {
		t.Fatalf("missing figures: %+v", r)
	}
	// n·gen timed steps (not the untimed first ones) in passes of at most n
	if r.Passes < gen || r.MeanBatchSize > n || int(r.MeanBatchSize*float64(r.Passes)+0.5) != n*gen {
		t.Fatalf("%d passes of mean %v for %d timed steps", r.Passes, r.MeanBatchSize, n*gen)
	}
	// the prompt and the steps may fill the context, as in the lab, not pass it
	if _, err := benchConcurrent(m, 2, 4, c.SeqLen-4, serve.Options{MaxBatch: 2}); err != nil {
		t.Fatalf("prompt + gen = the context: %v", err)
	}
	if _, err := benchConcurrent(m, n, 4, c.SeqLen-3, serve.Options{}); err == nil {
		t.Fatal("a run past the context was accepted")
	}
}
