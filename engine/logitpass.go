package engine

// logitpass.go: one pass over a step's logits for what a logits event shows
// of the whole vocabulary — the sum behind the mean (in sixteen lanes), the
// least and greatest value, and each block of sixteen logits' greatest (so
// the top candidates' selection skips blocks below its cut-off) — with
// AVX2 where the CPU has it (logitpass_amd64.s), the same numbers in Go
// elsewhere.

import "math"

// LogitBlock is how many consecutive logits one LogitPass.BlockMax covers.
const LogitBlock = 16

// LogitPass is LogitPassOf's result for logits z.
type LogitPass struct {
	// Sum is Σ float64(z[i]) in the lane order (LaneSum).
	Sum float64
	// Lo and Hi are the least and greatest of z by < and >; they are
	// exact only when Exact is set (see Exact).
	Lo, Hi float32
	// Exact: z has no NaN and neither Lo nor Hi is a zero. Otherwise Lo,
	// Hi and BlockMax may differ from a comparison's in the bits of a
	// zero or in a NaN; the caller takes the slow path then.
	Exact bool
	// BlockMax[k] is the greatest of z[16k : 16k+16] (the last block may
	// be short).
	BlockMax []float32
}

// logitPassKernel fills sums (the sixteen lanes over the first n values),
// lohi (eight running least, then eight running greatest) and bmax (one
// per block of sixteen) for n a positive multiple of 16, and reports
// whether it ran (false without the CPU features: logitpass_amd64.go,
// logitpass_other.go). A direct call, not a function value, so its
// pointers to the caller's arrays leave them on the stack.

// logitPassGo, set by tests, takes the Go path on any CPU.
var logitPassGo bool

// LogitPassOf makes z's pass, BlockMax in buf's memory when it has room.
// z must not be empty.
func LogitPassOf(z []float32, buf []float32) LogitPass {
	nb := (len(z) + LogitBlock - 1) / LogitBlock
	if cap(buf) < nb {
		buf = make([]float32, nb)
	}
	p := LogitPass{BlockMax: buf[:nb]}
	var sums [16]float64
	n := len(z) &^ (LogitBlock - 1)
	lo, hi := z[0], z[0]
	var lohi [16]float32
	if !logitPassGo && n > 0 && logitPassKernel(z, n, &sums, &lohi, p.BlockMax) {
		for _, v := range lohi[:8] {
			if v < lo {
				lo = v
			}
		}
		for _, v := range lohi[8:] {
			if v > hi {
				hi = v
			}
		}
	} else {
		for k := 0; k < n; k += LogitBlock {
			x := z[k : k+LogitBlock : k+LogitBlock]
			bm := x[0]
			for l, v := range x {
				sums[l] += float64(v)
				if v < lo {
					lo = v
				}
				if v > bm {
					bm = v
				}
			}
			if bm > hi {
				hi = bm
			}
			p.BlockMax[k/LogitBlock] = bm
		}
	}
	p.Sum = CombineLanes(&sums)
	if n < len(z) { // the short last block
		bm := z[n]
		for _, v := range z[n:] {
			p.Sum += float64(v)
			if v < lo {
				lo = v
			}
			if v > bm {
				bm = v
			}
		}
		if bm > hi {
			hi = bm
		}
		p.BlockMax[nb-1] = bm
	}
	p.Lo, p.Hi = lo, hi
	p.Exact = !math.IsNaN(p.Sum) && lo != 0 && hi != 0
	return p
}

// The lane order: a sum over a vocabulary adds each token id's value into
// one of sixteen running sums (id mod 16) over the largest multiple of
// sixteen, combines them pairwise (CombineLanes), then adds the rest in order.
// Sixteen chains of additions instead of one (a float64 addition waits ~4
// cycles for the one before it): a sum in token order over 4,096 logits took
// ~8 µs of a lab token's ~60 µs of work beside its forward pass. Each chain
// is a sixteenth as long, so the sum is no less accurate, and its bits are
// the same on every machine: every sum of this kind, the tests' references
// included, adds in this order.

// LaneSum is Σ float64(v) in the lane order.
func LaneSum[T float32 | float64](v []T) float64 {
	var s [16]float64
	n := len(v) &^ 15
	for k := 0; k < n; k += 16 {
		for l, x := range v[k : k+16 : k+16] {
			s[l] += float64(x)
		}
	}
	sum := CombineLanes(&s)
	for _, x := range v[n:] {
		sum += float64(x)
	}
	return sum
}

// CombineLanes adds the lane order's sixteen running sums pairwise.
func CombineLanes(s *[16]float64) float64 {
	return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
		(((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])))
}
