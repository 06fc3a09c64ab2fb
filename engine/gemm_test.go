package engine

// gemm_test.go: the prefill GEMM tiles: the BF16 dot-product tiles bit for bit against the pure-Go
// step-by-step model of VDPBF16PS, and the BF16 dot prefill against float64 sums of the rounded values.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestGemmBF16TileExact runs each kernel set's BF16 pair tile on random
// pairs (with some zeros, denormals and sign mixes) and compares every
// output bit for bit with gemmBF16Ref.
func TestGemmBF16TileExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ks := range kernelSets(t) {
		if ks.gemmBF16 == nil {
			continue
		}
		for _, kp := range []int{1, 2, 7, 64, 384} {
			mr, nr := ks.mr, ks.nr
			lda := kp + 3
			a := make([]uint32, mr*lda)
			b := make([]uint32, kp*nr)
			pair := func() uint32 {
				h := func() uint16 {
					switch r.IntN(20) {
					case 0:
						return 0
					case 1:
						return uint16(r.IntN(0x7f)) | uint16(r.IntN(2))<<15 // denormal
					}
					return f32ToBF16(float32(r.NormFloat64() * math.Exp2(float64(r.IntN(9)-4))))
				}
				return uint32(h()) | uint32(h())<<16
			}
			for i := range a {
				a[i] = pair()
			}
			for i := range b {
				b[i] = pair()
			}
			ldc := nr + 5
			got := make([]float32, mr*ldc)
			want := make([]float32, mr*ldc)
			ks.gemmBF16(kp, a, lda, b, got, ldc)
			gemmBF16Ref(mr, nr, kp, a, lda, b, want, ldc)
			for i := 0; i < mr; i++ {
				for j := 0; j < nr; j++ {
					g, w := got[i*ldc+j], want[i*ldc+j]
					if math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("%s kp=%d: c[%d][%d] = %g (%#x), the step-by-step model gives %g (%#x)",
							ks.name, kp, i, j, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
	}
}

// TestLinearBF16Dot runs the BF16 dot-product prefill (every kernel set
// that has it) on edge shapes: every output within float32 rounding of the
// float64 sum of the rounded activations times the weights, and the SIMD
// sets equal to the pure-Go one bit for bit.
func TestLinearBF16Dot(t *testing.T) {
	defer SetBF16Dot(SetBF16Dot(true))
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []struct{ T, rows, cols int }{{9, 33, 17}, {12, 32, 64}, {13, 100, 96}, {25, 70, 33}, {64, 48, 288}}
	for _, sh := range shapes {
		f := NewMat(randVec(r, sh.rows*sh.cols), sh.rows, sh.cols)
		w := f.toBF16()
		bias := randVec(r, sh.rows)
		x := randVec(r, sh.T*sh.cols)
		xr := make([]float32, len(x))
		for i, v := range x {
			xr[i] = bf16ToF32(f32ToBF16(v))
		}
		want := refLinear(xr, sh.T, &w, bias)
		var first []float32
		for _, ks := range kernelSets(t) {
			if ks.gemmBF16 == nil {
				continue
			}
			name := fmt.Sprintf("%s/T%d_%dx%d", ks.name, sh.T, sh.rows, sh.cols)
			old := useKernels(ks)
			c := Config{Dim: sh.cols, HiddenDim: sh.cols, NHeads: 1, HeadDim: sh.cols, SeqLen: 8, VocabSize: 1}
			st := NewState(c)
			out := make([]float32, sh.T*sh.rows)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			st.linear(x, sh.T, linJob{out, &w, bias})
			useKernels(old)
			for i := range want {
				tol := 1e-5 * (1 + math.Sqrt(float64(sh.cols)))
				if d := math.Abs(float64(out[i]) - want[i]); !(d <= tol) {
					t.Fatalf("%s: out[%d] = %g, want %g", name, i, out[i], want[i])
				}
			}
			if first == nil {
				first = out
				continue
			}
			for i := range out {
				if math.Float32bits(out[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%s: out[%d] = %g, the pure-Go set gives %g", name, i, out[i], first[i])
				}
			}
		}
	}
}

// TestBF16DotLogits measures what rounding the activations to bfloat16
// (the BF16 dot-product prefill, off by default) does to every reference
// model's logits on BF16 weights, against the exact path on the same
// weights, and checks the greedy token of every position and the torch
// tolerance TestBF16Weights uses (2.5% of the largest logit) still hold.
func TestBF16DotLogits(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			seq := g.Sequences[len(g.Sequences)-1]
			if len(seq.IDs) <= rowsMaxT {
				t.Skipf("%d tokens: the prefill runs the decode kernels", len(seq.IDs))
			}
			bf := &Model{Config: m.Config, Weights: m.Weights.toBF16()}
			logitsOf := func(dot bool) []float32 {
				defer SetBF16Dot(SetBF16Dot(dot))
				st := NewState(m.Config)
				kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
				out, err := bf.ForwardAll(st, kv, seq.IDs, nil)
				if err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), out...)
			}
			exact, dot := logitsOf(false), logitsOf(true)
			V := m.Config.VocabSize
			var d, top float64
			flips := 0
			for p := 0; p < len(exact)/V; p++ {
				e, o := exact[p*V:(p+1)*V], dot[p*V:(p+1)*V]
				for i := range e {
					d = max(d, math.Abs(float64(e[i]-o[i])))
					top = max(top, math.Abs(float64(e[i])))
				}
				if argmaxF32(e) != argmaxF32(o) {
					flips++
				}
			}
			t.Logf("bf16 dot vs exact prefill on the same BF16 weights: max |Δlogit| %.3g (%.2g of the largest logit %.3g); greedy token differs at %d of %d positions",
				d, d/top, top, flips, len(exact)/V)
			if d > 0.025*top {
				t.Errorf("bf16 dot moves logits by %.3g, more than 2.5%% of the largest (%.3g)", d, top)
			}
		})
	}
}

