package session

// sample_cheap_test.go: the cheap distribution (partial top-N selection,
// O(vocab) sums) gives exactly the numbers of a full sort of the vocabulary.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// fullSortDistribution is the reference: every probability as an array,
// the whole vocabulary sorted, the cut-offs over the sorted array.
func fullSortDistribution(logits []float32, p SamplingParams) *Distribution {
	n := len(logits)
	p1 := Softmax(logits, 1)
	pt := p1
	if p.Temperature > 0 && p.Temperature != 1 {
		pt = Softmax(logits, p.Temperature)
	}
	if p.Greedy() { // temperature 0: a point mass on the top token
		pt = make([]float64, n)
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		pt[best] = 1
	}
	d := &Distribution{Params: p, Sorted: make([]Candidate, n), Entropy1: Entropy(p1), EntropyT: Entropy(pt), logits: logits}
	for i, v := range logits {
		d.Sorted[i] = Candidate{ID: i, Logit: v, Prob1: p1[i], ProbT: pt[i]}
	}
	sort.Slice(d.Sorted, func(a, b int) bool {
		if d.Sorted[a].Logit != d.Sorted[b].Logit {
			return d.Sorted[a].Logit > d.Sorted[b].Logit
		}
		return d.Sorted[a].ID < d.Sorted[b].ID
	})
	sorted := make([]float64, n)
	for i, c := range d.Sorted {
		sorted[i] = c.ProbT
	}
	if p.Greedy() {
		d.AfterK, d.AfterP, d.Kept = 1, 1, 1
	} else {
		d.AfterK = TopKCut(sorted, p.TopK)
		d.AfterP = TopPCut(sorted, d.AfterK, p.TopP)
		d.Kept = MinPCut(sorted, d.AfterP, p.MinP)
	}
	for _, x := range sorted[:d.Kept] {
		d.KeptMass += x
	}
	for i := range d.Sorted[:d.Kept] {
		d.Sorted[i].ProbKept = d.Sorted[i].ProbT / d.KeptMass
	}
	return d
}

// testLogitSets are logits with the shapes the cut-offs care about.
func testLogitSets(r *rand.Rand) map[string][]float32 {
	normal := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	// ties: a few distinct values repeated, so the k-th is tied and the
	// nucleus boundary falls inside a run of equal probabilities
	ties := make([]float32, 3000)
	for i := range ties {
		ties[i] = float32(r.IntN(7))
	}
	flat := make([]float32, 2000) // every token equal: nothing is cut
	peaked := normal(32000, 1)
	peaked[12345] = 40
	underflow := normal(5000, 1) // most probabilities underflow to 0 at low T
	for i := range underflow {
		if i%3 == 0 {
			underflow[i] = -1e30
		}
	}
	// signed zeros tie (−0 == +0), and negative logits order below them
	zeros := make([]float32, 4000)
	for i := range zeros {
		switch r.IntN(4) {
		case 0:
			zeros[i] = float32(math.Copysign(0, -1))
		case 1:
			zeros[i] = -float32(r.IntN(3))
		case 2:
			zeros[i] = float32(r.NormFloat64() * 1e-30)
		}
	}
	return map[string][]float32{"normal-32000": normal(32000, 3), "ties": ties, "flat": flat, "peaked": peaked,
		"underflow": underflow, "zeros": zeros, "tiny": {2, 1, 1, 1, 0}, "one": {0.5}}
}

// testParams are sampling settings across every cut-off.
func testParams() []SamplingParams {
	return []SamplingParams{
		{Temperature: 0, TopP: 1},
		{Temperature: 1, TopP: 1},
		{Temperature: 0.8, TopP: 0.9},
		{Temperature: 0.05, TopP: 0.9},
		{Temperature: 1.5, TopP: 0.999999},
		{Temperature: 1, TopP: 1e-9},
		{Temperature: 1, TopK: 1, TopP: 1},
		{Temperature: 1, TopK: 2, TopP: 1},
		{Temperature: 0.7, TopK: 50, TopP: 0.95},
		{Temperature: 1, TopK: 500, TopP: 1},
		{Temperature: 1, TopP: 1, MinP: 0.5},
		{Temperature: 2, TopP: 1, MinP: 0.99},
		{Temperature: 0.9, TopK: 40, TopP: 0.8, MinP: 0.05},
		{Temperature: 3, TopP: 1, MinP: 0.001},
	}
}

func TestCheapDistributionEqualsFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, logits := range testLogitSets(r) {
		for _, p := range testParams() {
			if p.TopK > len(logits) {
				continue
			}
			for _, topN := range []int{1, 20, 200} {
				want := fullSortDistribution(logits, p)
				got := NewDistributionTop(logits, p, topN)
				label := func() string { return name + " " + paramString(p) }
				if got.Kept != want.Kept || got.AfterK != want.AfterK || got.AfterP != want.AfterP {
					t.Fatalf("%s: kept %d/%d/%d, full sort %d/%d/%d", label(), got.AfterK, got.AfterP, got.Kept, want.AfterK, want.AfterP, want.Kept)
				}
				if got.KeptMass != want.KeptMass {
					t.Fatalf("%s: kept mass %v, full sort %v", label(), got.KeptMass, want.KeptMass)
				}
				if math.Abs(got.Entropy1-want.Entropy1) > 1e-9 || math.Abs(got.EntropyT-want.EntropyT) > 1e-9 {
					t.Fatalf("%s: entropy %v %v, full sort %v %v", label(), got.Entropy1, got.EntropyT, want.Entropy1, want.EntropyT)
				}
				if len(got.Sorted) < min(topN, len(logits)) || len(got.Sorted) < got.Kept {
					t.Fatalf("%s: %d sorted for top-%d and %d kept", label(), len(got.Sorted), topN, got.Kept)
				}
				for i, c := range got.Sorted {
					if c != want.Sorted[i] {
						t.Fatalf("%s: rank %d is %+v, full sort %+v", label(), i, c, want.Sorted[i])
					}
				}
				for k := 0; k < 200; k++ {
					u := r.Float64()
					if got.Pick(u) != want.Pick(u) {
						t.Fatalf("%s: draw %v picks rank %d, full sort %d", label(), u, got.Pick(u), want.Pick(u))
					}
				}
				for k := 0; k < 5; k++ { // forcing any token: rank and numbers
					id := r.IntN(len(logits))
					c, rank := got.At(id)
					if rank != want.Rank(id) || c != want.Sorted[rank] {
						t.Fatalf("%s: token %d at rank %d %+v, full sort %d %+v", label(), id, rank, c, want.Rank(id), want.Sorted[want.Rank(id)])
					}
				}
			}
		}
	}
}

