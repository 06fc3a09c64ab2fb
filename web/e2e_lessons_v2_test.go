package web_test

// e2e_lessons_v2_test.go: lessons 01 ("after send") and 03 (KV cache) in
// headless Chromium: every section's panel runs, its buttons are pressed and
// its sliders moved, and the values it shows are checked against the engine
// (computed here in Go); screenshots of the layoutShots sections at
// 1366×900, light and dark, axe-core clean of serious issues (their 390×844
// screenshots, and the no-overflow check on every section at 390 px, come
// from TestBrowserLongest/LessonFramework's walk).

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// batchedLessonServer is labServer with the scheduler on, as `serve` runs it.
func batchedLessonServer(t *testing.T) (*httptest.Server, *engine.Model) {
	t.Helper()
	cat, m := defaultCatalog(t)
	tr, err := models.Training()
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.AddDocs(m.Name, models.Docs(), &catalog.Training{Corpus: tr.Corpus, Tokens: tr.Tokens, Minutes: tr.Minutes,
		Hardware: tr.Hardware, ValLoss: tr.ValLoss, CapitalsRight: tr.CapitalsRight, CapitalsTotal: tr.CapitalsTotal}); err != nil {
		t.Fatal(err)
	}
	cat.SetBatching(true, serve.DefaultOptions())
	t.Cleanup(cat.CloseSchedulers)
	return serveCatalog(t, web.Options{Catalog: cat}), m
}

// openSection loads a lesson at section s and waits for its panels.
func openSection(t *testing.T, b *browsertest.Browser, url, slug string, s int) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(fmt.Sprintf("%s/lessons/%s?s=%d", url, slug, s))); err != nil {
		t.Fatal(err)
	}
	sectionReady(t, b, slug, s)
}

// showSection goes to section s of the lesson the tab shows, as a student
// does from the contents (the page stays loaded: a section not shown
// before in it runs its panels now), and waits for its panels. A test that
// visits many sections loads the page once instead of once a section.
func showSection(t *testing.T, b *browsertest.Browser, slug string, s int) {
	t.Helper()
	if !evalJS[bool](t, b.Ctx, fmt.Sprintf(`(() => { const a = document.querySelectorAll("#toc a")[%d]; if (!a) return false; a.click(); return true; })()`, s-1)) {
		t.Fatalf("%s: no section %d in the contents", slug, s)
	}
	sectionReady(t, b, slug, s)
}

// sectionReady waits until section s is shown with its panels done, then
// uncovers panels that wait for a prediction and fails on a panel's error.
func sectionReady(t *testing.T, b *browsertest.Browser, slug string, s int) {
	t.Helper()
	ctx := b.Ctx
	sel := fmt.Sprintf(`#section-%d`, s)
	if err := waitJS(ctx, fmt.Sprintf(`!document.querySelector('%[1]s').hidden && document.querySelectorAll('%[1]s [data-testid="panel-out"]').length > 0 && [...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error")`, sel)); err != nil {
		b.Screenshot(t, "lesson-v2-"+slug+"-"+strconv.Itoa(s))
		t.Fatalf("%s section %d: %v", slug, s, err)
	}
	// a question before the panel keeps it covered until answered: "Show me" uncovers it
	// (the framework's own test answers every question; these tests check the panels)
	evalJS[int](t, ctx, fmt.Sprintf(`(() => { const b = [...document.querySelectorAll('%s form.question:not(.exercise) [data-testid="q-skip"]')]; b.forEach(x => x.click()); return b.length; })()`, sel))
	if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"] .error')].map(e => e.textContent)`, sel)); len(errs) > 0 {
		t.Errorf("%s section %d: panel error %v", slug, s, errs)
	}
}