func argmaxF32(v []float32) int {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return b
}

// TestPackPanelSIMD packs full 32-row panels of float32 matrices (column
// counts with and without a remainder of 16, a row stride wider than the
// row, an offset) with packRows32 and column by column, and compares the
// panels bit for bit (NaN payloads included).
func TestPackPanelSIMD(t *testing.T) {
	if packRows32 == nil {
		t.Skip("no SIMD panel packing on this CPU")
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct{ rows, cols, ld, off, o0 int }{
		{32, 16, 16, 0, 0}, {32, 768, 768, 0, 0}, {64, 35, 35, 0, 32}, {40, 48, 61, 5, 0}, {96, 3072, 3072, 0, 64}, {32, 7, 7, 0, 0},
	} {
		data := make([]float32, tc.off+tc.rows*tc.ld)
		for i := range data {
			data[i] = float32(r.NormFloat64())
		}
		data[len(data)-1] = math.Float32frombits(0x7fc00123)
		w := &Mat{Rows: tc.rows, Cols: tc.cols, Ld: tc.ld, Off: tc.off, F32: data}
		got, want := make([]float32, tc.cols*32), make([]float32, tc.cols*32)
		packPanel(got, w, tc.o0, 32, 32)
		saved := packRows32
		packRows32 = nil
		packPanel(want, w, tc.o0, 32, 32)
		packRows32 = saved
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: panel[%d] = %v, want %v", tc, i, got[i], want[i])
			}
		}
	}
}

// TestGemmTileBias compares each kernel set's tile with the bias added in
// its stores against the plain tile followed by a separate add, bit for
// bit.
func TestGemmTileBias(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	tested := 0
	for _, ks := range append([]*kernelSet{&goKernels, simdKernels}, otherKernels...) {
		if ks == nil || ks.gemmTileBias == nil {
			continue
		}
		tested++
		for _, k := range []int{1, 7, 768} {
			mr, nr, lda, ldc := ks.mr, ks.nr, k+3, ks.nr+5
			a, bp, bias := randVec(r, mr*lda), randVec(r, k*nr), randVec(r, nr)
			want, got := make([]float32, mr*ldc), make([]float32, mr*ldc)
			ks.gemmTile(k, a, lda, bp, want, ldc)
			for i := range mr {
				for j := range nr {
					want[i*ldc+j] += bias[j]
				}
			}
			ks.gemmTileBias(k, a, lda, bp, got, ldc, bias)
			for i := range mr {
				for j := range nr {
					if math.Float32bits(got[i*ldc+j]) != math.Float32bits(want[i*ldc+j]) {
						t.Fatalf("%s k=%d: c[%d][%d] = %v, want %v", ks.name, k, i, j, got[i*ldc+j], want[i*ldc+j])
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no kernel set with a bias tile on this CPU")
	}
}

// TestGemmTail compares each kernel set's tail tile (tailMR rows) with the
// first tailMR rows of its full tile, bit for bit, starting from zero and
// going on from c, as the batched [in][out] pass runs them block by block.
func TestGemmTail(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	tested := 0
	for _, ks := range append([]*kernelSet{&goKernels, simdKernels}, otherKernels...) {
		if ks == nil || ks.gemmTail == nil {
			continue
		}
		tested++
		for _, k := range []int{1, 7, 768} {
			mr, tr, nr, lda, ldc := ks.mr, ks.tailMR, ks.nr, k+3, ks.nr+5
			a, bp, bp2 := randVec(r, mr*lda), randVec(r, k*nr), randVec(r, k*nr)
			want, got := make([]float32, mr*ldc), make([]float32, tr*ldc)
			ks.gemmTile(k, a, lda, bp, want, ldc)
			ks.gemmTileAcc(k, a, lda, bp2, want, ldc)
			ks.gemmTail(k, a, lda, bp, got, ldc)
			ks.gemmTailAcc(k, a, lda, bp2, got, ldc)
			for i := range tr {
				for j := range nr {
					if math.Float32bits(got[i*ldc+j]) != math.Float32bits(want[i*ldc+j]) {
						t.Fatalf("%s k=%d: c[%d][%d] = %v, want %v", ks.name, k, i, j, got[i*ldc+j], want[i*ldc+j])
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no kernel set with a tail tile on this CPU")
	}
}
