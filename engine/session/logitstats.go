package session

// logitstats.go: a logits event's statistics of the whole vocabulary (the
// mean, the range, the histogram) in one pass over the logits.

// logitStats are what a logits event shows of every logit besides the
// distribution: the mean, and the histogram (only its range when light).
type logitStats struct {
	mean float32
	hist Histogram
}

// statsOf is logits' statistics; light leaves the histogram's counts out
// (a Partial event). The values are those of separate passes (the mean a
// float64 sum in token order, the range min and max), bit for bit.
func statsOf(logits []float32, light bool) logitStats {
	var st logitStats
	if len(logits) == 0 { // no vocabulary: NaN, as a mean over none
		st.mean = float32(0.0 / float64(len(logits)))
		if !light {
			st.hist = NewHistogram(logits, HistogramBins)
		}
		return st
	}
	var lo, hi float32
	st.mean, lo, hi = meanMinMax(logits)
	if light {
		st.hist = Histogram{Lo: lo, Hi: hi}
	} else {
		st.hist = newHistogramIn(logits, HistogramBins, lo, hi)
	}
	return st
}

// meanMinMax is the mean of v (a float64 sum in token order) and its
// smallest and largest values, minMax's bits: one pass of the sum and two
// comparisons per value, the comparisons hidden by the sum's chain of
// additions (minMax's built-in min and max, which order NaN and the signed
// zeros, cost more). Comparisons find a value equal to the least and the
// greatest; its bits are minMax's unless it is a zero (−0 and +0 compare
// equal) or v has a NaN (which makes the sum NaN): then minMax decides.
// v must not be empty.
func meanMinMax(v []float32) (mean, lo, hi float32) {
	var sum float64
	lo, hi = v[0], v[0]
	for _, x := range v {
		sum += float64(x)
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if sum != sum || lo == 0 || hi == 0 {
		lo, hi = minMax(v)
	}
	return float32(sum / float64(len(v))), lo, hi
}
