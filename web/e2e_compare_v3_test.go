package web_test

// e2e_compare_v3_test.go: /compare after a run in headless Chromium — every
// row of the token table shown (no scroll box), the first divergence marked
// once, the histogram's expected counts printed and its χ² test equal to
// the one computed here from the page's own counts and probabilities, the
// results in view on a phone; axe-core on /compare (also while following a
// class), /server and the model card at a laptop's, a projector's and a
// phone's size, light and dark.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

// v3Sizes are the sizes a class uses: laptop, projector, phone; light and dark.
var v3Sizes = []struct {
	name string
	w, h int64
	dark bool
}{{"1366x900", 1366, 900, false}, {"1366x900-dark", 1366, 900, true}, {"1280x720", 1280, 720, false}, {"1280x720-dark", 1280, 720, true},
	{"390x844", 390, 844, false}, {"390x844-dark", 390, 844, true}}

// chiDraw is one row of the page's table of draws.
type chiDraw struct {
	Count int     `json:"count"`
	P     float64 `json:"p"`
}

// pearson is Pearson's χ² of draws against p × n as the page states it:
// tokens expected 5 or more times are groups of their own; the others and
// the never-drawn tokens' share are pooled into "other"; while "other"
// expects fewer than 5 the smallest group joins it. df = groups − 1.
func pearson(n int, draws []chiDraw) (chi2 float64, df int) {
	type group struct{ obs, exp float64 }
	N := float64(n)
	rest := N
	var own []group
	var other group
	for _, d := range draws {
		e := d.P * N
		rest -= e
		if e >= 5 {
			own = append(own, group{float64(d.Count), e})
		} else {
			other.obs += float64(d.Count)
			other.exp += e
		}
	}
	if rest >= 0.01 {
		other.exp += rest
	}
	sort.SliceStable(own, func(i, j int) bool { return own[i].exp > own[j].exp })
	if other.exp > 0 {
		for other.exp < 5 && len(own) > 0 {
			g := own[len(own)-1]
			own = own[:len(own)-1]
			other.obs += g.obs
			other.exp += g.exp
		}
		own = append(own, other)
	}
	for _, g := range own {
		chi2 += (g.obs - g.exp) * (g.obs - g.exp) / g.exp
	}
	return chi2, len(own) - 1
}

// chi2P is the χ² distribution's upper tail: Q(df/2, x/2), the regularized
// upper incomplete gamma function (series below a+1, continued fraction above).
func chi2P(x float64, df int) float64 {
	a, x := float64(df)/2, x/2
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, del, ap := 1/a, 1/a, a
		for range 1000 {
			ap++
			del *= x / ap
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return 1 - sum*front
	}
	b, c, d := x+1-a, 1e300, 1/(x+1-a)
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		c = b + an/c
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return front * h
}

// noHiddenRows is "" when every row of the token table is laid out in
// full and no box around the table clips or scrolls it, else what hides one.
const noHiddenRows = `(() => {
  const t = document.getElementById("align"), rows = [...t.querySelectorAll("tbody tr")];
  for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
    const cs = getComputedStyle(e);
    if (e.scrollHeight > e.clientHeight + 1 && /auto|scroll|hidden|clip/.test(cs.overflowY)) return "clipped vertically by " + e.className;
    if (e.scrollWidth > e.clientWidth + 1 && /auto|scroll|hidden|clip/.test(cs.overflowX) && e.tabIndex < 0) return "scrolls sideways, not focusable: " + e.className;
  }
  const docH = document.scrollingElement.scrollHeight;
  for (const r of rows) {
    const b = r.getBoundingClientRect();
    if (b.height < 8) return "row " + r.dataset.step + " has height " + b.height;
    if (b.bottom + scrollY > docH + 1) return "row " + r.dataset.step + " is below the page's end";
    if (b.right > document.documentElement.clientWidth + 1) return "row " + r.dataset.step + " runs off the right edge (" + b.right + ")";
  }
  return "";
})()`

