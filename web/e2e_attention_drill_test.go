package web_test

// e2e_attention_drill_test.go: the model view's attention drill-down in
// headless Chromium — after a decode pass over a long prompt, clicking a
// head shows its query, every key (labelled, cached or new), q·k, the
// scaling, the causal mask, the softmax weights and the output; the
// weights equal the engine's trace hooks' for that head and position; the
// heads' colour scale reads right in light and dark; axe-clean at 1366×900
// and 390×844.

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserAttentionDrill(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	const prompt = "Once upon a time there was a little girl named Lily. She loved to play outside in the park with her friends. " +
		"One day she saw a big red ball under a tall tree, and she ran to get it before the wind took it away."
	const steps = 2 // decode passes after prefill

	// the engine's own run: the same prompt and settings as the lab's
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.DefaultSampling(), MaxNewTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	var last *session.AppendInfo
	for forwarded := 0; forwarded < steps; {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Append != nil && ev.Append.Forwarded {
			forwarded++
			last = ev.Append
		}
	}
	pos := last.Pos
	if pos+1 < 52 {
		t.Fatalf("only %d keys: the prompt should give 52 or more", pos+1)
	}
	L := m.Config.NLayers - 1
	H := m.Config.NHeads - 1
	want := last.LayerTraces[L].Attn[H] // the trace hooks' weights of head H, block L, at pos

	b := browsertest.New(t)
	ctx := b.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "attention-drill-failure")
			t.Fatal(err)
		}
	}
	b.SetViewport(t, 1366, 900, false)
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt="+url.QueryEscape(prompt)+"&n=8")))
	for seq := 1; seq <= 3; seq++ { // tokenize, embed, prefill
		must(waitJS(ctx, `!document.getElementById("btn-step").disabled`))
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, seq)))
	}
	for k := 1; k <= steps; k++ {
		must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, k)))
	}
	head := fmt.Sprintf(`#modelview .mv-head[data-layer="%d"][data-head="%d"]`, L, H)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('`+head+`').dispatchEvent(new MouseEvent("click", {bubbles: true}))`)))
	must(waitJS(ctx, `document.querySelector('[data-testid="mv-inspect"]').dataset.detail === "attention"`))

	box := `document.querySelector('[data-testid="mv-inspect"]')`
	if got := evalJS[string](t, ctx, `(() => { const d = `+box+`.dataset; return [d.what, d.layer, d.head, d.pos, d.keys].join(",") })()`); got != fmt.Sprintf("head,%d,%d,%d,%d", L, H, pos, pos+1) {
		t.Errorf("drill-down for %q, want head,%d,%d,%d,%d", got, L, H, pos, pos+1)
	}
	// the weights, as the page holds them, equal the engine's hooks'
	rows := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="mv-attn-table"] tbody tr[data-pos]')].map(r => [r.dataset.pos, r.dataset.weight, r.className, r.querySelector('[data-testid="mv-key-label"]').textContent].join("\t"))`)
	if len(rows) != len(want) {
		t.Fatalf("the table lists %d keys, the engine's row has %d", len(rows), len(want))
	}
	var maxDiff float64
	for p, r := range rows {
		f := strings.Split(r, "\t")
		w, err := strconv.ParseFloat(f[1], 32)
		if err != nil || f[0] != strconv.Itoa(p) {
			t.Fatalf("row %d: %q", p, r)
		}
		maxDiff = max(maxDiff, math.Abs(w-float64(want[p])))
		if float32(w) != want[p] {
			t.Errorf("position %d: the page's weight %s, the engine's %g", p, f[1], want[p])
		}
		if strings.TrimSpace(f[3]) == "" {
			t.Errorf("position %d has no token label", p)
		}
		if cached := f[2] == "mv-cached"; cached != (p < pos) {
			t.Errorf("position %d marked %q; the decode pass computed only position %d", p, f[2], pos)
		}
	}
	t.Logf("block %d head %d at position %d: %d weights, max |page − engine hooks| = %g", L, H, pos, len(rows), maxDiff)
	// every chart row labelled; the steps said
	for _, chart := range []string{"mv-head", "mv-attn-scores"} {
		labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="`+chart+`"] .ch-row .ch-label')].map(e => e.textContent)`)
		if len(labels) != pos+1 {
			t.Errorf("%s: %d labelled rows, want %d", chart, len(labels), pos+1)
		}
		for i, l := range labels {
			if !strings.HasPrefix(l, strconv.Itoa(i)+" ") || len(l) < len(strconv.Itoa(i))+2 {
				t.Errorf("%s row %d labelled %q", chart, i, l)
				break
			}
		}
	}
	text := evalJS[string](t, ctx, box+`.textContent`)
	for _, w := range []string{"query q", "q·k", "1/√" + strconv.Itoa(m.Config.HeadDim), "masked", "Softmax", "output", "cached", "new"} {
		if !strings.Contains(text, w) {
			t.Errorf("the drill-down does not say %q", w)
		}
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="mv-attn-q"] svg rect').length`); n != m.Config.HeadDim {
		t.Errorf("query chart: %d bars, want %d", n, m.Config.HeadDim)
	}

	// the colour scale and every layout: light and dark, wide and narrow
	for _, vp := range []struct {
		w, h   int64
		mobile bool
	}{{1366, 900, false}, {390, 844, true}} {
		for _, dark := range []bool{false, true} {
			b.SetViewport(t, vp.w, vp.h, vp.mobile)
			b.SetDark(t, dark)
			mode, word := "light", "darker blue = more attention"
			if dark {
				mode, word = "dark", "brighter blue = more attention"
			}
			must(waitJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="mv-legend"]').dataset.dark === "%v"`, dark)))
			if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="mv-legend-text"]').textContent`); !strings.Contains(got, word) {
				t.Errorf("%s: the colour scale says %q, want %q", mode, got, word)
			}
			// the scale's ends are the cells' colours: the strongest cell is the far end
			ends := evalJS[string](t, ctx, `(() => { const d = document.querySelector('[data-testid="mv-legend"] .mv-scale-bar').dataset; return d.from + " " + d.to })()`)
			if (dark && ends != "rgb(29,32,39) rgb(126,166,255)") || (!dark && ends != "rgb(255,255,255) rgb(36,86,200)") {
				t.Errorf("%s: scale from %s", mode, ends)
			}
			if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("%dx%d %s: the page scrolls sideways by %d px", vp.w, vp.h, mode, over)
			}
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](box+`.scrollIntoView(); scrollBy(0, -130)`)))
			settled(t, ctx)
			b.ViewportScreenshot(t, fmt.Sprintf("attention-drill-%d-%s", vp.w, mode))
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="mv-attn-table"]').closest(".mv-attn-scroll").scrollIntoView(); scrollBy(0, -130)`)))
			settled(t, ctx)
			b.ViewportScreenshot(t, fmt.Sprintf("attention-drill-table-%d-%s", vp.w, mode))
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("panel-model").scrollIntoView(); scrollBy(0, -130)`)))
			settled(t, ctx)
			b.ViewportScreenshot(t, fmt.Sprintf("attention-legend-%d-%s", vp.w, mode))
			if browsertest.AxeView(vp.w, dark) {
				b.AssertAccessible(t, fmt.Sprintf("attention drill-down, %d px, %s", vp.w, mode))
			}
		}
	}
	b.AssertNoJSErrors(t)
}

// settled waits until the page has drawn twice since now (a scroll's
// layout and paint are on screen), instead of sleeping.
func settled(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
}
