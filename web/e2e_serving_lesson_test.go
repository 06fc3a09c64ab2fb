package web_test

// e2e_serving_lesson_test.go: lesson 04 ("Serving: memory, scale and fair
// comparisons") in headless Chromium, on a server that batches as `serve`
// does. Every section: its questions are asked while the panel and the
// prose's live numbers are covered and no answer shows anywhere on the
// page; a student's reasoning (worked out here from the model's config)
// checks as right, units included; then the panel demonstrates its claim
// in 3 of 3 runs, each checked against the engine or the formula computed
// here: the cache freed when the request ends (the server's own figures),
// a shared prefix reused (fewer positions, less model time, the same next
// token), the oldest turns truncated on the real tokenizer, bigger models'
// arithmetic from their published configs, and benchmarks whose headline
// differs though only the workload did. Timing claims compare with a
// margin that holds on a loaded 2-core machine. Screenshots at 1366×900
// and 390×844, no sideways scrolling at 390 px, axe-core clean.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// servingRuns: each section's claim must hold in this many runs of its panel.
const servingRuns = 3

// TestBrowserServingLesson: sections 1 to 4, whose claims are counts,
// bytes and formulas (the times they show are logged, not compared): it
// runs beside the other parallel browser tests.
func TestBrowserServingLesson(t *testing.T) {
	t.Parallel()
	servingLesson(t, false)
}

// TestBrowserServingLessonFair: section 5, whose claim is a ratio of two
// measured throughputs: it runs alone, as the serial tests do.
func TestBrowserServingLessonFair(t *testing.T) {
	servingLesson(t, true)
}

