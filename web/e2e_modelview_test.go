package web_test

// e2e_modelview_test.go: the model view in headless Chromium — drawn from
// the model card for a GQA Llama (the default), a GPT-2-family model and a
// 30-block GQA Llama that the picture summarises; stepping lights the stage
// and layers of the engine's events; the logit lens; inspecting parts;
// legible at 1280×720 and 390 px, axe-clean, light and dark.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// wideLlama is a 30-block GQA Llama (SmolLM2-135M's layout: 9 query heads,
// 3 key/value heads) narrowed to run fast, with random weights under the
// default model's tokenizer: the picture must summarise it.
func wideLlama(t *testing.T, tok *engine.Model) *engine.Model {
	c := engine.Shapes["smollm2-135M"]
	c.Dim, c.HeadDim, c.HiddenDim, c.VocabSize, c.SeqLen = 72, 8, 192, tok.Config.VocabSize, 256
	m, err := engine.RandomModel("wide-llama", c, 7)
	if err != nil {
		t.Fatal(err)
	}
	m.Tokenizer = tok.Tokenizer
	return m
}

func TestBrowserModelView(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	dm, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		load func(t *testing.T) *engine.Model
	}{
		{"default", func(*testing.T) *engine.Model { return dm }},
		{"gpt2", func(t *testing.T) *engine.Model {
			gm, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
			if err != nil {
				t.Fatal(err)
			}
			return gm
		}},
		{"wide-llama", func(t *testing.T) *engine.Model { return wideLlama(t, dm) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.load(t)
			cat := catalog.NewEngineCatalog()
			if err := cat.Add(m, "", true); err != nil {
				t.Fatal(err)
			}
			srv, err := web.New(web.Options{Catalog: cat})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			checkModelView(t, ts, m, catalog.ModelCardFor(m), tc.name)
		})
	}
}

