package web_test

// e2e_lab_pause_test.go: Pause and Resume in the lab, at the engine's
// speed and at a class's 5 tokens/s: a paused run stays where it was,
// Resume runs it on, and the text at the end is the uninterrupted run's.

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserLabPause(t *testing.T) {
	t.Parallel()
	ts := slowLabServer(t, 2*time.Millisecond)
	b := browsertest.New(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "lab-pause-failure")
			t.Fatalf("%s: %v", what, err)
		}
	}
	ctx := b.Ctx
	ready := labReadyJS
	stopped := `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`
	count := func() int { return evalJS[int](t, ctx, `+document.getElementById('gen').dataset.count`) }
	text := func() string { return evalJS[string](t, ctx, `document.getElementById('gen').textContent`) }
	must("open the lab", chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=200&t=0.9&seed=7")))
	must("ready", waitJS(ctx, ready))
	must("run", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-run').click()`)))
	must("the whole run", waitJS(ctx, stopped))
	want, n := text(), count()
	if evalJS[bool](t, ctx, `!document.getElementById('btn-pause').disabled`) {
		t.Error("Pause is pressable after the run ended")
	}

	for _, speed := range []string{"0", "5"} {
		must("reset", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-reset').click()`)))
		must("reset done", waitJS(ctx, ready+` && document.getElementById('gen').dataset.count === '0'`))
		must("speed "+speed, chromedp.Do(ctx, chromedp.SetValue("#speed", speed)))
		if speed == "0" {
			// at the engine's speed a whole run takes a few tens of ms: the
			// page itself presses Pause as soon as two tokens are drawn (a
			// test's round trip could arrive after the run ended)
			must("run and pause after two tokens", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {
				const gen = document.getElementById('gen');
				const obs = new MutationObserver(() => {
					if (+gen.dataset.count >= 2) { obs.disconnect(); document.getElementById('btn-pause').click(); }
				});
				obs.observe(gen, { attributes: true, childList: true, subtree: true });
				document.getElementById('btn-run').click();
			})()`)))
		} else {
			must("run", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-run').click()`)))
			must("a few tokens", waitJS(ctx, `+document.getElementById('gen').dataset.count >= 2`))
			must("pause (p)", chromedp.Do(ctx, chromedp.KeyEvent("p")))
		}
		if err := waitJS(ctx, ready+` && document.getElementById('btn-pause').textContent === 'Resume' && !document.getElementById('btn-pause').disabled`); err != nil {
			t.Fatalf("speed %s: not paused: run state %q, busy %q, pause button %q (disabled %v), %d of %d tokens: %v", speed,
				evalJS[string](t, ctx, `document.getElementById('main').dataset.runState`), evalJS[string](t, ctx, `document.body.dataset.busy`),
				evalJS[string](t, ctx, `document.getElementById('btn-pause').textContent`), evalJS[bool](t, ctx, `document.getElementById('btn-pause').disabled`), count(), n, err)
		}
		k := count()
		if k >= n {
			t.Fatalf("speed %s: the run ended (%d tokens) before the pause", speed, k)
		}
		time.Sleep(500 * time.Millisecond) // a paused run stays put (at 5 tokens/s, 2–3 more would come)
		if got := count(); got != k {
			t.Fatalf("speed %s: paused at %d tokens, %d after half a second", speed, k, got)
		}
		must("resume", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-pause').click()`)))
		if speed == "5" {
			must("playing again", waitJS(ctx, `+document.getElementById('gen').dataset.count > `+itoa(k)))
			must("fast for the rest", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-pause').click()`)))
			must("paused again", waitJS(ctx, ready+` && document.getElementById('btn-pause').textContent === 'Resume'`))
			must("engine speed", chromedp.Do(ctx, chromedp.SetValue("#speed", "0")))
			must("resume", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-pause').click()`)))
		}
		must("the rest of the run", waitJS(ctx, stopped))
		if got := text(); got != want || count() != n {
			t.Errorf("speed %s: paused at %d and resumed: %d tokens %q\nuninterrupted: %d tokens %q", speed, k, count(), got, n, want)
		}
		t.Logf("speed %s: paused at token %d of %d", speed, k, n)
	}
	b.AssertNoJSErrors(t)
}
