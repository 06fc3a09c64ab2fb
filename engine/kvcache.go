package engine

// kvcache.go: the KV cache: keys and values of past positions, per layer.

import "fmt"

// KVCache holds the keys and values of every processed position, per layer,
// in flat arrays like llama2.c's: layer l, position p starts at
// (l*Cap + p) * kv_dim. A Session owns one; weights never live here.
type KVCache struct {
	Key   []float32 // [n_layers][cap][kv_dim]
	Value []float32 // [n_layers][cap][kv_dim]
	Len   int       // positions filled
	Cap   int       // positions allocated (≤ the model's context)
	kvDim int
}

// NewKVCache allocates a cache for up to capacity positions.
func NewKVCache(c Config, capacity int) (*KVCache, error) {
	if capacity <= 0 || capacity > c.SeqLen {
		return nil, fmt.Errorf("kv cache: capacity %d out of range 1..%d (the model's context)", capacity, c.SeqLen)
	}
	n := c.NLayers * capacity * c.KVDim()
	return &KVCache{Key: make([]float32, n), Value: make([]float32, n), Cap: capacity, kvDim: c.KVDim()}, nil
}

// layerKV returns layer l's key and value rows for positions [0, Cap).
func (kv *KVCache) layerKV(l int) (k, v []float32) {
	off := l * kv.Cap * kv.kvDim
	n := kv.Cap * kv.kvDim
	return kv.Key[off : off+n], kv.Value[off : off+n]
}

// room reports whether n more positions fit.
func (kv *KVCache) room(n int) error {
	if kv.Len+n > kv.Cap {
		return fmt.Errorf("forward: %d positions would exceed the context: %d cached + %d new > capacity %d", kv.Len+n, kv.Len, n, kv.Cap)
	}
	return nil
}

// Truncate rewinds the cache to n positions. Entries past n are simply
// overwritten by later passes.
func (kv *KVCache) Truncate(n int) error {
	if n < 0 || n > kv.Len {
		return fmt.Errorf("kv cache: cannot truncate to %d, length is %d", n, kv.Len)
	}
	kv.Len = n
	return nil
}

// BytesUsed is what the filled positions occupy: 2 × layers × kv_dim × Len × 4.
func (kv *KVCache) BytesUsed(c Config) int64 { return int64(kv.Len) * c.KVBytesPerToken() }

// BytesAllocated is the size of both backing arrays.
func (kv *KVCache) BytesAllocated() int64 { return 4 * int64(len(kv.Key)+len(kv.Value)) }
