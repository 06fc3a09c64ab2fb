package web_test

// e2e_bfcache_test.go: a page left by navigation holds no session — it
// closes its sockets on pagehide, also when the browser keeps it in the
// back/forward cache — and picks up where it was when it comes back.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

// evalUntil evaluates expr until it is true or d passes.
func evalUntil(ctx context.Context, expr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not true after %v (last error %v)", expr, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func openSessions(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/api/server")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ Sessions []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return len(v.Sessions)
}

func waitSessions(t *testing.T, base string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := openSessions(t, base)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open at the server, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserBackForwardCache: the lab mid-run, then a page without
// sessions: the lab's session is gone at the server while the tab is
// elsewhere; Back restores the lab from the back/forward cache (pageshow
// persisted) with its run exactly where it was, on a new session, and the
// next token is the engine's.
func TestBrowserBackForwardCache(t *testing.T) {
	t.Parallel()
	ts, m := labServer(t)
	b := browsertest.NewFull(t) // the headless shell has no back/forward cache
	ctx := b.Ctx
	_, want := engineRun(t, m, session.Config{Prompt: "The President said", Sampling: session.DefaultSampling(), MaxNewTokens: 8})
	wantGen := eventIDs(want)
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "bfcache-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=8&t=0.8&p=0.9&seed=42")))
	must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
	for i := 1; i <= 3; i++ {
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, i)))
	}
	waitSessions(t, ts.URL, 1)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.addEventListener("pageshow", (e) => { document.body.dataset.pageshow = String(e.persisted); }); document.body.dataset.restored = ""`)))

	chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventBackForwardCacheNotUsed); ok {
			for _, r := range e.NotRestoredExplanations {
				t.Logf("not restored from the back/forward cache: %s (%s)", r.Reason, r.Type)
			}
		}
	})
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons")))
	waitSessions(t, ts.URL, 0) // the lab left no session behind

	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`history.back()`))) // (NavigateBack waits for a load event a cached page never fires)
	// restored from the cache, not reloaded (chromedp's Poll keeps the
	// execution context of before the navigation: evaluate afresh each time)
	if err := evalUntil(ctx, `document.body.dataset.pageshow === "true"`, 15*time.Second); err != nil {
		t.Fatalf("Back did not restore the lab from the back/forward cache: %v", err)
	}
	must(evalUntil(ctx, `document.body.dataset.restored === "1" && document.body.dataset.busy === "0"`, 30*time.Second))
	waitSessions(t, ts.URL, 1)
	gen := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(c => +c.dataset.id)`)
	if fmt.Sprint(gen) != fmt.Sprint(wantGen[:3]) {
		t.Fatalf("after Back the page shows %v, want %v", gen, wantGen[:3])
	}
	// (chromedp's queries also keep the old context: click by script)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="btn-token"]').click()`)))
	must(evalUntil(ctx, `document.querySelectorAll('[data-testid="gen-tok"]').length === 4 && document.body.dataset.busy === "0"`, 30*time.Second))
	if got := evalJS[int](t, ctx, `+[...document.querySelectorAll('[data-testid="gen-tok"]')].pop().dataset.id`); got != wantGen[3] {
		t.Errorf("the run continued with %d, the engine's next token is %d", got, wantGen[3])
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLessonPanelScrolledAway: a lesson panel that holds a session
// (the decode loop, stepped by the student) closes it when it is scrolled
// more than two screens away, and runs again when scrolled back.
func TestBrowserLessonPanelScrolledAway(t *testing.T) {
	t.Parallel()
	ts, _ := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "scrolled-away-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/after-send?s=12")))
	must(waitJS(ctx, `!!document.querySelector('#section-12 [data-testid=loop-cycle]') && document.querySelector('#section-12 .lp-root').dataset.ready === '1'`))
	waitSessions(t, ts.URL, 1)
	// the page grows far below the panel (as a long section would) and the student scrolls down
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.body.append(Object.assign(document.createElement('div'), { id: 'spacer', style: 'height: 6000px' })); window.scrollTo(0, document.documentElement.scrollHeight)`)))
	waitSessions(t, ts.URL, 0)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#section-12 .lesson-panel').scrollIntoView()`)))
	must(waitJS(ctx, `document.querySelector('#section-12 .lp-root') && document.querySelector('#section-12 .lp-root').dataset.ready === '1' && !document.querySelector('#section-12 .lp-root').dataset.paused`))
	waitSessions(t, ts.URL, 1)
	b.AssertNoJSErrors(t)
}
