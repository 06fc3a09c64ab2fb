package engine

// activations_test.go: the float32 exp, SiLU and GELU against float64 math.

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpf(t *testing.T) {
	worst := 0.0
	for x := float32(-87); x < 88.7; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(expf(x))
		if rel := math.Abs(got-want) / want; rel > worst {
			worst = rel
		}
	}
	if worst > 3e-7 { // 2.5 ulp of float32
		t.Errorf("expf: largest relative error %.3g, want ≤ 3e-7", worst)
	}
	for _, c := range []struct{ x, want float32 }{{0, 1}, {-200, 0}, {100, float32(math.Inf(1))}} {
		if got := expf(c.x); got != c.want {
			t.Errorf("expf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Errorf("expf(NaN) = %g", v)
	}
}

func TestActivations(t *testing.T) {
	for x := float32(-30); x < 30; x += 0.01 {
		xf := float64(x)
		sw := xf / (1 + math.Exp(-xf))
		if d := math.Abs(float64(silu(x)) - sw); d > 1e-6*(1+math.Abs(sw)) {
			t.Fatalf("silu(%g) = %g, want %g", x, silu(x), sw)
		}
		gw := 0.5 * xf * (1 + math.Tanh(0.7978845608028654*(xf+0.044715*xf*xf*xf)))
		if d := math.Abs(float64(geluTanh(x)) - gw); d > 1e-6*(1+math.Abs(gw)) {
			t.Fatalf("geluTanh(%g) = %g, want %g", x, geluTanh(x), gw)
		}
	}
}

// TestActivationKernels: the SIMD gelu and swiglu give every value bit for
// bit as the scalar geluTanh and silu do, through gelu() and swiglu() (the
// kernels stop at groups needing expf's slow path: NaN, ±Inf, huge and
// tiny values, mixed into otherwise ordinary groups), on every length.
func TestActivationKernels(t *testing.T) {
	if simdKernels == nil || simdKernels.gelu == nil {
		t.Skip("no SIMD activation kernels on this machine/build: nothing to compare")
	}
	r := rand.New(rand.NewPCG(11, 12))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1e-30, -1e-30, 44.36, 44.37, -43.67, -43.66, 88.7, -87.3, 100, -100, 1e30, -1e30, 8, -8, 12, -12}
	gen := func(n int, spice bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			switch r.IntN(4) {
			case 0:
				v[i] = float32(r.NormFloat64())
			case 1:
				v[i] = float32(r.NormFloat64() * 6)
			case 2:
				v[i] = float32(r.Float64()*200 - 100)
			default:
				v[i] = math.Float32frombits(r.Uint32()) // any bit pattern
			}
			if spice && r.IntN(50) == 0 {
				v[i] = special[r.IntN(len(special))]
			}
		}
		return v
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
	old := kern
	defer func() { kern = old }()
	for _, n := range []int{1, 7, 8, 9, 16, 31, 64, 1000, 4099, 30000} {
		for _, spice := range []bool{false, true} {
			x := gen(n, spice)
			up := gen(n, false)
			want, got := append([]float32(nil), x...), append([]float32(nil), x...)
			for i, v := range want {
				want[i] = geluTanh(v)
			}
			kern = simdKernels
			gelu(got, n)
			for i := range want {
				if !same(got[i], want[i]) {
					t.Fatalf("gelu n=%d: x[%d]=%g (%#08x): kernel %g (%#08x), scalar %g (%#08x)", n, i, x[i], math.Float32bits(x[i]), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
			want, got = append([]float32(nil), x...), append([]float32(nil), x...)
			for i, v := range want {
				want[i] = silu(v) * up[i]
			}
			swiglu(got, up, n)
			for i := range want {
				if !same(got[i], want[i]) {
					t.Fatalf("swiglu n=%d: x[%d]=%g up %g: kernel %g (%#08x), scalar %g (%#08x)", n, i, x[i], up[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}
