package engine

// pool_test.go: a region leaves the cores of other callers' regions to
// them, and how many workers run a region never changes what it computes.

import (
	"sync"
	"testing"
)

// TestParallelForLeavesCoresToOthers: with k other goroutines computing
// regions, a region uses at most n-k workers (at least its caller), and
// every item is run exactly once.
func TestParallelForLeavesCoresToOthers(t *testing.T) {
	p := getPool()
	for _, tc := range []struct {
		name                     string
		others, n, align, minWrk int
	}{
		{"alone", 0, 1000, 1, 1},
		{"one other", 1, 1000, 1, 1},
		{"one other, aligned", 1, 1000, 16, 64},
		{"more others than workers", p.n + 3, 777, 16, 1},
		{"fewer items than workers", 0, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.callers.Add(int32(tc.others)) // as if they were inside parallelFor
			defer p.callers.Add(-int32(tc.others))
			limit := max(1, p.n-tc.others)
			var mu sync.Mutex
			seen := make([]int, tc.n)
			workers := map[int]bool{}
			parallelForAligned(tc.n, tc.align, tc.minWrk, func(w, lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				workers[w] = true
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("item %d run %d times", i, c)
				}
			}
			for w := range workers {
				if w < 0 || w >= limit {
					t.Fatalf("worker id %d with %d others computing (pool of %d)", w, tc.others, p.n)
				}
			}
		})
	}
}

// TestWorkersBitIdentical: prefill, decode steps and a batched decode
// step give the same logits, bit for bit, with every worker, with one
// (others computing beside them), and when every region runs alone because
// the pool is busy.
func TestWorkersBitIdentical(t *testing.T) {
	p := getPool()
	models := batchModels(t)
	// wide enough that its regions split across workers (the checkpoints
	// above are too small to, and run alone however many workers there are)
	wide := Shapes["stories15M"]
	wide.NLayers, wide.VocabSize = 2, 4096
	m, err := RandomModel("wide-llama", wide, 5)
	if err != nil {
		t.Fatal(err)
	}
	models["wide-llama"] = m
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			run := func() [][]float32 {
				var out [][]float32
				seqs := prefilled(t, m, 3, 17) // the prefills' logits pick each first token
				for _, s := range seqs {
					st, kv, tok := NewState(m.Config), cloneKV(s.kv), s.tok
					for k := 0; k < 2; k++ {
						l, err := m.Forward(st, kv, []int{tok}, nil)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, append([]float32(nil), l...))
						tok = argmax(l)
					}
				}
				bs := NewBatchState(m.Config, len(seqs))
				batch := make([]*BatchSeq, len(seqs))
				for j, s := range seqs {
					batch[j] = &BatchSeq{State: NewState(m.Config), KV: cloneKV(s.kv), Token: s.tok}
				}
				if err := m.ForwardBatch(bs, batch); err != nil {
					t.Fatal(err)
				}
				for _, b := range batch {
					if b.Err != nil {
						t.Fatal(b.Err)
					}
					out = append(out, append([]float32(nil), b.Logits...))
					out = append(out, []float32{float32(b.Token)})
				}
				for _, s := range seqs {
					out = append(out, []float32{float32(s.tok)})
				}
				return out
			}
			g0 := p.gen.Load()
			want := run()
			if name == "wide-llama" && p.n > 1 && p.gen.Load() == g0 {
				t.Fatal("no region ran on the pool's workers: the comparison checks nothing")
			}
			for _, v := range []struct {
				name   string
				others int
				busy   bool
			}{{"one worker", p.n - 1, false}, {"pool busy", 0, true}} {
				p.callers.Add(int32(v.others))
				if v.busy {
					p.busy.Lock()
				}
				g0 := p.gen.Load()
				got := run()
				if v.busy {
					p.busy.Unlock()
				}
				p.callers.Add(-int32(v.others))
				if !v.busy && p.gen.Load() != g0 {
					t.Fatalf("a region ran on the pool's workers with %d others computing", v.others)
				}
				for i := range want {
					if j, diff := firstDiff(got[i], want[i]); j >= 0 {
						t.Fatalf("%s: output %d, value %d: %s (vs every worker)", v.name, i, j, diff)
					}
				}
			}
		})
	}
}
