package web_test

// e2e_test.go: whole pages in headless Chromium — the home page, and
// axe-core on every kind of page (home, the lab after a run in light and
// dark mode, compare, a lesson), with screenshots of the lab at the sizes
// a class uses (1366×900 laptop, 1280×720 projector, 390×844 phone).

// e2e_test.go: the home page in headless Chromium, with axe-core.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserHome(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, _ := labServer(t)
	b := browsertest.New(t)

	if err := chromedp.Do(b.Ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-title"]`))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-title"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "language model") {
		t.Errorf("home title %q", title)
	}
	lessons, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(`[data-testid="lesson-list"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lessons, "What happens after you press send") {
		t.Errorf("lesson list %q", lessons)
	}
	b.Screenshot(t, "home")
	b.AssertNoJSErrors(t)
}

// TestBrowserAccessibility: axe-core finds no serious or critical
// violation on the home page, the compare page and a lesson page, in the
// headless shell the page tests use and in the full browser (the same
// Chromium build: browsertest.FindChromium), and the pages log no error in
// either.
func TestBrowserAccessibility(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, _ := labServer(t)
	for _, br := range []struct {
		name   string
		open   func(testing.TB) *browsertest.Browser
		suffix string
	}{{"headless shell", browsertest.New, ""}, {"full browser", browsertest.NewFull, "-full-browser"}} {
		t.Run(br.name, func(t *testing.T) {
			b := br.open(t)
			ctx := b.Ctx
			must := func(err error) {
				t.Helper()
				if err != nil {
					b.Screenshot(t, "a11y-failure"+br.suffix)
					t.Fatal(err)
				}
			}
			must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-title"]`))))
			b.AssertAccessible(t, "/")
			must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/compare?prompt=The%20President%20said&t=0.8&p=0.9&seed=3&n=16")))
			must(waitJS(ctx, `document.body.dataset.compare === "done"`))
			b.AssertAccessible(t, "/compare")
			b.Screenshot(t, "compare"+br.suffix)
			must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/sampling?s=4")))
			must(waitJS(ctx, `[...document.querySelectorAll('#section-4 [data-testid="panel-out"]')].every(p => p.dataset.state === "done")`))
			b.AssertAccessible(t, "/lessons/sampling")
			b.Screenshot(t, "lesson-sampling-4"+br.suffix)
			b.AssertNoJSErrors(t)
		})
	}
}

// TestBrowserLabScreens: the lab after a run has no serious or critical
// axe-core violation in light and dark mode, at a laptop's, a projector's
// and a phone's size; screenshots of each (with ARTIFACTS_DIR) are what
// the README shows. The page is loaded once a size, in light mode, and the
// system's dark mode is switched on and off on the loaded page, as a
// student's system does: the panels that bake the scheme's colours into
// their canvases (the attention heat maps' legend says which) are drawn
// again in the new ones.
func TestBrowserLabScreens(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, _ := labServer(t)
	for _, v := range []struct {
		name string
		w, h int64
	}{{"lab-1366x900", 1366, 900}, {"lab-1280x720", 1280, 720}, {"lab-390x844", 390, 844}} {
		t.Run(v.name, func(t *testing.T) {
			b := browsertest.New(t)
			ctx := b.Ctx
			must := func(err error) {
				t.Helper()
				if err != nil {
					b.Screenshot(t, v.name+"-failure")
					t.Fatal(err)
				}
			}
			// dark switches the scheme and waits for the heat maps' redraw
			dark := func(on bool) {
				t.Helper()
				b.SetDark(t, on)
				word := map[bool]string{false: "darker", true: "brighter"}[on]
				must(waitJS(ctx, pageIdleJS+` && [...document.querySelectorAll('[data-testid="attn-scale"]')].every(e => e.textContent.includes("`+word+` = more attention"))`))
			}
			b.SetViewport(t, v.w, v.h, v.w < 500)
			b.SetDark(t, false)
			must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=24&t=0.8&p=0.9&seed=42")))
			must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
			for i := 1; i <= 5; i++ {
				must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
				must(waitJS(ctx, fmt.Sprintf(`%s && document.body.dataset.seq === "%d"`, pageIdleJS, i)))
			}
			b.ViewportScreenshot(t, v.name+"-step")
			dark(true)
			b.ViewportScreenshot(t, v.name+"-dark-step")
			must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-run"]`))))
			must(waitJS(ctx, `document.querySelector("main").dataset.runState === "stopped" && `+pageIdleJS))
			if n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="attn-scale"]').length`); n == 0 {
				t.Error("no attention heat map after the run: the scheme switch below checks nothing")
			}
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)))
			for _, on := range []bool{true, false} {
				name := v.name + map[bool]string{false: "", true: "-dark"}[on]
				if !on {
					dark(false)
				}
				if browsertest.AxeView(v.w, on) {
					b.AssertAccessible(t, "/lab after a run, "+name)
				}
				b.ViewportScreenshot(t, name)
				b.Screenshot(t, name+"-full")
			}
			b.AssertNoJSErrors(t)
		})
	}
}
