package web_test

// e2e_quant_lesson_test.go: the serving lesson's section "Quantization:
// smaller weights, faster decode" in headless Chromium: its questions are
// asked while the panel is covered; then every number the panel shows is
// checked against the engine in Go (bytes per parameter, bytes read per
// token, the largest logit change against F32, the greedy next token and
// text: deterministic), and the decode speeds are present, positive and
// labelled (no ratio between them asserted: they are timings). Screenshots
// at 1366×900, 1280×720 and 390×844, light and dark, axe-clean.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web"
)

func TestBrowserQuantizationLesson(t *testing.T) {
	t.Parallel() // the speeds are checked present and labelled, never compared
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	openSection(t, b, ts.URL, "serving", 1)
	s := sectionOf(t, ctx, "Quantization: smaller weights, faster decode")
	sel := fmt.Sprintf("#section-%d", s)
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "quant-lesson-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/lessons/serving?s=%d", ts.URL, s))))
	must(waitJS(ctx, fmt.Sprintf(`!document.querySelector('%[1]s').hidden && [...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error")`, sel)))
	if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"] .error')].map(e => e.textContent)`, sel)); len(errs) > 0 {
		t.Fatalf("panel error %v", errs)
	}
	// asked before answered: covered, no live value visible
	if covered := evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s').classList.contains("predicting")`, sel)); !covered {
		t.Error("the section is not covered while its questions wait")
	}
	if n := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .lesson-body .live')].filter(e => getComputedStyle(e).visibility !== "hidden").length`, sel)); n > 0 {
		t.Errorf("%d live values visible before the questions are answered", n)
	}
	// answer: the fastest as published, and the text question
	for _, q := range []string{"quant-fastest", "quant-text"} {
		evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const f = document.querySelector('%s form[data-id=%q]'); const key = JSON.parse(document.getElementById('lesson-data').textContent).sections[%d].questions.find(x => x.id === %q).answer;
			const v = window.ISLive[key]; const r = [...f.querySelectorAll('input[type=radio]')].find(x => x.value === v); r.checked = true; r.dispatchEvent(new Event("change", {bubbles: true}));
			f.querySelector('[data-testid="q-check"]').click(); return true; })()`, sel, q, s-1, q))
		must(waitJS(ctx, fmt.Sprintf(`!!document.querySelector('%s form[data-id=%q] [data-testid="q-result"]').dataset.verdict`, sel, q)))
		if v := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s form[data-id=%q] [data-testid="q-result"]').dataset.verdict`, sel, q)); v != "right" {
			t.Errorf("%s: the published answer checked as %s", q, v)
		}
	}
	if covered := evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s').classList.contains("predicting")`, sel)); covered {
		t.Error("still covered after both questions were answered")
	}
	if empty := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .live')].filter(e => e.textContent === "…").length`, sel)); empty > 0 {
		t.Errorf("%d live values not filled", empty)
	}

	// every number against the engine, recomputed here
	models, names := web.QuantModels(m)
	text := evalJS[string](t, ctx, fmt.Sprintf(`JSON.parse(document.getElementById('lesson-data').textContent).sections[%d].panels[0].options.prompt`, s-1))
	prompt, err := web.QuantPrompt(m, text)
	if err != nil {
		t.Fatal(err)
	}
	want, err := engine.CompareWeights(models, names, prompt, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := evalJS[[]map[string]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="quant-table"] tr[data-precision]')].map(r => ({...r.dataset, label: r.firstChild.textContent, tps_text: r.children[4].textContent}))`, sel))
	if len(rows) != len(want.Runs) {
		t.Fatalf("%d rows, want %d", len(rows), len(want.Runs))
	}
	bpp := map[string]float64{"f32": 4, "bf16": 2, "q8_0": 34.0 / 32, "q4_k": 144.0 / 256}
	for i, w := range want.Runs {
		r := rows[i]
		f := func(k string) float64 {
			v, err := strconv.ParseFloat(r[k], 64)
			if err != nil {
				t.Fatalf("row %d %s = %q", i, k, r[k])
			}
			return v
		}
		if r["precision"] != w.Precision || f("bpp") != w.BytesPerParam || int64(f("weights")) != w.WeightsBytes || int64(f("read")) != w.ReadBytes {
			t.Errorf("row %d: page %v, engine %s %v bytes/param %d bytes, %d read", i, r, w.Precision, w.BytesPerParam, w.WeightsBytes, w.ReadBytes)
		}
		if f("delta") != w.MaxAbsDelta || int(f("next")) != w.NextToken || r["sameNext"] != fmt.Sprint(w.SameNext) || r["sameText"] != fmt.Sprint(w.SameText) || int(f("firstDiff")) != w.FirstDiff {
			t.Errorf("row %d (%s): page Δ %s next %s same %s/%s first diff %s; engine Δ %v next %d same %v/%v first diff %d", i, w.Precision, r["delta"], r["next"], r["sameNext"], r["sameText"], r["firstDiff"], w.MaxAbsDelta, w.NextToken, w.SameNext, w.SameText, w.FirstDiff)
		}
		// the layers' bytes per parameter is the format's: the overall figure sits between it and float32's
		if lay := bpp[w.Precision]; w.BytesPerParam < lay || w.BytesPerParam > 4 {
			t.Errorf("%s: %v bytes per parameter overall, the format's is %v", w.Precision, w.BytesPerParam, lay)
		}
		if tps := f("tps"); tps <= 0 || math.IsInf(tps, 0) || r["tps_text"] == "" {
			t.Errorf("%s: decode speed %q (%q)", w.Precision, r["tps"], r["tps_text"])
		}
	}
	if w := want.Runs[0]; w.MaxAbsDelta != 0 || !w.SameText {
		t.Errorf("the reference against itself: Δ %v, same text %v", w.MaxAbsDelta, w.SameText)
	}
	if w := want.Runs[len(want.Runs)-1]; w.MaxAbsDelta <= 0 {
		t.Errorf("Q4_K moved no logit: %v", w.MaxAbsDelta)
	}
	if timing := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-testid="quant-timing"]').textContent`, sel)); !strings.Contains(timing, "wall clock") || !strings.Contains(timing, "median") {
		t.Errorf("the speeds do not say which time: %q", timing)
	}
	if head := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-testid="quant-table"] tr').textContent`, sel)); !strings.Contains(head, "decode (tokens/s)") {
		t.Errorf("speed column unlabelled: %q", head)
	}
	b.AssertNoJSErrors(t)
	for _, vp := range []struct {
		w, h   int64
		mobile bool
	}{{1366, 900, false}, {1280, 720, false}, {390, 844, true}} {
		for _, dark := range []bool{false, true} {
			b.SetViewport(t, vp.w, vp.h, vp.mobile)
			b.SetDark(t, dark)
			mode := map[bool]string{false: "light", true: "dark"}[dark]
			if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("%d px: %d px of horizontal overflow", vp.w, over)
			}
			evalJS[bool](t, ctx, `(() => { document.querySelector('`+sel+` [data-testid="quant-table"]').scrollIntoView({block: "center"}); return true; })()`)
			b.ViewportScreenshot(t, fmt.Sprintf("quant-lesson-%d-%s", vp.w, mode))
			if vp.w != 1280 {
				b.AssertAccessible(t, fmt.Sprintf("quantization section, %d px, %s", vp.w, mode))
			}
		}
	}
}
