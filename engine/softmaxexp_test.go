package engine

// softmaxexp_test.go: SoftmaxExp equals math.Exp one value at a time, bit
// for bit (SoftmaxSums too, with its sums in the lane order), on logits of every shape the softmax meets (the SIMD lanes and
// the lanes it leaves to math.Exp alike).

import (
	"math"
	"math/rand/v2"
	"testing"
)

func checkSoftmaxExp(t *testing.T, label string, z []float32, mx, temp float64) {
	t.Helper()
	u, e := make([]float64, len(z)), make([]float64, len(z))
	SoftmaxExp(u, e, z, mx, temp)
	for i, v := range z {
		wu := (float64(v) - mx) / temp
		we := math.Exp(wu)
		if math.Float64bits(u[i]) != math.Float64bits(wu) || math.Float64bits(e[i]) != math.Float64bits(we) {
			t.Fatalf("%s: z[%d]=%v: u %v e %v (%#x), want %v %v (%#x)", label, i, v, u[i], e[i], math.Float64bits(e[i]), wu, we, math.Float64bits(we))
		}
	}
	// SoftmaxSums: the same exponentials, and their sums in the lane order
	// (sixteen running sums by index mod 16, combined pairwise, then the
	// tail in order), on the SIMD path and the Go one
	var ws, wu [16]float64
	n16 := len(z) &^ 15
	for i := range n16 {
		ws[i%16] += e[i]
		if e[i] > 0 {
			wu[i%16] += float64(e[i] * u[i])
		}
	}
	tree := func(s [16]float64) float64 {
		return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
			(((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])))
	}
	wantSum, wantEU := tree(ws), tree(wu)
	for i := n16; i < len(z); i++ {
		wantSum += e[i]
		if e[i] > 0 {
			wantEU += float64(e[i] * u[i])
		}
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	defer func() { softmaxSumsGo = false }()
	for _, path := range []string{"simd", "go"} {
		if path == "go" {
			softmaxSumsGo = true
		} else if _, ran := softmaxSumsKernel(nil, nil, make([]float32, 16), 16, 0, 1, new([32]float64)); !ran {
			continue // no kernel on this CPU/build
		}
		u2, e2 := make([]float64, len(z)), make([]float64, len(z))
		sum, eu := SoftmaxSums(u2, e2, z, mx, temp)
		for i := range z {
			if !same(u2[i], u[i]) || !same(e2[i], e[i]) {
				t.Fatalf("%s: SoftmaxSums (%s) at %d: u %v e %v, want %v %v", label, path, i, u2[i], e2[i], u[i], e[i])
			}
		}
		if !same(sum, wantSum) || !same(eu, wantEU) {
			t.Fatalf("%s: SoftmaxSums (%s, t %v): sums %v %v, want %v %v", label, path, temp, sum, eu, wantSum, wantEU)
		}
		if sum, eu = SoftmaxSums(nil, nil, z, mx, temp); !same(sum, wantSum) || !same(eu, wantEU) {
			t.Fatalf("%s: SoftmaxSums (%s, t %v, sums alone): %v %v, want %v %v", label, path, temp, sum, eu, wantSum, wantEU)
		}
	}
}

