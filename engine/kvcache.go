package engine

// kvcache.go: the KV cache: keys and values of past positions, per layer.
// A full-attention layer keeps every position; a sliding-window layer keeps
// only its window, in a ring (its memory stops growing once the window is
// full, as transformers' sliding-window caches do).

import (
	"errors"
	"fmt"
)

// KVCache holds the keys and values of the processed positions, per layer,
// in flat arrays like llama2.c's: layer l's rows start at off[l] and
// position p sits in row p (a full-attention layer: Cap rows) or p % Slots(l)
// (a sliding-window layer whose window is shorter than Cap: a ring of
// window rows, the oldest overwritten). A Session owns one; weights never
// live here. A cache of 16-bit precision (KVF16, KVBF16: kvprec.go) keeps
// its rows in Key16/Value16 instead, and Key/Value are nil.
type KVCache struct {
	Key     []float32 // [n_layers][slots][kv_dim] (KVF32)
	Value   []float32 // [n_layers][slots][kv_dim] (KVF32)
	Key16   []uint16  // [n_layers][slots][kv_dim] (KVF16, KVBF16)
	Value16 []uint16  // [n_layers][slots][kv_dim] (KVF16, KVBF16)
	Len     int       // positions processed
	Cap     int       // positions allowed (≤ the model's context)
	Prec    KVPrec    // how each value is stored
	kvDim   int
	slots   []int // rows of each layer
	off     []int // first value of each layer (n_layers+1 entries)
}

// ErrWindowEvicted says a truncation would need positions a sliding-window
// layer has already overwritten: recompute from the tokens instead.
var ErrWindowEvicted = errors.New("kv cache: a sliding-window layer no longer holds the positions this needs")

// NewKVCache allocates a float32 cache for up to capacity positions.
func NewKVCache(c Config, capacity int) (*KVCache, error) {
	return NewKVCacheOf(c, capacity, KVF32)
}

// NewKVCacheOf allocates a cache for up to capacity positions whose values
// are stored in precision prec.
func NewKVCacheOf(c Config, capacity int, prec KVPrec) (*KVCache, error) {
	if prec.Bytes() == 0 {
		return nil, fmt.Errorf("kv cache: unknown precision %d", prec)
	}
	if capacity <= 0 || capacity > c.SeqLen {
		return nil, fmt.Errorf("kv cache: capacity %d out of range 1..%d (the model's context)", capacity, c.SeqLen)
	}
	kv := &KVCache{Cap: capacity, Prec: prec, kvDim: c.KVDim(), slots: make([]int, c.NLayers), off: make([]int, c.NLayers+1)}
	for l := range kv.slots {
		kv.slots[l] = capacity
		if c.Sliding(l) {
			kv.slots[l] = min(capacity, c.Window)
		}
		kv.off[l+1] = kv.off[l] + kv.slots[l]*kv.kvDim
	}
	n := kv.off[c.NLayers]
	if prec == KVF32 {
		kv.Key, kv.Value = make([]float32, n), make([]float32, n)
	} else {
		kv.Key16, kv.Value16 = make([]uint16, n), make([]uint16, n)
	}
	return kv, nil
}

// layerKV returns layer l's key and value rows and how many positions
// they hold (a float32 cache's; nil for a 16-bit one: layerKV16).
func (kv *KVCache) layerKV(l int) (k, v []float32, slots int) {
	a, b := kv.off[l], kv.off[l+1]
	if kv.Prec != KVF32 {
		return nil, nil, kv.slots[l]
	}
	return kv.Key[a:b], kv.Value[a:b], kv.slots[l]
}

// layerKV16 is layerKV for a 16-bit cache (nil for a float32 one).
func (kv *KVCache) layerKV16(l int) (k, v []uint16, slots int) {
	a, b := kv.off[l], kv.off[l+1]
	if kv.Prec == KVF32 {
		return nil, nil, kv.slots[l]
	}
	return kv.Key16[a:b], kv.Value16[a:b], kv.slots[l]
}