func checkModelView(t *testing.T, ts *httptest.Server, m *engine.Model, card catalog.ModelCard, name string) {
	b := browsertest.New(t)
	ctx := b.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "modelview-"+name+"-failure")
			t.Fatal(err)
		}
	}
	prompt := "The President said"
	_, want := engineRun(t, m, session.Config{Prompt: prompt, Sampling: session.DefaultSampling(), MaxNewTokens: 3, AllAttention: true, Lens: true})
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=3")))
	must(waitJS(ctx, `!document.getElementById("btn-step").disabled && document.querySelector("#modelview svg") !== null`))

	// the picture is the card's model
	svg := func(expr string) string {
		return evalJS[string](t, ctx, `(() => { const s = document.querySelector("#modelview svg"); return String(`+expr+`) })()`)
	}
	if got := svg(`s.dataset.layers`); got != fmt.Sprint(card.Layers) {
		t.Errorf("picture says %s blocks, card %d", got, card.Layers)
	}
	drawn := evalJS[int](t, ctx, `document.querySelectorAll("#modelview .mv-block").length`)
	more := evalJS[int](t, ctx, `[...document.querySelectorAll("#modelview .mv-more")].reduce((n, g) => n + +g.dataset.count, 0)`)
	if drawn+more != card.Layers || (card.Layers > 6) != (more > 0) || drawn > 6 {
		t.Errorf("%d blocks drawn + %d summarised, card has %d", drawn, more, card.Layers)
	}
	attn := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#modelview [data-part="attn"]')].map(g => [g.dataset.heads, g.dataset.kvHeads, g.dataset.headDim, g.querySelectorAll(".mv-head").length, g.textContent].join("|"))`)
	wantAttn := fmt.Sprintf("%d|%d|%d|%d|attention: %d query heads, %d KV heads × %d", card.Heads, card.KVHeads, card.HeadDim, card.Heads, card.Heads, card.KVHeads, card.HeadDim)
	if len(attn) != drawn {
		t.Errorf("%d attention parts for %d blocks", len(attn), drawn)
	}
	for _, a := range attn {
		if !strings.HasPrefix(a, wantAttn) {
			t.Errorf("attention part %q, want %q…", a, wantAttn)
		}
	}
	mlp := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#modelview [data-part="mlp"]')].map(g => g.dataset.hidden + "|" + g.textContent)`)
	for _, x := range mlp {
		if want := fmt.Sprintf("%d|MLP %s: %d → %d → %d", card.HiddenDim, card.Shape.MLP, card.Dim, card.HiddenDim, card.Dim); !strings.HasPrefix(x, want) {
			t.Errorf("MLP part %q, want %q…", x, want)
		}
	}
	emb := evalJS[string](t, ctx, `document.querySelector('#modelview [data-part="embed"]').textContent`)
	wantEmb := fmt.Sprintf("embedding table: %d × %d", card.Vocab, card.Dim)
	if card.Shape.Rope {
		wantEmb += " (" + countStr(card.Shape.Params.Embedding) + " params)positions: RoPE"
	} else {
		wantEmb += fmt.Sprintf(" (%s params)+ learned positions: %d × %d", countStr(card.Shape.Params.Embedding), card.Context, card.Dim)
	}
	if !strings.HasPrefix(emb, wantEmb) {
		t.Errorf("embedding part %q, want %q…", emb, wantEmb)
	}
	if tied := evalJS[string](t, ctx, `document.querySelector('#modelview [data-part="unembed"]').dataset.tied`); tied != fmt.Sprint(card.Shape.Params.Tied) {
		t.Errorf("unembedding tied %s, card %v", tied, card.Shape.Params.Tied)
	}

	// stepping: the lit stage and layers are the engine's
	for i, ev := range want[:6] {
		if ev.Stage == session.StagePrefill {
			time.Sleep(300 * time.Millisecond) // a student's pace: the layers light in order
		}
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0" && document.getElementById("modelview").dataset.sweeping !== "1"`, i+1)))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelector("#modelview svg").dataset.stage === %q`, ev.Stage)))
		var layers []string
		switch {
		case ev.Prefill != nil:
			for _, l := range ev.Prefill.Layers {
				layers = append(layers, fmt.Sprint(l.Layer))
			}
		case ev.Append != nil:
			for _, l := range ev.Append.LayerTraces {
				layers = append(layers, fmt.Sprint(l.Layer))
			}
		}
		if got := svg(`s.dataset.litLayers`); got != strings.Join(layers, ",") {
			t.Errorf("after %s the picture lights layers %q, the event ran %q", ev.Stage, got, strings.Join(layers, ","))
		}
		litBlocks := evalJS[int](t, ctx, `document.querySelectorAll("#modelview .mv-block.lit").length`)
		if wantLit := min(len(layers), drawn); litBlocks != wantLit {
			t.Errorf("after %s: %d drawn blocks lit, want %d", ev.Stage, litBlocks, wantLit)
		}
		if ev.Stage == session.StagePrefill {
			positions := svg(`document.querySelector('#modelview [data-part="tokens"]').dataset.positions`)
			if positions != fmt.Sprint(ev.Prefill.Positions) {
				t.Errorf("prefill shows %s positions, the pass had %d", positions, ev.Prefill.Positions)
			}
			// the lens: one row per layer; the last is the model's top token
			rows := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="lens-table"] tbody tr').length`)
			top := evalJS[int](t, ctx, `+document.querySelector('[data-testid="lens-table"] tbody tr:last-child td').dataset.id`)
			if rows != card.Layers || top != want[3].Logits.Top[0].ID {
				t.Errorf("lens table: %d rows (want %d), last row's top id %d (the model's %d)", rows, card.Layers, top, want[3].Logits.Top[0].ID)
			}
		}
		if ev.Stage == session.StageAppend && ev.Append.Forwarded {
			if got := svg(`document.querySelector('#modelview [data-part="tokens"]').dataset.positions`); got != "1" {
				t.Errorf("decode shows %s positions, want 1", got)
			}
		}
	}

	if n := evalJS[string](t, ctx, `document.getElementById("modelview").dataset.sweeps || "0"`); n == "0" {
		t.Errorf("prefill at a student's pace: the layers did not light in order (no sweep)")
	}

	// click parts: their tensors come back from the engine
	for _, part := range []struct{ sel, what string }{
		{`#modelview .mv-block [data-inspect="kv"]`, "kv"},
		{`#modelview .mv-block [data-inspect="mlp"]`, "mlp"},
		{`#modelview .mv-block [data-inspect="residual"]`, "residual"},
		{`#modelview .mv-block .mv-head`, "head"},
	} {
		must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('`+part.sel+`').dispatchEvent(new MouseEvent("click", {bubbles: true}))`)))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="mv-inspect"]').dataset.what === %q`, part.what)))
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="mv-inspect"] [data-testid="mv-head"] .ch-row').length`); n != want[5].Append.Pos+1 {
		t.Errorf("head's attention row has %d positions, want %d", n, want[5].Append.Pos+1)
	}

	b.AssertNoJSErrors(t)

	// legible at 1280×720 and 390 px: no sideways scrolling, axe-clean,
	// light and dark (a second browser: each has a time budget)
	b = browsertest.New(t)
	ctx = b.Ctx
	// with prefers-reduced-motion the pass lights at once, without a sweep
	reduce := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
		return err
	})
	must(chromedp.Do(ctx, reduce))
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=3")))
	for seq := 1; seq <= 3; seq++ {
		must(waitJS(ctx, `!document.getElementById("btn-step").disabled`))
		time.Sleep(300 * time.Millisecond)
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, seq)))
	}
	must(waitJS(ctx, `document.querySelector("#modelview svg").dataset.stage === "prefill"`))
	if n, lit := evalJS[string](t, ctx, `document.getElementById("modelview").dataset.sweeps || "0"`), svg(`s.dataset.litLayers`); n != "0" || strings.Count(lit, ",") != card.Layers-1 {
		t.Errorf("reduced motion: %s sweeps, lit layers %q right after prefill; want none and all %d", n, lit, card.Layers)
	}
	must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
	must(waitJS(ctx, `document.querySelectorAll('[data-testid="gen-tok"]').length === 1 && document.body.dataset.busy === "0"`))
	for _, vp := range []struct {
		w, h   int64
		mobile bool
	}{{1280, 720, false}, {390, 844, true}} {
		for _, dark := range []bool{false, true} {
			b.SetViewport(t, vp.w, vp.h, vp.mobile)
			b.SetDark(t, dark)
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("panel-model").scrollIntoView()`)))
			must(waitJS(ctx, `(() => { const s = document.querySelector("#modelview svg"); return s && Math.abs(+s.getAttribute("width") - document.getElementById("modelview").clientWidth) < 2 })()`))
			if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("%dx%d: the page scrolls sideways by %d px", vp.w, vp.h, over)
			}
			if over := evalJS[int](t, ctx, `(() => { const p = document.getElementById("panel-model").getBoundingClientRect(), s = document.querySelector("#modelview svg").getBoundingClientRect(); return Math.round(s.right - p.right) })()`); over > 0 {
				t.Errorf("%dx%d: the picture sticks out of its panel by %d px", vp.w, vp.h, over)
			}
			mode := "light"
			if dark {
				mode = "dark"
			}
			b.ViewportScreenshot(t, fmt.Sprintf("modelview-%s-%d-%s", name, vp.w, mode))
			if dir := os.Getenv("ARTIFACTS_DIR"); dir != "" && vp.w == 1280 {
				must(os.MkdirAll(dir, 0o755)) // the first file this run writes there, perhaps
				// the panel alone (the README's picture: docs/modelview*.png)
				png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#panel-model`)))
				must(err)
				must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("modelview-panel-%s-%s.png", name, mode)), png, 0o644))
			}
			if dark == vp.mobile { // axe is slow: wide in light mode, narrow in dark
				b.AssertAccessible(t, fmt.Sprintf("lab with the model view, %s, %d px, %s", name, vp.w, mode))
			}
		}
	}
	b.AssertNoJSErrors(t)
}

// countStr mirrors core.js count().
func countStr(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
