package web_test

// e2e_modelview_families_test.go: the model view on the tiny random
// checkpoints of each decoder family (engine/testdata/arch: Llama 3 RoPE
// scaling, Qwen 2, Qwen 3, Mistral, Phi-3, Gemma 2, Gemma 3), run by
// TestBrowserLongest/Families in the presenter's tab after its class run: the model
// view draws the family's parts — q/k norm boxes, pre- and post-norms,
// biases, fused projections, local and global blocks with their windows,
// RoPE scaling, soft-caps — a few tokens run, a local block's attention
// shows only its window and its KV cache box and the KV panel the window as
// it is; axe-clean.

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web/catalog"
)

// checkFamilyView opens the lab on ts (the family's model m) in b's tab
// and checks the model view: want are texts the picture must show.
func checkFamilyView(t *testing.T, b *browsertest.Browser, ts *httptest.Server, m *engine.Model, card catalog.ModelCard, name string, want []string) {
	ctx := b.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "modelview-family-"+name+"-failure")
			t.Fatal(err)
		}
	}
	b.SetViewport(t, 1280, 900, false)
	// a new run, not the tab's last one resumed
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`)))
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=4")))
	must(waitJS(ctx, `!document.getElementById("btn-step").disabled && document.querySelector("#modelview svg") !== null`))
	sh, c := card.Shape, m.Config
	count := func(sel string) int {
		return evalJS[int](t, ctx, `document.querySelectorAll('#modelview `+sel+`').length`)
	}
	drawn := count(".mv-block")
	if drawn != c.NLayers {
		t.Fatalf("%d blocks drawn, the model has %d", drawn, c.NLayers)
	}
	// the family's parts, from the card
	if got, wantN := count(`[data-part="qknorm"]`), map[bool]int{true: drawn}[c.QKNorm]; got != wantN {
		t.Errorf("%d q/k norm boxes, want %d", got, wantN)
	}
	if got, wantN := count(`[data-part="postnorm"]`), map[bool]int{true: 2 * drawn}[sh.PostNorms]; got != wantN {
		t.Errorf("%d post-norm boxes, want %d", got, wantN)
	}
	if got := count(`[data-part="norm"]`); got != 2*drawn {
		t.Errorf("%d pre-norm boxes, want %d", got, 2*drawn)
	}
	local := 0
	for l := range c.NLayers {
		if c.Sliding(l) {
			local++
		}
	}
	if got := count(`.mv-block[data-attn-kind="local"]`); got != local {
		t.Errorf("%d blocks marked local, the model has %d", got, local)
	}
	if got := count(`.mv-block[data-attn-kind="global"]`); c.Window > 0 && got != c.NLayers-local {
		t.Errorf("%d blocks marked global, want %d", got, c.NLayers-local)
	}
	if got := count(`[data-part="kv"][data-window]`); got != local {
		t.Errorf("%d KV cache boxes with a window, want %d", got, local)
	}
	if sh.Bias != "" {
		if got := count(`[data-part="attn"][data-bias="` + sh.Bias + `"]`); got != drawn {
			t.Errorf("%d attention parts marked with bias %q, want %d", got, sh.Bias, drawn)
		}
	}
	text := evalJS[string](t, ctx, `document.querySelector("#modelview svg").textContent`)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the picture does not say %q", w)
		}
	}

	// a few tokens: tokenize, embed, prefill, then three
	for seq := 1; seq <= 3; seq++ {
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, seq)))
	}
	for n := 1; n <= 3; n++ {
		must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, n)))
	}
	cacheLen := evalJS[int](t, ctx, `+document.querySelector('[data-testid="kv-grid"]').dataset.cacheLen`)
	if c.Window > 0 {
		if cacheLen <= c.Window {
			t.Fatalf("%d positions: the window of %d has not slid", cacheLen, c.Window)
		}
		// the KV box of a local block, and the KV panel, show the window as it is
		kvText := evalJS[string](t, ctx, `document.querySelector('#modelview [data-part="kv"][data-window]').textContent`)
		if wantKV := fmt.Sprintf("%d/%d window", c.Window, c.Window); !strings.Contains(kvText, wantKV) {
			t.Errorf("local KV box says %q, want %q", kvText, wantKV)
		}
		held := evalJS[int](t, ctx, `+document.querySelector('[data-testid="kv-grid"]').dataset.held`)
		if wantHeld := local*c.Window + (c.NLayers-local)*cacheLen; held != wantHeld {
			t.Errorf("the KV panel holds %d layer-positions, want %d", held, wantHeld)
		}
		if p := evalJS[string](t, ctx, `document.querySelector('[data-testid="kv-text"]').textContent`); !strings.Contains(p, fmt.Sprintf("sliding window of %d", c.Window)) {
			t.Errorf("KV panel text %q does not explain the window", p)
		}
		// a local block's head: its window only, the rest marked outside it
		must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#modelview .mv-block[data-attn-kind="local"] .mv-head').dispatchEvent(new MouseEvent("click", {bubbles: true}))`)))
		must(waitJS(ctx, `(() => { const b = document.querySelector('[data-testid="mv-inspect"]'); return b.dataset.what === "head" && b.dataset.detail === "attention" })()`))
		if n := evalJS[int](t, ctx, `+document.querySelector('[data-testid="mv-inspect"]').dataset.keys`); n != c.Window {
			t.Errorf("a local head attends to %d keys, want the window's %d", n, c.Window)
		}
		if n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="mv-evicted-row"]').length`); n != 1 {
			t.Errorf("%d rows for the positions outside the window, want 1", n)
		}
	} else {
		must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#modelview .mv-block .mv-head').dispatchEvent(new MouseEvent("click", {bubbles: true}))`)))
		must(waitJS(ctx, `(() => { const b = document.querySelector('[data-testid="mv-inspect"]'); return b.dataset.what === "head" && b.dataset.detail === "attention" })()`))
		if n := evalJS[int](t, ctx, `+document.querySelector('[data-testid="mv-inspect"]').dataset.keys`); n != cacheLen {
			t.Errorf("a head attends to %d keys, want all %d", n, cacheLen)
		}
	}
	if over := evalJS[int](t, ctx, `(() => { const p = document.getElementById("panel-model").getBoundingClientRect(), s = document.querySelector("#modelview svg").getBoundingClientRect(); return Math.round(s.right - p.right) })()`); over > 0 {
		t.Errorf("the picture sticks out of its panel by %d px", over)
	}
	if dir := os.Getenv("ARTIFACTS_DIR"); dir != "" {
		must(os.MkdirAll(dir, 0o755)) // the first file this run writes there, perhaps
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#panel-model`)))
		must(err)
		must(os.WriteFile(filepath.Join(dir, "modelview-panel-family-"+name+".png"), png, 0o644))
		png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`[data-testid="kv-grid"]`)))
		must(err)
		must(os.WriteFile(filepath.Join(dir, "kv-grid-family-"+name+".png"), png, 0o644))
	}
	b.AssertAccessible(t, "lab with the model view of "+name)
	b.SetViewport(t, 390, 844, true)
	must(waitJS(ctx, `(() => { const s = document.querySelector("#modelview svg"); return s && Math.abs(+s.getAttribute("width") - document.getElementById("modelview").clientWidth) < 2 })()`))
	if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
		t.Errorf("390 px: the page scrolls sideways by %d px", over)
	}
	b.AssertNoJSErrors(t)
}
