package session

// logitstats.go: a logits event's statistics of the whole vocabulary (the
// mean, the range, the histogram) in one pass over the logits.

import "github.com/inferscope/inferscope/engine"

// logitStats are what a logits event shows of every logit besides the
// distribution: the mean, and the histogram (only its range when light).
type logitStats struct {
	mean float32
	hist Histogram
}

// statsOf is logits' statistics; light leaves the histogram's counts out
// (a Partial event). The values are those of separate passes (the mean a
// float64 sum in the lane order, engine.LaneSum; the range min and max),
// bit for bit. pass, when not nil, is the logits' engine.LogitPassOf,
// already made (newDistributionTop's).
func statsOf(logits []float32, light bool, pass *engine.LogitPass) logitStats {
	var st logitStats
	if len(logits) == 0 { // no vocabulary: NaN, as a mean over none
		st.mean = float32(0.0 / float64(len(logits)))
		if !light {
			st.hist = NewHistogram(logits, HistogramBins)
		}
		return st
	}
	var lo, hi float32
	if pass != nil {
		st.mean, lo, hi = meanMinMaxOf(logits, *pass)
	} else {
		st.mean, lo, hi = meanMinMax(logits)
	}
	if light {
		st.hist = Histogram{Lo: lo, Hi: hi}
	} else {
		st.hist = newHistogramIn(logits, HistogramBins, lo, hi)
	}
	return st
}

// meanMinMax is the mean of v (a float64 sum in the lane order) and its
// smallest and largest values, minMax's bits, from one pass over v
// (engine.LogitPassOf). v must not be empty.
func meanMinMax(v []float32) (mean, lo, hi float32) {
	return meanMinMaxOf(v, engine.LogitPassOf(v, nil))
}

// meanMinMaxOf is meanMinMax from v's pass p. The pass's comparisons find
// a value equal to the least and the greatest; its bits are minMax's
// unless it is a zero (−0 and +0 compare equal) or v has a NaN (which makes
// the sum NaN): then minMax decides.
func meanMinMaxOf(v []float32, p engine.LogitPass) (mean, lo, hi float32) {
	lo, hi = p.Lo, p.Hi
	if !p.Exact {
		lo, hi = minMax(v)
	}
	return float32(p.Sum / float64(len(v))), lo, hi
}
