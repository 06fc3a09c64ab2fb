package web_test

// e2e_room_test.go: a class in headless Chromium: a presenter's lab and two
// students' pages (one joins late) show the same tokens and stage; a
// student tries it themselves, forces a token, and comes back to the class.
// TestBrowserRoomPages does the same on a lesson section and on compare.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web/room"
)

// pageState is what must match between presenter and followers: the
// generated token ids, the stage strip's done and next stages.
const pageState = `(() => {
  const ids = [...document.querySelectorAll('#gen .gen-tok')].map((e) => e.dataset.id).join(',');
  const done = document.querySelector('#timeline li.done'), next = document.querySelector('#timeline li.next');
  return ids + '|' + (done ? done.dataset.stage : '') + '|' + (next ? next.dataset.stage : '') + '|' + document.getElementById('chips').children.length;
})()`

func TestBrowserRoom(t *testing.T) {
	t.Parallel()
	ts := roomServer(t, room.RoomOptions{})
	b := browsertest.New(t)
	pres := b.Ctx
	tab := func() context.Context { // a student: a browser of their own (their own cookies: their own visitor)
		ctx, cancel := chromedp.NewContext(b.Ctx, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	t0 := time.Now()
	// click with the element's own click(): background tabs get no mouse events
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel))
	}
	must := func(ctx context.Context, what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		t.Logf("%6.1fs %s", time.Since(t0).Seconds(), what)
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(ctx context.Context, expr string) {
		t.Helper()
		err := waitJS(ctx, expr)
		for try := 0; err != nil && (strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "context with specified id")) && try < 5; try++ {
			err = waitJS(ctx, expr) // the page was still navigating (a form submit and its redirect)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ready := `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`
	step := func(id string) {
		t.Helper()
		before := evalJS[string](t, pres, pageState)
		must(pres, "click "+id, click("#"+id))
		wait(pres, ready+` && `+pageState+` !== `+jsString(before))
	}

	must(pres, "open the lab", chromedp.Navigate(ts.URL+"/lab?prompt=The+President+said&n=8&t=0.9&seed=3"))
	wait(pres, ready)
	must(pres, "present", click("#btn-present"))
	wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	if len(code) != 6 {
		t.Fatalf("room code %q", code)
	}
	wait(pres, `document.querySelector('[data-testid=room-qr]').naturalWidth > 0`)

	// the first student types the code on /join
	s1 := tab()
	must(s1, "open /join", chromedp.Navigate(ts.URL+"/join"))
	must(s1, "type the code", chromedp.SendKeys(chromedp.CSS("#join-code"), code))
	must(s1, "join", click(`[data-testid="join-submit"]`))
	wait(s1, `document.body.dataset.room === 'following' && location.search.includes('room=')`)
	wait(pres, `document.getElementById('room-counts').dataset.followers === '1'`)

	for _, id := range []string{"btn-step", "btn-step", "btn-step", "btn-token", "btn-token"} {
		step(id)
	}
	want := evalJS[string](t, pres, pageState)
	wait(s1, pageState+` === `+jsString(want))

	// the second student joins late, through the join link
	s2 := tab()
	must(s2, "late join", chromedp.Navigate(ts.URL+"/join?code="+code))
	wait(s2, `document.body.dataset.roomSynced === '1'`)
	wait(s2, pageState+` === `+jsString(want))
	wait(pres, `document.getElementById('room-counts').dataset.followers === '2'`)
	// a student's controls cannot drive anything
	if dis := evalJS[bool](t, s2, `document.getElementById('btn-step').disabled && document.getElementById('btn-token').disabled && document.getElementById('btn-run').disabled`); !dis {
		t.Error("a following student's step buttons are enabled")
	}

	// student 1 tries it: a private run at the presenter's step, then forces the rank-3 candidate
	must(s1, "try it myself", click("#btn-try"))
	// the private copy is ready when its step button is enabled: data-busy
	// turns "1" only at the next frame after the branch message, so "ready"
	// alone can still read the following page's state, and a click then
	// lands on a disabled button (the flake where Step did not advance)
	wait(s1, `document.body.dataset.room === 'branched' && `+ready+` && !document.getElementById('btn-step').disabled`)
	wait(s1, pageState+` === `+jsString(want))
	wait(pres, `document.getElementById('room-counts').dataset.branched === '1'`)
	must(s1, "step to logits", click("#btn-step"))
	if err := waitJS(s1, ready+` && document.querySelector('#timeline li.done').dataset.stage === 'logits' && !!document.querySelector('#cands tr[data-rank="3"]')`); err != nil {
		(&browsertest.Browser{Ctx: s1}).Screenshot(t, "room-student-step-failed")
		t.Fatalf("%v: the student shows %s", err, evalJS[string](t, s1, `[...document.querySelectorAll("#timeline li.done")].map((e) => e.dataset.stage).join(",") + " / status: " + document.getElementById("status").textContent`))
	}
	forced := evalJS[string](t, s1, `document.querySelector('#cands tr[data-rank="3"]').dataset.id`)
	must(s1, "force", click(`#cands tr[data-rank="3"]`))
	wait(s1, ready+` && document.getElementById('gen').dataset.count === '3'`)
	if got := evalJS[string](t, s1, `document.querySelector('#gen .gen-tok:last-child').dataset.id + (document.querySelector('#gen .gen-tok:last-child').classList.contains('forced') ? ' forced' : '')`); got != forced+" forced" {
		t.Errorf("student's forced token: %q, want %s forced", got, forced)
	}
	if got := evalJS[string](t, pres, pageState); got != want {
		t.Errorf("the presenter's page changed when a student forced a token: %s, was %s", got, want)
	}
	(&browsertest.Browser{Ctx: s1}).Screenshot(t, "room-student-branched")

	// back to the class, then the presenter moves on and everyone follows
	must(s1, "back", click("#btn-back"))
	wait(s1, `document.body.dataset.room === 'following'`)
	wait(s1, pageState+` === `+jsString(want))
	step("btn-token")
	want = evalJS[string](t, pres, pageState)
	for i, s := range []context.Context{s1, s2} {
		if err := waitJS(s, pageState+` === `+jsString(want)); err != nil {
			t.Fatalf("student %d after the presenter's next token: %v (has %s)", i+1, err, evalJS[string](t, s, pageState))
		}
	}
	b.Screenshot(t, "room-presenter")
	b.AssertNoJSErrors(t)
}

// classTabs drives a presenter tab and students' tabs of one browser.
type classTabs struct {
	t  *testing.T
	b  *browsertest.Browser
	t0 time.Time
}

// newClass starts a room server and a browser whose first tab, the
// presenter's, is 1366×900; further tabs come from c.tab().
func newClass(t *testing.T) (*httptest.Server, *classTabs, context.Context) {
	ts := roomServer(t, room.RoomOptions{})
	b := browsertest.New(t)
	pres := b.Ctx
	if err := chromedp.Do(pres, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}
	return ts, &classTabs{t: t, b: b, t0: time.Now()}, pres
}

// tab is a student: a browser of their own (their own cookies, so their
// own visitor; "N students follow" counts browsers, not tabs).
func (c *classTabs) tab() context.Context {
	ctx, cancel := chromedp.NewContext(c.b.Ctx, chromedp.WithNewBrowserContext())
	c.t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		c.t.Fatal(err)
	}
	return ctx
}

