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
