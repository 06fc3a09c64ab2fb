package engine

// bandwidth.go: a memory read-bandwidth probe (the bound decode speed is compared with).

import "time"

// MeasureReadBandwidth estimates how fast this machine streams memory into
// the engine's dot-product kernel with all cores (bytes/second): it reads a
// buffer much larger than the caches several times and keeps the best run.
func MeasureReadBandwidth(bytes int) float64 {
	n := bytes / 4
	buf := make([]float32, n)
	for i := range buf {
		buf[i] = float32(i & 7)
	}
	ones := make([]float32, 1<<16)
	for i := range ones {
		ones[i] = 1
	}
	best := 0.0
	sums := make([]float32, maxWorkers())
	for run := 0; run < 5; run++ {
		start := time.Now()
		parallelFor(n/len(ones), 1, func(w, lo, hi int) {
			var s float32
			for c := lo; c < hi; c++ {
				s += dot(buf[c*len(ones):(c+1)*len(ones)], ones)
			}
			sums[w] += s // keeps the loop from being optimized away
		})
		el := time.Since(start).Seconds()
		if bw := float64(n/len(ones)*len(ones)*4) / el; bw > best {
			best = bw
		}
	}
	return best
}
