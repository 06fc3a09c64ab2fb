package engine

// activations_test.go: the float32 exp, SiLU and GELU against float64 math.

import (
	"math"
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
