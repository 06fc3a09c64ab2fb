package browsertest

import (
	"context"
	"slices"
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

// TestAxeSeriousRulesOnly: Axe, which runs only the rules that can report a
// serious or critical violation, finds exactly what a full default run
// finds at those impacts, on a page that breaks rules of every impact.
func TestAxeSeriousRulesOnly(t *testing.T) {
	b := New(t)
	page := `data:text/html,<html><body>` +
		`<h3>skipped levels</h3><h1></h1>` + // heading-order (moderate), empty-heading (minor)
		`<div>outside any landmark</div>` + // region (moderate)
		`<img src="x.png">` + // image-alt (critical)
		`<button></button>` + // button-name (critical)
		`<input type="text">` + // label (critical)
		`<a href="/x"></a>` + // link-name (serious)
		`<p style="color:%23bbb;background:%23fff">low contrast</p>` + // color-contrast (serious)
		`<ul><div>not an item</div></ul>` + // list (serious)
		`<div role="checkbox" aria-checked="maybe">x</div>` + // aria-valid-attr-value (critical)
		`<div tabindex="3">x</div>` + // tabindex (serious)
		`</body></html>` // html-has-lang (serious), document-title (serious), landmark-one-main (moderate)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	key := func(vs []AxeViolation) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.ID+" "+v.Impact+" "+strings.Join(v.Targets, "|"))
		}
		slices.Sort(out)
		return out
	}
	full, fast := key(b.axe(t, axeAllRules)), key(b.Axe(t))
	if len(full) < 8 || !slices.Equal(full, fast) {
		t.Errorf("a full run found %d serious or critical violations:\n%s\nthe serious rules only %d:\n%s", len(full), strings.Join(full, "\n"), len(fast), strings.Join(fast, "\n"))
	}
	// the page also breaks rules of lower impact, which both leave out
	lower, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.filter(v => v.impact === "moderate" || v.impact === "minor").map(v => v.id))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(lower) < 3 {
		t.Errorf("moderate or minor violations %v: the page should break at least three such rules", lower)
	}
	t.Logf("%d serious or critical violations found both ways; %d rules of lower impact broken too (%v)", len(full), len(lower), lower)
}

// TestAxeView: the views of a screenshot matrix that get an axe-core run.
func TestAxeView(t *testing.T) {
	for _, c := range []struct {
		w    int64
		dark bool
		want bool
	}{
		{1366, false, true}, {1366, true, true},
		{1280, false, false}, {1280, true, false},
		{390, false, false}, {390, true, true},
	} {
		if got := AxeView(c.w, c.dark); got != c.want {
			t.Errorf("AxeView(%d, dark %v) = %v, want %v", c.w, c.dark, got, c.want)
		}
	}
}
