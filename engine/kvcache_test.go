package engine

// kvcache_test.go: the KV cache's byte accounting equals what it allocates.

import (
	"path/filepath"
	"testing"
)

func TestKVBytesMatchAllocation(t *testing.T) {
	for _, name := range []string{"llama-gqa-untied-bf16", "gpt2-small-f32"} {
		m, _ := loadReference(t, filepath.Join("testdata/reference", name))
		c := m.Config
		kv, _ := NewKVCache(c, 10)
		if got, want := kv.BytesAllocated(), int64(2*c.NLayers*c.NKVHeads*c.HeadDim*10*4); got != want {
			t.Errorf("%s: allocated %d, formula %d", name, got, want)
		}
		st := NewState(c)
		m.Forward(st, kv, []int{1, 2, 3}, nil)
		if got := kv.BytesUsed(c); got != 3*c.KVBytesPerToken() || got != int64(2*c.NLayers*c.NKVHeads*c.HeadDim*3*4) {
			t.Errorf("%s: used %d", name, got)
		}
	}
}

// TestManySessionsShareOneModel runs sessions concurrently on one model
// (run with -race: the weights are only read).
