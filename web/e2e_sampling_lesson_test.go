package web_test

// e2e_sampling_lesson_test.go: the sampling lesson in headless Chromium:
// every section, every slider moved once, the shown values checked
// against the engine with the same settings; screenshots, axe, 390 px.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserSamplingLesson(t *testing.T) {
	t.Parallel()
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	def := session.DefaultSampling() // the lab's defaults: every panel starts from them
	const topN = 12                  // candidates a sampling panel lists
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "sampling-lesson-failure")
			t.Fatalf("%s: %v", what, err)
		}
	}
	sec := func(n int) string { return fmt.Sprintf("#section-%d", n) }
	// move sets a slider's value as a student's drag would (an input event)
	move := func(n, index int, name string, v float64) {
		t.Helper()
		must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const el = document.querySelectorAll('%s [data-testid="slider-%s"]')[%d];
			el.value = "%v"; el.dispatchEvent(new Event("input", {bubbles: true})); })()`, sec(n), name, index, v))), "move "+name)
	}
	// shown waits until the panel element sel shows settings p
	shown := func(sel string, p session.SamplingParams) {
		t.Helper()
		js, _ := json.Marshal(map[string]any{"temperature": p.Temperature, "top_k": p.TopK, "top_p": p.TopP, "min_p": p.MinP, "seed": p.Seed})
		must(waitJS(ctx, fmt.Sprintf(`(() => { const e = document.querySelector('%s'); if (!e || !e.dataset.settings || e.dataset.chosenId === undefined) return false;
			const a = JSON.parse(e.dataset.settings), b = %s; return Object.keys(b).every(k => a[k] === b[k]); })()`, sel, js)), "settings shown in "+sel)
	}
	// check compares what sel shows with the engine's sample step for
	// prompt under p: kept count, chosen token and the draw, exactly.
	check := func(what, sel, prompt string, p session.SamplingParams) (*session.LogitsInfo, *session.SampleInfo) {
		t.Helper()
		shown(sel, p)
		l, s := engineStep(t, prompt, p, topN)
		got := evalJS[map[string]string](t, ctx, fmt.Sprintf(`({...document.querySelector('%s').dataset})`, sel))
		draw, _ := strconv.ParseFloat(got["draw"], 64)
		if got["kept"] != strconv.Itoa(l.Kept) || got["afterTopK"] != strconv.Itoa(l.AfterTopK) || got["afterTopP"] != strconv.Itoa(l.AfterTopP) ||
			got["chosenId"] != strconv.Itoa(s.Chosen.ID) || draw != s.Draw {
			t.Errorf("%s (%+v): page shows kept %s (after top-k %s, top-p %s), chosen %s, draw %s; engine kept %d (%d, %d), chosen %d, draw %v",
				what, p, got["kept"], got["afterTopK"], got["afterTopP"], got["chosenId"], got["draw"], l.Kept, l.AfterTopK, l.AfterTopP, s.Chosen.ID, s.Draw)
		}
		if shownKept := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-testid="kept"]').textContent`, sel)); shownKept != strconv.Itoa(l.Kept) {
			t.Errorf("%s: the page says %s kept, the engine %d", what, shownKept, l.Kept)
		}
		return l, s
	}
	// probs compares a candidates table's columns with the engine's numbers
	probs := func(what string, n int, l *session.LogitsInfo) {
		t.Helper()
		rows := evalJS[[][]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="cand-row"]')].map(r => [r.dataset.id, r.querySelector('[data-col="p1"]').textContent, r.querySelector('[data-col="pt"]').textContent, r.querySelector('[data-col="pkept"]').textContent])`, sec(n)))
		if len(rows) != len(l.Top) {
			t.Fatalf("%s: %d candidate rows, engine lists %d", what, len(rows), len(l.Top))
		}
		for i, c := range l.Top {
			kept := "cut"
			if c.Kept {
				kept = fmt.Sprintf("%.4f", c.ProbKept)
			}
			want := []string{strconv.Itoa(c.ID), fmt.Sprintf("%.4f", c.Prob), fmt.Sprintf("%.4f", c.ProbT), kept}
			if fmt.Sprint(rows[i]) != fmt.Sprint(want) {
				t.Errorf("%s: row %d shows %v, engine %v", what, i+1, rows[i], want)
			}
		}
	}
	ready := func(n int) {
		t.Helper()
		must(waitJS(ctx, fmt.Sprintf(`!document.querySelector('%s').hidden && [...document.querySelectorAll('%s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error")`, sec(n), sec(n))), fmt.Sprintf("section %d ready", n))
		if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .error')].map(e => e.textContent)`, sec(n))); len(errs) > 0 {
			t.Errorf("section %d: errors %v", n, errs)
		}
	}
	visit := func(n int) {
		t.Helper()
		must(chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/lessons/sampling?s=%d", ts.URL, n))), "navigate")
		ready(n)
	}
	liveText := func(n int, key string) string {
		return evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector('%s [data-live="%s"]') || {}).textContent || ""`, sec(n), key))
	}

	// 1 softmax: the engine's top scores, in rank order
	const prompt = "The President said that"
	visit(1)
	l0, _ := engineStep(t, prompt, def, topN)
	var wantIDs []int
	for _, c := range l0.Top[:10] {
		wantIDs = append(wantIDs, c.ID)
	}
	if ids := evalJS[[]int](t, ctx, `[...document.querySelectorAll('#section-1 [data-testid="softmax-table"] tr[data-id]')].map(r => +r.dataset.id)`); fmt.Sprint(ids) != fmt.Sprint(wantIDs) {
		t.Errorf("softmax table ids %v, engine %v", ids, wantIDs)
	}
	if got, want := liveText(1, "logits.greedy_prob"), fmt.Sprintf("%.3f", l0.Top[0].Prob); got != want {
		t.Errorf("greedy token's probability shown %q, engine %q", got, want)
	}

	// 2 temperature: the slider recomputes the distribution
	// (the panel shows temperature alone: top-k, top-p and min-p off)
	visit(2)
	alone := def
	alone.TopK, alone.TopP, alone.MinP = 0, 1, 0
	check("temperature at the lab's default", sec(2)+` [data-testid="sampler"]`, prompt, alone)
	p := alone
	p.Temperature = 1.5
	move(2, 0, "temperature", p.Temperature)
	l, _ := check("temperature 1.5", sec(2)+` [data-testid="sampler"]`, prompt, p)
	if got, want := liveText(2, "temperature.top_prob"), fmt.Sprintf("%.3f", l.Top[0].ProbT); got != want {
		t.Errorf("temperature 1.5: top probability shown %q, engine %q", got, want)
	}
	if got, want := liveText(2, "temperature.entropy"), fmt.Sprintf("%.3f", l.EntropyT); got != want {
		t.Errorf("temperature 1.5: entropy shown %q, engine %q", got, want)
	}
	if got := evalJS[int](t, ctx, `document.querySelectorAll('#section-2 svg').length`); got < 1 {
		t.Error("temperature: no chart drawn")
	}
	// temperature 0 is greedy: all the probability on the top token, entropy 0
	// (it showed the temperature-one values)
	p.Temperature = 0
	move(2, 0, "temperature", 0)
	check("temperature 0", sec(2)+` [data-testid="sampler"]`, prompt, p)
	if got, e := liveText(2, "temperature.top_prob"), liveText(2, "temperature.entropy"); got != "1.000" || e != "0.000" {
		t.Errorf("temperature 0: top probability %q and entropy %q shown, want 1.000 and 0.000", got, e)
	}

	// 3 top-k: both sliders; the table's probabilities are the engine's
	visit(3)
	p = def
	p.TopK = 5
	move(3, 0, "top_k", 5)
	check("top-k 5", sec(3)+` [data-testid="sampler"]`, prompt, p)
	p.TopP = 1
	move(3, 0, "top_p", 1)
	l, _ = check("top-k 5 alone", sec(3)+` [data-testid="sampler"]`, prompt, p)
	probs("top-k 5 alone", 3, l)
	if l.Kept < 5 {
		t.Errorf("top-k 5 kept %d", l.Kept)
	}

	// 4 top-p: a confident and an unsure prompt, kept counts live
	const confident, unsure = "The capital of Japan is", "It was"
	visit(4)
	side := func(n int, which string) string { return sec(n) + ` [data-side="` + which + `"]` }
	lc, _ := check("top-p confident", side(4, "confident"), confident, def)
	lu, _ := check("top-p unsure", side(4, "unsure"), unsure, def)
	if lc.Kept >= lu.Kept {
		t.Errorf("the lesson's confident prompt keeps %d tokens at the lab's settings, the unsure one %d: pick other prompts", lc.Kept, lu.Kept)
	}
	if got := liveText(4, "topp.kept_unsure"); got != strconv.Itoa(lu.Kept) {
		t.Errorf("unsure kept shown in the prose %q, engine %d", got, lu.Kept)
	}
	p = def
	p.TopP = 0.5
	move(4, 0, "top_p", 0.5)
	check("top-p 0.5 confident", side(4, "confident"), confident, p)
	check("top-p 0.5 unsure", side(4, "unsure"), unsure, p)

	// 5 min-p: both sliders, both prompts
	visit(5)
	p = def
	p.MinP = 0.1
	move(5, 0, "min_p", 0.1)
	check("min-p 0.1 confident", side(5, "confident"), confident, p)
	p.TopP = 1
	move(5, 0, "top_p", 1)
	check("min-p 0.1 confident", side(5, "confident"), confident, p)
	lu, _ = check("min-p 0.1 unsure", side(5, "unsure"), unsure, p)
	if got, want := liveText(5, "minp.threshold_unsure"), fmt.Sprintf("%.4f", 0.1*float64(lu.Top[0].ProbT)); got != want {
		t.Errorf("min-p threshold shown %q, engine %q", got, want)
	}

	// 6 the draw: all five sliders; u and the chosen token are the engine's
	visit(6)
	sel := sec(6) + ` [data-testid="sampler"]`
	check("draw at the lab's defaults", sel, prompt, def)
	p = def
	for _, mv := range []struct {
		name string
		v    float64
		set  func(float64)
	}{
		{"temperature", 1.2, func(v float64) { p.Temperature = v }},
		{"top_k", 20, func(v float64) { p.TopK = int(v) }},
		{"top_p", 0.95, func(v float64) { p.TopP = v }},
		{"min_p", 0.02, func(v float64) { p.MinP = v }},
		{"seed", 7, func(v float64) { p.Seed = uint64(v) }},
	} {
		mv.set(mv.v)
		move(6, 0, mv.name, mv.v)
		check("draw after moving "+mv.name, sel, prompt, p)
	}
	l, s := check("draw with every slider moved", sel, prompt, p)
	probs("draw", 6, l)
	if got, want := liveText(6, "draw.r"), fmt.Sprintf("%.4f", s.Draw); got != want {
		t.Errorf("draw r shown %q, engine %q", got, want)
	}
	if got := evalJS[string](t, ctx, `document.querySelector('#section-6 [data-testid="draw-line"]') ? "yes" : ""`); got == "" {
		t.Error("the cumulative distribution has no draw line")
	}
	// how fast a slider answers (logged, not asserted: timing on a shared
	// machine is a measurement, not a test): input event to redrawn panel
	lat, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(async () => {
		const el = document.querySelector('#section-6 [data-testid="slider-temperature"]'), box = document.querySelector('#section-6 [data-testid="sampler"]'), out = [];
		for (let i = 0; i < 20; i++) {
			const v = (0.5 + 0.05 * i).toFixed(2), t0 = performance.now();
			el.value = v; el.dispatchEvent(new Event("input", {bubbles: true}));
			while (JSON.parse(box.dataset.settings).temperature !== +v) await new Promise(r => requestAnimationFrame(r));
			out.push(performance.now() - t0);
		}
		return out.sort((a, b) => a - b); })()`, chromedp.EvalAwaitPromise))
	must(err, "slider timing")
	t.Logf("temperature slider, input to redrawn panel over %d moves: median %.1f ms, max %.1f ms", len(lat), lat[len(lat)/2], lat[len(lat)-1])
	b.SetViewport(t, 1366, 900, false)
	b.ViewportScreenshot(t, "sampling-draw-1366-light")
	b.SetDark(t, true)
	b.ViewportScreenshot(t, "sampling-draw-1366-dark")
	b.AssertAccessible(t, "sampling lesson, the draw, dark")
	b.SetDark(t, false)
	// Run twice in a row: the second start replaces the first; one panel,
	// back at the lab's defaults, no error
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const b = document.querySelector('#section-6 .panel-head button'); b.click(); b.click(); })()`)), "run twice")
	check("draw after Run twice", sel, prompt, def)
	ready(6)
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#section-6 [data-testid="sampler"]').length`); n != 1 {
		t.Errorf("after Run twice: %d panels", n)
	}

	// 7 greedy vs sampled: two steps; the logs' tokens are the engine's
	visit(7)
	greedyCfg := session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: def.TopP, Seed: def.Seed}, MaxNewTokens: 24}
	sampledCfg := session.Config{Prompt: prompt, Sampling: def, MaxNewTokens: 24}
	for i := range 2 {
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#section-7 [data-testid="step-token"]`))), "step")
		must(waitJS(ctx, fmt.Sprintf(`document.querySelector('#section-7 [data-testid="greedy-panel"]').dataset.steps === "%d,%d"`, i+2, i+2)), "steps shown")
	}
	for _, r := range []struct {
		name string
		cfg  session.Config
	}{{"greedy", greedyCfg}, {"sampled", sampledCfg}} {
		_, evs := engineRun(t, m, r.cfg)
		var want []int
		for _, e := range evs {
			if e.Sample != nil && len(want) < 3 {
				want = append(want, e.Sample.Chosen.ID)
			}
		}
		if got := evalJS[[]int](t, ctx, `[...document.querySelectorAll('#section-7 [data-testid="log-`+r.name+`"] li[data-id]')].map(e => +e.dataset.id)`); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s log %v, engine %v", r.name, got, want)
		}
	}

	// 8 seeds: move run B's seed; both texts are the engine's
	visit(8)
	must(waitJS(ctx, `document.querySelector('#section-8 [data-testid="seeds-verdict"]').dataset.same === "1"`), "same seed, same text")
	move(8, 1, "seed", 43)
	must(waitJS(ctx, `document.querySelectorAll('#section-8 [data-testid="seed-text"]')[1].dataset.seed === "43"`), "seed 43 shown")
	texts := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#section-8 [data-testid="seed-text"]')].map(e => e.dataset.text)`)
	for i, seed := range []uint64{def.Seed, 43} {
		sp := def
		sp.Seed = seed
		_, evs := engineRun(t, m, session.Config{Prompt: prompt, Sampling: sp, MaxNewTokens: 16})
		if want := evs[len(evs)-1].Stop.Text; texts[i] != want {
			t.Errorf("seed %d: page text %q, engine %q", seed, texts[i], want)
		}
	}
	if same := evalJS[string](t, ctx, `document.querySelector('#section-8 [data-testid="seeds-verdict"]').dataset.same`); same != map[bool]string{true: "1", false: "0"}[texts[0] == texts[1]] {
		t.Errorf("verdict %s for texts %q", same, texts)
	}

	// every section: screenshots at 390 px light and dark, no sideways
	// scrolling, axe clean; one section per mode at 1366
	for _, mode := range []bool{false, true} {
		name := map[bool]string{false: "light", true: "dark"}[mode]
		b.SetDark(t, mode)
		for n := 1; n <= 8; n++ {
			b.SetViewport(t, 390, 844, true)
			visit(n)
			if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("section %d at 390 px (%s): %d px of horizontal overflow", n, name, over)
			}
			if mode || n == 4 || n == 6 || n == 7 {
				b.Screenshot(t, fmt.Sprintf("sampling-%d-390-%s", n, name))
			}
			if !mode {
				b.AssertAccessible(t, fmt.Sprintf("sampling lesson section %d, 390 px", n))
			}
		}
		b.SetViewport(t, 1366, 900, false)
		visit(4)
		b.ViewportScreenshot(t, "sampling-topp-1366-"+name)
	}
	b.SetDark(t, false)
	b.AssertNoJSErrors(t)
}
