package session

// kvprec_test.go: a run with a 16-bit KV cache (Config.KVCache): the same
// greedy text as the float32 cache on stories260K, half the cache bytes in
// the memory budget (with the float32 figure beside it), the stored values
// in the KV inspector, and a bad name refused.

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

func TestKVCachePrecision(t *testing.T) {
	m := loadStories(t)
	run := func(kvc string) (*Session, []int, MemoryBudget) {
		s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 40, KVCache: kvc})
		evs := runAll(t, s)
		var mb MemoryBudget
		for _, e := range evs {
			if a := e.Append; a != nil {
				mb = a.Memory
			}
		}
		return s, s.Generated(), mb
	}
	_, want, m32 := run("")
	if m32.KVType != "f32" || m32.KVUsed != m32.KVUsedF32 || m32.KVUsed == 0 {
		t.Fatalf("f32 budget %+v", m32)
	}
	for _, kvc := range []string{"f16", "bf16"} {
		s, got, mb := run(kvc)
		if !slices.Equal(got, want) {
			t.Errorf("%s: greedy tokens %v, f32 cache %v", kvc, got, want)
		}
		if mb.KVType != kvc || 2*mb.KVUsed != mb.KVUsedF32 || mb.KVUsedF32 != m32.KVUsedF32 || 2*mb.KVAllocated != m32.KVAllocated {
			t.Errorf("%s: budget %+v, f32 %+v", kvc, mb, m32)
		}
		in, err := s.Inspect(InspectRequest{What: InspectKV, Layer: 1, Pos: 3})
		if err != nil {
			t.Fatal(err)
		}
		if in.KVType != kvc {
			t.Errorf("%s: inspection says kv_type %q", kvc, in.KVType)
		}
		for _, row := range append(in.Keys, in.Values...) {
			for _, x := range row {
				r := quant.F16ToF32(quant.F32ToF16(x))
				if kvc == "bf16" {
					r = quant.BF16ToF32(quant.F32ToBF16(x))
				}
				if math.Float32bits(r) != math.Float32bits(x) {
					t.Fatalf("%s: inspected value %v is not a %s value", kvc, x, kvc)
				}
			}
		}
	}
	if _, err := New(m, Config{Prompt: "Once", Sampling: greedy(), MaxNewTokens: 4, KVCache: "q4"}); err == nil || !strings.Contains(err.Error(), "allowed f32, f16, bf16") {
		t.Errorf("kv_cache q4: %v", err)
	}
}
