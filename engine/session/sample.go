package session

// sample.go: the sampling rules — temperature, top-k, top-p, min-p — that
// turn logits into a distribution, and the pick from it.

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/inferscope/inferscope/engine"
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
//
// It costs O(vocab) plus a sort of the top only: the softmax sums and
// entropies are one pass each, and the candidates are selected with a
// bounded heap (partial top-N selection) until the cut-offs are decided
// inside the selected prefix. Greedy selects only the top-N the lab shows.
// A flat distribution with no cut-off keeps the whole vocabulary and so
// sorts all of it, as it must to draw in rank order.
type Distribution struct {
	Params SamplingParams
	// Sorted is the top of the vocabulary by logit descending (ties by id):
	// at least every kept candidate and the first n asked for (all of it
	// from NewDistribution).
	Sorted   []Candidate
	Kept     int     // Sorted[:Kept] survive top-k, top-p and min-p
	AfterK   int     // how many top-k kept (k, or more when tokens tie with the k-th)
	AfterP   int     // how many top-p kept (after top-k)
	KeptMass float64 // probability mass (after temperature) of the kept set
	Entropy1 float64 // entropy at T=1, nats
	EntropyT float64 // entropy after temperature, nats

	logits []float32 // the step's logits (not copied: valid while they are)
	s1, sT softmaxSums
	t1, tT bool // s1, sT were computed (NewDistributionText skips them)
	// pass is the logits' one pass (engine.LogitPassOf: the mean's sum,
	// the range), made by newDistributionTop (BlockMax only while it runs);
	// passed: it was
	pass   engine.LogitPass
	passed bool
}

// softmaxSums are what a softmax at temperature t needs for any one
// probability: the largest logit and Σ exp((z−max)/t), with the entropy.
type softmaxSums struct {
	t, mx, sum, entropy float64
	// e, when kept, is exp((z−max)/t) per token id: selecting a large
	// prefix (a flat distribution) then needs no second exponential per
	// token. Scratch, dropped when the selection is done.
	e []float64
}

// newSoftmaxSumsKeep makes the sums of logits at temperature t, keeping
// each token's exponential in e (len(logits), or nil for none).
func newSoftmaxSumsKeep(logits []float32, t float64, e []float64) softmaxSums {
	return newSoftmaxSumsMax(logits, t, e, nil)
}

// newSoftmaxSumsMax is newSoftmaxSumsKeep, with the largest logit taken
// from pass when it has it exactly (pass.Exact: the bits the loop here
// finds; nil: none).
func newSoftmaxSumsMax(logits []float32, t float64, e []float64, pass *engine.LogitPass) softmaxSums {
	if t <= 0 {
		t = 1
	}
	s := softmaxSums{t: t, mx: math.Inf(-1)}
	mx := float32(math.Inf(-1))
	if pass != nil && pass.Exact {
		mx = pass.Hi
	} else {
		for _, v := range logits {
			if v > mx {
				mx = v
			}
		}
	}
	if len(logits) > 0 {
		s.mx = float64(mx)
	}
	// entropy H = −Σ p·log p with log p = u − log S (u = (z−max)/t), so
	// H = log S − Σ e^u·u / S: no logarithm per token. The exponentials
	// come four at a time (engine.SoftmaxSums: math.Exp's bits) with both
	// sums, in the lane order (engine.LaneSum), as the tests' Softmax adds.
	var eut float64
	if e == nil { // the sums alone
		s.sum, eut = engine.SoftmaxSums(nil, nil, logits, s.mx, t)
	} else {
		ub, doneU := keptExp(len(logits))
		defer doneU()
		s.sum, eut = engine.SoftmaxSums(ub, e, logits, s.mx, t)
	}
	s.entropy = math.Log(s.sum) - eut/s.sum
	s.e = e
	return s
}

// prob is the softmax probability of token id's logit v, the same bits as
// Softmax's.
func (s softmaxSums) prob(id int, v float32) float64 {
	if s.e != nil {
		return s.e[id] / s.sum
	}
	return math.Exp((float64(v)-s.mx)/s.t) / s.sum
}

// expBufs are the kept exponentials' scratch (softmaxSums.e), reused.
var expBufs = sync.Pool{New: func() any { return new([]float64) }}

// keptExp returns scratch for V exponentials, and its release.
func keptExp(V int) ([]float64, func()) {
	b := expBufs.Get().(*[]float64)
	if len(*b) < V {
		*b = make([]float64, V)
	}
	return (*b)[:V], func() { expBufs.Put(b) }
}