func paramString(p SamplingParams) string {
	return fmt.Sprintf("T=%v top_k=%d top_p=%v min_p=%v", p.Temperature, p.TopK, p.TopP, p.MinP)
}

// TestTextDistributionPicksAsFullSort: a text-only run's distribution
// (NewDistributionText) keeps the same set with the same ProbT and
// ProbKept, bit for bit, and every draw lands on the same token as with a
// full sort; greedy takes the top token.
func TestTextDistributionPicksAsFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for name, logits := range testLogitSets(r) {
		for _, p := range testParams() {
			if p.TopK > len(logits) {
				continue
			}
			label := name + " " + paramString(p)
			want := fullSortDistribution(logits, p)
			got := NewDistributionText(logits, p)
			if got.Kept != want.Kept || got.AfterK != want.AfterK || got.AfterP != want.AfterP {
				t.Fatalf("%s: kept %d/%d/%d, full sort %d/%d/%d", label, got.AfterK, got.AfterP, got.Kept, want.AfterK, want.AfterP, want.Kept)
			}
			if len(got.Sorted) < got.Kept {
				t.Fatalf("%s: %d sorted, %d kept", label, len(got.Sorted), got.Kept)
			}
			for i, c := range got.Sorted[:got.Kept] {
				w := want.Sorted[i]
				if c.ID != w.ID || c.Logit != w.Logit || c.ProbKept != w.ProbKept || c.Prob1 != 0 {
					t.Fatalf("%s: rank %d is %+v, full sort %+v", label, i, c, w)
				}
				if !p.Greedy() && c.ProbT != w.ProbT {
					t.Fatalf("%s: rank %d prob_t %v, full sort %v", label, i, c.ProbT, w.ProbT)
				}
			}
			if !p.Greedy() && got.KeptMass != want.KeptMass {
				t.Fatalf("%s: kept mass %v, full sort %v", label, got.KeptMass, want.KeptMass)
			}
			for k := 0; k < 200; k++ {
				u := r.Float64()
				if got.Sorted[got.Pick(u)].ID != want.Sorted[want.Pick(u)].ID {
					t.Fatalf("%s: draw %v picks token %d, full sort %d", label, u, got.Sorted[got.Pick(u)].ID, want.Sorted[want.Pick(u)].ID)
				}
			}
			id := r.IntN(len(logits)) // forcing a token: its rank
			if _, rank := got.At(id); rank != want.Rank(id) {
				t.Fatalf("%s: forced token %d at rank %d, full sort %d", label, id, rank, want.Rank(id))
			}
		}
	}
}

// TestRankAllIsAComparisonSort: the radix sort ranks as before does
// (larger logit first, ties by smaller id, −0 tied with +0).
func TestRankAllIsAComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for name, logits := range testLogitSets(r) {
		want := make([]int, len(logits))
		for i := range want {
			want[i] = i
		}
		sort.SliceStable(want, func(a, b int) bool { return logits[want[a]] > logits[want[b]] })
		got := rankAll(logits, nil)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: rank %d is token %d (%v), comparison sort %d (%v)", name, i, got[i], logits[got[i]], want[i], logits[want[i]])
			}
		}
	}
	for _, logits := range [][]float32{{float32(math.Inf(-1)), -3e38, -1, float32(math.Copysign(0, -1)), 0, 1e-45, 1, 3e38, float32(math.Inf(1))}} {
		got := rankAll(logits, nil)
		want := []int{8, 7, 6, 5, 3, 4, 2, 1, 0}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("extremes: ranks %v, want %v", got, want)
			}
		}
	}
}

// TestRankWithin: the ids at or above a logit, in rank order, only when
// their count is within the bounds asked for.
func TestRankWithin(t *testing.T) {
	logits := []float32{1, 3, float32(math.Copysign(0, -1)), 3, -2, 0, 2}
	for _, tc := range []struct {
		lo              float64
		atLeast, atMost int
		want            []int
		count           int
	}{
		{2, 1, 10, []int{1, 3, 6}, 3},
		{0, 1, 10, []int{1, 3, 6, 0, 2, 5}, 6}, // −0 ties with +0, by id
		{0, 1, 5, nil, 6},                      // more than atMost: counting stops
		{2.5, 3, 10, nil, 2},                   // fewer than atLeast
		{math.Inf(-1), 7, 7, []int{1, 3, 6, 0, 2, 5, 4}, 7},
	} {
		got, n := rankWithin(logits, tc.lo, tc.atLeast, tc.atMost, nil)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || n != tc.count {
			t.Errorf("rankWithin(%v, %d, %d) = %v, %d; want %v, %d", tc.lo, tc.atLeast, tc.atMost, got, n, tc.want, tc.count)
		}
	}
}
