package web_test

// e2e_lab_view_test.go: the lab draws what is in view first — a panel out
// of view waits (data-stale) and is drawn with the engine's values when it
// scrolls into view, or in idle time when the student stays where they are.

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

// TestBrowserLabOffscreenPanels: at 1366×900 a next-token click is shown
// in view (the text, the model view) before the panels below the fold are
// drawn: at that moment the candidates and KV cache panels are marked
// stale and still empty; the student staying at the top, they are drawn in
// idle time with the engine's values. During "Run to end" (no idle-time
// drawing while a run streams) the KV cache panel scrolled into view is
// drawn by the frames and ends on the engine's cache length.
func TestBrowserLabOffscreenPanels(t *testing.T) {
	t.Parallel()
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	b.SetViewport(t, 1366, 900, false)
	_, want := engineRun(t, m, session.Config{Prompt: "The President said", Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 200, AllAttention: true, Lens: true})
	nth := func(s session.Stage, i int) *session.Event {
		for _, e := range want {
			if e.Stage == s {
				if i == 0 {
					return e
				}
				i--
			}
		}
		t.Fatalf("the engine's run has no %s event %d", s, i)
		return nil
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "lab-offscreen-failure")
			t.Fatal(err)
		}
	}
	candIDs := `[...document.querySelectorAll('[data-testid="cand-row"]')].map(r => +r.dataset.id)`
	engineIDs := func(l *session.LogitsInfo) []int {
		var ids []int
		for _, c := range l.Top {
			ids = append(ids, c.ID)
		}
		return ids
	}
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said&n=200&t=0&p=1")
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)))
	must(waitJS(ctx, `document.getElementById("panel-logits").getBoundingClientRect().top > innerHeight + 400 && `+pageIdleJS))

	// the first token: at the moment everything in view is drawn, the
	// panels below the fold still wait
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`new Promise(res => {
		const n = `+tokenCountJS+`;
		const obs = new MutationObserver(() => {
			if (`+tokenCountJS+` > n && document.body.dataset.viewBusy === "0") {
				obs.disconnect();
				res([document.getElementById("panel-logits").dataset.stale || "", document.getElementById("panel-kv").dataset.stale || "",
					document.getElementById("panel-model").dataset.stale || "", String(document.querySelectorAll('[data-testid="cand-row"]').length),
					document.getElementById("kv-grid").dataset.cacheLen || ""]);
			}
		});
		obs.observe(document.body, {subtree: true, childList: true, attributes: true});
		document.getElementById("btn-token").click();
	})`, chromedp.EvalAwaitPromise))
	must(err)
	if seen[0] != "1" || seen[1] != "1" || seen[2] != "" || seen[3] != "0" {
		t.Errorf("when the token was drawn in view: candidates panel stale %q (want 1) with %s rows (want 0), KV panel stale %q (want 1), model view stale %q (want none)",
			seen[0], seen[3], seen[1], seen[2])
	}
	if seen[4] == strconv.Itoa(nth(session.StageAppend, 0).Append.CacheLen) {
		t.Errorf("the KV grid out of view already showed the new cache length %s", seen[4])
	}
	// staying at the top: drawn in idle time, with the engine's values
	must(waitJS(ctx, pageIdleJS))
	if got := evalJS[[]string](t, ctx, `[window.labDrawn.logits, window.labDrawn.kv, String(document.querySelectorAll(".panel[data-stale]").length), String(scrollY)]`); got[0] != "idle" || got[1] != "idle" || got[2] != "0" || got[3] != "0" {
		t.Errorf("out of view after the first token: candidates drawn by %q, KV cache by %q (want idle), %s panels still stale, scrolled to %s (want 0)", got[0], got[1], got[2], got[3])
	}
	if got, w := evalJS[[]int](t, ctx, candIDs), engineIDs(nth(session.StageLogits, 0).Logits); fmt.Sprint(got) != fmt.Sprint(w) {
		t.Errorf("candidates after the first token %v, engine %v", got, w)
	}
	if got, w := evalJS[string](t, ctx, `document.getElementById("kv-grid").dataset.cacheLen`), nth(session.StageAppend, 0).Append.CacheLen; got != strconv.Itoa(w) {
		t.Errorf("KV cache panel shows %s positions, the engine's cache holds %d", got, w)
	}

	// "Run to end": the KV cache panel is scrolled into view once the run's
	// first token is shown; the frames draw it, and it ends on the
	// engine's last cache length (Run pressed with runAfterFrameJS, so the
	// run has frames to be drawn by)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(res => {
		const n = `+tokenCountJS+`;
		const obs = new MutationObserver(() => {
			if (`+tokenCountJS+` > n) {
				obs.disconnect();
				document.getElementById("panel-kv").scrollIntoView({block: "start", behavior: "instant"});
				res(true);
			}
		});
		obs.observe(document.body, {subtree: true, childList: true, attributes: true});
		`+runAfterFrameJS+`;
	})`, chromedp.EvalAwaitPromise))
	must(err)
	must(waitJS(ctx, `document.getElementById("stop-text").dataset.reason !== undefined && `+pageIdleJS))
	var last *session.AppendInfo
	for _, e := range want {
		if e.Append != nil {
			last = e.Append
		}
	}
	if by := evalJS[string](t, ctx, `window.labDrawn.kv`); by != "frame" {
		t.Errorf("the KV cache panel scrolled into view during the run was drawn by %q, want the frames", by)
	}
	if got := evalJS[string](t, ctx, `document.getElementById("kv-grid").dataset.cacheLen`); got != strconv.Itoa(last.CacheLen) {
		t.Errorf("after the run the KV cache panel shows %s positions, the engine's cache holds %d", got, last.CacheLen)
	}
	if got := evalJS[int](t, ctx, tokenCountJS); got != countAppends(want) {
		t.Errorf("the text shows %d tokens, the engine generated %d", got, countAppends(want))
	}
	b.AssertNoJSErrors(t)
}

// runAfterFrameJS presses "Run to end" 150 ms after now, for a test that
// must see the run drawn while it streams. While a run streams, the page
// draws at most every 100 ms after its last frame (frame.js's
// RUN_FRAME_MS); pressed right after a step's frame, a fast machine sent
// the default model's whole run before the page's first frame of it, and
// no frame streamed. Pressed 150 ms on, the run's first event is drawn in
// the next animation frame.
const runAfterFrameJS = `setTimeout(() => document.getElementById("btn-run").click(), 150)`

// countAppends is the number of tokens a run generated.
func countAppends(evs []*session.Event) int {
	n := 0
	for _, e := range evs {
		if e.Append != nil {
			n++
		}
	}
	return n
}

// TestBrowserLabNoFadesWhileStreaming: the model view's parts fade in over
// 150 ms when the student steps, but not while "Run to end" streams (each
// frame would start new fades and keep Chromium repainting the drawing at
// 60 frames a second for the whole run): main carries data-streaming then,
// and the parts' transition is off; after the stop it is back (Run is
// pressed with runAfterFrameJS).
func TestBrowserLabNoFadesWhileStreaming(t *testing.T) {
	t.Parallel()
	ts, _ := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	b.SetViewport(t, 1366, 900, false)
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said&n=200&t=0&p=1")
	fade := `getComputedStyle(document.querySelector("#panel-model .mv-part > rect")).transitionDuration`
	step, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`new Promise(res => {
		const n = `+tokenCountJS+`;
		const obs = new MutationObserver(() => {
			if (`+tokenCountJS+` > n && document.body.dataset.viewBusy === "0") {
				obs.disconnect();
				res([String(document.getElementById("main").hasAttribute("data-streaming")), `+fade+`]);
			}
		});
		obs.observe(document.body, {subtree: true, childList: true, attributes: true});
		document.getElementById("btn-token").click();
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if step[0] != "false" || step[1] != "0.15s, 0.15s" {
		t.Errorf("after a next-token step: data-streaming %s, the parts' transition %q; want false and 0.15s (stroke, fill)", step[0], step[1])
	}
	run, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`new Promise(res => {
		const main = document.getElementById("main");
		let during = "";
		const obs = new MutationObserver(() => {
			if (!during && main.hasAttribute("data-streaming")) during = `+fade+`;
			const st = document.getElementById("stop-text");
			if (st.dataset.reason && document.body.dataset.viewBusy === "0") {
				obs.disconnect();
				requestAnimationFrame(() => res([during, String(main.hasAttribute("data-streaming")), `+fade+`, st.dataset.reason]));
			}
		});
		obs.observe(document.body, {subtree: true, childList: true, attributes: true});
		`+runAfterFrameJS+`;
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if run[0] != "0s" {
		t.Errorf("while the run streamed: the parts' transition %q, want 0s (or data-streaming was never set)", run[0])
	}
	if run[1] != "false" || run[2] != "0.15s, 0.15s" {
		t.Errorf("after the run stopped (%s): data-streaming %s, the parts' transition %q; want false and 0.15s (stroke, fill)", run[3], run[1], run[2])
	}
}