// NewDistribution applies the sampling transforms to logits, with the whole
// vocabulary in Sorted (the reference the cheap path is tested against).
func NewDistribution(logits []float32, p SamplingParams) *Distribution {
	return NewDistributionTop(logits, p, len(logits))
}

// NewDistributionTop is NewDistribution with only the top of the vocabulary
// sorted: Sorted holds at least the kept set and the first n candidates.
// Every number it reports equals NewDistribution's.
func NewDistributionTop(logits []float32, p SamplingParams, n int) *Distribution {
	return newDistributionTop(logits, p, n, nil)
}

// newDistributionTop is NewDistributionTop with Sorted in buf's memory
// when it has room (a session reuses its previous step's).
func newDistributionTop(logits []float32, p SamplingParams, n int, buf []Candidate) *Distribution {
	// temperature 0 puts all the probability after temperature on the top
	// token (selectTop sets it): no softmax after temperature to compute
	d := &Distribution{Params: p, logits: logits, t1: true, tT: !p.Greedy(), Sorted: buf[:0]}
	// sampling may select most of a flat vocabulary: keep the exponentials
	var e1, eT []float64
	if !p.Greedy() {
		var done1, doneT func()
		e1, done1 = keptExp(len(logits))
		defer done1()
		if p.Temperature != 1 {
			eT, doneT = keptExp(len(logits))
			defer doneT()
		}
	}
	var pass *engine.LogitPass
	if len(logits) > 0 {
		bm := blockBufs.Get().(*[]float32)
		defer blockBufs.Put(bm)
		d.pass, d.passed = engine.LogitPassOf(logits, *bm), true
		*bm, pass = d.pass.BlockMax, &d.pass
		defer func() { d.pass.BlockMax = nil }()
	}
	d.s1 = newSoftmaxSumsMax(logits, 1, e1, pass)
	d.sT = d.s1
	if p.Temperature > 0 && p.Temperature != 1 {
		d.sT = newSoftmaxSumsMax(logits, p.Temperature, eT, pass)
	}
	d.Entropy1, d.EntropyT = d.s1.entropy, d.sT.entropy
	if p.Greedy() {
		d.EntropyT = 0 // one token holds it all
	}
	d.selectTop(n)
	d.s1.e, d.sT.e = nil, nil // the scratch goes back: later lookups (At) recompute
	return d
}

// NewDistributionText is the distribution a text-only session
// (Config.TextOnly) picks from: the same kept set, ProbT and ProbKept as
// NewDistribution's, bit for bit, and nothing else. Greedy computes no
// probability at all (one pass for the largest logit: Sorted is that one
// token, with ProbKept 1); sampling computes only the softmax after
// temperature. Prob1, KeptMass under greedy, and the entropies are left 0.
func NewDistributionText(logits []float32, p SamplingParams) *Distribution {
	return newDistributionText(logits, p, nil)
}

// newDistributionText is NewDistributionText with Sorted in buf's memory
// when it has room.
func newDistributionText(logits []float32, p SamplingParams, buf []Candidate) *Distribution {
	d := &Distribution{Params: p, logits: logits, Sorted: buf[:0]}
	if p.Greedy() {
		best := 0
		for id := 1; id < len(logits); id++ {
			if before(logits, id, best) {
				best = id
			}
		}
		d.Sorted = append(d.Sorted, Candidate{ID: best, Logit: logits[best], ProbT: 1, ProbKept: 1})
		d.Kept, d.AfterK, d.AfterP = 1, 1, 1
		return d
	}
	e, done := keptExp(len(logits))
	defer done()
	d.sT, d.tT = newSoftmaxSumsKeep(logits, p.Temperature, e), true
	d.selectTop(1)
	d.sT.e = nil
	return d
}

