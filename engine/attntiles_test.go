package engine

// attntiles_test.go: a prompt's attention in tiles of rows gives the bits
// of the row-at-a-time path, outputs and recorded weights, for every head
// layout, rows that cross blocks, two sequences in one pass, soft-caps and
// 16-bit caches, on every kernel path.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// attendRecorded runs layer 0's attention of R rows after pos0 cached
// positions (random, from seed) on a cache of precision prec, with the
// weights recorded, and returns the output rows and every head's recorded
// weights, head after head.
func attendRecorded(t *testing.T, c Config, prec KVPrec, pos0, R int, seed uint64) (out, wts []float32) {
	t.Helper()
	var a *acts
	var p *pass
	if prec == KVF32 {
		var kv *KVCache
		a, p, kv = attnCase(t, c, pos0, R, seed)
		kv.Len = pos0 + R
	} else {
		a, _, p = kvPrecCase(t, c, pos0, R, seed, prec)
	}
	rec := newRecord(c)
	p.spans[0].rec = rec.start(&Hooks{LayerDone: func(LayerInfo) {}}, R)
	a.attend(c, p, 0)
	for h := range c.NHeads {
		wts = append(wts, rec.last[h][:pos0+R]...)
	}
	return slices.Clone(a.ao[:R*c.QDim()]), wts
}

func TestAttendTilesBitExact(t *testing.T) {
	defer func() { attnTiled = true }()
	type shape struct{ pos0, R int }
	for _, lay := range []struct{ H, KV, hd int }{{4, 4, 16}, {6, 2, 24}, {8, 1, 32}, {9, 3, 64}, {2, 1, 100}} {
		for _, softcap := range []float64{0, 30} {
			c := Config{Dim: lay.H * lay.hd, HiddenDim: 8, NLayers: 1, NHeads: lay.H, NKVHeads: lay.KV, HeadDim: lay.hd, SeqLen: 700, VocabSize: 1, AttnSoftcap: softcap}
			for _, prec := range []KVPrec{KVF32, KVF16} {
				for _, sh := range []shape{{0, 9}, {0, 20}, {250, 13}, {3, 300}, {500, 40}} {
					for _, ak := range attnPaths() {
						name := fmt.Sprintf("%+v/cap%v/%s/%+v/%s", lay, softcap, prec, sh, ak.name)
						attnOverride = ak
						var outs, wts [2][]float32
						for k, tiled := range []bool{false, true} {
							attnTiled = tiled
							outs[k], wts[k] = attendRecorded(t, c, prec, sh.pos0, sh.R, uint64(sh.pos0*7+sh.R))
						}
						attnOverride = nil
						if i := bitsEqual(outs[1], outs[0]); i >= 0 {
							t.Fatalf("%s: tiled out[%d] = %v, row at a time %v", name, i, outs[1][i], outs[0][i])
						}
						if i := bitsEqual(wts[1], wts[0]); i >= 0 {
							t.Fatalf("%s: tiled weight %d = %v, row at a time %v", name, i, wts[1][i], wts[0][i])
						}
					}
				}
			}
		}
	}
}

// TestAttendTilesTwoSequences: a pass with two prompts (a batch's prefill)
// splits its tiles at the sequences' boundary.
func TestAttendTilesTwoSequences(t *testing.T) {
	defer func() { attnTiled = true }()
	c := Config{Dim: 6 * 16, HiddenDim: 8, NLayers: 1, NHeads: 6, NKVHeads: 2, HeadDim: 16, SeqLen: 400, VocabSize: 1}
	r := rand.New(rand.NewPCG(8, 8))
	kvs := make([]*KVCache, 2)
	for i := range kvs {
		kvs[i], _ = NewKVCache(c, 300)
		for j := range kvs[i].Key {
			kvs[i].Key[j], kvs[i].Value[j] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
	}
	R := 11 + 270
	a := &acts{}
	a.alloc(c, R)
	for i := range a.q {
		a.q[i] = float32(r.NormFloat64() * 2)
	}
	var outs [2][]float32
	for k, tiled := range []bool{false, true} {
		attnTiled = tiled
		p := &pass{}
		p.start(make([]int, R))
		p.add(kvs[0], 5, 11, nil)
		p.add(kvs[1], 0, 270, nil)
		a.attend(c, p, 0)
		outs[k] = slices.Clone(a.ao)
	}
	if i := bitsEqual(outs[1], outs[0]); i >= 0 {
		t.Fatalf("tiled out[%d] = %v, row at a time %v", i, outs[1][i], outs[0][i])
	}
}

// TestAttendHeadsSplitBitExact: a decode step whose one block of attention
// is split across workers by key/value heads (attnHeadsSplit) gives the
// bits of the block computed whole, outputs and recorded weights, for
// every head layout, soft-caps and 16-bit caches, on every kernel path.
func TestAttendHeadsSplitBitExact(t *testing.T) {
	defer func(v int) { attnHeadsSplit = v }(attnHeadsSplit)
	for _, lay := range []struct{ H, KV, hd int }{{4, 4, 16}, {6, 2, 24}, {8, 1, 32}, {9, 3, 64}, {12, 12, 64}} {
		for _, softcap := range []float64{0, 30} {
			c := Config{Dim: lay.H * lay.hd, HiddenDim: 8, NLayers: 1, NHeads: lay.H, NKVHeads: lay.KV, HeadDim: lay.hd, SeqLen: 300, VocabSize: 1, AttnSoftcap: softcap}
			for _, prec := range []KVPrec{KVF32, KVF16} {
				for _, pos0 := range []int{0, 30, 63, 100, 255} {
					for _, ak := range attnPaths() {
						name := fmt.Sprintf("%+v/cap%v/%s/pos%d/%s", lay, softcap, prec, pos0, ak.name)
						attnOverride = ak
						var outs, wts [2][]float32
						for k, split := range []int{1 << 30, 1} {
							attnHeadsSplit = split
							outs[k], wts[k] = attendRecorded(t, c, prec, pos0, 1, uint64(pos0*5+lay.H))
						}
						attnOverride = nil
						if i := bitsEqual(outs[1], outs[0]); i >= 0 {
							t.Fatalf("%s: split out[%d] = %v, whole %v", name, i, outs[1][i], outs[0][i])
						}
						if i := bitsEqual(wts[1], wts[0]); i >= 0 {
							t.Fatalf("%s: split weight %d = %v, whole %v", name, i, wts[1][i], wts[0][i])
						}
					}
				}
			}
		}
	}
}
