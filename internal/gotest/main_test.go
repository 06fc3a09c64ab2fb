package main

import "testing"

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
