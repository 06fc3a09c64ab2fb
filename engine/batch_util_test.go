package engine

// batch_util_test.go: how well a batched pass of 32 and 32 concurrent
// lone steps use the cores (gpt2-124M shape): wall and CPU time per
// token, and their ratio (cores busy on average). The wall-clock speedup
// of batching is its CPU speedup times the ratio of these utilisations.

import (
	"fmt"
	"sync"
	"testing"

	"github.com/inferscope/inferscope/internal/cputime"
)

func BenchmarkDecodeBatchUtilisation(b *testing.B) {
	m, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	const n = 32
	mk := func() []*BatchSeq {
		var out []*BatchSeq
		for range n {
			kv, _ := NewKVCache(m.Config, 1024)
			st := NewState(m.Config)
			m.Forward(st, kv, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, nil)
			out = append(out, &BatchSeq{State: st, KV: kv, Token: 9})
		}
		return out
	}
	reset := func(seqs []*BatchSeq) {
		for _, s := range seqs {
			if s.KV.Len+1 > s.KV.Cap {
				s.KV.Len = 16
			}
		}
	}
	for _, kind := range []string{"unbatched-concurrent", "batched"} {
		b.Run(fmt.Sprintf("%s-%d", kind, n), func(b *testing.B) {
			seqs := mk()
			bs := NewBatchState(m.Config, n)
			cpu0 := cputime.Process()
			for b.Loop() {
				reset(seqs)
				if kind == "batched" {
					m.ForwardBatch(bs, seqs)
					continue
				}
				var wg sync.WaitGroup
				for _, s := range seqs {
					wg.Add(1)
					go func() { defer wg.Done(); m.Forward(s.State, s.KV, []int{s.Token}, nil) }()
				}
				wg.Wait()
			}
			cpu := cputime.Process() - cpu0
			toks := float64(n * b.N)
			b.ReportMetric(b.Elapsed().Seconds()*1000/toks, "wall-ms/token")
			b.ReportMetric(cpu.Seconds()*1000/toks, "cpu-ms/token")
			b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores-busy")
		})
	}
}