// sectionOf finds a section's number by its heading.
func sectionOf(t *testing.T, ctx context.Context, heading string) int {
	t.Helper()
	n := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('[data-testid="lesson-section"] h2')].findIndex(h => h.textContent === %q) + 1`, heading))
	if n == 0 {
		t.Fatalf("no section %q", heading)
	}
	return n
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// setSlider moves a range input and fires its input event, as a drag does.
func setSlider(t *testing.T, ctx context.Context, testid string, v int) {
	t.Helper()
	evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const i = document.querySelector('[data-testid=%q]'); i.value = %q; i.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, testid, strconv.Itoa(v)))
}

func encode(t *testing.T, m *engine.Model, text string) []tokenizer.Token {
	t.Helper()
	toks, err := m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func TestBrowserLessonAfterSendV2(t *testing.T) {
	t.Parallel()
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	card := catalog.ModelCardFor(m)
	openSection(t, b, ts.URL, "after-send", 1)
	n := evalJS[int](t, ctx, `document.querySelectorAll('[data-testid="lesson-section"]').length`)
	sec := map[string]int{}
	for _, h := range []string{"Text becomes tokens", "Tokens are not words", "Token ids become vectors", "Prefill: the whole prompt in one pass", "Inside one pass: the blocks",
		"The decode loop", "Four ways to stop", "The KV cache keeps earlier work", "A busy server adds waiting", "Measure the stages separately"} {
		sec[h] = sectionOf(t, ctx, h)
	}
	for s := 1; s <= n; s++ {
		if s > 1 {
			showSection(t, b, "after-send", s)
		}
		sel := fmt.Sprintf("#section-%d", s)
		switch s {
		case sec["Text becomes tokens"], sec["Tokens are not words"]:
			// every chip's tooltip names the bytes it covers, as the engine's tokenizer cut them
			prompt := evalJS[string](t, ctx, `document.querySelector('`+sel+` .panel-prompt').value`)
			toks := encode(t, m, prompt)
			hexes := evalJS[[]string](t, ctx, `[...document.querySelectorAll('`+sel+` .chip')].map(c => c.dataset.hex)`)
			titles := evalJS[[]string](t, ctx, `[...document.querySelectorAll('`+sel+` .chip')].map(c => c.title)`)
			if len(hexes) != len(toks) {
				t.Fatalf("section %d: %d chips, engine %d tokens", s, len(hexes), len(toks))
			}
			for i, tk := range toks {
				want := strings.ToUpper(strings.TrimSpace(spaced(hex.EncodeToString([]byte(prompt[tk.Start:tk.End])))))
				if hexes[i] != want || (want != "" && !strings.Contains(titles[i], want)) {
					t.Errorf("section %d chip %d: bytes %q (title %q), engine %q", s, i, hexes[i], titles[i], want)
				}
			}
			// hovering a chip shows its bytes below the chips
			evalJS[bool](t, ctx, `(() => { document.querySelectorAll('`+sel+` .chip')[2].dispatchEvent(new MouseEvent("mouseenter")); return true; })()`)
			detail := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-testid="byte-detail"]').textContent`)
			if want := strings.ToUpper(spaced(hex.EncodeToString([]byte(prompt[toks[2].Start:toks[2].End])))); !strings.Contains(detail, want) {
				t.Errorf("section %d: hover detail %q lacks the bytes %q", s, detail, want)
			}
			if notes := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-testid="token-notes"]').textContent`); !strings.Contains(notes, "start-of-text") {
				t.Errorf("section %d: the start-of-text chip is not explained: %q", s, notes)
			}
		case sec["Token ids become vectors"]:
			prompt := evalJS[string](t, ctx, `document.querySelector('`+sel+` .panel-prompt').value`)
			toks := encode(t, m, prompt)
			seen, rep := map[int]bool{}, -1
			for _, tk := range toks[1:] {
				if seen[tk.ID] && rep < 0 {
					rep = tk.ID
				}
				seen[tk.ID] = true
			}
			got := evalJS[[]string](t, ctx, `(() => { const p = document.querySelector('`+sel+` [data-testid="same-row"]'); return [p.dataset.id, p.dataset.diff]; })()`)
			if got[0] != strconv.Itoa(rep) || got[1] != "0" {
				t.Errorf("same row: token %s, difference %s; engine's repeated token %d, difference 0", got[0], got[1], rep)
			}
		case sec["Prefill: the whole prompt in one pass"]:
			got := evalJS[[]float64](t, ctx, `(() => { const c = document.querySelector('`+sel+` [data-testid="prefill-compare"]'); return [+c.dataset.one, +c.dataset.steps, +document.querySelector('`+sel+` [data-testid="prefill-same"]').dataset.diff, document.querySelectorAll('`+sel+` [data-testid="layer-bars"] .ch-row').length]; })()`)
			if !(got[0] > 0 && got[1] > 0) || got[2] > 1e-3 || int(got[3]) != card.Layers {
				t.Errorf("prefill panel: one pass %v ms, per position %v ms, logit difference %v, %v layer bars (model %d layers)", got[0], got[1], got[2], got[3], card.Layers)
			}
		case sec["Inside one pass: the blocks"]:
			if err := waitJS(ctx, `document.querySelector('`+sel+` .lp-root').dataset.ready === "1"`); err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"tokenize", "embed", "prefill"} {
				click(t, ctx, sel+` [data-testid="mv-step"]`)
				if err := waitJS(ctx, `document.querySelector('`+sel+` [data-testid="mv-now"]').dataset.stage === "`+want+`" && !document.querySelector('`+sel+` .lp-root').dataset.busy`); err != nil {
					t.Fatalf("model view step %d: %v", i+1, err)
				}
			}
			if err := waitJS(ctx, `document.querySelector('`+sel+` [data-testid="mv-pic"] svg').dataset.stage === "prefill"`); err != nil {
				t.Fatal(err)
			}
			click(t, ctx, sel+` [data-testid="mv-token"]`)
			if err := waitJS(ctx, `document.querySelector('`+sel+` [data-testid="mv-pic"] svg').dataset.stage === "append"`); err != nil {
				t.Fatal(err)
			}
			if blocks := evalJS[int](t, ctx, `+document.querySelector('`+sel+` [data-testid="mv-pic"] svg').dataset.layers`); blocks != card.Layers {
				t.Errorf("model view draws %d blocks, model card %d", blocks, card.Layers)
			}
			b.Screenshot(t, "lesson-after-send-modelview")
		case sec["The decode loop"]:
			if err := waitJS(ctx, `document.querySelector('`+sel+` .lp-root').dataset.ready === "1"`); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 60 && !evalJS[bool](t, ctx, `!!document.querySelector('`+sel+` [data-testid="loop-stop"]')`); i++ {
				click(t, ctx, sel+` [data-testid="loop-step"]`)
				if err := waitJS(ctx, `document.querySelectorAll('`+sel+` [data-testid="loop-log"] li').length > `+strconv.Itoa(i+1)+` || !!document.querySelector('`+sel+` [data-testid="loop-stop"]')`); err != nil {
					t.Fatal(err)
				}
			}
			reason := evalJS[string](t, ctx, `(document.querySelector('`+sel+` [data-testid="loop-stop"]') || {dataset: {}}).dataset.reason || ""`)
			if reason != session.StopMaxTokens && reason != session.StopEOS {
				t.Errorf("decode loop: stop reason %q after stepping", reason)
			}
			if live := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-live="decode.stop_reason"]').textContent`); strings.Contains(live, "not yet") {
				t.Errorf("decode loop: stop reason not shown in the text: %q", live)
			}
			b.Screenshot(t, "lesson-after-send-loop-stopped")
		case sec["Four ways to stop"]:
			got := evalJS[[]string](t, ctx, `[...document.querySelectorAll('`+sel+` [data-testid="stop-row"]')].map(r => r.dataset.key + "=" + r.dataset.reason)`)
			want := []string{"max_new_tokens=max_new_tokens", "eos=eos", "stop_string=stop_string", "context_full=context_full"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("stop conditions: %v, want %v", got, want)
			}
		case sec["The KV cache keeps earlier work"]:
			if err := waitJS(ctx, `document.querySelector('`+sel+` .lp-root').dataset.ready === "1"`); err != nil {
				t.Fatal(err)
			}
			click(t, ctx, sel+` [data-testid="kv-more"]`)
			if err := waitJS(ctx, `document.querySelector('`+sel+` [data-testid="kv-grow"]').dataset.grew === "`+strconv.FormatInt(card.KVBytesPerToken, 10)+`"`); err != nil {
				t.Errorf("cache growth per token: %v (engine %d bytes)", err, card.KVBytesPerToken)
			}
		case sec["A busy server adds waiting"]:
			if got := evalJS[int](t, ctx, `+document.querySelector('`+sel+` .lp-root').dataset.batch`); got < 1 {
				t.Errorf("busy server: largest batch %d", got)
			}
			if !evalJS[bool](t, ctx, `document.querySelector('`+sel+` [data-testid="busy-batching"]').dataset.batching === "true"`) {
				t.Error("busy server: the panel does not see batching on")
			}
			// the prose says what this run's largest batch means, never a
			// claim the run contradicts ("requests rarely line up" beside a batch of 6)
			batch := evalJS[int](t, ctx, `+document.querySelector('`+sel+` .lp-root').dataset.batch`)
			line := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-live="busy.lineup"]').textContent`)
			if lined := strings.Contains(line, "did line up"); lined != (batch >= 2) {
				t.Errorf("busy server: largest batch %d, the prose says %q", batch, line)
			}
		case sec["Measure the stages separately"]:
			// "both decode at a similar pace" only when their medians are within 20%
			itl := evalJS[[]string](t, ctx, `['timing.itl_long', 'timing.itl_short', 'timing.pace'].map((k) => document.querySelector('`+sel+` [data-live="' + k + '"]').textContent)`)
			var long, short float64
			fmt.Sscan(itl[0], &long)
			fmt.Sscan(itl[1], &short)
			similar := long/short < 1.2 && short/long < 1.2
			if strings.Contains(itl[2], "similar pace") != similar {
				t.Errorf("stage timings: %s and %s ms per token, the prose says %q", itl[0], itl[1], itl[2])
			}
		}
		if empty := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .live')].filter(e => e.textContent === "…").length`, sel)); empty > 0 {
			t.Errorf("section %d: %d live values not filled", s, empty)
		}
	}
	b.AssertNoJSErrors(t)
}

