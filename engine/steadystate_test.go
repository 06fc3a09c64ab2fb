package engine

// steadystate_test.go: once its scratch has grown, a decode step allocates
// nothing outside the matrix products (no per-call jobs, pool regions,
// activation closures or RoPE tables), for a float32 and a 16-bit cache:
// a long run leaves the collector almost nothing to do. linear.go's
// per-call region closure is what is left (about one allocation per
// matrix-product call, 4 per layer and the head's; linear.go is being
// reworked separately): when it goes, lower linearAllocs to 0.

import (
	"fmt"
	"testing"
)

func TestDecodeStepAllocatesNothing(t *testing.T) {
	for _, name := range []string{"stories15M", "gpt2-124M"} {
		c := Shapes[name]
		c.VocabSize, c.SeqLen = 512, 300
		m, err := RandomModel(name, c, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, prec := range []KVPrec{KVF32, KVF16} {
			t.Run(fmt.Sprintf("%s/%s/workers%d", name, prec, maxWorkers()), func(t *testing.T) {
				kv, _ := NewKVCacheOf(c, c.SeqLen, prec)
				st := NewState(c)
				if _, err := m.Forward(st, kv, []int{1, 2, 3, 4, 5}, nil); err != nil {
					t.Fatal(err)
				}
				step := func() {
					if _, err := m.Forward(st, kv, []int{7}, nil); err != nil {
						t.Fatal(err)
					}
					kv.Truncate(kv.Len - 1)
				}
				step()
				linearAllocs := float64(4*c.NLayers + 2)
				n := testing.AllocsPerRun(20, step)
				t.Logf("%v allocations a step", n)
				if n > linearAllocs {
					t.Errorf("a decode step allocates %v times, more than linear.go's %v", n, linearAllocs)
				}
			})
		}
	}
}
