package engine

// logitpass_test.go: LogitPassOf's SIMD and Go paths give the same bits,
// the reference's (lane sums, comparisons in token order) wherever Exact.

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLogitPass(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	randv := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	nan, inf, negZero := float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
	withAt := func(v []float32, i int, x float32) []float32 { v[i] = x; return v }
	for _, tc := range []struct {
		name  string
		v     []float32
		exact bool
	}{
		{"one", []float32{2.5}, true},
		{"fifteen", randv(15, 3), true},
		{"sixteen", randv(16, 3), true},
		{"seventeen", randv(17, 3), true},
		{"vocab 4096", randv(4096, 4), true},
		{"vocab 32003", randv(32003, 10), true},
		{"vocab 50257", randv(50257, 2), true},
		{"max in the tail", withAt(randv(4100, 1), 4099, 50), true},
		{"min first", withAt(randv(4096, 1), 0, -50), true},
		{"tiny and large", append(randv(999, 1e-6), 1e30, -1e30, 3e-38), true},
		{"inf", withAt(randv(64, 1), 20, inf), true},
		{"nan", withAt(randv(64, 1), 33, nan), false},
		{"a zero greatest", append(randv(40, 1)[:0], -3, -1, negZero, -2, -5, -4, -7, -9, -1, -2, -3, -4, -5, -6, -7, -8, -9), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// the reference: comparisons in token order, the lane-order sum
			lo, hi := tc.v[0], tc.v[0]
			for _, x := range tc.v {
				if x < lo {
					lo = x
				}
				if x > hi {
					hi = x
				}
			}
			wantSum := LaneSum(tc.v)
			defer func() { logitPassGo = false }()
			for _, path := range []string{"simd", "go"} {
				if path == "go" {
					logitPassGo = true
				} else if !haveLogitPass {
					continue
				}
				p := LogitPassOf(tc.v, nil)
				if p.Exact != tc.exact {
					t.Fatalf("%s: Exact %v, want %v", path, p.Exact, tc.exact)
				}
				if math.Float64bits(p.Sum) != math.Float64bits(wantSum) && !(math.IsNaN(p.Sum) && math.IsNaN(wantSum)) {
					t.Errorf("%s: sum %v, want %v", path, p.Sum, wantSum)
				}
				if !p.Exact {
					continue
				}
				if math.Float32bits(p.Lo) != math.Float32bits(lo) || math.Float32bits(p.Hi) != math.Float32bits(hi) {
					t.Errorf("%s: range [%v, %v], want [%v, %v]", path, p.Lo, p.Hi, lo, hi)
				}
				if len(p.BlockMax) != (len(tc.v)+15)/16 {
					t.Fatalf("%s: %d blocks for %d values", path, len(p.BlockMax), len(tc.v))
				}
				for k, bm := range p.BlockMax {
					want := tc.v[16*k]
					for _, x := range tc.v[16*k : min(16*k+16, len(tc.v))] {
						want = max(want, x)
					}
					if bm != want {
						t.Fatalf("%s: block %d greatest %v, want %v", path, k, bm, want)
					}
				}
			}
		})
	}
}

// TestLaneSum pins the lane order: sixteen running sums, combined
// pairwise, then the tail in order.
func TestLaneSum(t *testing.T) {
	v := make([]float64, 37)
	for i := range v {
		v[i] = 1 / float64(i+3)
	}
	var s [16]float64
	for i := 0; i < 32; i++ {
		s[i%16] += v[i]
	}
	want := (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
		(((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])))
	for _, x := range v[32:] {
		want += x
	}
	if got := LaneSum(v); got != want {
		t.Fatalf("LaneSum %v, want %v", got, want)
	}
	v32 := make([]float32, len(v))
	for i, x := range v {
		v32[i] = float32(x)
	}
	w := make([]float64, len(v))
	for i, x := range v32 {
		w[i] = float64(x)
	}
	if got, want := LaneSum(v32), LaneSum(w); got != want {
		t.Fatalf("LaneSum of float32 %v, of the same values as float64 %v", got, want)
	}
}

func BenchmarkLogitPass(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := make([]float32, 4096)
	for i := range z {
		z[i] = float32(r.NormFloat64() * 3)
	}
	buf := make([]float32, 256)
	for b.Loop() {
		LogitPassOf(z, buf)
	}
}

// TestLogitsPassesAllocateNothing: a logits stage's vocabulary passes
// (LogitPassOf into a reused buffer, SoftmaxSums for the sums alone) keep
// their scratch on the stack, on the SIMD path and the Go one.
func TestLogitsPassesAllocateNothing(t *testing.T) {
	z := make([]float32, 4099)
	for i := range z {
		z[i] = float32(i%37) - 30
	}
	buf := make([]float32, 300)
	defer func() { logitPassGo, softmaxSumsGo = false, false }()
	for _, goPath := range []bool{false, true} {
		logitPassGo, softmaxSumsGo = goPath, goPath
		if n := testing.AllocsPerRun(20, func() { LogitPassOf(z, buf) }); n != 0 {
			t.Errorf("LogitPassOf (Go path %v): %v allocations a call", goPath, n)
		}
		if n := testing.AllocsPerRun(20, func() { SoftmaxSums(nil, nil, z, 6, 1) }); n != 0 {
			t.Errorf("SoftmaxSums (Go path %v): %v allocations a call", goPath, n)
		}
	}
}
