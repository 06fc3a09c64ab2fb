package session

// sample.go: the sampling rules — temperature, top-k, top-p, min-p — that
// turn logits into a distribution, and the pick from it.

import (
	"fmt"
	"math"
	"sort"
)

// SamplingParams choose how the next token is picked from the logits.
// Transforms apply in this order: temperature, top-k, top-p, min-p.
type SamplingParams struct {
	Temperature float64 `json:"temperature"` // 0 = greedy; otherwise logits are divided by it (0 < T ≤ 10)
	TopK        int     `json:"top_k"`       // keep the k most likely tokens, and any tied with the k-th; 0 = off
	TopP        float64 `json:"top_p"`       // keep the smallest set with probability ≥ p; 1 = off; in (0, 1]
	MinP        float64 `json:"min_p"`       // drop tokens below min_p × the top probability; 0 = off; in [0, 1)
	Seed        uint64  `json:"seed"`        // the session's RNG seed
}

// Greedy reports whether these settings always take the top token.
func (p SamplingParams) Greedy() bool { return p.Temperature == 0 }

// Validate checks the settings, naming what is wrong and what is allowed.
func (p SamplingParams) Validate(vocab int) error {
	switch {
	case math.IsNaN(p.Temperature) || p.Temperature < 0 || p.Temperature > 10:
		return fmt.Errorf("temperature %v out of range: allowed 0 (greedy) to 10", p.Temperature)
	case p.TopK < 0:
		return fmt.Errorf("top_k %d out of range: allowed 0 (off) or 1 to %d", p.TopK, vocab)
	case p.TopK > vocab:
		return fmt.Errorf("top_k %d out of range: the vocabulary has %d tokens", p.TopK, vocab)
	case math.IsNaN(p.TopP) || p.TopP <= 0 || p.TopP > 1:
		return fmt.Errorf("top_p %v out of range: allowed (0, 1], 1 = off", p.TopP)
	case math.IsNaN(p.MinP) || p.MinP < 0 || p.MinP >= 1:
		return fmt.Errorf("min_p %v out of range: allowed [0, 1), 0 = off", p.MinP)
	}
	return nil
}

// DefaultSampling is what the lab starts with: sampled, so a small model
// does not loop, with a fixed seed for reproducibility.
func DefaultSampling() SamplingParams {
	return SamplingParams{Temperature: 0.8, TopK: 0, TopP: 0.9, MinP: 0, Seed: 42}
}

// Softmax returns probabilities of logits/temperature (temperature 1 when
// t ≤ 0), computed in float64.
func Softmax(logits []float32, t float64) []float64 {
	if t <= 0 {
		t = 1
	}
	p := make([]float64, len(logits))
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	var sum float64
	for i, v := range logits {
		p[i] = math.Exp((float64(v) - mx) / t)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// Entropy of a distribution in nats.
func Entropy(p []float64) float64 {
	var h float64
	for _, x := range p {
		if x > 0 {
			h -= x * math.Log(x)
		}
	}
	return h
}

// TopKCut returns how many of the probabilities (sorted descending) top-k
// keeps: the k largest and every one tied with the k-th, as transformers'
// TopKLogitsWarper keeps every token whose score is not below the k-th
// score. (Equal logits give equal probabilities, bit for bit.)
func TopKCut(sorted []float64, k int) int {
	if k <= 0 || k >= len(sorted) {
		return len(sorted)
	}
	n := k
	for n < len(sorted) && sorted[n] == sorted[k-1] {
		n++
	}
	return n
}

// TopPCut returns how many of the probabilities (sorted descending, summing
// to 1 over the first n) the nucleus keeps: the smallest prefix whose mass
// reaches p times the mass of the first n.
func TopPCut(sorted []float64, n int, p float64) int {
	if p >= 1 {
		return n
	}
	var total float64
	for _, x := range sorted[:n] {
		total += x
	}
	var cum float64
	for i, x := range sorted[:n] {
		cum += x
		if cum >= p*total {
			return i + 1
		}
	}
	return n
}

// MinPCut returns how many of the sorted probabilities are at least
// minP × the largest.
func MinPCut(sorted []float64, n int, minP float64) int {
	if minP <= 0 || n == 0 {
		return n
	}
	th := minP * sorted[0]
	for i, x := range sorted[:n] {
		if x < th {
			return max(i, 1)
		}
	}
	return n
}

// Candidate is one vocabulary entry in a step's distribution.
type Candidate struct {
	ID    int     `json:"id"`
	Logit float32 `json:"logit"`
	Prob1 float64 `json:"prob"`   // softmax at temperature 1
	ProbT float64 `json:"prob_t"` // softmax after temperature
	// ProbKept is the probability after the cut-offs, renormalized over the
	// kept set (0 for dropped tokens). Sampling draws from this.
	ProbKept float64 `json:"prob_kept"`
}

// Distribution is every number behind one sampling decision.
type Distribution struct {
	Params   SamplingParams
	Sorted   []Candidate // the whole vocabulary, by logit descending (ties by id)
	Kept     int         // Sorted[:Kept] survive top-k, top-p and min-p
	AfterK   int         // how many top-k kept (k, or more when tokens tie with the k-th)
	AfterP   int         // how many top-p kept (after top-k)
	KeptMass float64     // probability mass (after temperature) of the kept set
	Entropy1 float64     // entropy at T=1, nats
	EntropyT float64     // entropy after temperature, nats
}

// NewDistribution applies the sampling transforms to logits.
func NewDistribution(logits []float32, p SamplingParams) *Distribution {
	n := len(logits)
	p1 := Softmax(logits, 1)
	pt := p1
	if p.Temperature > 0 && p.Temperature != 1 {
		pt = Softmax(logits, p.Temperature)
	}
	d := &Distribution{Params: p, Sorted: make([]Candidate, n), Entropy1: Entropy(p1), EntropyT: Entropy(pt)}
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

// Pick maps a uniform draw r in [0,1) to a rank in Sorted: the first kept
// candidate whose cumulative ProbKept exceeds r. Greedy always picks rank 0.
func (d *Distribution) Pick(r float64) int {
	if d.Params.Greedy() {
		return 0
	}
	var cum float64
	for i := range d.Sorted[:d.Kept] {
		cum += d.Sorted[i].ProbKept
		if r < cum {
			return i
		}
	}
	return d.Kept - 1
}

// Rank returns the rank of token id in Sorted, or -1.
func (d *Distribution) Rank(id int) int {
	for i, c := range d.Sorted {
		if c.ID == id {
			return i
		}
	}
	return -1
}
