package enginebench

// bandwidth_test.go: the probe's vector loop sums exactly as plain Go does,
// and ReadBandwidthRuns returns one figure per run.

import (
	"math/rand/v2"
	"testing"
)

// TestReadSum: the probe's vector loop (where the CPU has one) adds up
// every word exactly as the plain Go loop does, at any length and offset.
func TestReadSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]uint64, 4096+64)
	for i := range buf {
		buf[i] = rng.Uint64()
	}
	for _, n := range []int{0, 1, 7, 31, 32, 33, 64, 95, 256, 1000, 4096} {
		for _, off := range []int{0, 1, 3, 8, 13} {
			s := buf[off : off+n]
			var want uint64
			for _, v := range s {
				want += v
			}
			if got := ReadSum(s); got != want {
				t.Errorf("%s probe, %d words at offset %d: sum %#x, want %#x", ReadProbe(), n, off, got, want)
			}
		}
	}
}

// TestReadBandwidthRuns: one figure per run, every share of the buffer
// read (a 1-word buffer on 3 threads included).
func TestReadBandwidthRuns(t *testing.T) {
	for _, c := range []struct{ bytes, threads, runs int }{{1 << 20, 2, 3}, {8, 3, 1}, {12345 * 8, 4, 0}} {
		got := ReadBandwidthRuns(c.bytes, c.threads, c.runs)
		if len(got) != max(c.runs, 1) {
			t.Errorf("%+v: %d runs, want %d", c, len(got), max(c.runs, 1))
		}
		for _, v := range got {
			if !(v > 0) {
				t.Errorf("%+v: bandwidth %v", c, v)
			}
		}
	}
}