// compareRun opens /compare (no prompt in the URL: nothing runs by itself),
// clicks Run both and waits for the results.
func compareRun(t *testing.T, b *browsertest.Browser, url, name string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, name+"-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(b.Ctx, chromedp.Navigate(url)))
	must(waitJS(b.Ctx, `document.getElementById("model").options.length > 0`))
	must(chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-compare"]`))))
	must(waitJS(b.Ctx, `document.body.dataset.compare === "done" && !!document.getElementById("chart-samples").dataset.n && !!document.getElementById("chi2")`))
}

func TestBrowserCompareV3(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	const prompt = "The President said"
	p := session.DefaultSampling()
	p.Temperature, p.TopP = 0.8, 0.9
	g, _ := engineRun(t, m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 32})
	gg := g.Generated()
	// a seed whose sampled run agrees with greedy for a few tokens, then splits
	first, rows, seed := -1, 0, 0
	for seed = 1; seed < 200 && (first < 2 || first > 20); seed++ {
		p.Seed = uint64(seed)
		s, _ := engineRun(t, m, session.Config{Prompt: prompt, Sampling: p, MaxNewTokens: 32})
		sg := s.Generated()
		first, rows = -1, max(len(gg), len(sg))
		for i := range rows {
			if i >= len(gg) || i >= len(sg) || gg[i] != sg[i] {
				first = i
				break
			}
		}
	}
	seed--
	if first < 2 || first > 20 {
		t.Fatal("no seed below 200 splits greedy and sampled between tokens 3 and 21")
	}
	t.Logf("seed %d: the runs split at generated token %d of %d", seed, first+1, rows)
	url := ts.URL + fmt.Sprintf("/compare?t=0.8&p=0.9&seed=%d&n=32", seed)

	for _, v := range v3Sizes {
		t.Run(v.name, func(t *testing.T) {
			b := browsertest.New(t)
			ctx := b.Ctx
			b.SetViewport(t, v.w, v.h, v.w < 500)
			b.SetDark(t, v.dark)
			compareRun(t, b, url, "compare-v3-"+v.name)

			// 1. every row shown, none in a box the keyboard cannot scroll
			if n := evalJS[int](t, ctx, `document.querySelectorAll("#align tbody tr").length`); n != rows {
				t.Errorf("token table has %d rows, the runs %d positions", n, rows)
			}
			if why := evalJS[string](t, ctx, noHiddenRows); why != "" {
				t.Errorf("token table: %s", why)
			}
			// 2. the divergence marked once, in each text and in the table
			if got := evalJS[string](t, ctx, `document.getElementById("diverge").dataset.first`); got != strconv.Itoa(first) {
				t.Errorf("first divergence at %s, the engine's at %d", got, first)
			}
			marks := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#gen-greedy .diverge-at, #gen-sampled .diverge-at, #align tr.first-diverge")].map(e => e.dataset.pos || e.dataset.step)`)
			if fmt.Sprint(marks) != fmt.Sprintf("[%d %d %d]", first, first, first) {
				t.Errorf("divergence marks at %v, want once per text and once in the table, at %d", marks, first)
			}
			if n := evalJS[int](t, ctx, `document.querySelectorAll(".gen-tok.differs, #align tr.diff").length`); n != 0 {
				t.Errorf("%d tokens after the divergence are still marked", n)
			}
			if flags := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#gen-greedy .diverge-flag, #gen-sampled .diverge-flag")].map(e => e.textContent)`); len(flags) != 2 || !strings.Contains(flags[0], "first difference") {
				t.Errorf("divergence labels in the texts: %q", flags)
			}
			// 3. expected values printed, and the χ² of the page's own numbers
			N := evalJS[int](t, ctx, `+document.getElementById("chart-samples").dataset.n`)
			draws := evalJS[[]chiDraw](t, ctx, `[...document.querySelectorAll("#chi2-draws tbody tr[data-id]")].map(r => ({count: +r.dataset.count, p: +r.dataset.p}))`)
			sum := 0
			for _, d := range draws {
				sum += d.Count
			}
			if N != 200 || sum != N {
				t.Errorf("histogram: n %d, the draws table sums to %d", N, sum)
			}
			printed := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#chart-samples .ch-row[data-id] [data-testid="hist-expected"]')].map(e => e.textContent)`)
			if len(printed) == 0 || len(printed) != min(20, len(draws)) {
				t.Errorf("expected values printed on %d bars, %d tokens drawn", len(printed), len(draws))
			}
			for i, txt := range printed {
				if want := fmt.Sprintf("%.1f", draws[i].P*float64(N)); txt != want {
					t.Errorf("bar %d prints expected %q, p × N = %s", i+1, txt, want)
				}
			}
			wantChi, wantDF := pearson(N, draws)
			gotChi := evalJS[float64](t, ctx, `+document.getElementById("chi2").dataset.chi2`)
			gotDF := evalJS[int](t, ctx, `+document.getElementById("chi2").dataset.df`)
			gotP := evalJS[float64](t, ctx, `+document.getElementById("chi2").dataset.p`)
			wantP := chi2P(wantChi, wantDF)
			if math.Abs(gotChi-wantChi) > 1e-9*max(1, wantChi) || gotDF != wantDF || math.Abs(gotP-wantP) > 1e-9 {
				t.Errorf("page: χ² %v, df %d, p %v; from its counts: χ² %v, df %d, p %v", gotChi, gotDF, gotP, wantChi, wantDF, wantP)
			}
			text := evalJS[string](t, ctx, `document.getElementById("chi2").textContent`)
			if want := fmt.Sprintf("χ² = %.2f with %d degrees of freedom", wantChi, wantDF); !strings.Contains(text, want) || !strings.Contains(text, "consistent with the probabilities") {
				t.Errorf("χ² text %q lacks %q and a verdict", text, want)
			}
			if v.name == "1366x900" {
				t.Logf("χ² shown: %q (computed here: χ² %.4f, df %d, p %.4f, from %d tokens drawn of N = %d)", text, wantChi, wantDF, wantP, len(draws), N)
			}
			// 4. the results (a summary with links to them) in view after the run
			inView := evalJS[string](t, ctx, `(() => { const r = document.getElementById("compare-summary").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.height > 0 ? "" : "summary at " + r.top + ".." + r.bottom + " of " + innerHeight; })()`)
			if inView != "" {
				t.Errorf("after the run: %s", inView)
			}
			if txt := evalJS[string](t, ctx, `document.getElementById("compare-summary").textContent`); !strings.Contains(txt, fmt.Sprintf("split at token %d", first+1)) || !strings.Contains(txt, "χ²") || !strings.Contains(txt, "Jump to") {
				t.Errorf("summary %q", txt)
			}
			b.ViewportScreenshot(t, "compare-v3-"+v.name+"-after-run")
			// 5. axe: no serious or critical violation (scrollable regions included)
			if browsertest.AxeView(v.w, v.dark) {
				b.AssertAccessible(t, "/compare after a run, "+v.name)
			}
			if v.w < 500 {
				// from the keyboard: the jump link to the table, Enter, the table at the top
				if err := chromedp.Do(ctx, chromedp.Focus(`[data-testid="jump-table"]`), chromedp.KeyEvent(kb.Enter)); err != nil {
					t.Fatal(err)
				}
				if err := waitJS(ctx, `location.hash === "#res-table" && Math.abs(document.getElementById("res-table").getBoundingClientRect().top) < 40`); err != nil {
					t.Error(err)
				}
				b.ViewportScreenshot(t, "compare-v3-"+v.name+"-table")
			}
			if v.name == "1366x900" || v.name == "390x844-dark" {
				must := func(err error) {
					t.Helper()
					if err != nil {
						t.Fatal(err)
					}
				}
				must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="chi2-details"]').open = true`)))
				b.AssertAccessible(t, "/compare with the χ² numbers open, "+v.name)
				must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("res-hist").scrollIntoView()`)))
				b.ViewportScreenshot(t, "compare-v3-"+v.name+"-hist")
				must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("chi2").scrollIntoView()`)))
				b.ViewportScreenshot(t, "compare-v3-"+v.name+"-chi2")
			}
			b.Screenshot(t, "compare-v3-"+v.name+"-full")
			b.AssertNoJSErrors(t)
		})
	}
}

