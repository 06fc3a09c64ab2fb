package web_test

// e2e_answer_units_test.go: a typed answer is checked with its unit, the
// same quantity however it is written ("4 KiB" was marked wrong against
// 4096, "271.26 MiB" against 284435456).

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserAnswerUnits(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, _ := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/kv-cache")); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `typeof window.ISCheckAnswer === "function"`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		given, real string
		tolerance   float64
		relative    bool
		want        bool
	}{
		{"4 KiB", "4096", 0, false, true},
		{"4KiB", "4096", 0, false, true},
		{"271.26 MiB", "284435456", 0.01, true, true},
		{"284435456", "271.26 MiB", 0.01, true, true},
		{"4 KB", "4096", 0, false, false}, // 4000 bytes
		{"4 KB", "4096", 0.05, true, true},
		{"0.5 s", "500", 0, false, true},
		{"500 ms", "0.5 s", 0, false, true},
		{"12%", "0.12", 0, false, true},
		{"12%", "12", 0, false, true},
		{"12", "12%", 0, false, true},
		{"4 furlongs", "4", 0, false, false},
		{"1,024", "1024", 0, false, true},
		{"four", "4", 0, false, false},
	}
	for _, c := range cases {
		expr := fmt.Sprintf(`window.ISCheckAnswer({kind: "number", tolerance: %g, relative: %v}, %q, %q)`, c.tolerance, c.relative, c.given, c.real)
		if got := evalJS[bool](t, ctx, expr); got != c.want {
			t.Errorf("%q against %q (tolerance %g, relative %v): %v, want %v", c.given, c.real, c.tolerance, c.relative, got, c.want)
		}
	}
}