func TestSoftmaxExpEqualsMathExp(t *testing.T) {
	if softmaxExpSIMD == nil {
		t.Log("no SIMD kernel on this CPU: the math.Exp path alone is checked")
	}
	r := rand.New(rand.NewPCG(8, 9))
	normal := func(n int, scale float64) []float32 {
		z := make([]float32, n)
		for i := range z {
			z[i] = float32(r.NormFloat64() * scale)
		}
		return z
	}
	maxOf := func(z []float32) float64 {
		m := math.Inf(-1)
		for _, v := range z {
			m = max(m, float64(v))
		}
		return m
	}
	wide := normal(4099, 300) // u reaches past −708: lanes left to math.Exp, and subnormal results
	special := []float32{0, float32(math.Copysign(0, -1)), -1e30, 1e-40, float32(math.Inf(-1)), float32(math.NaN()), 3, -745, -708, -709, 709, 710, 2, 1}
	for _, tc := range []struct {
		name string
		z    []float32
		mx   float64
	}{
		{"normal", normal(32000, 3), 0},
		{"peaked", normal(4096, 1), 0},
		{"peaked with a tail", normal(4099, 1), 0},
		{"wide", wide, 0},
		{"odd length", normal(7, 2), 0},
		{"three", normal(3, 2), 0},
		{"empty", nil, 0},
		{"special", special, 3},
		{"positive u", normal(64, 100), -200}, // u > 709 overflows to +Inf
		{"infinite max", normal(16, 1), math.Inf(1)},
	} {
		mx := tc.mx
		if mx == 0 {
			mx = maxOf(tc.z)
		}
		for _, temp := range []float64{1, 0.8, 0.05, 3, 1e-3} {
			checkSoftmaxExp(t, tc.name, tc.z, mx, temp)
		}
	}
	// every u in [−20, 0] on a fine grid through the kernel: the reduction's
	// rounding (round half to even at x·log2e) and every Taylor term
	z := make([]float32, 1<<16)
	for i := range z {
		z[i] = -float32(i) * 20 / float32(len(z))
	}
	checkSoftmaxExp(t, "grid", z, 0, 1)
	for i := range z {
		z[i] = math.Float32frombits(r.Uint32()) // any bits
	}
	checkSoftmaxExp(t, "random bits", z, 0, 1)
	checkSoftmaxExp(t, "random bits, max 1e3", z, 1e3, 7)
}

func FuzzSoftmaxExp(f *testing.F) {
	f.Add(uint32(0), uint32(0x3f800000), 1.0, 0.8)
	f.Fuzz(func(t *testing.T, a, b uint32, mx, temp float64) {
		z := make([]float32, 9)
		for i := range z {
			z[i] = math.Float32frombits(a ^ b*uint32(i))
		}
		checkSoftmaxExp(t, "fuzz", z, mx, temp)
	})
}

func BenchmarkSoftmaxExp(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	z := make([]float32, 4096)
	for i := range z {
		z[i] = float32(r.NormFloat64() * 3)
	}
	u, e := make([]float64, len(z)), make([]float64, len(z))
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			SoftmaxExp(u, e, z, 12, 0.8)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, v := range z {
				u[i] = (float64(v) - 12) / 0.8
				e[i] = math.Exp(u[i])
			}
		}
	})
}

// softmaxReference is the attention softmax as it was written first: one
// math.Exp per value.
func softmaxReference(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - mx)))
		x[i] = e
		sum += e
	}
	for i := range x {
		x[i] /= sum
	}
}

// TestSoftmaxInPlaceEqualsReference: the attention softmax with the vector
// exponentials gives the one-at-a-time bits, including values far below
// the largest (0 in float32), −Inf, NaN and subnormal results.
func TestSoftmaxInPlaceEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, scale := range []float64{0.1, 1, 10, 40, 200} {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 33, 256, 1000} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * scale)
			}
			if n > 4 {
				x[1] = float32(math.Inf(-1))
				x[2] = x[0] - 103.5 // near the float32 underflow
				x[3] = x[0] - 95    // a subnormal result
			}
			checkSoftmaxInPlace(t, x)
		}
	}
	checkSoftmaxInPlace(t, []float32{1, float32(math.NaN()), 2, 3, 4})
	checkSoftmaxInPlace(t, []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))})
	x := make([]float32, 1<<14) // every shift in [−110, 0] on a grid
	for i := range x {
		x[i] = -float32(i) * 110 / float32(len(x))
	}
	checkSoftmaxInPlace(t, x)
}

func checkSoftmaxInPlace(t *testing.T, x []float32) {
	t.Helper()
	got, want := append([]float32(nil), x...), append([]float32(nil), x...)
	softmaxInPlace(got)
	softmaxReference(want)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("len %d: [%d] from %v: %v, reference %v", len(x), i, x[i], got[i], want[i])
		}
	}
}
