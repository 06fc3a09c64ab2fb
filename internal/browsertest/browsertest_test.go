package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
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

// TestShellIsTheInstalledChromium: the headless shell the page tests run in
// is the same Chromium version as the full browser installed beside it, so
// the tests check the browser students use, not an older build.
func TestShellIsTheInstalledChromium(t *testing.T) {
	versions := map[string]string{}
	for name, open := range map[string]func(testing.TB) *Browser{"page tests' browser": New, "full browser": NewFull} {
		b := open(t)
		var product string
		if err := chromedp.Do(b.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			res, err := cdp.Call(ctx, tg, browser.GetVersion, cdp.Empty{})
			product = res.Product
			return err
		})); err != nil {
			t.Fatalf("%s: version: %v", name, err)
		}
		_, v, _ := strings.Cut(product, "/")
		versions[name] = v
		t.Logf("%s: %s", name, product)
	}
	if a, b := versions["page tests' browser"], versions["full browser"]; a == "" || a != b {
		t.Errorf("the page tests' browser is Chromium %q, the full browser %q: install both from the same release (apt-get install -y chromium chromium-headless-shell)", a, b)
	}
}
