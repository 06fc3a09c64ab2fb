package session

// topids_test.go: the top candidates' selection that skips blocks of
// logits (by their greatest, engine.LogitPassOf) ranks exactly as a full
// sort of the vocabulary, as the one that reads every logit does.

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

func TestTopIDsBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	normal := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	levels := func(n, k int) []float32 { // many equal logits: ranked by id among them
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.IntN(k))
		}
		return v
	}
	ramp := func(n int, up bool) []float32 { // every block beats the last (up): nothing skipped
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i) / 7
			if !up {
				v[i] = -v[i]
			}
		}
		return v
	}
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"vocab 4096", normal(4096, 3)},
		{"vocab 50257", normal(50257, 2)},
		{"short last block", normal(1000, 1)},
		{"five levels", levels(4096, 5)},
		{"two levels", levels(333, 2)},
		{"all equal", levels(100, 1)},
		{"rising", ramp(2048, true)},
		{"falling", ramp(2048, false)},
		{"one block", normal(16, 1)},
		{"under a block", normal(9, 1)},
	} {
		want := make([]int, len(tc.v))
		for i := range want {
			want[i] = i
		}
		slices.SortFunc(want, func(a, b int) int {
			if before(tc.v, a, b) {
				return -1
			}
			return 1
		})
		pass := engine.LogitPassOf(tc.v, nil)
		for _, m := range []int{1, 2, 8, 20, 64, 65, 200, len(tc.v) - 1, len(tc.v)} {
			if m < 1 || m > len(tc.v) {
				continue
			}
			got := topIDsBlocks(tc.v, pass.BlockMax, m, nil)
			if !slices.Equal(got, want[:m]) {
				t.Fatalf("%s, m %d: blocks %v, full sort %v", tc.name, m, got, want[:m])
			}
			if got := topIDs(tc.v, m, nil); !slices.Equal(got, want[:m]) {
				t.Fatalf("%s, m %d: every logit %v, full sort %v", tc.name, m, got, want[:m])
			}
		}
	}
}

func TestMthGreatest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 64, 256, 3142} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.IntN(40)) // ties
		}
		s := slices.Clone(v)
		slices.Sort(s)
		for _, m := range []int{1, 2, 20, 64} {
			if m > n {
				continue
			}
			if got, want := mthGreatest(v, m), s[n-m]; got != want {
				t.Fatalf("n %d m %d: %v, want %v", n, m, got, want)
			}
		}
		if got := mthGreatest(v, 65); got >= -1e38 {
			t.Fatalf("m 65: %v, want −Inf (no floor)", got)
		}
	}
}
