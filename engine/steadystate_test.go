package engine

// steadystate_test.go: once its scratch has grown, a decode step allocates
// nothing (no per-call jobs, pool regions, linear regions, activation
// closures or RoPE tables), for a float32 and a 16-bit cache, on the
// synthetic [out][in] layout, GPT-2's real [in][out] one, Q8_0 blocks and Q4_K
// ones (whose AVX-512 kernels keep pooled scratch), alone and
// batched: a long run leaves the collector nothing to do.

import (
	"fmt"
	"strings"
	"testing"
)

func TestDecodeStepAllocatesNothing(t *testing.T) {
	random := map[string]*Model{} // one random model a shape
	for _, name := range []string{"stories15M", "gpt2-124M", "gpt2-124M real", "gpt2-124M q8_0", "gpt2-124M q4_k"} {
		shape, real := strings.CutSuffix(name, " real")
		shape, q8 := strings.CutSuffix(shape, " q8_0")
		shape, q4k := strings.CutSuffix(shape, " q4_k")
		c := Shapes[shape]
		// two layers: every layer runs the same code, so an allocation in
		// one shows at two as at twelve, and GPT-2's weights draw 6× faster
		c.VocabSize, c.SeqLen, c.NLayers = 512, 300, min(c.NLayers, 2)
		m := random[shape]
		if m == nil {
			var err error
			if m, err = RandomModel(shape, c, 1); err != nil {
				t.Fatal(err)
			}
			random[shape] = m
		}
		if real { // [in][out], c_attn fused (inout_bench_test.go)
			m = realLayout(m)
		}
		if q8 || q4k { // block-quantized: rowsQuant's row tables are the region's
			dt := Q8_0
			if q4k {
				dt = Q4_K
			}
			var err error
			if m, err = m.Quantized(dt); err != nil {
				t.Fatal(err)
			}
		}
		for _, prec := range []KVPrec{KVF32, KVF16} {
			t.Run(fmt.Sprintf("%s/%s/workers%d", name, prec, maxWorkers()), func(t *testing.T) {
				kv, _ := NewKVCacheOf(c, c.SeqLen, prec)
				st := NewState(c)
				if _, err := m.Forward(st, kv, []int{1, 2, 3, 4, 5}, nil); err != nil {
					t.Fatal(err)
				}
				tok := []int{7}
				step := func() {
					if _, err := m.Forward(st, kv, tok, nil); err != nil {
						t.Fatal(err)
					}
					kv.Truncate(kv.Len - 1)
				}
				step()
				n := testing.AllocsPerRun(20, step)
				t.Logf("%v allocations a step", n)
				if n > 0 {
					t.Errorf("a decode step allocates %v times", n)
				}
				// a batched step of 5 sequences (four-row groups and a
				// lone row; a padded tile on [in][out])
				var seqs []*BatchSeq
				for i := range 5 {
					kv, _ := NewKVCacheOf(c, c.SeqLen, prec)
					st := NewState(c)
					if _, err := m.Forward(st, kv, []int{1, 2 + i}, nil); err != nil {
						t.Fatal(err)
					}
					seqs = append(seqs, &BatchSeq{State: st, KV: kv, Token: 9})
				}
				bs := NewBatchState(c, len(seqs))
				batch := func() {
					if err := m.ForwardBatch(bs, seqs); err != nil {
						t.Fatal(err)
					}
					for _, s := range seqs {
						if s.Err != nil {
							t.Fatal(s.Err)
						}
						s.KV.Truncate(s.KV.Len - 1)
					}
				}
				batch()
				n = testing.AllocsPerRun(10, batch)
				t.Logf("%v allocations a batched step", n)
				if n > 0 {
					t.Errorf("a batched decode step allocates %v times", n)
				}
			})
		}
	}
}
