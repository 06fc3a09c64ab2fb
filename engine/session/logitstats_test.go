package session

// logitstats_test.go: the one-pass statistics equal the separate passes
// bit for bit.

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

func TestMeanMinMaxBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"one", []float32{2.5}},
		{"five", []float32{1, -2, 3, -4, 5}},
		{"zeros", []float32{0, negZero, 0, negZero, 0, 0}},
		{"neg zero only", []float32{negZero, negZero, negZero}},
		{"nan", []float32{1, 2, nan, 4, 5, 6, 7}},
		{"nan last", []float32{1, 2, 3, 4, 5, 6, 7, 8, nan}},
		{"inf", []float32{1, inf, -inf, 3}},
		{"+inf", []float32{1, inf, 3, -2, 7}},
		{"zero least", []float32{3, 0, 5, 1, negZero, 2}},
		{"zero greatest", []float32{-3, negZero, -5, -1, -2}},
		{"vocab 4096", randLogits(r, 4096, 4)},
		{"vocab 32003", randLogits(r, 32003, 10)},
		{"tiny and large", append(randLogits(r, 999, 1e-6), 1e30, -1e30, 3e-38)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantMean := float32(engine.LaneSum(tc.v) / float64(len(tc.v)))
			wantLo, wantHi := minMax(tc.v)
			mean, lo, hi := meanMinMax(tc.v)
			if math.Float32bits(mean) != math.Float32bits(wantMean) && !(mean != mean && wantMean != wantMean) {
				t.Errorf("mean %v, want %v", mean, wantMean)
			}
			if math.Float32bits(lo) != math.Float32bits(wantLo) || math.Float32bits(hi) != math.Float32bits(wantHi) {
				if !(lo != lo && wantLo != wantLo && hi != hi && wantHi != wantHi) {
					t.Errorf("range [%v, %v], want [%v, %v]", lo, hi, wantLo, wantHi)
				}
			}
			if math.IsNaN(float64(wantLo)) || math.IsInf(float64(wantLo), 0) || math.IsInf(float64(wantHi), 0) {
				return // NewHistogram's bins need a finite range
			}
			pass := engine.LogitPassOf(tc.v, nil)
			for _, c := range []struct {
				light bool
				pass  *engine.LogitPass
			}{{true, nil}, {false, nil}, {true, &pass}, {false, &pass}} {
				light := c.light
				st := statsOf(tc.v, light, c.pass)
				want := NewHistogram(tc.v, HistogramBins)
				if light {
					want.Counts = nil
				}
				if !reflect.DeepEqual(st.hist, want) {
					t.Errorf("light %v: histogram %+v, want %+v", light, st.hist, want)
				}
			}
		})
	}
}

func randLogits(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// BenchmarkLogitStats: the light statistics of 4096 logits (a thin logits
// event's mean and range) in one pass (engine.LogitPassOf), against the two
// passes it replaced (the mean's loop, then minMax).
func BenchmarkLogitStats(b *testing.B) {
	l := randLogits(rand.New(rand.NewPCG(1, 2)), 4096, 3)
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			meanMinMax(l)
		}
	})
	b.Run("two-passes", func(b *testing.B) {
		for b.Loop() {
			var sum float64
			for _, v := range l {
				sum += float64(v)
			}
			_ = float32(sum / float64(len(l)))
			minMax(l)
		}
	})
}
