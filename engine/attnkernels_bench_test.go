package engine

// attnkernels_bench_test.go: decode at long context (the attention's share).

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/inferscope/inferscope/internal/cputime"
	"github.com/inferscope/inferscope/internal/enginebench"
)

// BenchmarkDecodeDepth measures one decode step of the SmolLM2-135M shape
// with the cache already holding depth positions (random keys and values,
// no prefill), so the difference between depths is attention's cost.
func BenchmarkDecodeDepth(b *testing.B) {
	c := Shapes["smollm2-135M"]
	m, err := RandomModel("smollm2-135M", c, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, prec := range KVPrecs {
		for _, depth := range []int{16, 2000} {
			b.Run(fmt.Sprintf("%s/depth%d", prec, depth), func(b *testing.B) {
				st := NewState(c)
				kv := randomKV(c, depth+1, prec)
				b.ResetTimer()
				c0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					kv.Len = depth
					if _, err := m.Forward(st, kv, []int{i % 100}, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// randomKV is a cache of capacity positions of precision prec filled with
// random keys and values.
func randomKV(c Config, capacity int, prec KVPrec) *KVCache {
	kv, _ := NewKVCacheOf(c, capacity, prec)
	r := rand.New(rand.NewPCG(1, 1))
	if prec == KVF32 {
		for i := range kv.Key {
			kv.Key[i], kv.Value[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		return kv
	}
	row := make([]float32, 2*len(kv.Key16))
	for i := range row {
		row[i] = float32(r.NormFloat64())
	}
	prec.encode(kv.Key16, row[:len(kv.Key16)])
	prec.encode(kv.Value16, row[len(kv.Key16):])
	return kv
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
		for _, prec := range KVPrecs {
			b.Run(prec.String()+"/"+tc.name, func(b *testing.B) {
				kv := randomKV(c, tc.depth+1, prec)
				r := rand.New(rand.NewPCG(1, 1))
				a := &acts{}
				a.alloc(c, 1)
				for i := range a.q {
					a.q[i] = float32(r.NormFloat64())
				}
				p := &pass{}
				p.start([]int{0})
				p.add(kv, tc.depth, 1, nil)
				b.SetBytes(int64(tc.layers) * int64(tc.depth+1) * c.KVBytesPerToken() / int64(c.NLayers) * int64(prec.Bytes()) / 4)
				b.ResetTimer()
				c0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					for l := range tc.layers {
						a.attend(c, p, l)
					}
				}
				b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkAttendVsFloor is bench --depth's attention-against-the-floor
// figure for attention alone: one decode step's attention over every
// layer of the SmolLM2-135M shape at depth 2000, its caches cold (the step
// reads one of enough caches, in turn, that together they pass 640 MB, more
// than the last-level cache keeps; a single cache would stay there between
// iterations, which a real step's weights do not allow), alternating with
// the bench command's read-bandwidth probe (512 MB, GOMAXPROCS threads).
// It reports the medians: attn-ms, floor-ms (the KV bytes at the probe's
// bandwidth) and their ratio x-floor. Run with -cpu 2 for the two-thread
// figure, -cpu 1 for one core.
func BenchmarkAttendVsFloor(b *testing.B) {
	c := Shapes["smollm2-135M"]
	const depth = 2000
	probe := enginebench.NewBandwidthProbe(512 << 20)
	for _, prec := range []KVPrec{KVF32, KVF16} {
		b.Run(prec.String(), func(b *testing.B) {
			kv0 := randomKV(c, depth+1, prec)
			bytes := int64(depth+1) * c.KVBytesPerToken() * int64(prec.Bytes()) / 4
			var ps []*pass
			for i := int64(0); i*bytes < 640<<20; i++ {
				kv, _ := NewKVCacheOf(c, depth+1, prec)
				copy(kv.Key, kv0.Key)
				copy(kv.Value, kv0.Value)
				copy(kv.Key16, kv0.Key16)
				copy(kv.Value16, kv0.Value16)
				p := &pass{}
				p.start([]int{0})
				p.add(kv, depth, 1, nil)
				ps = append(ps, p)
			}
			a := &acts{}
			a.alloc(c, 1)
			r := rand.New(rand.NewPCG(1, 1))
			for i := range a.q {
				a.q[i] = float32(r.NormFloat64())
			}
			step := func(p *pass) {
				for l := range c.NLayers {
					a.attend(c, p, l)
				}
			}
			step(ps[0])
			var attn, floor []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bw := probe.Run(0)
				t0 := time.Now()
				step(ps[i%len(ps)])
				attn = append(attn, time.Since(t0).Seconds()*1e3)
				floor = append(floor, float64(bytes)/bw*1e3)
			}
			b.StopTimer()
			ma, mf := median(attn), median(floor)
			b.ReportMetric(ma, "attn-ms")
			b.ReportMetric(mf, "floor-ms")
			b.ReportMetric(ma/mf, "x-floor")
		})
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
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
			c0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				kv.Truncate(0)
				if _, err := m.Forward(st, kv, toks, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkAttendPrompt is the attention of a 512-token prompt at one layer
// of the SmolLM2-135M shape (the queries, keys and values random), in
// tiles of rows (attntiles.go) and a row at a time.
func BenchmarkAttendPrompt(b *testing.B) {
	c := Shapes["smollm2-135M"]
	for _, tiled := range []bool{true, false} {
		b.Run(map[bool]string{true: "tiled", false: "rows"}[tiled], func(b *testing.B) {
			defer func() { attnTiled = true }()
			attnTiled = tiled
			T := 512
			kv := randomKV(c, T, KVF32)
			kv.Len = T
			a := &acts{}
			a.alloc(c, T)
			r := rand.New(rand.NewPCG(2, 2))
			for i := range a.q {
				a.q[i] = float32(r.NormFloat64())
			}
			p := &pass{}
			p.start(make([]int, T))
			p.add(kv, 0, T, nil)
			a.attend(c, p, 0)
			b.ResetTimer()
			c0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				a.attend(c, p, 0)
			}
			b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