// TestBrowserCompareV3Follower: a student following a class on /compare sees
// the presenter's results with the same marks and χ², and axe finds nothing.
func TestBrowserCompareV3Follower(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	c.must(pres, "open compare", chromedp.Navigate(ts.URL+"/compare"))
	c.wait(pres, `document.getElementById("model").options.length > 0`)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	s1 := c.tab()
	c.must(s1, "join", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s1, `location.pathname === '/compare' && document.body.dataset.room === 'following'`)
	c.must(pres, "settings", chromedp.SetValue("#max-new", "32"), chromedp.SetValue("#temperature", "0.8"), chromedp.SetValue("#seed", "3"))
	c.must(pres, "run both", c.click(`[data-testid="btn-compare"]`))
	c.wait(pres, `document.body.dataset.compare === 'done' && !!document.getElementById('chi2')`)
	want := evalJS[string](t, pres, compareState+` + "|" + document.getElementById("chi2").dataset.chi2 + "|" + document.querySelectorAll("#align tbody tr").length`)
	c.wait(s1, compareState+` + "|" + (document.getElementById("chi2") || {dataset: {}}).dataset.chi2 + "|" + document.querySelectorAll("#align tbody tr").length === `+jsString(want))
	fb := &browsertest.Browser{Ctx: s1}
	for _, sz := range []struct {
		name string
		w, h int64
		dark bool
	}{{"1366x900", 1366, 900, false}, {"1366x900-dark", 1366, 900, true}, {"390x844", 390, 844, false}, {"390x844-dark", 390, 844, true}} {
		fb.SetViewport(t, sz.w, sz.h, sz.w < 500)
		fb.SetDark(t, sz.dark)
		if why := evalJS[string](t, s1, noHiddenRows); why != "" {
			t.Errorf("follower %s, token table: %s", sz.name, why)
		}
		if n := evalJS[int](t, s1, `document.querySelectorAll("#gen-greedy .diverge-at, #gen-sampled .diverge-at, #align tr.first-diverge").length`); n != 3 && n != 0 {
			t.Errorf("follower %s: %d divergence marks", sz.name, n)
		}
		fb.AssertAccessible(t, "/compare following a class, "+sz.name)
	}
	fb.Screenshot(t, "compare-v3-follower-390-dark")
	c.b.AssertNoJSErrors(t)
}

