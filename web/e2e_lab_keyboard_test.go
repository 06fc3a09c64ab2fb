package web_test

// e2e_lab_keyboard_test.go: the lab from the keyboard alone. A skip link
// reaches the step buttons in a few Tabs; keys step to a generated token;
// Escape never discards a finished run without a second press; after Stop
// the focus lands on the next useful button, not on the page; a forced
// token's sentence says it was not drawn instead of printing the cut's 0.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func TestBrowserLabKeyboard(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, _, b, must := labBrowser(t, "lab-keyboard-failure")
	ctx := b.Ctx
	key := func(k string) { must("key "+k, chromedp.Do(ctx, chromedp.KeyEvent(k))) }
	ready := labReadyJS
	must("open the lab", chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=6&t=0")))
	must("ready", waitJS(ctx, ready))

	// Tab from the top of the page to the skip link, Enter: a step button has the focus
	tabs := 0
	for ; tabs < 12 && evalJS[string](t, ctx, `document.activeElement.id`) != "skip-steps"; tabs++ {
		key(kb.Tab)
	}
	if evalJS[string](t, ctx, `document.activeElement.id`) != "skip-steps" {
		t.Fatalf("12 Tabs did not reach the skip link (focus on %q)", evalJS[string](t, ctx, `document.activeElement.id || document.activeElement.tagName`))
	}
	key(kb.Enter)
	key(kb.Tab)
	if got := evalJS[string](t, ctx, `document.activeElement.id`); got != "btn-step" || !evalJS[bool](t, ctx, ready) {
		t.Fatalf("after the skip link the focus is on %q, want btn-step (%v)", got, evalJS[any](t, ctx, `({rs: document.getElementById('main').dataset.runState, step: document.getElementById('btn-step').disabled, status: document.getElementById('status').textContent})`))
	}
	t.Logf("%d Tabs, Enter and Tab from the page's top to Next stage", tabs)
	// → steps a stage, t a token: a generated token from the keyboard alone
	key(kb.ArrowRight)
	must("a stage", waitJS(ctx, ready+` && document.querySelector('#timeline li.done') !== null`))
	key("t")
	must("a token", waitJS(ctx, ready+` && document.getElementById('gen').dataset.count === '1'`))

	// run to the end; Escape once keeps the run and asks again; another key disarms it
	key("r")
	must("the run ends", waitJS(ctx, `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`))
	n := evalJS[string](t, ctx, `document.getElementById('gen').dataset.count`)
	key(kb.Escape)
	if got := evalJS[string](t, ctx, `document.getElementById('status').textContent`); !strings.Contains(got, "Press Escape again") || evalJS[string](t, ctx, `document.getElementById('gen').dataset.count`) != n {
		t.Fatalf("one Escape after a finished run: status %q, %s tokens (was %s); want it kept and a question", got, evalJS[string](t, ctx, `document.getElementById('gen').dataset.count`), n)
	}
	key("x")
	key(kb.Escape)
	if evalJS[string](t, ctx, `document.getElementById('gen').dataset.count`) != n {
		t.Fatal("Escape, another key, Escape reset the run: the other key should have kept it")
	}
	key(kb.Escape)
	must("two Escapes reset", waitJS(ctx, `document.getElementById('gen').dataset.count === '0' && `+ready))

	// Stop from the keyboard at class speed: the focus goes to the next useful button
	must("1 token/s", chromedp.Do(ctx, chromedp.SetValue("#speed", "1"), chromedp.Evaluate[chromedp.Void](`document.getElementById('speed').dispatchEvent(new Event('change'))`)))
	must("focus Run", chromedp.Do(ctx, chromedp.Focus("#btn-run")))
	key(kb.Enter)
	must("running", waitJS(ctx, `!document.getElementById('btn-cancel').disabled`))
	must("focus Stop", chromedp.Do(ctx, chromedp.Focus("#btn-cancel")))
	key(kb.Enter)
	must("stopped", waitJS(ctx, `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`))
	if got := evalJS[string](t, ctx, `(() => { const a = document.activeElement; return a === document.body ? 'body' : a.id + (a.disabled ? ' (disabled)' : ''); })()`); got == "body" || strings.Contains(got, "disabled") {
		t.Errorf("after Stop the focus is on %s, want the next button that can be pressed", got)
	}

	// a forced token: "not drawn", never "p after the cut 0.0000"
	sentence, err := chromedp.Run(ctx, chromedp.Evaluate[string](`import('/static/js/panels.js').then((m) => m.sampleSentence({ rule: "top-p 0.9", forced: true, draw: -1, cdf: [{ cum: 1 }],
	  chosen: { id: 7, text: "x", rank: 40, prob_kept: 0, prob: 0.001 } }))`, chromedp.EvalAwaitPromise))
	must("the forced token's sentence", err)
	if strings.Contains(sentence, "0.0000") || !strings.Contains(sentence, "You forced this token") || !strings.Contains(sentence, "could never have picked it") {
		t.Errorf("a forced token cut by top-p: %q", sentence)
	}
	b.AssertAccessible(t, "the lab after a keyboard-only session")
	b.AssertNoJSErrors(t)
}
