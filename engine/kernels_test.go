package engine

// kernels_test.go: every kernel set against float64 sums on edge shapes, and the pure-Go and SIMD paths give the same logits.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// kernelSets are the kernel sets this machine can run: pure Go always, the
// SIMD set where the CPU has it.
func kernelSets(t *testing.T) []*kernelSet {
	sets := []*kernelSet{&goKernels}
	if simdKernels != nil {
		sets = append(sets, simdKernels)
		sets = append(sets, otherKernels...)
	} else {
		t.Logf("no SIMD kernels on this machine/build: only the pure-Go path runs")
	}
	return sets
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// refLinear is out[t][o] = Σ_i x[t][i]·W(o,i) + b[o] in float64.
func refLinear(x []float32, T int, w *Mat, bias []float32) []float64 {
	out := make([]float64, T*w.Rows)
	for t := 0; t < T; t++ {
		for o := 0; o < w.Rows; o++ {
			var s float64
			for i := 0; i < w.Cols; i++ {
				s += float64(x[t*w.Cols+i]) * float64(w.At(o, i))
			}
			if bias != nil {
				s += float64(bias[o])
			}
			out[t*w.Rows+o] = s
		}
	}
	return out
}

// TestLinearKernels checks every kernel set's linear pass (gemv for one
// position, packed gemm for several) against float64 sums, on shapes that hit
// every edge: columns not a multiple of 8, rows not a multiple of 4 or of the
// panel width, positions not a multiple of 6, both layouts, F32 and BF16.
func TestLinearKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type shape struct{ T, rows, cols int }
	shapes := []shape{{1, 1, 1}, {1, 7, 13}, {1, 64, 48}, {1, 37, 300}, {1, 256, 64}, {2, 5, 8}, {3, 33, 17},
		{6, 16, 64}, {7, 40, 72}, {13, 100, 96}, {64, 48, 288}, {5, 1, 3}}
	for _, ks := range kernelSets(t) {
		old := useKernels(ks)
		for _, sh := range shapes {
			for _, layout := range []string{"out-in", "in-out", "in-out-view", "bf16"} {
				name := fmt.Sprintf("%s/T%d_%dx%d/%s", ks.name, sh.T, sh.rows, sh.cols, layout)
				var w Mat
				switch layout {
				case "out-in":
					w = NewMat(randVec(r, sh.rows*sh.cols), sh.rows, sh.cols)
				case "in-out":
					w = Mat{Rows: sh.rows, Cols: sh.cols, InOut: true, Ld: sh.rows, F32: randVec(r, sh.rows*sh.cols)}
				case "in-out-view": // the middle third of a fused [in][3·out] matrix
					w = Mat{Rows: sh.rows, Cols: sh.cols, InOut: true, Ld: 3 * sh.rows, Off: sh.rows, F32: randVec(r, 3*sh.rows*sh.cols)}
				case "bf16":
					f := NewMat(randVec(r, sh.rows*sh.cols), sh.rows, sh.cols)
					w = f.toBF16()
				}
				bias := randVec(r, sh.rows)
				x := randVec(r, sh.T*sh.cols)
				c := Config{Dim: sh.cols, HiddenDim: sh.cols, NHeads: 1, HeadDim: sh.cols, SeqLen: 8, VocabSize: 1}
				st := NewState(c)
				out := make([]float32, sh.T*sh.rows)
				for i := range out {
					out[i] = float32(math.NaN()) // every output must be written
				}
				st.linear(x, sh.T, linJob{out, &w, bias})
				want := refLinear(x, sh.T, &w, bias)
				for i := range want {
					tol := 1e-5 * (1 + math.Sqrt(float64(sh.cols)))
					if d := math.Abs(float64(out[i]) - want[i]); !(d <= tol) {
						t.Errorf("%s: out[%d] = %g, want %g", name, i, out[i], want[i])
						break
					}
				}
			}
		}
		useKernels(old)
	}
}

