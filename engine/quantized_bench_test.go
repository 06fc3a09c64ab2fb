package engine

// quantized_bench_test.go: decode on block-quantized weights, one sequence
// at a time against a batched pass of all of them.

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferscope/inferscope/internal/cputime"
)

// BenchmarkQuantizedDecodeBatch: gpt2-124M with random weights quantized
// to Q8_0 (and Q4_0) at load, 32 sequences: each decoding alone, one after
// another, against one batched pass for all 32 (each weight block read and
// dequantized once for the 32). cpu-ns/tok is the process's CPU time per
// token (every thread), the figure to compare on a loaded machine:
//
//	go test ./engine -run - -bench QuantizedDecodeBatch -count 3
func BenchmarkQuantizedDecodeBatch(b *testing.B) {
	base, err := RandomModel("gpt2-124M", Shapes["gpt2-124M"], 1)
	if err != nil {
		b.Fatal(err)
	}
	const n = 32
	for _, d := range []DType{Q8_0, Q4_0} {
		m, err := base.Quantized(d)
		if err != nil {
			b.Fatal(err)
		}
		mk := func() []*BatchSeq {
			var out []*BatchSeq
			for range n {
				kv, _ := NewKVCache(m.Config, 64)
				st := NewState(m.Config)
				m.Forward(st, kv, []int{1, 2, 3, 4, 5, 6, 7, 8}, nil)
				out = append(out, &BatchSeq{State: st, KV: kv, Token: 9})
			}
			return out
		}
		rewind := func(seqs []*BatchSeq) {
			for _, s := range seqs {
				if s.KV.Len+1 > s.KV.Cap {
					s.KV.Len = 8
				}
			}
		}
		report := func(b *testing.B, c0 time.Duration) {
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(c0.Seconds()*1e9/float64(n*b.N), "cpu-ns/tok")
		}
		b.Run(fmt.Sprintf("%s/alone-%d", d, n), func(b *testing.B) {
			seqs := mk()
			c0 := cputime.Process()
			for b.Loop() {
				rewind(seqs)
				for _, s := range seqs {
					m.Forward(s.State, s.KV, []int{s.Token}, nil)
				}
			}
			report(b, cputime.Process()-c0)
		})
		b.Run(fmt.Sprintf("%s/batched-%d", d, n), func(b *testing.B) {
			seqs := mk()
			bs := NewBatchState(m.Config, n)
			c0 := cputime.Process()
			for b.Loop() {
				rewind(seqs)
				m.ForwardBatch(bs, seqs)
			}
			report(b, cputime.Process()-c0)
		})
	}
}