// servingLesson checks the fair comparisons (section 5) when fair is set,
// the other sections otherwise.
func servingLesson(t *testing.T, fair bool) {
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	c := m.Config
	card := catalog.ModelCardFor(m)
	ctxLen, kvTok := c.SeqLen, c.KVBytesPerToken()

	openSection(t, b, ts.URL, "serving", 1)
	sec := map[string]int{}
	for _, h := range []string{"Where the cache goes when a request ends", "A shared prefix is computed once", "When the conversation outgrows the context",
		"Bigger models, the same arithmetic", "Fair comparisons"} {
		sec[h] = sectionOf(t, ctx, h)
	}
	sel := func(s int) string { return fmt.Sprintf("#section-%d", s) }
	data := func(s int, testid string) map[string]string {
		t.Helper()
		return evalJS[map[string]string](t, ctx, fmt.Sprintf(`({...(document.querySelector('%s [data-testid="%s"]') || {}).dataset})`, sel(s), testid))
	}
	num := func(d map[string]string, k string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(d[k], 64)
		if err != nil {
			t.Fatalf("data-%s = %q: %v", k, d[k], err)
		}
		return v
	}
	// visit loads the section, waits for its panel (covered by its
	// questions) and checks nothing gives an answer away
	visit := func(s int) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/lessons/serving?s=%d", ts.URL, s))); err != nil {
			t.Fatal(err)
		}
		if err := waitJS(ctx, fmt.Sprintf(`!document.querySelector('%[1]s').hidden && [...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error")`, sel(s))); err != nil {
			b.Screenshot(t, fmt.Sprintf("serving-%d-failure", s))
			t.Fatalf("section %d: %v", s, err)
		}
		if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"] .error')].map(e => e.textContent)`, sel(s))); len(errs) > 0 {
			t.Fatalf("section %d: panel error %v", s, errs)
		}
		// every question is asked before its answer is visible anywhere:
		// the panel is covered, the prose's live numbers show "?", and no
		// answer (as the panel publishes it) is in the page's visible text
		// outside the question forms
		leak := evalJS[[]string](t, ctx, fmt.Sprintf(`(() => {
			const sec = document.querySelector('%s'), out = [];
			if (!sec.classList.contains("predicting")) out.push("the section is not covered while its questions wait");
			const shown = [...sec.querySelectorAll('.lesson-body > :not(.lesson-question)')].map(e => e.innerText).join("\n");
			for (const f of sec.querySelectorAll('form.question:not(.exercise)')) {
				const q = JSON.parse(document.getElementById('lesson-data').textContent).sections[%d].questions.find(x => x.id === f.dataset.id);
				const v = (window.ISLive || {})[q.answer];
				if (v === undefined) { out.push(q.id + ": no live answer published"); continue; }
				const forms = [String(v), String(v).replace(/ B$/, "")].filter(x => x.length > 1 || /[a-z]/i.test(x));
				for (const x of forms) if (shown.includes(x)) out.push(q.id + ": its answer " + JSON.stringify(x) + " is visible");
			}
			for (const e of sec.querySelectorAll('.lesson-body .live')) if (getComputedStyle(e).visibility !== "hidden") out.push("a live number is visible: " + e.dataset.live);
			if ([...sec.querySelectorAll('.panel-out')].some(p => getComputedStyle(p).visibility !== "hidden")) out.push("a panel is visible");
			return out; })()`, sel(s), s-1))
		for _, l := range leak {
			t.Errorf("section %d before its questions are answered: %s", s, l)
		}
	}
	// answer types a student's answer into a number question and checks it
	answer := func(s int, id, given, want string) {
		t.Helper()
		evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const f = document.querySelector('%s form[data-id=%q]'); const i = f.querySelector('[data-testid="q-input"]');
			i.value = %q; i.dispatchEvent(new Event("input", {bubbles: true})); f.querySelector('[data-testid="q-check"]').click(); return true; })()`, sel(s), id, given))
		if err := waitJS(ctx, fmt.Sprintf(`!!document.querySelector('%s form[data-id=%q] [data-testid="q-result"]').dataset.verdict`, sel(s), id)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s form[data-id=%q] [data-testid="q-result"]').dataset.verdict`, sel(s), id)); got != want {
			t.Errorf("%s: answering %q was %s, want %s (%s)", id, given, got, want,
				evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s form[data-id=%q] [data-testid="q-result"]').textContent`, sel(s), id)))
		}
	}
	showMe := func(s int) {
		t.Helper()
		evalJS[int](t, ctx, fmt.Sprintf(`(() => { const b = [...document.querySelectorAll('%s form.question:not(.exercise)[data-state="open"] [data-testid="q-skip"]')]; b.forEach(x => x.click()); return b.length; })()`, sel(s)))
		if covered := evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s').classList.contains("predicting")`, sel(s))); covered {
			t.Errorf("section %d: still covered after every question was answered", s)
		}
		if empty := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s .live')].filter(e => e.textContent === "…").length`, sel(s))); empty > 0 {
			t.Errorf("section %d: %d live values not filled", s, empty)
		}
	}
	// again runs the section's panel once more and waits for it
	again := func(s int) {
		t.Helper()
		evalJS[bool](t, ctx, fmt.Sprintf(`(() => { document.querySelector('%s .lesson-panel .panel-head button').click(); return true; })()`, sel(s)))
		if err := waitJS(ctx, fmt.Sprintf(`[...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].some(p => p.dataset.state === "error") || [...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].every(p => p.dataset.state === "done") && !!document.querySelector('%[1]s .lp-root[data-ready="1"]')`, sel(s))); err != nil {
			t.Fatalf("section %d again: %v", s, err)
		}
		if errs := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="panel-out"] .error')].map(e => e.textContent)`, sel(s))); len(errs) > 0 {
			t.Fatalf("section %d again: panel error %v", s, errs)
		}
	}
	// shots: the panel's result in view at 1366×900 and at 390×844 (and
	// the whole section at 390 px), axe-clean at both widths
	shots := func(s int, name string) {
		t.Helper()
		toPanel := func() {
			evalJS[bool](t, ctx, `(() => { document.querySelector('`+sel(s)+` .panel-out .lp-root').scrollIntoView({block: "start"}); return true; })()`)
		}
		b.SetViewport(t, 1366, 900, false)
		time.Sleep(300 * time.Millisecond)
		toPanel()
		b.ViewportScreenshot(t, "serving-"+name+"-1366")
		b.AssertAccessible(t, "serving lesson section "+strconv.Itoa(s)+", 1366 px")
		b.SetViewport(t, 390, 844, true)
		time.Sleep(300 * time.Millisecond) // charts redraw at the new width
		if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
			t.Errorf("section %d at 390 px: %d px of horizontal overflow", s, over)
		}
		b.Screenshot(t, "serving-"+name+"-390-page")
		toPanel()
		b.ViewportScreenshot(t, "serving-"+name+"-390")
		b.AssertAccessible(t, "serving lesson section "+strconv.Itoa(s)+", 390 px")
		b.SetViewport(t, 1366, 900, false)
	}
	runs := func(s int, check func(run int)) {
		t.Helper()
		for run := 1; run <= servingRuns; run++ {
			if run > 1 {
				again(s)
			}
			check(run)
		}
	}

	var s int
	if fair {
		// 5. fair comparisons
		s = sec["Fair comparisons"]
		visit(s)
		showMe(s)
		runs(s, func(run int) {
			for _, id := range []string{"fair-prompt", "fair-output", "fair-concurrency"} {
				d := data(s, id)
				// B's headline beats A's by a margin, though only the workload changed;
				// eight concurrent streams on 2 cores gain mostly from overlapping
				// fixed costs, which other load on the machine eats into (1.27× at a
				// load average of 10, 2.0–2.7× on a quiet one): its margin is smaller
				margin := 1.3
				if id == "fair-concurrency" {
					margin = 1.15
				}
				if r := num(d, "ratio"); r < margin {
					t.Errorf("run %d, %s: benchmark B %s against A %s tokens/s (%.2f×): the different workload does not show", run, id, d["b"], d["a"], r)
				} else {
					t.Logf("run %d, %s: B/A = %.2f", run, id, r)
				}
			}
		})
		shots(s, "fair")
		b.AssertNoJSErrors(t)
		return
	}

	// 1. the cache is freed when the request ends
	s = sec["Where the cache goes when a request ends"]
	visit(s)
	answer(s, "cache-at-full-context", fmt.Sprintf("%d KiB", int64(ctxLen)*kvTok/1024), "right") // context × bytes per position, in KiB
	answer(s, "cache-after-end", "0 B", "right")
	showMe(s)
	runs(s, func(run int) {
		d := data(s, "life-verdict")
		before, held, after, peak := num(d, "before"), num(d, "held"), num(d, "after"), num(d, "peak")
		if int(num(d, "positions")) != ctxLen || peak != float64(int64(ctxLen)*kvTok) || d["reason"] != "context_full" {
			t.Errorf("run %d: the request filled %s positions, %s bytes (%s); want the context, %d positions × %d bytes", run, d["positions"], d["peak"], d["reason"], ctxLen, kvTok)
		}
		if num(d, "mineHeld") != peak || held < before+peak {
			t.Errorf("run %d: while open, its session held %s of KV and the server %v (before %v); want %v and more", run, d["mineHeld"], held, before, peak)
		}
		if num(d, "mineAfter") != 0 || after != before {
			t.Errorf("run %d: after the session closed, it holds %s and the server %v; want 0 and what it was before, %v", run, d["mineAfter"], after, before)
		}
		// the server's own view agrees now
		var v web.ServerView
		resp, err := http.Get(ts.URL + "/api/server")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if v.Memory.KV != int64(after) {
			t.Errorf("run %d: /api/server says %d bytes for runs, the panel %v", run, v.Memory.KV, after)
		}
	})
	shots(s, "lifecycle")

	// 2. a shared prefix, computed once
	s = sec["A shared prefix is computed once"]
	visit(s)
	showMe(s)
	prefix := evalJS[string](t, ctx, `document.querySelector('`+sel(s)+` .panel-prompt').value`)
	runs(s, func(run int) {
		d := data(s, "prefix-verdict")
		P, own, fullPos, reusePos := int(num(d, "prefix")), int(num(d, "own")), int(num(d, "fullPos")), int(num(d, "reusePos"))
		if P != len(encode(t, m, prefix)) || fullPos != P+own || reusePos != own+1 || reusePos >= fullPos {
			t.Errorf("run %d: prefix %d tokens (engine %d), request 2 computed %d positions whole and %d reused (own tokens %d)", run, P, len(encode(t, m, prefix)), fullPos, reusePos, own)
		}
		countries := strings.Split(d["countries"], ",")
		_, evs := engineRun(t, m, session.Config{Prompt: prefix + " The capital of " + countries[1] + " is", Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 1})
		var want int
		for _, e := range evs {
			if e.Sample != nil {
				want = e.Sample.Chosen.ID
			}
		}
		if d["same"] != "true" || d["nextId"] != strconv.Itoa(want) || num(d, "maxDiff") > 1e-3 {
			t.Errorf("run %d: next token %s both ways %s (engine's greedy %d), logits differ by %s", run, d["nextId"], d["same"], want, d["maxDiff"])
		}
		// the two times the page shows are real measurements (which is faster
		// by how much depends on what else the machine runs: logged, not
		// asserted; the positions computed each way are asserted above)
		full, reuse := num(d, "fullMs"), num(d, "reuseMs")
		if !(full > 0 && reuse > 0) {
			t.Errorf("run %d: request 2 took %s ms with the prefix reused, %s ms prefilled whole: want two measured times", run, d["reuseMs"], d["fullMs"])
		}
		t.Logf("run %d: prefix reused %.2f ms, prefilled whole %.2f ms (%.1f×)", run, reuse, full, full/reuse)
	})
	shots(s, "prefix")

	// 3. the conversation outgrows the context
	s = sec["When the conversation outgrows the context"]
	visit(s)
	answer(s, "overflow-budget", strconv.Itoa(ctxLen-ctxLen/4), "right")
	showMe(s)
	style := tokenizer.ChatStyleFor(m.Tokenizer)
	count := func(msgs []tokenizer.ChatMessage) int {
		_, toks, err := tokenizer.EncodeChat(m.Tokenizer, msgs, style, true)
		if err != nil {
			t.Fatal(err)
		}
		return len(toks)
	}
	runs(s, func(run int) {
		d := data(s, "overflow-verdict")
		var kept, all []tokenizer.ChatMessage
		if json.Unmarshal([]byte(d["keptMsgs"]), &kept) != nil || json.Unmarshal([]byte(d["allMsgs"]), &all) != nil {
			t.Fatalf("run %d: messages %q %q", run, d["keptMsgs"], d["allMsgs"])
		}
		k, reserve, keptN := int(num(d, "dropped")), int(num(d, "reserve")), int(num(d, "keptTokens"))
		if reserve != ctxLen/4 || count(all) != int(num(d, "full")) || count(all) < ctxLen || d["fullRefused"] != "true" {
			t.Errorf("run %d: whole conversation %s tokens (engine %d, refused %s), reply room %d; want more than the context %d, refused, and %d", run, d["full"], count(all), d["fullRefused"], reserve, ctxLen, ctxLen/4)
		}
		// the kept messages: the system message, the newest turns, the question; counted as the engine does
		if want := append(append([]tokenizer.ChatMessage{all[0]}, all[1+k:len(all)-1]...), all[len(all)-1]); fmt.Sprint(want) != fmt.Sprint(kept) {
			t.Errorf("run %d: kept %v, want the system message, all but the %d oldest turns, and the question", run, kept, k)
		}
		if count(kept) != keptN || keptN+reserve > ctxLen {
			t.Errorf("run %d: kept %d tokens (engine %d) + %d for the reply > context %d", run, keptN, count(kept), reserve, ctxLen)
		}
		if k > 0 { // one turn fewer dropped would not fit
			fewer := append(append([]tokenizer.ChatMessage{all[0]}, all[k:len(all)-1]...), all[len(all)-1])
			if count(fewer)+reserve <= ctxLen {
				t.Errorf("run %d: dropped %d turns, but %d would have fitted", run, k, k-1)
			}
		}
		dropped := evalJS[[]string](t, ctx, `[...document.querySelectorAll('`+sel(s)+` [data-testid="overflow-turns"] li')].map(l => l.dataset.dropped)`)
		for i, x := range dropped {
			if (x == "1") != (i >= 1 && i <= k) {
				t.Errorf("run %d: message %d dropped %s; want the %d oldest turns dropped", run, i, x, k)
			}
		}
		if used := int(num(d, "used")); used > ctxLen || num(d, "generated") < 1 {
			t.Errorf("run %d: the reply took %s tokens and the cache %d of %d positions", run, d["generated"], used, ctxLen)
		}
	})
	shots(s, "overflow")

	// 4. bigger models: the same arithmetic
	s = sec["Bigger models, the same arithmetic"]
	visit(s)
	// the student's reasoning: sixteen gigabytes against this model's weights
	answer(s, "big-times", strconv.Itoa(int(math.Round(16e9/float64(card.WeightsBytes)))), "right")
	showMe(s)
	raw, err := os.ReadFile("../static/js/lessonpanels/bigmodels.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfgs struct {
		Models []struct {
			Name                                                string
			Arch                                                string
			Layers, Hidden, Heads, Intermediate, Vocab, Context float64
			KVHeads                                             float64 `json:"kv_heads"`
			HeadDim                                             float64 `json:"head_dim"`
			Tied                                                bool
			Params                                              float64 `json:"params_published"`
		}
	}
	if err := json.Unmarshal(raw, &cfgs); err != nil {
		t.Fatal(err)
	}
	// figures recomputes the table's arithmetic here from the configs and
	// the panel's measured bandwidth and FLOP rate
	figures := func(d map[string]string) {
		t.Helper()
		var figs map[string]struct{ Bound, Placed, Read, Need, Prefill float64 }
		if err := json.Unmarshal([]byte(d["figs"]), &figs); err != nil {
			t.Fatal(err)
		}
		bpw, ctxN, mem, slow, bw, flops := num(d, "prec"), num(d, "ctx"), num(d, "mem"), num(d, "slow"), num(d, "bw"), num(d, "flops")
		kvb := 2.0
		if bpw >= 4 {
			kvb = 4
		}
		for _, c := range cfgs.Models {
			f, ok := figs[c.Name]
			if !ok {
				t.Fatalf("no figures for %s", c.Name)
			}
			dm, q, kv, notRead := c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, 0.0
			if c.Arch == "gpt2" {
				notRead = c.Context*dm - dm
			} else if !c.Tied {
				notRead = c.Vocab*dm - dm
			}
			n := math.Min(ctxN, c.Context)
			read := (c.Params-notRead)*bpw + n*2*c.Layers*kv*kvb
			need := c.Params*bpw + n*2*c.Layers*kv*kvb
			bound, placed := bw/read, bw/read
			if over := need - mem; over > 0 {
				o := math.Min(over, read)
				placed = 1 / ((read-o)/bw + o/slow)
			}
			prefill := (2*(c.Params-notRead)*n + 2*c.Layers*q*n*n) / flops
			for _, x := range [][3]any{{"bytes read", f.Read, read}, {"bound", f.Bound, bound}, {"as placed", f.Placed, placed}, {"prefill", f.Prefill, prefill}} {
				if got, want := x[1].(float64), x[2].(float64); math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s, %v bytes per weight, context %v, memory %v: %s %v, want %v", c.Name, bpw, ctxN, mem, x[0], got, want)
				}
			}
		}
	}
	runs(s, func(run int) {
		d := data(s, "big-check")
		if d["params"] != strconv.FormatInt(card.Params, 10) || d["cardParams"] != d["params"] {
			t.Errorf("run %d: the formula gives %s parameters for this model, its card %d", run, d["params"], card.Params)
		}
		// the cross-check the page shows: measured decode over the bound,
		// both real measurements (how near they land depends on what else
		// the machine runs, so it is logged, not asserted: the bandwidth
		// probe under contention has read 4–18 GB/s against a quiet 26)
		r, m, b := num(d, "ratio"), num(d, "measured"), num(d, "bound")
		if !(m > 0 && b > 0 && !math.IsInf(m, 0) && !math.IsInf(b, 0)) || math.Abs(r-m/b) > 0.01*r {
			t.Errorf("run %d: measured decode %s tokens/s, bound %s, ratio shown %s: want positive figures and their ratio", run, d["measured"], d["bound"], d["ratio"])
		}
		t.Logf("run %d: measured decode %.0f tokens/s, bound %.0f (%.2f)", run, m, b, r)
		figures(data(s, "big-table"))
	})
	// the sliders: the smallest precision and memory; the largest model
	// then streams from storage every token (badly placed), and the
	// exercise checks against the table
	setSlider(t, ctx, "big-precision", 3)
	setSlider(t, ctx, "big-memory", 0)
	setSlider(t, ctx, "big-slow", 0)
	d := data(s, "big-table")
	figures(d)
	var figs map[string]struct{ Bound, Placed float64 }
	json.Unmarshal([]byte(d["figs"]), &figs)
	largest := figs[cfgs.Models[len(cfgs.Models)-1].Name]
	if !(largest.Placed < largest.Bound) {
		t.Errorf("with 1 GiB of memory the largest model decodes at %v tokens/s as placed, %v in memory: want slower", largest.Placed, largest.Bound)
	}
	exercise := func(given, want string) {
		t.Helper()
		evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const f = document.querySelector('%s form[data-id="big-largest-placed"]'); const i = f.querySelector('[data-testid="q-input"]');
			i.value = %q; f.querySelector('[data-testid="q-check"]').click(); return true; })()`, sel(s), given))
		if err := waitJS(ctx, `!!document.querySelector('`+sel(s)+` form[data-id="big-largest-placed"] [data-testid="q-result"]').dataset.verdict`); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector('`+sel(s)+` form[data-id="big-largest-placed"] [data-testid="q-result"]').dataset.verdict`); got != want {
			t.Errorf("exercise: %q was %s, want %s", given, got, want)
		}
	}
	exercise(strconv.FormatFloat(largest.Placed, 'g', 4, 64), "right")
	shots(s, "bigger")

	b.AssertNoJSErrors(t)
}
