package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// exeRSS sums the resident bytes of this process's read-only mappings of its
// own executable.
func exeRSS(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	var total int64
	mine := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			mine = len(f) == 6 && f[5] == exe && !strings.Contains(f[1], "w")
			continue
		}
		if mine && len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			total += kb << 10
		}
	}
	return total
}

// TestReleaseStartupPages: the executable's read-only pages stop counting as
// resident, and the program keeps running (its code faults back in).
func TestReleaseStartupPages(t *testing.T) {
	before := exeRSS(t)
	released := releaseStartupPages()
	after := exeRSS(t)
	if released <= 0 || after >= before {
		t.Fatalf("released %d bytes; executable RSS %d → %d, want it to shrink", released, before, after)
	}
	// code and read-only data (strings, tables) are still there
	if got := strings.Repeat("ab", 3) + strconv.Itoa(42); got != "ababab42" {
		t.Fatalf("after release: %q", got)
	}
}

func TestLeanGC(t *testing.T) {
	t.Setenv("GOGC", "")
	restore := leanGC()
	if got := debug.SetGCPercent(leanGCPercent); got != leanGCPercent {
		t.Errorf("GC percent %d, want %d", got, leanGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got == leanGCPercent {
		t.Errorf("restore left the GC percent at %d", got)
	}
	// GOGC set by the user wins
	t.Setenv("GOGC", "200")
	old := debug.SetGCPercent(200)
	defer debug.SetGCPercent(old)
	leanGC()
	if got := debug.SetGCPercent(200); got != 200 {
		t.Errorf("with GOGC=200 set, leanGC changed the GC percent to %d", got)
	}
}
