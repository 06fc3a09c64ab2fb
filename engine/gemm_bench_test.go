package engine

// gemm_bench_test.go: the prefill GEMM tiles alone (operands in cache) and a 512-token prefill in F32,
// BF16 and BF16 dot products, the figures against the FP32 peak and llama-bench pp512.

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferscope/inferscope/internal/cputime"
)

// BenchmarkGemmTile runs each tile kernel on a panel of k = 768 in cache:
// the kernels' arithmetic rate (GFLOP/s, two per multiply-add) on one
// thread, against which the prefill's rate is read; cpu-GFLOP/s divides by
// the process's CPU time instead (what a loaded machine leaves of it).
func BenchmarkGemmTile(b *testing.B) {
	const k = 768
	a := randVec(rand.New(rand.NewPCG(1, 1)), 12*k)
	bp := randVec(rand.New(rand.NewPCG(2, 2)), k*32)
	c := make([]float32, 12*32)
	ap := make([]uint32, 12*k/2)
	bq := make([]uint32, k/2*32)
	for i := range ap {
		ap[i] = uint32(f32ToBF16(a[i])) | uint32(f32ToBF16(a[i+1]))<<16
	}
	for i := range bq {
		bq[i] = uint32(f32ToBF16(bp[i])) | uint32(f32ToBF16(bp[i+1]))<<16
	}
	for _, ks := range append([]*kernelSet{&goKernels}, append(otherKernels, simdKernels)...) {
		if ks == nil {
			continue
		}
		b.Run(fmt.Sprintf("%s/f32-%dx%d", ks.name, ks.mr, ks.nr), func(b *testing.B) {
			c0 := cputime.Process()
			for b.Loop() {
				ks.gemmTile(k, a, k, bp, c, 32)
			}
			reportFlops(b, 2*float64(ks.mr*ks.nr*k), c0)
		})
		if ks.gemmBF16 != nil && ks != &goKernels {
			b.Run(fmt.Sprintf("%s/bf16dot-%dx%d", ks.name, ks.mr, ks.nr), func(b *testing.B) {
				c0 := cputime.Process()
				for b.Loop() {
					ks.gemmBF16(k/2, ap, k/2, bq, c, 32)
				}
				reportFlops(b, 2*float64(ks.mr*ks.nr*k), c0)
			})
		}
	}
	if simdKernels != nil && simdKernels.mr == 12 && otherTile6x32 != nil {
		b.Run("avx512/f32-6x32", func(b *testing.B) {
			c0 := cputime.Process()
			for b.Loop() {
				otherTile6x32(k, a, k, bp, c, 32)
			}
			reportFlops(b, 2*float64(6*32*k), c0)
		})
	}
}

func reportFlops(b *testing.B, perOp float64, c0 time.Duration) {
	n := float64(b.N) * perOp / 1e9
	b.ReportMetric(n/b.Elapsed().Seconds(), "GFLOP/s")
	b.ReportMetric(n/(cputime.Process()-c0).Seconds(), "cpu-GFLOP/s")
}

// BenchmarkPrefillDTypes is a 512-token prefill of the gpt2-124M shape
// (random weights, [out][in]) in F32, BF16 (weights widened into float32
// panels) and BF16 with bfloat16 dot products (SetBF16Dot): tok/s, to set
// beside `llama-bench -p 512 -n 0 -t 2` on the same model's F32 and BF16
// GGUF files (README, performance).
func BenchmarkPrefillDTypes(b *testing.B) {
	const name, T = "gpt2-124M", 512
	m32, err := RandomModel(name, Shapes[name], 1)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]int, T)
	for i := range toks {
		toks[i] = i * 7 % m32.Config.VocabSize
	}
	for _, v := range []struct {
		name string
		dt   DType
		dot  bool
	}{{"f32", F32, false}, {"bf16", BF16, false}, {"bf16dot", BF16, true}} {
		b.Run(v.name, func(b *testing.B) {
			defer SetBF16Dot(SetBF16Dot(v.dot))
			m := m32.WithWeights(v.dt)
			st := NewState(m.Config)
			kv, _ := NewKVCache(m.Config, T)
			m.Forward(st, kv, toks, nil)
			for b.Loop() {
				kv.Truncate(0)
				if _, err := m.Forward(st, kv, toks, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(T*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
