package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestHasFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"./..."}, false},
		{[]string{"-timeout", "5m", "./..."}, true},
		{[]string{"-timeout=5m"}, true},
		{[]string{"--timeout=5m"}, true},
		{[]string{"-test.timeout=5m"}, true},
		{[]string{"-run", "Timeout"}, false},
		{[]string{"-timeoutx=1"}, false},
	} {
		if got := hasFlag(c.args, "timeout"); got != c.want {
			t.Errorf("hasFlag(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestLongestFirst: ./... becomes every package of the module, the one with
// the most test code (web, the browser tests) first; arguments with a flag
// pass through as they are.
func TestLongestFirst(t *testing.T) {
	got := longestFirst([]string{"../../..."})
	out, err := exec.Command("go", "list", "../../...").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if len(got) != len(want) || len(got) < 10 {
		t.Fatalf("%d packages, go list has %d", len(got), len(want))
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("packages %v, go list %v", got, want)
	}
	if got[0] != "github.com/inferscope/inferscope/web" {
		t.Errorf("first %s, want the web package", got[0])
	}
	for _, args := range [][]string{{"-run", "X", "./..."}, {"./web", "-count=1"}, nil} {
		if got := longestFirst(args); !slices.Equal(got, args) {
			t.Errorf("%q became %q", args, got)
		}
	}
}