// selectTop fills Sorted with at least the kept set and the first n
// candidates, and the cut-offs, from d's softmax sums.
func (d *Distribution) selectTop(n int) *Distribution {
	logits, p := d.logits, d.Params
	V := len(logits)
	idBuf := idBufs.Get().(*[]int)
	defer idBufs.Put(idBuf)
	m := min(max(n, 1), V)
	// sampling: first the tokens whose logit lies within span of the
	// largest, the span read off the probability mass by distance from the
	// top (nucleusSpan): one pass to bin, one to gather, a sort of those
	// few. A heap of the first 64 missed the nucleus on a third of the
	// default model's steps (T 0.8, top-p 0.9) and then ranked the whole
	// vocabulary. Widened until the cut-offs are decided inside it; past
	// an eighth of the vocabulary, all of it.
	var span float64
	if !p.Greedy() {
		m = min(max(m, 64), V)
		if mx := d.sT.mx; !math.IsInf(mx, 0) && !math.IsNaN(mx) && V > 64 && d.sT.e != nil {
			if span = d.nucleusSpan(m); math.IsInf(span, 1) {
				span, m = 0, V
			}
		}
	}
	for {
		var ids []int
		if span > 0 {
			var count int
			ids, count = rankWithin(logits, d.sT.mx-span, m, V/8, (*idBuf)[:0])
			if ids == nil {
				if count < m && span < 1e4 {
					span *= 4
					continue
				}
				span, m = 0, V // too many within reach (or too few): rank them all
			}
		}
		if ids == nil {
			var blocks []float32 // skipped where no logit beats the cut (no NaN to miss)
			if d.passed && !math.IsNaN(d.pass.Sum) {
				blocks = d.pass.BlockMax
			}
			ids = topIDsBlocks(logits, blocks, m, (*idBuf)[:0])
		}
		*idBuf = ids
		if cap(d.Sorted) < len(ids) {
			d.Sorted = make([]Candidate, 0, len(ids))
		}
		d.Sorted = d.Sorted[:0]
		for _, id := range ids {
			d.Sorted = append(d.Sorted, d.candidate(id))
		}
		if d.cut(V) {
			break
		}
		if span > 0 {
			if span *= 4; span >= 1e4 {
				span, m = 0, V
			}
			continue
		}
		// grow fast, and past an eighth of the vocabulary a full sort is
		// cheaper than a heap that large (a flat distribution keeps most).
		// Without top-k the nucleus needs mass p, and g·m candidates hold
		// at most g times the mass of the first m (they are sorted): skip
		// sizes that cannot reach it.
		g := 16
		if p.TopK <= 0 && p.TopP < 1 {
			var mass float64
			for _, c := range d.Sorted {
				mass += c.ProbT
			}
			for float64(g)*mass < p.TopP && g*m <= V/8 {
				g *= 16
			}
		}
		if m = g * m; m > V/8 {
			m = V
		}
	}
	if p.Greedy() && len(d.Sorted) > 0 {
		d.Sorted[0].ProbT = 1 // temperature 0: a point mass on the top token
	}
	for _, c := range d.Sorted[:d.Kept] {
		d.KeptMass += c.ProbT
	}
	for i := range d.Sorted[:d.Kept] {
		d.Sorted[i].ProbKept = d.Sorted[i].ProbT / d.KeptMass
	}
	return d
}

// nucleusSpan is how far below the largest logit the cut-offs are likely
// decided, with m candidates at least: the mass after temperature binned
// by distance from the top (bins of 0.5 in ln-probability), summed from
// the top until top-k's k (and one more, for ties) or top-p's mass is
// inside, or min-p's floor, plus a bin. A guess, checked by cut; +Inf
// when everything is kept or it reaches past the bins. Needs d.sT.e.
func (d *Distribution) nucleusSpan(m int) float64 {
	const bins, w = 64, 0.5
	p, s := d.Params, d.sT
	if p.TopK <= 0 && p.TopP >= 1 && p.MinP <= 0 {
		return math.Inf(1)
	}
	var mass [bins + 1]float64
	var count [bins + 1]int
	scale := 1 / (s.t * w)
	for i, v := range d.logits {
		b := int((s.mx - float64(v)) * scale)
		if b < 0 || b > bins {
			b = bins
		}
		mass[b] += s.e[i]
		count[b]++
	}
	need := p.TopP * s.sum
	floor := math.Inf(1) // min-p: u ≥ ln(min_p)
	if p.MinP > 0 {
		floor = -math.Log(p.MinP) / w
	}
	var cm float64
	var cc int
	for b := range bins {
		cm += mass[b]
		cc += count[b]
		if cc < m {
			continue
		}
		if p.TopK > 0 && cc > p.TopK || p.TopK <= 0 && p.TopP < 1 && cm >= need || float64(b) >= floor {
			return float64(b+2) * w * s.t
		}
	}
	return math.Inf(1)
}

func (d *Distribution) candidate(id int) Candidate {
	v := d.logits[id]
	c := Candidate{ID: id, Logit: v}
	if d.t1 {
		c.Prob1 = d.s1.prob(id, v)
	}
	if d.tT {
		c.ProbT = d.sT.prob(id, v)
	}
	return c
}

