package web_test

// e2e_modelview_position_test.go: the model view shows one position at a
// time. After a decode pass (the append stage) its logits box names the
// pass's own position, the same as the logit lens, and reads the lens's
// last row; the logits stage that follows shows exactly that token on top.

import (
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserModelViewOnePosition(t *testing.T) {
	t.Parallel()
	ts, _, b, must := labBrowser(t, "modelview-position-failure")
	ctx := b.Ctx
	ready := labReadyJS
	must("open the lab", chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=6&t=0")))
	must("ready", waitJS(ctx, ready))
	view := func() (pos, top, lensPos, lensTop string) {
		got := evalJS[[]string](t, ctx, `(() => { const g = document.querySelector('#panel-model [data-part=logits]'), l = document.querySelector('#panel-model [data-testid=lens-table]');
		  const last = l ? [...l.querySelectorAll('tbody tr')].pop() : null;
		  return [g ? g.dataset.pos : '', g ? g.dataset.top : '', l ? l.dataset.pos : '', last ? last.querySelector('td').dataset.id : '']; })()`)
		return got[0], got[1], got[2], got[3]
	}
	step := func(stage string) {
		t.Helper()
		must("step", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-step').click()`)))
		if err := waitJS(ctx, ready+` && document.querySelector('#timeline li.done') && document.querySelector('#timeline li.done').dataset.stage === '`+stage+`'`); err != nil {
			t.Fatalf("%s: %v (%v) %v", stage, err, evalJS[any](t, ctx, `[...document.querySelectorAll('#timeline li')].map((l) => l.dataset.stage + ':' + l.className)`), b.JSErrors())
		}
	}
	for _, st := range []string{"tokenize", "embed", "prefill"} {
		step(st)
	}
	pos, top, lensPos, lensTop := view()
	if pos == "" || pos != lensPos || top != lensTop {
		t.Errorf("after prefill the logits box is at position %q (top %q), the lens at %q (top %q): want one position", pos, top, lensPos, lensTop)
	}
	step("logits")
	for range 2 { // two decode passes
		for _, st := range []string{"sample", "append"} {
			step(st)
		}
		pos, top, lensPos, lensTop = view()
		if pos == "" || pos != lensPos || top == "" || top != lensTop {
			t.Fatalf("at the append stage the logits box is at position %q (top %q), the lens at %q (top %q): want the pass's own position", pos, top, lensPos, lensTop)
		}
		step("logits")
		cand := evalJS[string](t, ctx, `(() => { const r = [...document.querySelectorAll('#cands tr')].find((r) => r.cells[0] && r.cells[0].tagName === 'TD'); return r ? r.cells[2].textContent : ''; })()`)
		if p2, top2, _, _ := view(); cand != top || p2 != pos || top2 != top {
			t.Errorf("the logits stage shows %q on top (the model view: position %s, %q); the pass's lens said %q at position %s", cand, p2, top2, top, pos)
		}
	}
	b.AssertNoJSErrors(t)
}
