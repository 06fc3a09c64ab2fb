package session

// sample_ref_test.go: the reference sampling arithmetic (a full softmax in
// float64, and the top-k, top-p and min-p cut-offs over a fully sorted
// vocabulary) that the cheap distribution is checked against
// (sample_cheap_test.go); the session itself never sorts the vocabulary.

import (
	"math"

	"github.com/inferscope/inferscope/engine"
)

// Softmax returns probabilities of logits/temperature (temperature 1 when
// t ≤ 0), computed in float64 (the sum in the lane order, engine.LaneSum).
func Softmax(logits []float32, t float64) []float64 {
	if t <= 0 {
		t = 1
	}
	p := make([]float64, len(logits))
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	for i, v := range logits {
		p[i] = math.Exp((float64(v) - mx) / t)
	}
	sum := engine.LaneSum(p) // the engine's summation order
	for i := range p {
		p[i] /= sum
	}
	return p
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

// TopPCut returns how many of the probabilities (sorted descending) the
// nucleus keeps: the smallest prefix whose mass reaches p times the mass of
// the first n. When n is the whole vocabulary that mass is 1 (the
// probabilities sum to 1), so no sum over the vocabulary is needed.
func TopPCut(sorted []float64, n int, p float64) int {
	if p >= 1 {
		return n
	}
	total := 1.0
	if n < len(sorted) {
		total = 0
		for _, x := range sorted[:n] {
			total += x
		}
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