// cut sets AfterK, AfterP and Kept from the sorted prefix, as TopKCut,
// TopPCut and MinPCut would over the whole sorted vocabulary; it reports
// false when the prefix is too short to decide.
func (d *Distribution) cut(V int) bool {
	pre := d.Sorted
	m := len(pre)
	whole := m == V
	if d.Params.Greedy() {
		d.AfterK, d.AfterP, d.Kept = 1, 1, 1
		return true
	}
	p := d.Params
	// top-k: the k largest and every one tied with the k-th
	if k := p.TopK; k <= 0 || k >= V {
		d.AfterK = V
	} else {
		if k >= m && !whole {
			return false
		}
		n := k
		for n < m && pre[n].ProbT == pre[k-1].ProbT {
			n++
		}
		if n == m && !whole {
			return false
		}
		d.AfterK = n
	}
	// top-p: the smallest prefix reaching p × the mass after top-k
	d.AfterP = d.AfterK
	if p.TopP < 1 {
		total := 1.0
		if d.AfterK < V {
			total = 0
			for _, c := range pre[:d.AfterK] {
				total += c.ProbT
			}
		}
		var cum float64
		found := false
		for i, c := range pre[:min(m, d.AfterK)] {
			cum += c.ProbT
			if cum >= p.TopP*total {
				d.AfterP, found = i+1, true
				break
			}
		}
		if !found && m < d.AfterK {
			return false
		}
	}
	// min-p: drop tokens below min_p × the top probability
	d.Kept = d.AfterP
	if p.MinP > 0 && d.AfterP > 0 {
		th := p.MinP * pre[0].ProbT
		found := false
		for i, c := range pre[:min(m, d.AfterP)] {
			if c.ProbT < th {
				d.Kept, found = max(i, 1), true
				break
			}
		}
		if !found && m < d.AfterP {
			return false
		}
	}
	return d.Kept <= m
}

// before reports whether token a ranks before token b: larger logit, then
// smaller id.
func before(logits []float32, a, b int) bool {
	if logits[a] != logits[b] {
		return logits[a] > logits[b]
	}
	return a < b
}

// topIDs returns the ids of the m highest-ranked logits in rank order: a
// bounded min-heap over one pass (O(vocab · log m), nearly O(vocab) since
// few tokens beat the heap's worst), then a sort of the m.
func topIDs(logits []float32, m int, dst []int) []int {
	return topIDsBlocks(logits, nil, m, dst)
}

// topIDsBlocks is topIDs, skipping each block of engine.LogitBlock logits
// whose greatest (blocks, from engine.LogitPassOf; nil: none skipped; the
// logits must have no NaN) is below the heap's worst once it is full: most
// blocks of a vocabulary, read once instead of value by value.
func topIDsBlocks(logits []float32, blocks []float32, m int, dst []int) []int {
	V := len(logits)
	if m >= V {
		return rankAll(logits, dst)
	}
	h := dst[:0] // heap: h[0] is the worst kept (ranks last)
	worse := func(a, b int) bool { return before(logits, b, a) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			w := l
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				w = r
			}
			if !worse(h[w], h[i]) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	var worst float32 // logits[h[0]] once the heap is full
	blk := V
	floor := float32(math.Inf(-1)) // blocks whose greatest is below it hold none of the m
	if blocks != nil {
		blk = engine.LogitBlock
		floor = mthGreatest(blocks, m)
	}
	for k0 := 0; k0 < V; k0 += blk {
		if blocks != nil && (blocks[k0/blk] < floor || len(h) == m && blocks[k0/blk] < worst) {
			continue // no logit of the block reaches the m-th best (so far)
		}
		for id := k0; id < min(k0+blk, V); id++ {
			if len(h) == m && logits[id] < worst {
				continue // the common case: below the m-th best so far
			}
			if len(h) < m {
				h = append(h, id)
				for i := len(h) - 1; i > 0; {
					par := (i - 1) / 2
					if !worse(h[i], h[par]) {
						break
					}
					h[i], h[par] = h[par], h[i]
					i = par
				}
				if len(h) == m {
					worst = logits[h[0]]
				}
				continue
			}
			if before(logits, id, h[0]) {
				h[0] = id
				down(0)
				worst = logits[h[0]]
			}
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		if before(logits, a, b) {
			return -1
		}
		return 1 // ids differ: never equal
	})
	return h
}

// mthGreatest is the m-th greatest of the block maxima v (none NaN), or
// −Inf when m > len(v) or m > 64: m blocks have a logit at least that
// large, so the m highest-ranked logits are all at least that large too,
// and a block whose greatest is below it holds none of them.
func mthGreatest(v []float32, m int) float32 {
	if m < 1 || m > len(v) || m > 64 {
		return float32(math.Inf(-1))
	}
	var hb [64]float32 // a min-heap of the m greatest so far
	h := hb[:0]
	for _, x := range v {
		if len(h) == m {
			if x <= h[0] {
				continue
			}
			h[0] = x
			for i := 0; ; { // down
				l, w := 2*i+1, i
				if l < m && h[l] < h[w] {
					w = l
				}
				if r := l + 1; r < m && h[r] < h[w] {
					w = r
				}
				if w == i {
					break
				}
				h[i], h[w] = h[w], h[i]
				i = w
			}
			continue
		}
		h = append(h, x)
		for i := len(h) - 1; i > 0 && h[i] < h[(i-1)/2]; i = (i - 1) / 2 {
			h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
		}
	}
	return h[0]
}

