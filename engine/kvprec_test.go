package engine

// kvprec_test.go: a 16-bit KV cache (F16, BF16): widening its rows is exact
// on every path; attention over it gives the bits of a float32 cache holding
// the rounded values, for every head layout, sliding rings and soft-caps;
// a model's logits stay within a stated tolerance of the float32 cache's;
// its bytes are half.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

func TestKVWidenExact(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, p := range []KVPrec{KVF16, KVBF16} {
		got := make([]float32, len(all))
		kvWiden(got, all, 1, len(all), len(all), p)
		for i, h := range all {
			want := quant.F16ToF32(h)
			if h&0x7c00 == 0x7c00 && h&0x3ff != 0 { // a NaN: quiet
				want = quant.F16ToF32(h | 0x200)
			}
			if p == KVBF16 {
				want = quant.BF16ToF32(h)
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%s %#04x: %v, want %v", p, h, got[i], want)
			}
		}
		// strided rows of every tail length, nothing written past rows·n
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 48, 64, 100, 128} {
			for _, rows := range []int{1, 2, 5} {
				lds := n + 5
				src := make([]uint16, (rows-1)*lds+n)
				for i := range src {
					src[i] = uint16(r.Uint32())
				}
				want := make([]float32, rows*n+3)
				got := make([]float32, rows*n+3)
				for i := range got {
					want[i], got[i] = -7, -7
				}
				kvWidenGo(want, src, rows, n, lds, p)
				kvWiden(got, src, rows, n, lds, p)
				if i := bitsEqual(got, want); i >= 0 {
					t.Fatalf("%s n %d rows %d: [%d] = %v, want %v", p, n, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// kvPrecCase is attnCase's pass over two caches of the same rounded
// values: a float32 one and one of precision p.
func kvPrecCase(t *testing.T, c Config, pos0, R int, seed uint64, p KVPrec) (a *acts, pf, ph *pass) {
	a, pf, kf := attnCase(t, c, pos0, R, seed)
	p.Round(kf.Key)
	p.Round(kf.Value)
	p.Round(a.k)
	p.Round(a.v)
	kh, err := NewKVCacheOf(c, pos0+R, p)
	if err != nil {
		t.Fatal(err)
	}
	p.encode(kh.Key16, kf.Key)
	p.encode(kh.Value16, kf.Value)
	kf.Len, kh.Len = pos0+R, pos0+R
	ph = &pass{}
	ph.start(make([]int, R))
	ph.add(kh, pos0, R, nil)
	return a, pf, ph
}

func TestKVPrecAttendBitExact(t *testing.T) {
	cfgs := []Config{}
	for _, lay := range []struct{ H, KV, hd int }{{4, 4, 16}, {6, 2, 24}, {8, 1, 32}, {9, 3, 64}, {2, 1, 100}} {
		cfgs = append(cfgs, Config{Dim: lay.H * lay.hd, HiddenDim: 8, NLayers: 1, NHeads: lay.H, NKVHeads: lay.KV, HeadDim: lay.hd, SeqLen: 700, VocabSize: 1})
	}
	// a sliding layer (a ring that has wrapped: this pass's rows from a.k)
	// with Gemma 2's soft-cap
	cfgs = append(cfgs, Config{Dim: 4 * 32, HiddenDim: 8, NLayers: 1, NHeads: 4, NKVHeads: 2, HeadDim: 32, SeqLen: 700, VocabSize: 1,
		Window: 300, LayerTypes: "s", AttnSoftcap: 50})
	for _, p := range []KVPrec{KVF16, KVBF16} {
		for ci, c := range cfgs {
			for _, sh := range []struct{ pos0, R int }{{0, 1}, {0, 5}, {130, 1}, {600, 1}, {250, 20}, {3, 12}, {500, 3}} {
				a, pf, ph := kvPrecCase(t, c, sh.pos0, sh.R, uint64(sh.pos0+sh.R), p)
				for _, ak := range attnPaths() {
					name := fmt.Sprintf("%s/cfg%d/%+v/%s", p, ci, sh, ak.name)
					attnOverride = ak
					a.attend(c, pf, 0)
					want := slices.Clone(a.ao)
					clear(a.ao)
					a.attend(c, ph, 0)
					attnOverride = nil
					if i := bitsEqual(a.ao, want); i >= 0 {
						t.Fatalf("%s: out[%d] = %v, float32 cache %v", name, i, a.ao[i], want[i])
					}
				}
			}
		}
	}
}

// kvPrecTolerance is how far a model's logits may move when its cache
// rounds keys and values to 16 bits, relative to the largest logit
// magnitude: F16 keeps 11 significant bits (relative rounding ≤ 2⁻¹¹ ≈
// 4.9e-4), BF16 8 (≤ 2⁻⁸ ≈ 3.9e-3); the logits move by a fraction of that.
var kvPrecTolerance = map[KVPrec]float64{KVF16: 2e-3, KVBF16: 2e-2}

func TestKVPrecLogits(t *testing.T) {
	models := map[string]*Model{}
	for _, name := range []string{"llama-gqa-untied-bf16", "gpt2-small-f32", "llama-mqa-f16-theta", "llama-tied-f32"} {
		m, _ := loadReference(t, filepath.Join("testdata/reference", name))
		models[name] = m
	}
	sc := Config{Arch: ArchLlama, Dim: 64, HiddenDim: 96, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 16, VocabSize: 50, SeqLen: 64,
		NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, Window: 6, LayerTypes: "sf", AttnSoftcap: 20}
	m, err := RandomModel("sliding", sc, 3)
	if err != nil {
		t.Fatal(err)
	}
	models["sliding-softcap"] = m
	for name, m := range models {
		c := m.Config
		prompt := []int{1, 5, 9, 2, 7, 3, 8, 4, 6, 1, 2, 3}
		for i := range prompt {
			prompt[i] %= c.VocabSize
		}
		steps := 8
		run := func(p KVPrec) [][]float32 {
			kv, err := NewKVCacheOf(c, len(prompt)+steps, p)
			if err != nil {
				t.Fatal(err)
			}
			st := NewState(c)
			var out [][]float32
			logits, err := m.Forward(st, kv, prompt, nil)
			if err != nil {
				t.Fatal(err)
			}
			for s := range steps {
				out = append(out, slices.Clone(logits))
				if logits, err = m.Forward(st, kv, []int{(s*7 + 3) % c.VocabSize}, nil); err != nil {
					t.Fatal(err)
				}
			}
			return out
		}
		ref := run(KVF32)
		for _, p := range []KVPrec{KVF16, KVBF16} {
			got := run(p)
			var worst float64
			for s := range ref {
				var scale, d float64
				for i, x := range ref[s] {
					scale = max(scale, math.Abs(float64(x)))
					d = max(d, math.Abs(float64(got[s][i]-x)))
				}
				worst = max(worst, d/scale)
			}
			t.Logf("%s %s: logits within %.2g of the largest logit", name, p, worst)
			if worst > kvPrecTolerance[p] || worst == 0 {
				t.Errorf("%s %s: logits moved %.3g of the largest logit, tolerance %g (0: the cache did not round)", name, p, worst, kvPrecTolerance[p])
			}
		}
	}
}

func TestKVPrecBytes(t *testing.T) {
	c := Shapes["smollm2-135M"]
	for _, p := range KVPrecs {
		kv, err := NewKVCacheOf(c, 10, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := kv.BytesAllocated(), int64(2*c.NLayers*c.KVDim()*10*p.Bytes()); got != want {
			t.Errorf("%s: allocated %d, want %d", p, got, want)
		}
		kv.Len = 4
		if got := kv.BytesUsed(c); got != 4*c.KVBytesPerToken()*int64(p.Bytes())/4 || got != kv.BytesUsedAs(c, p) {
			t.Errorf("%s: used %d", p, got)
		}
		if q, err := ParseKVPrec(p.String()); q != p || err != nil {
			t.Errorf("ParseKVPrec(%q) = %v, %v", p, q, err)
		}
	}
	if _, err := ParseKVPrec("q8"); err == nil {
		t.Error("ParseKVPrec(q8): no error")
	}
}

// TestKVPrecRow: the lab's KV panel reads the stored, rounded values.
func TestKVPrecRow(t *testing.T) {
	c := Config{Dim: 32, HiddenDim: 8, NLayers: 2, NHeads: 2, NKVHeads: 1, HeadDim: 16, SeqLen: 8, VocabSize: 1}
	for _, p := range []KVPrec{KVF16, KVBF16} {
		kv, _ := NewKVCacheOf(c, 8, p)
		k := make([]float32, 16)
		v := make([]float32, 16)
		for i := range k {
			k[i], v[i] = 1+float32(i)/3000, -float32(i)*1e-3
		}
		kv.put(1, 2, 1, k, v)
		kv.Len = 3
		gk, gv, ok := kv.Row(1, 2)
		p.Round(k)
		p.Round(v)
		if !ok || bitsEqual(gk, k) >= 0 || bitsEqual(gv, v) >= 0 {
			t.Errorf("%s: Row = %v %v, want %v %v", p, gk, gv, k, v)
		}
	}
}

// TestKVPrecAttendAllocatesNothing: a decode step over a 16-bit cache, once
// the scratch has grown, allocates nothing.
func TestKVPrecAttendAllocatesNothing(t *testing.T) {
	c := Config{Dim: 6 * 16, HiddenDim: 8, NLayers: 1, NHeads: 6, NKVHeads: 2, HeadDim: 16, SeqLen: 600, VocabSize: 1}
	a, _, p := kvPrecCase(t, c, 100, 1, 4, KVF16)
	a.attend(c, p, 0)
	if n := testing.AllocsPerRun(20, func() { a.attend(c, p, 0) }); n != 0 {
		t.Fatalf("attend allocates %v times per call", n)
	}
}
