package session

// logitstats.go: a logits event's statistics of the whole vocabulary (the
// mean, the range, the histogram), made in one pass beside the step's
// softmax sums (newDistributionTopWith): on the engine pool's other core
// when one is free, the same numbers either way.

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
// smallest and largest values (minMax's): one pass, the sum's chain of
// additions hiding the comparisons. v must not be empty.
func meanMinMax(v []float32) (mean, lo, hi float32) {
	var sum float64
	l, h := [4]float32{v[0], v[0], v[0], v[0]}, [4]float32{v[0], v[0], v[0], v[0]}
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		sum += float64(x[0])
		sum += float64(x[1])
		sum += float64(x[2])
		sum += float64(x[3])
		l[0], h[0] = min(l[0], x[0]), max(h[0], x[0])
		l[1], h[1] = min(l[1], x[1]), max(h[1], x[1])
		l[2], h[2] = min(l[2], x[2]), max(h[2], x[2])
		l[3], h[3] = min(l[3], x[3]), max(h[3], x[3])
	}
	for ; i < len(v); i++ {
		sum += float64(v[i])
		l[0], h[0] = min(l[0], v[i]), max(h[0], v[i])
	}
	return float32(sum / float64(len(v))), min(l[0], l[1], l[2], l[3]), max(h[0], h[1], h[2], h[3])
}