// rankWithin returns, in rank order, the ids whose logit is ≥ lo when
// there are between atLeast and atMost of them (a prefix of the ranking:
// every token ranked before one of them has a logit at least as large),
// else nil and how many there are (counted up to atMost+1).
func rankWithin(logits []float32, lo float64, atLeast, atMost int, dst []int) ([]int, int) {
	keys := keyBufs.Get().(*[]uint64)
	defer keyBufs.Put(keys)
	k := (*keys)[:0]
	for id, v := range logits {
		if float64(v) >= lo {
			if len(k) == atMost {
				return nil, atMost + 1
			}
			k = append(k, uint64(^orderKey(v))<<32|uint64(id))
		}
	}
	*keys = k
	if len(k) < atLeast {
		return nil, len(k)
	}
	slices.Sort(k)
	ids := dst[:0]
	for _, x := range k {
		ids = append(ids, int(uint32(x)))
	}
	return ids, len(ids)
}

// orderKey maps a logit to an unsigned key in the same order (−0 as +0).
func orderKey(v float32) uint32 {
	if v == 0 {
		v = 0
	}
	u := math.Float32bits(v)
	if u&(1<<31) != 0 {
		return ^u
	}
	return u | 1<<31
}

// keyBufs are rankWithin's keys, reused across steps and sessions.
var keyBufs = sync.Pool{New: func() any { return new([]uint64) }}

// rankAll returns every id in rank order (larger logit first, ties by
// smaller id): a stable least-significant-digit radix sort on the logits'
// bits, O(vocab), a tenth of a comparison sort's time on 32 000 tokens. The
// keys map float32 order to unsigned order (−0 as +0, so it ties with +0 as
// before has it); ids start in ascending order and a stable sort keeps tied
// ids so.
func rankAll(logits []float32, dst []int) []int {
	V := len(logits)
	bufs := radixBufs.Get().(*[2][]uint64)
	defer radixBufs.Put(bufs)
	if len(bufs[0]) < V {
		bufs[0], bufs[1] = make([]uint64, V), make([]uint64, V)
	}
	a, b := bufs[0][:V], bufs[1][:V] // descending-order key << 32 | id
	for id, v := range logits {
		a[id] = uint64(^orderKey(v))<<32 | uint64(id)
	}
	const bits = 11
	var count [1 << bits]int
	for shift := 32; shift < 64; shift += bits {
		clear(count[:])
		for _, x := range a {
			count[(x>>shift)&(1<<bits-1)]++
		}
		if count[(a[0]>>shift)&(1<<bits-1)] == V {
			continue // every key has this digit: nothing moves
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range a {
			d := (x >> shift) & (1<<bits - 1)
			b[count[d]] = x
			count[d]++
		}
		a, b = b, a
	}
	ids := dst[:0]
	for _, x := range a {
		ids = append(ids, int(uint32(x)))
	}
	return ids
}

// blockBufs are the logits pass's block maxima, reused across steps and
// sessions.
var blockBufs = sync.Pool{New: func() any { return new([]float32) }}

// idBufs are selectTop's ids, reused across steps and sessions.
var idBufs = sync.Pool{New: func() any { return new([]int) }}

// radixBufs are rankAll's scratch, reused across steps and sessions.
var radixBufs = sync.Pool{New: func() any { return new([2][]uint64) }}

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

// Rank returns the rank of token id (0 = the top), or -1 when id is not
// in the vocabulary. Outside Sorted it counts the tokens ranked before id.
func (d *Distribution) Rank(id int) int {
	if id < 0 || id >= len(d.logits) {
		return -1
	}
	for i, c := range d.Sorted {
		if c.ID == id {
			return i
		}
	}
	r := 0
	for j := range d.logits {
		if before(d.logits, j, id) {
			r++
		}
	}
	return r
}

// At returns token id's candidate and rank, also beyond Sorted (forcing a
// token far down the list).
func (d *Distribution) At(id int) (Candidate, int) {
	r := d.Rank(id)
	if r >= 0 && r < len(d.Sorted) {
		return d.Sorted[r], r
	}
	return d.candidate(id), r
}