// spaced writes hex pairs separated by spaces: "2063" → "20 63".
func spaced(h string) string {
	var parts []string
	for i := 0; i+1 < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, " ")
}

func TestBrowserLessonKVCacheV2(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	card := catalog.ModelCardFor(m)
	// section 1: the keys/values grid against the engine's cache
	openSection(t, b, ts.URL, "kv-cache", 1)
	if err := waitJS(ctx, `document.querySelector('#section-1 .lp-root').dataset.ready === "1"`); err != nil {
		t.Fatal(err)
	}
	prompt := evalJS[string](t, ctx, `document.querySelector('#section-1 .panel-prompt').value`)
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.DefaultSampling(), MaxNewTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() != session.StageLogits {
		if _, err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	L, H := card.Layers-1, card.KVHeads-1
	setSlider(t, ctx, "kv-layer", L)
	setSlider(t, ctx, "kv-head", H)
	got := evalJS[[]string](t, ctx, `(() => { const d = document.querySelector('#section-1 [data-testid="kv-detail"]').dataset; return [d.layer, d.head, d.pos, d.what, d.i, d.value]; })()`)
	pos, _ := strconv.Atoi(got[2])
	want, err := s.Inspect(session.InspectRequest{What: session.InspectKV, Layer: L, Pos: pos})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := strconv.ParseFloat(got[5], 64)
	if got[0] != strconv.Itoa(L) || got[1] != strconv.Itoa(H) || got[3] != "key" || math.Abs(v-float64(want.Keys[H][0])) > 1e-6 {
		t.Errorf("KV grid shows %v; engine's key[0] of layer %d head %d position %d is %v", got, L, H, pos, want.Keys[H][0])
	}
	if c := evalJS[[]string](t, ctx, `(() => { const c = document.querySelector('#section-1 [data-testid="kv-canvas"]'); return [c.dataset.layer, c.dataset.head]; })()`); c[0] != strconv.Itoa(L) || c[1] != strconv.Itoa(H) {
		t.Errorf("KV grid canvas draws layer/head %v after the sliders moved to %d/%d", c, L, H)
	}
	// section 2: one more token grows the cache by the model card's bytes per token
	showSection(t, b, "kv-cache", 2)
	if err := waitJS(ctx, `document.querySelector('#section-2 .lp-root').dataset.ready === "1"`); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, `#section-2 [data-testid="kv-more"]`)
	if err := waitJS(ctx, `document.querySelector('#section-2 [data-testid="kv-grow"]').dataset.grew === "`+strconv.FormatInt(card.KVBytesPerToken, 10)+`" && document.querySelectorAll('#section-2 .ch-dot').length >= 3`); err != nil {
		t.Errorf("cache growth: %v", err)
	}
	// section 3: the budget = weights + requests × context × bytes per token
	showSection(t, b, "kv-cache", 3)
	if err := waitJS(ctx, `document.querySelector('#section-3 .lp-root').dataset.ready === "1"`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ step, ctx int }{{8, card.Context}, {0, 1}, {5, card.Context / 2}} {
		setSlider(t, ctx, "budget-requests", c.step)
		setSlider(t, ctx, "budget-context", c.ctx)
		total := evalJS[string](t, ctx, `document.querySelector('#section-3 [data-testid="budget-text"]').dataset.total`)
		want := card.WeightsBytes + int64(1<<c.step)*int64(c.ctx)*card.KVBytesPerToken
		if total != strconv.FormatInt(want, 10) {
			t.Errorf("budget at %d requests × %d positions: %s bytes, want %d", 1<<c.step, c.ctx, total, want)
		}
	}
	// section 4: the context limit; section 5: the cache on and off
	showSection(t, b, "kv-cache", 4)
	if r := evalJS[string](t, ctx, `document.querySelector('[data-testid="lesson-stop"]').dataset.reason`); r != session.StopContextFull {
		t.Errorf("context limit: reason %q", r)
	}
	// the chart climbs to the context line and the run stops there
	if got := evalJS[[]string](t, ctx, `(() => { const s = document.querySelector('#section-4'); return [s.querySelector('[data-testid="lesson-stop"]').textContent, String(!!s.querySelector('[data-testid="ctx-chart"] [data-testid="ctx-cap"]')), s.querySelector('[data-testid="ctx-tail"]').textContent]; })()`); !strings.Contains(got[0], fmt.Sprintf("cache %d of %d positions", card.Context, card.Context)) || got[1] != "true" || len(got[2]) < 10 {
		t.Errorf("context limit: stop line %q, context line drawn %s, text's end %q; want the cache full at %d positions", got[0], got[1], got[2], card.Context)
	}
	openSection(t, b, ts.URL, "kv-cache", 5)
	if !evalJS[bool](t, ctx, `document.querySelector('#section-5 [data-testid="cache-same"]').dataset.same === "true"`) {
		t.Error("cache on/off: the texts differ")
	}
	b.AssertNoJSErrors(t)
}

