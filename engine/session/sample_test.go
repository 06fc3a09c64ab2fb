package session

// sample_test.go: the sampling rule (temperature, top-k, top-p, min-p, the draw) on hand-made distributions.

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// Worked by hand: logits [2.0, 1.0, 0.1].
// T=0.5 → scaled [4, 2, 0.2]; e^4 = 54.598, e^2 = 7.389, e^0.2 = 1.2214,
// sum 63.209 → p = [0.86378, 0.11690, 0.01932].
// T=1 → e^2 = 7.389, e^1 = 2.718, e^0.1 = 1.105, sum 11.212 → [0.65900, 0.24243, 0.09856].
func TestDistributionByHand(t *testing.T) {
	logits := []float32{2.0, 1.0, 0.1}
	tests := []struct {
		name     string
		p        SamplingParams
		kept     int
		mass     float64
		probT    []float64
		probKept []float64
	}{
		{"T=1", SamplingParams{Temperature: 1, TopP: 1}, 3, 1, []float64{0.65900, 0.24243, 0.09856}, []float64{0.65900, 0.24243, 0.09856}},
		{"T=0.5", SamplingParams{Temperature: 0.5, TopP: 1}, 3, 1, []float64{0.86378, 0.11690, 0.01932}, []float64{0.86378, 0.11690, 0.01932}},
		{"T=0.5 top-k 2", SamplingParams{Temperature: 0.5, TopK: 2, TopP: 1}, 2, 0.98068, []float64{0.86378, 0.11690, 0.01932}, []float64{0.88080, 0.11920, 0}},
		// nucleus 0.9: 0.86378 < 0.9, 0.86378+0.11690 = 0.98068 ≥ 0.9 → 2 tokens
		{"T=0.5 top-p 0.9", SamplingParams{Temperature: 0.5, TopP: 0.9}, 2, 0.98068, []float64{0.86378, 0.11690, 0.01932}, []float64{0.88080, 0.11920, 0}},
		// top-p 0.8 keeps only the first (0.86378 ≥ 0.8)
		{"T=0.5 top-p 0.8", SamplingParams{Temperature: 0.5, TopP: 0.8}, 1, 0.86378, []float64{0.86378, 0.11690, 0.01932}, []float64{1, 0, 0}},
		// min-p 0.2 at T=1: threshold 0.2 × 0.659 = 0.1318 → drops 0.09856
		{"T=1 min-p 0.2", SamplingParams{Temperature: 1, TopP: 1, MinP: 0.2}, 2, 0.90143, []float64{0.65900, 0.24243, 0.09856}, []float64{0.73106, 0.26894, 0}},
		// temperature 0 (greedy): all the probability after temperature on the top token
		{"greedy", SamplingParams{Temperature: 0, TopP: 1}, 1, 1, []float64{1, 0, 0}, []float64{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDistribution(logits, tt.p)
			if d.Kept != tt.kept || !near(d.KeptMass, tt.mass) {
				t.Errorf("kept %d mass %.5f, want %d %.5f", d.Kept, d.KeptMass, tt.kept, tt.mass)
			}
			for i, c := range d.Sorted {
				if c.ID != i {
					t.Fatalf("order %v", d.Sorted)
				}
				if !near(c.ProbT, tt.probT[i]) || !near(c.ProbKept, tt.probKept[i]) {
					t.Errorf("token %d: probT %.5f kept %.5f, want %.5f %.5f", i, c.ProbT, c.ProbKept, tt.probT[i], tt.probKept[i])
				}
			}
		})
	}
}

