package engine

// attnkernels_test.go: the attention block kernels of every path give the
// pure-Go kernels' bits on every edge shape; expAtt against float64 e^x;
// a whole layer's attention (blocks, combine, weights) against a float64
// softmax; the same bits whichever way rows and blocks are split.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// attnPaths is the pure-Go kernels and every SIMD set this CPU runs.
func attnPaths() []*attnKernels {
	out := []*attnKernels{&goAttn}
	for _, name := range []string{"avx2-fma", "avx512"} {
		if a := attnSIMD[name]; a != nil {
			out = append(out, a)
		}
	}
	return out
}

func bitsEqual(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func TestAttnKernelsBitExact(t *testing.T) {
	paths := attnPaths()
	if len(paths) == 1 {
		t.Log("no SIMD attention kernels on this machine/build: only the pure-Go path runs")
	}
	r := rand.New(rand.NewPCG(3, 7))
	for _, hd := range []int{1, 5, 8, 15, 16, 17, 24, 31, 48, 64, 80, 100, 128, 200} {
		for _, G := range []int{1, 2, 3, 4, 5, 8} {
			for _, n := range []int{1, 3, 4, 15, 16, 17, 33, 64, 128, 256} {
				ldk, lds, ldo := hd*G+3, n+5, hd+7
				q := randVec(r, G*hd)
				k := randVec(r, (n-1)*ldk+hd)
				v := randVec(r, (n-1)*ldk+hd)
				want := make([]float32, (G-1)*lds+n)
				goAttn.scores(want, lds, q, k, v, ldk, n, hd, G, 0.125)
				wm, wl := make([]float32, G), make([]float32, G)
				we := slices.Clone(want)
				for g := range G {
					// spread the scores so some exponentials underflow to 0
					for p := range n {
						we[g*lds+p] *= float32(1 + 40*(p%3))
					}
					wm[g], wl[g] = goAttn.softmax(we[g*lds : g*lds+n])
				}
				wo := make([]float32, (G-1)*ldo+hd)
				goAttn.wsum(wo, ldo, we, lds, v, ldk, n, hd, G, false, k, v)
				for _, ak := range paths[1:] {
					name := fmt.Sprintf("%s/hd%d/G%d/n%d", ak.name, hd, G, n)
					got := make([]float32, len(want))
					ak.scores(got, lds, q, k, v, ldk, n, hd, G, 0.125)
					if i := bitsEqual(got, want); i >= 0 {
						t.Fatalf("%s: score %d = %v, want %v", name, i, got[i], want[i])
					}
					ge := slices.Clone(got)
					for g := range G {
						for p := range n {
							ge[g*lds+p] *= float32(1 + 40*(p%3))
						}
						m, l := ak.softmax(ge[g*lds : g*lds+n])
						if m != wm[g] || math.Float32bits(l) != math.Float32bits(wl[g]) {
							t.Fatalf("%s head %d: softmax m, l = %v, %v, want %v, %v", name, g, m, l, wm[g], wl[g])
						}
					}
					if i := bitsEqual(ge, we); i >= 0 {
						t.Fatalf("%s: exp %d = %v, want %v", name, i, ge[i], we[i])
					}
					gotO := make([]float32, len(wo))
					for i := range gotO {
						gotO[i] = 99 // only the columns asked for are written
					}
					ak.wsum(gotO, ldo, we, lds, v, ldk, n, hd, G, false, k, v)
					if n >= 3 { // in two runs: the sum goes on over the second
						cut := n / 3
						split := make([]float32, len(wo))
						ak.wsum(split, ldo, we, lds, v, ldk, cut, hd, G, false, nil, nil)
						ak.wsum(split, ldo, we[cut:], lds, v[cut*ldk:], ldk, n-cut, hd, G, true, nil, nil)
						for g := range G {
							if i := bitsEqual(split[g*ldo:g*ldo+hd], wo[g*ldo:g*ldo+hd]); i >= 0 {
								t.Fatalf("%s: wsum in two runs differs at head %d column %d", name, g, i)
							}
						}
					}
					for g := range G {
						for j := 0; j < ldo && g*ldo+j < len(wo); j++ {
							i := g*ldo + j
							if j >= hd {
								if gotO[i] != 99 {
									t.Fatalf("%s: wsum wrote outside its columns at %d", name, i)
								}
							} else if math.Float32bits(gotO[i]) != math.Float32bits(wo[i]) {
								t.Fatalf("%s: wsum %d = %v, want %v", name, i, gotO[i], wo[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestAttnSoftmaxEdges: lengths 1..300, values that underflow, equal
// values, infinities of the max's neighbours.
func TestAttnSoftmaxEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for n := 1; n <= 300; n++ {
		for _, scale := range []float64{0.01, 3, 60} {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(r.NormFloat64() * scale)
			}
			if n%7 == 0 {
				s[n/2] = float32(math.Inf(-1))
			}
			want := slices.Clone(s)
			wm, wl := attnSoftmaxGo(want)
			var sum float64
			for _, e := range want {
				sum += float64(e)
			}
			if math.Abs(sum-float64(wl)) > 1e-5*sum {
				t.Fatalf("n %d: l %v, Σ e %v", n, wl, sum)
			}
			for _, ak := range attnPaths()[1:] {
				got := slices.Clone(s)
				m, l := ak.softmax(got)
				if m != wm || l != wl {
					t.Fatalf("%s n %d scale %v: m, l = %v, %v, want %v, %v", ak.name, n, scale, m, l, wm, wl)
				}
				if i := bitsEqual(got, want); i >= 0 {
					t.Fatalf("%s n %d scale %v: e[%d] = %v, want %v (s %v, m %v)", ak.name, n, scale, i, got[i], want[i], s[i], wm)
				}
			}
		}
	}
}

// bitsEqualNaN is bitsEqual with any NaN equal to any other: which of two
// NaN operands an add passes on (and so its sign and payload) is the
// operand order, which Go leaves to the compiler (the race detector's
// build orders them otherwise).
func bitsEqualNaN(a, b []float32) int {
	for i := range a {
		if a[i] != a[i] && b[i] != b[i] {
			continue
		}
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestAttnMixBitExact: the combine's weighted sum of block results, every
// path against the Go loop bit for bit, and the Go loop against a sum of
// float32 products added in block order (its definition), on every column
// count around the SIMD widths, with zeros of both signs, subnormals,
// infinities, a NaN and products that overflow (a NaN result need only be
// a NaN: bitsEqualNaN).
func TestAttnMixBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 2))
	specials := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -3e-39, float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32}
	for _, hd := range []int{1, 5, 7, 8, 9, 15, 16, 24, 31, 32, 33, 40, 64, 100, 128, 200} {
		for _, nb := range []int{1, 2, 3, 8, 9} {
			for _, special := range []bool{false, true} {
				os := randVec(r, nb*hd+3) // a longer os than its rows: only the rows are read
				cs := make([]float32, nb)
				for b := range cs {
					cs[b] = float32(r.Float64())
				}
				cs[r.IntN(nb)] = 1
				if special {
					for i := range os {
						if r.IntN(4) == 0 {
							os[i] = specials[r.IntN(len(specials))]
						}
					}
					cs[0] = 2 // MaxFloat32·2 overflows
				}
				want := make([]float32, hd)
				for j := range want {
					var a float32
					for b := range nb {
						p := cs[b] * os[b*hd+j]
						a = a + p
					}
					want[j] = a
				}
				for _, ak := range attnPaths() {
					got := make([]float32, hd)
					for j := range got {
						got[j] = 42 // every column written
					}
					ak.mix(got, os, cs)
					if i := bitsEqualNaN(got, want); i >= 0 {
						t.Fatalf("%s hd %d nb %d special %v: out[%d] = %v, want %v", ak.name, hd, nb, special, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestExpAtt: within 2 ulp of float64 e^x on (−87.33654, 0], 0 below, NaN
// stays NaN, e^0 = 1.
func TestExpAtt(t *testing.T) {
	if expAtt(0) != 1 || expAtt(float32(math.Copysign(0, -1))) != 1 {
		t.Fatalf("expAtt(±0) = %v, %v", expAtt(0), expAtt(float32(math.Copysign(0, -1))))
	}
	if e := expAtt(float32(math.NaN())); e == e {
		t.Fatalf("expAtt(NaN) = %v", e)
	}
	for _, x := range []float32{-87.33655, -88, -100, -1e30, float32(math.Inf(-1))} {
		if e := expAtt(x); e != 0 {
			t.Fatalf("expAtt(%v) = %v, want 0", x, e)
		}
	}
	r := rand.New(rand.NewPCG(1, 9))
	for i := 0; i < 200000; i++ {
		x := -float32(r.Float64() * 87.33654)
		if i%4 == 0 {
			x = -float32(r.Float64() * 2)
		}
		got := float64(expAtt(x))
		want := math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
		if math.Abs(got-want) > 2*ulp {
			t.Fatalf("expAtt(%v) = %v, want %v (%.1f ulp)", x, got, want, math.Abs(got-want)/ulp)
		}
	}
}

// attnCase is a pass of R rows of one sequence at positions pos0.. over a
// cache filled with random keys and values.
func attnCase(t *testing.T, c Config, pos0, R int, seed uint64) (*acts, *pass, *KVCache) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	kv, err := NewKVCache(c, pos0+R)
	if err != nil {
		t.Fatal(err)
	}
	for i := range kv.Key {
		kv.Key[i], kv.Value[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	a := &acts{}
	a.alloc(c, R)
	for i := range a.q {
		a.q[i] = float32(r.NormFloat64() * 2)
	}
	p := &pass{}
	p.start(make([]int, R))
	p.add(kv, pos0, R, nil)
	return a, p, kv
}

// TestAttendReference: every head layout, short and multi-block rows, a
// decode step and a prompt, against a float64 softmax attention; and the
// same bits with every kernel path and split.
func TestAttendReference(t *testing.T) {
	for _, lay := range []struct{ H, KV, hd int }{{4, 4, 16}, {6, 2, 24}, {8, 1, 32}, {9, 3, 64}, {2, 1, 100}} {
		c := Config{Dim: lay.H * lay.hd, HiddenDim: 8, NLayers: 1, NHeads: lay.H, NKVHeads: lay.KV, HeadDim: lay.hd, SeqLen: 700, VocabSize: 1}
		for _, sh := range []struct{ pos0, R int }{{0, 1}, {0, 5}, {130, 1}, {600, 1}, {250, 20}, {3, 12}} {
			a, p, kv := attnCase(t, c, sh.pos0, sh.R, uint64(sh.pos0+sh.R))
			kv.Len = sh.pos0 + sh.R
			var want []float32
			for _, ak := range attnPaths() {
				attnOverride = ak
				a.attend(c, p, 0)
				attnOverride = nil
				if want == nil {
					want = slices.Clone(a.ao)
					checkAttendF64(t, c, a, p, kv)
					continue
				}
				if i := bitsEqual(a.ao, want); i >= 0 {
					t.Fatalf("%+v %+v %s: out[%d] = %v, go %v", lay, sh, ak.name, i, a.ao[i], want[i])
				}
			}
		}
	}
}

func checkAttendF64(t *testing.T, c Config, a *acts, p *pass, kv *KVCache) {
	t.Helper()
	H, hd, kvd, qd := c.NHeads, c.HeadDim, c.KVDim(), c.QDim()
	kc, vc, _ := kv.layerKV(0)
	for r := range p.tokens {
		n := p.pos(r) + 1
		for h := range H {
			kvh := h / (H / c.NKVHeads)
			s := make([]float64, n)
			mx := math.Inf(-1)
			for i := range n {
				var d float64
				for j := range hd {
					d += float64(a.q[r*qd+h*hd+j]) * float64(kc[i*kvd+kvh*hd+j])
				}
				s[i] = d / math.Sqrt(float64(hd))
				mx = max(mx, s[i])
			}
			var sum float64
			for i := range s {
				s[i] = math.Exp(s[i] - mx)
				sum += s[i]
			}
			for j := range hd {
				var o float64
				for i := range n {
					o += s[i] / sum * float64(vc[i*kvd+kvh*hd+j])
				}
				if got := float64(a.ao[r*qd+h*hd+j]); math.Abs(got-o) > 2e-5*(1+math.Abs(o)) {
					t.Fatalf("row %d head %d dim %d (n %d): %v, want %v", r, h, j, n, got, o)
				}
			}
		}
	}
}

// TestAttendWeightsAndSplit: the weights a record keeps sum to 1, match a
// float64 softmax, and do not depend on how many rows share the pass (a
// decode step alone or inside a batch of rows split by workers).
func TestAttendWeightsAndSplit(t *testing.T) {
	c := Config{Dim: 6 * 16, HiddenDim: 8, NLayers: 1, NHeads: 6, NKVHeads: 2, HeadDim: 16, SeqLen: 600, VocabSize: 1}
	for _, R := range []int{1, attnRowsAlone, attnRowsAlone + 5} {
		a, p, kv := attnCase(t, c, 400, R, 9)
		kv.Len = 400 + R
		rec := newRecord(c)
		p.spans[0].rec = rec.start(&Hooks{LayerDone: func(LayerInfo) {}}, R)
		a.attend(c, p, 0)
		last := R - 1
		n := 400 + R
		for h := range c.NHeads {
			w := rec.last[h][:n]
			var sum float64
			for _, x := range w {
				sum += float64(x)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Fatalf("R %d head %d: weights sum to %v", R, h, sum)
			}
		}
		// the last row alone, as a decode step: same bits
		a1, p1, kv1 := attnCase(t, c, 400, R, 9)
		copy(kv1.Key, kv.Key)
		copy(kv1.Value, kv.Value)
		_ = a1
		one := &acts{}
		one.alloc(c, 1)
		copy(one.q, a.q[last*c.QDim():])
		p1.start([]int{0})
		p1.add(kv1, 400+last, 1, nil)
		one.attend(c, p1, 0)
		if i := bitsEqual(one.ao, a.ao[last*c.QDim():]); i >= 0 {
			t.Fatalf("R %d: the last row alone differs at %d: %v vs %v", R, i, one.ao[i], a.ao[last*c.QDim()+i])
		}
	}
}

// TestAttendAllocatesNothing: a decode step's attention, once its scratch
// has grown, allocates nothing (one block: no parallel region either).
func TestAttendAllocatesNothing(t *testing.T) {
	c := Config{Dim: 6 * 16, HiddenDim: 8, NLayers: 1, NHeads: 6, NKVHeads: 2, HeadDim: 16, SeqLen: 600, VocabSize: 1}
	a, p, kv := attnCase(t, c, 100, 1, 4)
	kv.Len = 101
	rec := newRecord(c)
	p.spans[0].rec = rec.start(&Hooks{LayerDone: func(LayerInfo) {}}, 1)
	a.attend(c, p, 0)
	if n := testing.AllocsPerRun(20, func() { a.attend(c, p, 0) }); n != 0 {
		t.Fatalf("attend allocates %v times per call", n)
	}
}
