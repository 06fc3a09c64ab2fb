package engine

// bench_test.go: decode and prefill benchmarks on random-weight models of named shapes.

import (
	"testing"
)

// BenchmarkDecode measures one decode step (one position through the whole
// model) on synthetic weights of named shapes.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"stories15M", "gpt2-124M"} {
		b.Run(name, func(b *testing.B) {
			m, err := RandomModel(name, Shapes[name], 1)
			if err != nil {
				b.Fatal(err)
			}
			st := NewState(m.Config)
			kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
			b.SetBytes(m.Weights.Bytes())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if kv.Len == kv.Cap {
					kv.Truncate(0)
				}
				if _, err := m.Forward(st, kv, []int{i % 100}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPrefill compares a 64-token batched prefill with 64 single steps.
func BenchmarkPrefill(b *testing.B) {
	m, _ := RandomModel("stories15M", Shapes["stories15M"], 1)
	toks := make([]int, 64)
	for i := range toks {
		toks[i] = i * 7
	}
	st := NewState(m.Config)
	kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
	b.Run("batched", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			kv.Truncate(0)
			m.Forward(st, kv, toks, nil)
		}
	})
	b.Run("token-by-token", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			kv.Truncate(0)
			for _, t := range toks {
				m.Forward(st, kv, []int{t}, nil)
			}
		}
	})
}