// TestBrowserServerV3: /server with sessions open: axe at each size, light
// and dark; on a phone every cell of the sessions table is inside the page
// (no clipped columns).
func TestBrowserServerV3(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts := batchServer(t, true)
	w := dial(t, ts)
	dial(t, ts)
	runAll(t, w, "The President said", 8)
	for _, v := range v3Sizes {
		t.Run(v.name, func(t *testing.T) {
			b := browsertest.New(t)
			ctx := b.Ctx
			b.SetViewport(t, v.w, v.h, v.w < 500)
			b.SetDark(t, v.dark)
			if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/server")); err != nil {
				t.Fatal(err)
			}
			if err := waitJS(ctx, `document.querySelectorAll('[data-testid="srv-session-row"]').length === 2`); err != nil {
				t.Fatal(err)
			}
			clipped := evalJS[string](t, ctx, `(() => {
  const wrap = document.getElementById("srv-table-wrap"), right = document.documentElement.clientWidth;
  if (wrap.scrollWidth > wrap.clientWidth + 1 && wrap.tabIndex < 0) return "the table scrolls sideways in a box the keyboard cannot focus";
  let above = -Infinity;
  for (const tr of document.querySelectorAll("#srv-rows tr")) {
    const rr = tr.getBoundingClientRect();
    if (rr.top < above - 1) return "rows overlap: one starts at " + rr.top + ", the one above ends at " + above;
    above = rr.bottom;
    for (const td of tr.children) {
      const r = td.getBoundingClientRect();
      if (r.right > right + 1 || r.left < -1 || r.width < 20) return "cell " + td.dataset.label + " at " + r.left + ".." + r.right + " of " + right;
      if (r.top < rr.top - 1 || r.bottom > rr.bottom + 1) return "cell " + td.dataset.label + " spills out of its row";
    }
  }
  return "";
})()`)
			if v.w < 500 && clipped != "" {
				t.Errorf("/server at %s: %s", v.name, clipped)
			}
			if browsertest.AxeView(v.w, v.dark) {
				b.AssertAccessible(t, "/server, "+v.name)
			}
			if v.w < 500 {
				if err := chromedp.Do(ctx, chromedp.ScrollIntoView(`#srv-table`)); err != nil {
					t.Fatal(err)
				}
				b.ViewportScreenshot(t, "server-v3-"+v.name+"-table")
			}
			b.Screenshot(t, "server-v3-"+v.name)
			b.AssertNoJSErrors(t)
		})
	}
}

// TestBrowserModelCardV3: the model card at each size, light and dark: axe
// finds nothing (its wide tables scroll in focusable, labelled regions).
func TestBrowserModelCardV3(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	for _, v := range v3Sizes {
		t.Run(v.name, func(t *testing.T) {
			b := browsertest.New(t)
			ctx := b.Ctx
			b.SetViewport(t, v.w, v.h, v.w < 500)
			b.SetDark(t, v.dark)
			if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/models/"+m.Name+"/card"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="model-card-page"] table`))); err != nil {
				t.Fatal(err)
			}
			labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="card-table"]')].map(d => d.tabIndex + " " + d.getAttribute("role") + " " + d.getAttribute("aria-label"))`)
			if len(labels) != 3 || !strings.HasPrefix(labels[0], "0 region Training data") {
				t.Errorf("card tables' regions: %q", labels)
			}
			if browsertest.AxeView(v.w, v.dark) {
				b.AssertAccessible(t, "model card, "+v.name)
			}
			if v.w < 500 {
				// the keyboard reaches a wide table's region and scrolls it sideways
				if err := chromedp.Do(ctx, chromedp.Focus(`[data-testid="card-table"]`), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight)); err != nil {
					t.Fatal(err)
				}
				if err := waitJS(ctx, `document.activeElement.dataset.testid === "card-table" && document.activeElement.scrollLeft > 0`); err != nil {
					t.Error(err)
				}
				b.ViewportScreenshot(t, "modelcard-v3-"+v.name+"-table")
			}
			b.Screenshot(t, "modelcard-v3-"+v.name)
			b.AssertNoJSErrors(t)
		})
	}
}