// TestKernelPathsAgree runs every reference model through the pure-Go and
// the SIMD kernels: prefill and cached decode logits agree to 1e-5 (1e-6 of
// the largest logit where that is more) and the greedy continuation is the
// same.
func TestKernelPathsAgree(t *testing.T) {
	if simdKernels == nil {
		t.Skip("this machine/build has no SIMD kernels: there is only the pure-Go path to run")
	}
	dirs, _ := filepath.Glob("testdata/reference/*")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			ids := g.Sequences[len(g.Sequences)-1].IDs
			run := func(ks *kernelSet) ([]float32, []int) {
				defer useKernels(useKernels(ks))
				st := NewState(m.Config)
				kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
				all, err := m.ForwardAll(st, kv, ids, nil)
				if err != nil {
					t.Fatal(err)
				}
				out := append([]float32(nil), all...)
				next := argmax(all[len(all)-m.Config.VocabSize:])
				var greedy []int
				for i := 0; i < 8 && kv.Len < kv.Cap; i++ {
					greedy = append(greedy, next)
					lg, err := m.Forward(st, kv, []int{next}, nil)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, lg...)
					next = argmax(lg)
				}
				return out, greedy
			}
			a, ga := run(&goKernels)
			b, gb := run(simdKernels)
			var worst float64
			for i := range a {
				worst = max(worst, math.Abs(float64(a[i]-b[i])))
			}
			var big float64
			for _, v := range a {
				big = max(big, math.Abs(float64(v)))
			}
			t.Logf("go vs %s: largest logit difference %.3g (largest logit %.3g)", simdKernels.name, worst, big)
			// the paths differ only where the SIMD matrix products fuse a
			// multiply and an add (attention is bit for bit the same), so the
			// gap scales with the logits' size: 1e-5, or 1e-6 of the largest
			// logit where that is more (about 10 float32 steps at 11.7)
			if tol := max(1e-5, 1e-6*big); worst > tol {
				t.Errorf("go vs %s: logits differ by %.3g, want ≤ %.3g", simdKernels.name, worst, tol)
			}
			if fmt.Sprint(ga) != fmt.Sprint(gb) {
				t.Errorf("greedy tokens differ: go %v, %s %v", ga, simdKernels.name, gb)
			}
		})
	}
}

func TestBF16Rounding(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{{1, 0x3f80}, {-2, 0xc000}, {0, 0}, {float32(math.Inf(1)), 0x7f80},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie: to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie: to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81}} {
		if got := f32ToBF16(c.in); got != c.want {
			t.Errorf("f32ToBF16(%#x) = %#x, want %#x", math.Float32bits(c.in), got, c.want)
		}
	}
	if v := bf16ToF32(f32ToBF16(float32(math.NaN()))); !math.IsNaN(float64(v)) {
		t.Errorf("NaN did not stay NaN: %g", v)
	}
}

// TestGemvOrderAcrossSets: a row's value does not depend on which SIMD
// kernel computed it — the AVX-512 gemv (one vector, four rows at a time)
// and gemv4 (four vectors) give bit-identical results to the AVX2 gemv's
// (the lens and batched decode rely on it), for row counts that are and
// are not multiples of 4, column counts that are and are not multiples of
// 16, F32 and BF16, with a stride wider than the row.
func TestGemvOrderAcrossSets(t *testing.T) {
	var base *kernelSet
	for _, ks := range append([]*kernelSet{simdKernels}, otherKernels...) {
		if ks != nil && ks.name == "avx2-fma" {
			base = ks
		}
	}
	if base == nil {
		t.Skip("no AVX2 kernel set on this machine/build: nothing to compare")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, ks := range append([]*kernelSet{simdKernels}, otherKernels...) {
		if ks == base {
			continue
		}
		for _, sh := range []struct{ rows, cols int }{{4, 16}, {7, 32}, {64, 768}, {13, 24}, {1, 48}, {66, 288}, {8, 80}} {
			ld := sh.cols + 16
			wf := randVec(r, sh.rows*ld)
			wb := make([]uint16, len(wf))
			for i, v := range wf {
				wb[i] = f32ToBF16(v)
			}
			var xs, want, got [4][]float32
			var wantB, gotB [4][]float32
			for v := range 4 {
				xs[v] = randVec(r, sh.cols)
				want[v], got[v] = make([]float32, sh.rows), make([]float32, sh.rows)
				wantB[v], gotB[v] = make([]float32, sh.rows), make([]float32, sh.rows)
				base.gemv(want[v], wf, ld, xs[v], sh.rows, sh.cols)
				base.gemvBF16(wantB[v], wb, ld, xs[v], sh.rows, sh.cols)
			}
			check := func(what string, got, want [4][]float32, n int) {
				t.Helper()
				for v := range n {
					for i := range want[v] {
						if got[v][i] != want[v][i] {
							t.Fatalf("%s %s %dx%d: vector %d row %d = %v, avx2 gemv gives %v", ks.name, what, sh.rows, sh.cols, v, i, got[v][i], want[v][i])
						}
					}
				}
			}
			ks.gemv(got[0], wf, ld, xs[0], sh.rows, sh.cols)
			ks.gemvBF16(gotB[0], wb, ld, xs[0], sh.rows, sh.cols)
			check("gemv", got, want, 1)
			check("gemvBF16", gotB, wantB, 1)
			if ks.gemv4 != nil {
				ks.gemv4(&got, wf, ld, &xs, sh.rows, sh.cols)
				ks.gemv4BF16(&gotB, wb, ld, &xs, sh.rows, sh.cols)
				check("gemv4", got, want, 4)
				check("gemv4BF16", gotB, wantB, 4)
			}
		}
	}
}
