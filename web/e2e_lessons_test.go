package web_test

// e2e_lessons_test.go: the lesson pages in headless Chromium: every live panel runs.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/browsertest"
)

// TestBrowserLessons visits every section of every lesson and checks that
// each embedded panel ran on the engine (no error), that live values were
// filled in, and that a tokens panel shows the engine's own token ids.
func TestBrowserLessons(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	checkedTokens := false
	for _, slug := range []string{"after-send", "sampling", "kv-cache"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/"+slug)); err != nil {
			t.Fatal(err)
		}
		n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="lesson-section"]').length`)
		if n < 5 {
			t.Fatalf("%s: %d sections", slug, n)
		}
		for s := 1; s <= n; s++ {
			if s > 1 {
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="sec-next"]`))); err != nil {
					t.Fatal(err)
				}
			}
			sel := fmt.Sprintf(`#section-%d`, s)
			if err := waitJS(ctx, fmt.Sprintf(`!document.querySelector('%s').hidden && location.search.includes("s=%d")`, sel, s)); err != nil {
				t.Fatal(err)
			}
			if err := waitJS(ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error") && document.querySelectorAll('%s [data-testid="panel-out"]').length > 0`, sel, sel)); err != nil {
				b.Screenshot(t, "lesson-"+slug+"-"+strconv.Itoa(s))
				t.Fatalf("%s section %d: %v", slug, s, err)
			}
			if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"] .error')].map(e => e.textContent)`, sel)); len(errs) > 0 {
				t.Errorf("%s section %d: panel error %v", slug, s, errs)
			}
			if empty := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .live')].filter(e => e.textContent === "…").length`, sel)); empty > 0 {
				t.Errorf("%s section %d: %d live values not filled", slug, s, empty)
			}
			// the first tokens panel shows the engine's tokens of its prompt
			if slug == "after-send" && !checkedTokens && evalJS[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('%s [data-kind="tokens"], %s [data-kind="bytes"]')`, sel, sel)) {
				checkedTokens = true
				ids := evalJS[[]int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .chip')].map(c => +c.dataset.id)`, sel))
				// the prompt the page drew for this visit (a panel's prompts: list)
				prompt := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s .panel-prompt').value`, sel))
				toks, _ := m.Tokenizer.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true})
				var want []int
				for _, tk := range toks {
					want = append(want, tk.ID)
				}
				if fmt.Sprint(ids) != fmt.Sprint(want) {
					t.Errorf("lesson tokens %v, engine %v", ids, want)
				}
			}
			if slug == "kv-cache" && s == 4 {
				// the reason's code is an attribute; the page says it in English
				reason := evalJS[string](t, ctx, `document.querySelector('[data-testid="lesson-stop"]').dataset.reason`)
				txt := evalJS[string](t, ctx, `document.querySelector('[data-testid="lesson-stop"]').textContent`)
				if reason != "context_full" || strings.Contains(txt, "context_full") || !strings.Contains(txt, "context is full") {
					t.Errorf("context limit section: reason %q, text %q", reason, txt)
				}
			}
		}
		b.Screenshot(t, "lesson-"+slug)
	}
	if !checkedTokens {
		t.Error("no tokens panel found in the first lesson")
	}
	b.AssertNoJSErrors(t)
}
