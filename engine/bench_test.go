package engine

// bench_test.go: benchmarks of decode, prefill and the GEMM kernel on synthetic weights of named shapes.

import (
	"fmt"
	"testing"
)

// BenchmarkDecode measures one decode step (one position through the whole
// model) on synthetic weights of named shapes, in F32 and BF16. Bytes/s is
// the weight bytes streamed per step.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"stories15M", "gpt2-124M"} {
		m32, err := RandomModel(name, Shapes[name], 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, dt := range []DType{F32, BF16} {
			b.Run(name+"/"+dt.String(), func(b *testing.B) {
				m := m32.WithWeights(dt)
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

// BenchmarkGEMM runs the prefill linear pass alone on gpt2-124M's MLP
// shapes (128 positions) with each kernel set and reports GFLOP/s.
func BenchmarkGEMM(b *testing.B) {
	sets := append([]*kernelSet{&goKernels}, otherKernels...)
	if simdKernels != nil {
		sets = append(sets, simdKernels)
	}
	const T = 128
	for _, sh := range []struct{ in, out int }{{768, 3072}, {3072, 768}} {
		for _, layout := range []string{"out-in", "in-out"} {
			for _, ks := range sets {
				b.Run(fmt.Sprintf("%dx%d/%s/%s", sh.in, sh.out, layout, ks.name), func(b *testing.B) {
					defer useKernels(useKernels(ks))
					w := NewMat(make([]float32, sh.in*sh.out), sh.out, sh.in)
					if layout == "in-out" {
						w = Mat{Rows: sh.out, Cols: sh.in, InOut: true, Ld: sh.out, F32: w.F32}
					}
					for i := range w.F32 {
						w.F32[i] = float32(i%7) * 0.01
					}
					x := make([]float32, T*sh.in)
					for i := range x {
						x[i] = float32(i%5) * 0.1
					}
					out := make([]float32, T*sh.out)
					st := NewState(Config{Dim: sh.in, HiddenDim: sh.in, NHeads: 1, HeadDim: sh.in, SeqLen: 1})
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						st.linear(x, T, linJob{out, &w, nil})
					}
					b.ReportMetric(2*T*float64(sh.in*sh.out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
