package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessGrows: spinning for 50 ms of wall clock adds CPU time on a
// system that reports it, and the figure never goes back.
func TestProcessGrows(t *testing.T) {
	before := Process()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		if before != 0 {
			t.Fatalf("Process = %v where it is not read", before)
		}
		return
	}
	x := 0
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	after := Process()
	if after <= before || x == 0 {
		t.Fatalf("CPU time %v after spinning, %v before", after, before)
	}
}
