package engine

// attnkernels_bench_test.go: decode at long context (the attention's share).

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeDepth measures one decode step of the SmolLM2-135M shape
// with the cache already holding depth positions (random keys and values,
// no prefill), so the difference between depths is attention's cost.
func BenchmarkDecodeDepth(b *testing.B) {
	c := Shapes["smollm2-135M"]
	m, err := RandomModel("smollm2-135M", c, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, depth := range []int{16, 2000} {
		b.Run(fmt.Sprintf("depth%d", depth), func(b *testing.B) {
			st := NewState(c)
			kv, _ := NewKVCache(c, depth+1)
			r := rand.New(rand.NewPCG(1, 1))
			for i := range kv.Key {
				kv.Key[i], kv.Value[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				kv.Len = depth
				if _, err := m.Forward(st, kv, []int{i % 100}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkAttendDepth runs one decode step's attention alone (every layer
// of the SmolLM2-135M shape over depth cached positions; "hot": one layer's
// 512 positions again and again, from the core's caches) and reports it
// against the KV bytes it reads.
func BenchmarkAttendDepth(b *testing.B) {
	c := Shapes["smollm2-135M"]
	for _, tc := range []struct {
		name          string
		depth, layers int
	}{{"hot", 512, 1}, {"depth2000", 2000, c.NLayers}} {
		b.Run(tc.name, func(b *testing.B) {
			kv, _ := NewKVCache(c, tc.depth+1)
			r := rand.New(rand.NewPCG(1, 1))
			for i := range kv.Key {
				kv.Key[i], kv.Value[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			a := &acts{}
			a.alloc(c, 1)
			for i := range a.q {
				a.q[i] = float32(r.NormFloat64())
			}
			p := &pass{}
			p.start([]int{0})
			p.add(kv, tc.depth, 1, nil)
			b.SetBytes(int64(tc.layers) * int64(tc.depth+1) * c.KVBytesPerToken() / int64(c.NLayers))
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				for l := range tc.layers {
					a.attend(c, p, l)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkPrefill512 is a 512-token prefill of the gpt2-124M and
// SmolLM2-135M shapes (attention is a quarter of its time).
func BenchmarkPrefill512(b *testing.B) {
	for _, name := range []string{"gpt2-124M", "smollm2-135M"} {
		b.Run(name, func(b *testing.B) {
			m, err := RandomModel(name, Shapes[name], 1)
			if err != nil {
				b.Fatal(err)
			}
			toks := make([]int, 512)
			for i := range toks {
				toks[i] = i * 7 % m.Config.VocabSize
			}
			st := NewState(m.Config)
			kv, _ := NewKVCache(m.Config, 512)
			m.Forward(st, kv, toks, nil)
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				kv.Truncate(0)
				if _, err := m.Forward(st, kv, toks, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