// TestTopKTies: top-k keeps every token tied with the k-th score, as
// transformers' TopKLogitsWarper (scores < k-th score are removed).
// Logits [2, 1, 1, 1, 0] at T=1: e^2 = 7.389, e^1 = 2.718 (three times),
// e^0 = 1, sum 16.544 → p = [0.44663, 0.16431 ×3, 0.06045].
func TestTopKTies(t *testing.T) {
	logits := []float32{2, 1, 1, 1, 0}
	tests := []struct {
		k, afterK int
		mass      float64
	}{
		{1, 1, 0.44663}, // no tie with the top
		{2, 4, 0.93955}, // the 2nd score (1) is shared by ids 1, 2, 3: all kept
		{3, 4, 0.93955}, // ditto
		{4, 4, 0.93955}, // exactly k
		{5, 5, 1},       // everything
		{0, 5, 1},       // off
	}
	for _, tt := range tests {
		d := NewDistribution(logits, SamplingParams{Temperature: 1, TopK: tt.k, TopP: 1})
		if d.AfterK != tt.afterK || d.Kept != tt.afterK || !near(d.KeptMass, tt.mass) {
			t.Errorf("top-k %d: kept %d (after top-k %d), mass %.5f; want %d, %.5f", tt.k, d.Kept, d.AfterK, d.KeptMass, tt.afterK, tt.mass)
		}
		for i, c := range d.Sorted[:d.Kept] {
			if want := c.ProbT / tt.mass; !near(c.ProbKept, want) {
				t.Errorf("top-k %d rank %d: kept prob %.5f, want %.5f", tt.k, i, c.ProbKept, want)
			}
		}
	}
	// the ties are sampled: with top-k 2 every one of ids 1, 2, 3 is drawn
	d := NewDistribution(logits, SamplingParams{Temperature: 1, TopK: 2, TopP: 1})
	seen := map[int]bool{}
	for r := 0.0; r < 1; r += 0.01 {
		seen[d.Sorted[d.Pick(r)].ID] = true
	}
	if len(seen) != 4 || seen[4] {
		t.Errorf("top-k 2 draws ids %v, want 0, 1, 2, 3", seen)
	}
}

func TestPick(t *testing.T) {
	d := NewDistribution([]float32{2.0, 1.0, 0.1}, SamplingParams{Temperature: 0.5, TopK: 2, TopP: 1})
	// cumulative kept: 0.88080, 1.0
	for _, tt := range []struct {
		r    float64
		rank int
	}{{0, 0}, {0.88, 0}, {0.8809, 1}, {0.9999, 1}} {
		if got := d.Pick(tt.r); got != tt.rank {
			t.Errorf("Pick(%v) = %d, want %d", tt.r, got, tt.rank)
		}
	}
}

func TestSamplingValidate(t *testing.T) {
	tests := []struct {
		p    SamplingParams
		want string
	}{
		{SamplingParams{Temperature: -1, TopP: 1}, "temperature -1 out of range"},
		{SamplingParams{Temperature: 1, TopP: 0}, "top_p 0 out of range"},
		{SamplingParams{Temperature: 1, TopP: 1.5}, "top_p 1.5 out of range"},
		{SamplingParams{Temperature: 1, TopP: 1, TopK: -2}, "top_k -2 out of range"},
		{SamplingParams{Temperature: 1, TopP: 1, TopK: 200}, "vocabulary has 100 tokens"},
		{SamplingParams{Temperature: 1, TopP: 1, MinP: 1}, "min_p 1 out of range"},
		{SamplingParams{Temperature: math.NaN(), TopP: 1}, "temperature NaN"},
	}
	for _, tt := range tests {
		err := tt.p.Validate(100)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err %v, want %q", tt.p, err, tt.want)
		}
	}
	if err := (SamplingParams{Temperature: 0.7, TopK: 40, TopP: 0.95, MinP: 0.05}).Validate(100); err != nil {
		t.Error(err)
	}
}

func TestCompactJSON(t *testing.T) {
	b, err := Compact{0.5, 0.12345, 0.00001, 1, 0, -0.00002, 0.1}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[0.5,0.1235,0,1,0,0,0.1]" && string(b) != "[0.5,0.1234,0,1,0,0,0.1]" {
		t.Errorf("compact json %s", b)
	}
}