// put writes n rows of keys and values (kv_dim each, from k and v) into
// layer l's slots slot0.. (no wrap), converted to the cache's precision.
func (kv *KVCache) put(l, slot0, n int, k, v []float32) {
	d := kv.kvDim
	o := kv.off[l] + slot0*d
	if kv.Prec == KVF32 {
		copy(kv.Key[o:o+n*d], k[:n*d])
		copy(kv.Value[o:o+n*d], v[:n*d])
		return
	}
	kv.Prec.encode(kv.Key16[o:o+n*d], k[:n*d])
	kv.Prec.encode(kv.Value16[o:o+n*d], v[:n*d])
}

// ring reports whether layer l keeps a window shorter than the cache (a
// ring whose rows are written after the pass has read them).
func (kv *KVCache) ring(l int) bool { return kv.slots[l] < kv.Cap }

// Slots is how many positions layer l keeps: Cap, or its sliding window
// when that is shorter.
func (kv *KVCache) Slots(l int) int { return kv.slots[l] }

// Oldest is the first position layer l still holds.
func (kv *KVCache) Oldest(l int) int { return max(0, kv.Len-kv.slots[l]) }

// Row returns layer l's cached key and value of position pos (views of a
// float32 cache; a 16-bit cache's values widened into new slices: the
// rounded values attention reads), or ok false when pos is not cached or
// the layer's window has moved past it.
func (kv *KVCache) Row(l, pos int) (k, v []float32, ok bool) {
	if l < 0 || l >= len(kv.slots) || pos < kv.Oldest(l) || pos >= kv.Len {
		return nil, nil, false
	}
	o := kv.off[l] + pos%kv.slots[l]*kv.kvDim
	if kv.Prec != KVF32 {
		k, v = make([]float32, kv.kvDim), make([]float32, kv.kvDim)
		kv.Prec.decode(k, kv.Key16[o:o+kv.kvDim])
		kv.Prec.decode(v, kv.Value16[o:o+kv.kvDim])
		return k, v, true
	}
	return kv.Key[o : o+kv.kvDim], kv.Value[o : o+kv.kvDim], true
}

// room reports whether n more positions fit.
func (kv *KVCache) room(n int) error {
	if kv.Len+n > kv.Cap {
		return fmt.Errorf("forward: %d positions would exceed the context: %d cached + %d new > capacity %d", kv.Len+n, kv.Len, n, kv.Cap)
	}
	return nil
}

// Truncate rewinds the cache to n positions. Entries past n are simply
// overwritten by later passes. A sliding-window layer can rewind only while
// it still holds the window position n will look back on; otherwise the
// cache is left as it was and the error wraps ErrWindowEvicted.
func (kv *KVCache) Truncate(n int) error {
	if n < 0 || n > kv.Len {
		return fmt.Errorf("kv cache: cannot truncate to %d, length is %d", n, kv.Len)
	}
	for l, s := range kv.slots {
		if n > 0 && max(0, n-s+1) < kv.Oldest(l) {
			return fmt.Errorf("truncate to %d: layer %d keeps positions %d..%d only: %w", n, l, kv.Oldest(l), kv.Len-1, ErrWindowEvicted)
		}
	}
	kv.Len = n
	return nil
}

// BytesUsed is what the held positions occupy: for each layer, kv_dim × 2
// (K and V) × the precision's bytes (4, or 2 for F16/BF16) × the positions
// it holds (at most its window).
func (kv *KVCache) BytesUsed(c Config) int64 {
	return kv.rowsUsed() * 2 * int64(c.KVDim()) * int64(kv.Prec.Bytes())
}

// BytesUsedAs is what the held positions would occupy in precision p (the
// memory panel's comparison of F32, F16 and BF16).
func (kv *KVCache) BytesUsedAs(c Config, p KVPrec) int64 {
	return kv.rowsUsed() * 2 * int64(c.KVDim()) * int64(p.Bytes())
}

func (kv *KVCache) rowsUsed() int64 {
	var rows int64
	for _, s := range kv.slots {
		rows += int64(min(kv.Len, s))
	}
	return rows
}

// BytesAllocated is the size of both backing arrays.
func (kv *KVCache) BytesAllocated() int64 {
	return 4*int64(len(kv.Key)+len(kv.Value)) + 2*int64(len(kv.Key16)+len(kv.Value16))
}