// click with the element's own click(): background tabs get no mouse events
func (c *classTabs) click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel))
}

func (c *classTabs) must(ctx context.Context, what string, acts ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	c.t.Logf("%6.1fs %s", time.Since(c.t0).Seconds(), what)
	if err := chromedp.Do(ctx, acts...); err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
}

func (c *classTabs) wait(ctx context.Context, expr string) {
	c.t.Helper()
	err := waitJS(ctx, expr)
	for try := 0; err != nil && (strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "context with specified id")) && try < 5; try++ {
		err = waitJS(ctx, expr) // the page was still navigating (a redirect, or following the class to another page)
	}
	if err != nil {
		if errs := c.b.JSErrors(); len(errs) > 0 {
			c.t.Logf("the pages logged JavaScript errors:\n%s", strings.Join(errs, "\n"))
		}
		c.t.Fatal(err)
	}
}

// TestBrowserRoomPages: a class on a lesson and on compare. The presenter
// presents from a lesson section; students follow the section and see the
// presenter's panel (one joins late); one tries the section on their own and
// comes back; the presenter moves to compare in the same tab and the class
// follows (one more joins late) with the same tokens; a student runs a
// comparison of their own and comes back.
func TestBrowserRoomPages(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	sectionDone := func(n int) string {
		return fmt.Sprintf(`!document.getElementById('section-%d').hidden && document.querySelector('#section-%d .panel-out').dataset.state === 'done'`, n, n)
	}

	c.must(pres, "open a lesson section", chromedp.Navigate(ts.URL+"/lessons/after-send?s=3"))
	c.wait(pres, sectionDone(3))
	c.must(pres, "present from the lesson", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	wantL := evalJS[string](t, pres, lessonState)
	if !strings.HasPrefix(wantL, "3|") || len(wantL) < 4 {
		t.Fatalf("presenter's lesson: %q", wantL)
	}

	s1 := c.tab()
	c.must(s1, "open /join", chromedp.Navigate(ts.URL+"/join"))
	c.must(s1, "type the code", chromedp.SendKeys(chromedp.CSS("#join-code"), code))
	c.must(s1, "join", c.click(`[data-testid="join-submit"]`))
	c.wait(s1, `location.pathname === '/lessons/after-send' && document.body.dataset.room === 'following'`)
	// uncovered reaches students as the presenter reveals it: while the
	// presenter's section waits for a prediction, students see it covered
	if evalJS[bool](t, pres, `document.getElementById('section-3').classList.contains('predicting')`) {
		c.wait(s1, `!!document.querySelector('#section-3 [data-testid=mirror-covered]') && !document.querySelector('#section-3 .panel-out .chips')`)
		c.must(pres, "show the panel", c.click("#section-3 [data-testid=q-skip]"))
		wantL = evalJS[string](t, pres, lessonState)
	}
	c.wait(s1, lessonState+` === `+jsString(wantL))
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1'`)

	c.must(pres, "next section", c.click("#sec-next"))
	c.wait(pres, sectionDone(4))
	if evalJS[bool](t, pres, `document.getElementById('section-4').classList.contains('predicting')`) {
		c.must(pres, "show the panel", c.click("#section-4 [data-testid=q-skip]"))
	}
	wantL = evalJS[string](t, pres, lessonState)
	if !strings.HasPrefix(wantL, "4|") || len(wantL) < 4 {
		t.Fatalf("presenter's lesson after next: %q", wantL)
	}
	c.wait(s1, lessonState+` === `+jsString(wantL))
	s2 := c.tab()
	c.must(s2, "late join on the lesson", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s2, `location.pathname === '/lessons/after-send' && `+lessonState+` === `+jsString(wantL))
	if n := evalJS[int](t, s2, `document.querySelectorAll('#section-4 [data-mirror]').length`); n == 0 {
		t.Error("the late student's panel is not the presenter's (no mirrored panel)")
	}
	(&browsertest.Browser{Ctx: s2}).Screenshot(t, "room-lesson-follower")
	c.must(s2, "try it myself on the lesson", c.click("#btn-try"))
	c.wait(s2, `document.body.dataset.room === 'branched' && !document.querySelector('#section-4 [data-mirror]') && document.querySelector('#section-4 .panel-out').dataset.state === 'done'`)
	c.wait(pres, `document.getElementById('room-counts').dataset.branched === '1'`)
	c.must(s2, "back to the class on the lesson", c.click("#btn-back"))
	c.wait(s2, `document.body.dataset.room === 'following' && `+lessonState+` === `+jsString(wantL))

	// the presenter moves to compare in the same tab: the class follows there
	c.must(pres, "presenter opens compare", chromedp.Navigate(ts.URL+"/compare"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]') && document.querySelector('[data-testid=room-code]').textContent === `+jsString(code))
	for _, s := range []context.Context{s1, s2} {
		c.wait(s, `location.pathname === '/compare' && document.body.dataset.room === 'following'`)
	}
	c.must(pres, "compare settings", chromedp.SetValue("#prompt", "The President said"), chromedp.SetValue("#max-new", "6"), chromedp.SetValue("#sample-n", "20"))
	c.must(pres, "run both", c.click(`[data-testid="btn-compare"]`))
	c.wait(pres, `document.body.dataset.compare === 'done' && document.getElementById('chart-samples').dataset.n === '20'`)
	wantC := evalJS[string](t, pres, compareState)
	if strings.Count(wantC, ",") < 8 {
		t.Fatalf("presenter's comparison: %q", wantC)
	}
	for _, s := range []context.Context{s1, s2} {
		c.wait(s, compareState+` === `+jsString(wantC))
	}
	s3 := c.tab()
	c.must(s3, "late join on compare", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s3, `location.pathname === '/compare' && `+compareState+` === `+jsString(wantC))
	c.wait(s3, `document.getElementById('chart-samples').dataset.n === '20'`)
	(&browsertest.Browser{Ctx: s3}).Screenshot(t, "room-compare-follower")

	// student 1 runs a comparison of their own (3 tokens); the presenter's page is unchanged
	c.must(s1, "try it myself on compare", c.click("#btn-try"))
	c.wait(s1, `document.body.dataset.room === 'branched'`)
	c.must(s1, "own settings", chromedp.SetValue("#max-new", "3"))
	c.must(s1, "run own comparison", c.click(`[data-testid="btn-compare"]`))
	c.wait(s1, `document.body.dataset.compare === 'done' && document.querySelectorAll('#gen-greedy .gen-tok').length === 3`)
	if got := evalJS[string](t, pres, compareState); got != wantC {
		t.Errorf("the presenter's comparison changed when a student ran their own: %s, was %s", got, wantC)
	}
	c.must(s1, "back to the class on compare", c.click("#btn-back"))
	c.wait(s1, `document.body.dataset.room === 'following' && `+compareState+` === `+jsString(wantC))
	c.b.Screenshot(t, "room-compare-presenter")
	c.b.AssertNoJSErrors(t)
}

// compareState: the token ids of both sides and the prompt on /compare.
const compareState = `[...document.querySelectorAll('#gen-greedy .gen-tok')].map((e) => e.dataset.id).join(',') + '|' +
  [...document.querySelectorAll('#gen-sampled .gen-tok')].map((e) => e.dataset.id).join(',') + '|' + document.getElementById('prompt').value`

// lessonState: the section shown, its panel's token chips and the numbers
// its text shows from the panel.
const lessonState = `(() => {
  const s = [...document.querySelectorAll('.lesson-section')].find((e) => !e.hidden);
  const c = s && s.querySelector('.panel-out .chips');
  const live = s ? [...s.querySelectorAll('[data-live]')].map((e) => e.textContent).join(',') : '';
  return (s ? s.dataset.section : '') + '|' + (c ? c.textContent : '') + '|' + live;
})()`

func jsString(s string) string { return fmt.Sprintf("%q", s) }

// panelsState is what a finished run's panels show, beyond pageState: the
// candidates table (the last token's full logits), the logit statistics,
// the sample, attention, cache, timing and stop texts. A follower that
// missed the detail a thinned run sends before its stop would show an
// earlier token's numbers here.
const panelsState = `(() => {
  const txt = (id) => { const e = document.getElementById(id); return e ? e.textContent.replace(/\s+/g, ' ').trim() : '(none)'; };
  const cands = [...document.querySelectorAll('#cands tr[data-testid=cand-row]')].map((r) => r.dataset.id + ':' + r.textContent.replace(/\s+/g, ' ').trim()).join(';');
  return [cands, txt('logit-stats'), txt('sample-text'), txt('attn-text'), document.getElementById('attn').dataset.layer, txt('kv-text'), txt('ttft'), txt('rates'), txt('stop-text'), txt('gen-text')].join('\n');
})()`

// countMsgsJS counts the messages a page's websockets receive, by type
// (window.roomMsgs), from the page's first script on.
const countMsgsJS = `(() => {
  const W = window.WebSocket;
  window.roomMsgs = {};
  window.WebSocket = function (...a) {
    const ws = new W(...a);
    ws.addEventListener('message', (e) => { try { const t = JSON.parse(e.data).type; window.roomMsgs[t] = (window.roomMsgs[t] || 0) + 1; } catch (err) {} });
    return ws;
  };
  window.WebSocket.prototype = W.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})()`

// TestBrowserRoomFastRun: the presenter presses Run at engine speed; the
// run reaches the class thinned (thin events in groups, the detail before
// the stop), and a follower's page, and a student who joins after the
// run, end with the presenter's tokens and final panels.
func TestBrowserRoomFastRun(t *testing.T) {
	t.Parallel()
	ts, c, pres := newClass(t)
	ready := `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`
	c.must(pres, "open the lab", chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=60&t=0.9&seed=5"))
	c.wait(pres, ready)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)

	s1 := c.tab()
	// count the run messages the student's page receives, by type
	c.must(s1, "count messages", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: countMsgsJS})
		return err
	}))
	c.must(s1, "join", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s1, `document.body.dataset.roomSynced === '1'`)
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1'`)

	if v := evalJS[string](t, pres, `document.getElementById('speed').value`); v != "0" {
		t.Fatalf("speed %q, want 0 (as fast as the engine)", v)
	}
	c.must(pres, "run to the end", c.click("#btn-run"))
	done := `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`
	c.wait(pres, done)
	want := evalJS[string](t, pres, pageState) + "\n" + evalJS[string](t, pres, panelsState)
	if n := evalJS[int](t, pres, `document.querySelectorAll('#gen .gen-tok').length`); n < 20 {
		t.Fatalf("the presenter's run made %d tokens, want a long run", n)
	}
	check := func(name string, s context.Context) {
		t.Helper()
		state := pageState + ` + '\n' + ` + panelsState
		if err := waitJS(s, done+` && `+state+` === `+jsString(want)); err != nil {
			t.Fatalf("%s: %v\n got %s\nwant %s", name, err, evalJS[string](t, s, state), want)
		}
	}
	check("the following student", s1)
	msgs := evalJS[map[string]int](t, s1, `window.roomMsgs || {}`)
	// one detail message, unless a stall let the last token go in full
	if msgs["events"] < 1 || msgs["detail"] > 1 {
		t.Errorf("the student's page got %v: want the run thinned (events messages, at most one detail)", msgs)
	}
	t.Logf("the following student's page got %v", msgs)

	s2 := c.tab()
	c.must(s2, "join late", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s2, `document.body.dataset.roomSynced === '1'`)
	check("the student who joined after the run", s2)
	c.b.Screenshot(t, "room-fast-run-presenter")
	(&browsertest.Browser{Ctx: s1}).Screenshot(t, "room-fast-run-student")
	c.b.AssertNoJSErrors(t)
}
