package browsertest

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAxeFindsViolations: the axe-core helper reports a page's serious
// violations (so a clean report on our pages means something).
func TestAxeFindsViolations(t *testing.T) {
	b := New(t)
	page := `data:text/html,<html lang="en"><title>t</title><body><main><p style="color:%23bbb;background:%23fff">low contrast text</p><button></button></main></body></html>`
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, v := range b.Axe(t) {
		ids[v.ID] = true
	}
	for _, want := range []string{"color-contrast", "button-name"} {
		if !ids[want] {
			t.Errorf("axe did not report %s; got %v", want, ids)
		}
	}
}
