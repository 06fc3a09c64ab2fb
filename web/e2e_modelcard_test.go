package web_test

// e2e_modelcard_test.go: the lab links the default model's card, and the card page shows its loss curve.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserModelCardLink(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab")); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `!!document.querySelector('[data-testid="model-card-link"]')`); err != nil {
		t.Fatal(err)
	}
	text := evalJS[string](t, ctx, `document.querySelector('[data-testid="model-card"]').textContent`)
	for _, want := range []string{"Trained on", "capital"} {
		if !strings.Contains(text, want) {
			t.Errorf("lab model line %q lacks %q", text, want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="model-card-link"]`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="model-card-page"] table`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `location.pathname === "/models/`+m.Name+`/card"`); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `[...document.images].some(i => i.src.endsWith("/loss_curve.svg") && i.complete && i.naturalWidth > 0)`); err != nil {
		t.Fatal(err)
	}
	b.Screenshot(t, "model-card")
	b.AssertNoJSErrors(t)
}