// layoutShots are the sections of lessons 01 and 03 screenshotted light and
// dark at 1366×900 (TestBrowserLongest/LessonsV2Layout) and at 390×844
// (TestBrowserLongest/LessonFramework's walk, which visits every section of every
// lesson at 390 px and fails on horizontal overflow).
var layoutShots = map[string][]int{"after-send": {3, 6, 8, 9, 10, 12, 13, 16, 17}, "kv-cache": {1, 2, 3, 4, 5, 6}}

// browserLessonsV2Layout: the sections of layoutShots at 1366×900,
// screenshots light and dark, axe-core clean in both.
func browserLessonsV2Layout(t *testing.T) {
	// Run by TestBrowserLongest (e2e_longest_test.go) beside the other
	// longest browser tests, in go test's serial phase.
	ts, _ := batchedLessonServer(t)
	shots := layoutShots
	for _, slug := range []string{"after-send", "kv-cache"} {
		t.Run(slug, func(t *testing.T) {
			t.Parallel() // each lesson in a tab of its own
			b := browsertest.New(t)
			// the page is loaded once and goes from section to section as a
			// student does; the color scheme changes on the loaded page, as a
			// student's system does
			shoot := func(s int, w, h int64) {
				for _, dark := range []bool{false, true} {
					mode := "light"
					if dark {
						mode = "dark"
					}
					b.SetDark(t, dark)
					b.Screenshot(t, fmt.Sprintf("lesson-%s-s%d-%dx%d-%s", slug, s, w, h, mode))
					b.AssertAccessible(t, fmt.Sprintf("%s section %d (%s)", slug, s, mode))
				}
				b.SetDark(t, false)
			}
			b.SetViewport(t, 1366, 900, false)
			for i, s := range shots[slug] {
				if i == 0 {
					openSection(t, b, ts.URL, slug, s)
				} else {
					showSection(t, b, slug, s)
				}
				shoot(s, 1366, 900)
			}
			b.AssertNoJSErrors(t)
		})
	}
}
