package web_test

// e2e_presenter_test.go: the presenter's display in headless Chromium at a
// projector's 1280×720: the class bar collapses to one line (remembered
// for the tab) so the lab's Start button and stage strip are above the
// fold; the join screen shows the QR code and the code large and closes on
// Escape, giving the focus back; large type scales the charts; axe finds
// nothing serious. A student tries it themselves: the settings are theirs,
// Start starts a run with them, the share link is their setup (not the
// class); back in the class they follow again and count once. Screenshots
// go to $ARTIFACTS_DIR (presenter-*.png).

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web/wire"
)

func TestBrowserPresenter(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	c.b.SetViewport(t, 1280, 720, false)
	ready := `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`
	step := func(ctx context.Context, id string) {
		t.Helper()
		before := evalJS[string](t, ctx, pageState)
		c.must(ctx, "click "+id, c.click("#"+id))
		c.wait(ctx, ready+` && `+pageState+` !== `+jsString(before))
	}
	// aboveFold: the element's box lies inside the viewport (no scrolling)
	aboveFold := func(sel string) string {
		return fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`, sel)
	}
	shot := func(ctx context.Context, name string) {
		(&browsertest.Browser{Ctx: ctx}).ViewportScreenshot(t, name)
	}

	c.must(pres, "open the lab", chromedp.Navigate(ts.URL+"/lab?prompt=The+President+said&n=8&t=0.9&seed=3"))
	c.wait(pres, ready)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]') && document.querySelector('[data-testid=room-qr]').naturalWidth > 0`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)

	// expanded (the first time): the QR code and the tools show
	if !evalJS[bool](t, pres, `document.getElementById('btn-room-collapse').getAttribute('aria-expanded') === 'true' && document.querySelector('[data-testid=room-qr]').getBoundingClientRect().height > 100`) {
		t.Error("the class bar does not open expanded with its QR code")
	}
	shot(pres, "presenter-bar-expanded")

	// collapsed: one slim line with the code and the counts; Start and the stage strip above the fold
	c.must(pres, "collapse the class bar", c.click("#btn-room-collapse"))
	c.wait(pres, `document.getElementById('room-bar').dataset.collapsed === '1'`)
	checkCollapsed := func(when string) {
		t.Helper()
		got := evalJS[map[string]any](t, pres, `(() => {
		  const bar = document.getElementById('room-bar');
		  return { h: bar.getBoundingClientRect().height, qr: document.querySelector('[data-testid=room-qr]').getBoundingClientRect().height,
		    code: document.querySelector('[data-testid=room-code]').getBoundingClientRect().height > 0, counts: document.getElementById('room-counts').getBoundingClientRect().height > 0,
		    expanded: document.getElementById('btn-room-collapse').getAttribute('aria-expanded'), stored: sessionStorage.getItem('inferscope-room-bar') };
		})()`)
		if h, _ := got["h"].(float64); h > 72 || got["qr"].(float64) != 0 || got["code"] != true || got["counts"] != true || got["expanded"] != "false" || got["stored"] != "collapsed" {
			t.Errorf("%s: the collapsed class bar: %v; want one line under 72 px with the code and counts, no QR code", when, got)
		}
		for _, sel := range []string{"#btn-start", "#runbar", "#btn-step"} {
			if !evalJS[bool](t, pres, `scrollY === 0 && `+aboveFold(sel)) {
				t.Errorf("%s: %s is not above the fold at 1280×720 with the class bar collapsed", when, sel)
			}
		}
		if !evalJS[bool](t, pres, `document.getElementById('panel-text').getBoundingClientRect().top < innerHeight - 100`) {
			t.Errorf("%s: the first stage panel starts below the fold", when)
		}
	}
	checkCollapsed("collapsed")
	shot(pres, "presenter-bar-collapsed")

	// remembered for the tab: a reload keeps it collapsed (and takes the room back)
	c.must(pres, "reload the presenter's page", chromedp.Reload())
	c.wait(pres, ready+` && !!document.querySelector('[data-testid=room-code]') && document.querySelector('[data-testid=room-code]').textContent === `+jsString(code))
	checkCollapsed("after a reload")
	b := &browsertest.Browser{Ctx: pres}
	b.AssertAccessible(t, "the presenter's lab, class bar collapsed")

	// the join screen: a dialog with the QR code ≥ 300 px and the code in ≥ 96 px type
	c.must(pres, "focus the join screen button", chromedp.Focus("#btn-join-screen"))
	c.must(pres, "show the join screen", c.click("#btn-join-screen"))
	c.wait(pres, `!document.getElementById('join-screen').hidden && document.querySelector('[data-testid=join-screen-qr]').naturalWidth > 0`)
	js := evalJS[map[string]any](t, pres, `(() => {
	  const d = document.getElementById('join-screen'), q = document.querySelector('[data-testid=join-screen-qr]').getBoundingClientRect();
	  const code = document.querySelector('[data-testid=join-screen-code]');
	  return { role: d.getAttribute('role'), modal: d.getAttribute('aria-modal'), label: document.getElementById(d.getAttribute('aria-labelledby')).textContent,
	    qrW: q.width, qrH: q.height, qrIn: q.top >= 0 && q.bottom <= innerHeight && q.left >= 0 && q.right <= innerWidth,
	    font: parseFloat(getComputedStyle(code).fontSize), code: code.textContent, url: document.querySelector('[data-testid=join-screen-url]').textContent,
	    focus: document.activeElement.id, inert: document.querySelector('main').inert };
	})()`)
	if js["role"] != "dialog" || js["modal"] != "true" || js["label"] == "" {
		t.Errorf("join screen: role %v, aria-modal %v, label %q: want a labelled modal dialog", js["role"], js["modal"], js["label"])
	}
	if w, h := js["qrW"].(float64), js["qrH"].(float64); w < 300 || h < 300 || js["qrIn"] != true {
		t.Errorf("join screen QR code %.0f×%.0f (inside the screen: %v), want at least 300 px, all on screen", w, h, js["qrIn"])
	}
	if f := js["font"].(float64); f < 96 || js["code"] != code {
		t.Errorf("join screen code %q in %.0f px type, want %s in at least 96 px", js["code"], f, code)
	}
	if !strings.HasSuffix(js["url"].(string), "/join?code="+code) {
		t.Errorf("join screen URL %q", js["url"])
	}
	if js["focus"] != "btn-join-close" || js["inert"] != true {
		t.Errorf("join screen: focus on %q, page behind inert %v: want the focus in the dialog and the page out of reach", js["focus"], js["inert"])
	}
	shot(pres, "presenter-join-screen")
	b.AssertAccessible(t, "the join screen")
	c.must(pres, "Escape closes the join screen", chromedp.KeyEvent(kb.Escape))
	c.wait(pres, `document.getElementById('join-screen').hidden && document.activeElement.id === 'btn-join-screen' && !document.querySelector('main').inert`)
	if !evalJS[bool](t, pres, ready) {
		t.Error("Escape on the join screen reached the lab (its run is no longer ready)")
	}

	// the student follows; a page hidden in the back/forward cache is not counted
	s1 := c.tab()
	c.must(s1, "join", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s1, `document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1'`)
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1'`)
	c.must(s1, "the page goes into the back/forward cache", chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))`))
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '0'`)
	c.must(s1, "and comes back", chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))`))
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1'`)
	c.wait(s1, `document.body.dataset.room === 'following' && /Following class/.test(document.getElementById('room-status').textContent)`)

	for _, id := range []string{"btn-step", "btn-step", "btn-step", "btn-step"} {
		step(pres, id)
	}
	want := evalJS[string](t, pres, pageState)
	c.wait(s1, pageState+` === `+jsString(want))
	if h := evalJS[string](t, s1, `document.getElementById('share').href`); strings.Contains(h, "room=") || !strings.Contains(h, "t=0.9") {
		t.Errorf("a following student's share link %q: want the presenter's setup (t=0.9), not the class", h)
	}

	// large type: the page's text and the charts grow; the charts still fit their boxes
	c.wait(pres, `!!document.querySelector('#chart-probs svg')`)
	w0 := evalJS[float64](t, pres, `document.querySelector('#chart-probs svg').viewBox.baseVal.width`)
	c.must(pres, "large type", c.click("#btn-large-type"))
	c.wait(pres, `document.documentElement.classList.contains('large-type') && document.getElementById('btn-large-type').getAttribute('aria-pressed') === 'true'`)
	c.wait(pres, `(() => { const s = document.querySelector('#chart-probs svg'); return s.width.baseVal.value / s.viewBox.baseVal.width > 1.4 && s.width.baseVal.value <= document.getElementById('chart-probs').clientWidth + 1; })()`)
	if f := evalJS[float64](t, pres, `parseFloat(getComputedStyle(document.getElementById('status')).fontSize)`); f < 17 {
		t.Errorf("large type: the status line in %.1f px type", f)
	}
	shot(pres, "presenter-large-type")
	c.must(pres, "normal type", c.click("#btn-large-type"))
	c.wait(pres, `!document.documentElement.classList.contains('large-type') && document.querySelector('#chart-probs svg').viewBox.baseVal.width === `+fmt.Sprint(w0))

	// the student tries it themselves with another temperature
	c.must(s1, "try it myself", c.click("#btn-try"))
	c.wait(s1, `document.body.dataset.room === 'branched' && `+ready+` && !document.getElementById('btn-step').disabled`)
	c.wait(s1, pageState+` === `+jsString(want))
	c.wait(pres, `document.getElementById('room-counts').dataset.branched === '1' && document.getElementById('room-counts').dataset.followers === '0'`)
	if got := evalJS[string](t, pres, `document.getElementById('room-counts').textContent`); !strings.HasPrefix(got, "0 students follow") {
		t.Errorf("presenter's counts with the only student trying it: %q", got)
	}
	if h := evalJS[string](t, s1, `document.getElementById('share').href`); strings.Contains(h, "room=") || strings.HasSuffix(h, "#") {
		t.Errorf("the branched student's share link %q: want their setup", h)
	}
	if !evalJS[bool](t, s1, `!document.getElementById('btn-start').disabled && getComputedStyle(document.getElementById('btn-start')).display !== 'none' && !document.getElementById('temperature').disabled && !document.getElementById('prompt').disabled`) {
		t.Fatal("after Try it myself, Start or the settings are not usable")
	}
	c.must(s1, "a new temperature and prompt", chromedp.SetValue("#temperature", "0.35"), chromedp.SetValue("#prompt", "Once upon a time"))
	c.must(s1, "start", c.click("#btn-start"))
	c.wait(s1, ready+` && document.getElementById('gen').dataset.count === '0' && document.getElementById('chips').children.length === 0`)
	for range 4 {
		step(s1, "btn-step")
	}
	c.wait(s1, `document.querySelector('#timeline li.done').dataset.stage === 'logits' && /T=0\.35/.test(document.getElementById('cands').textContent)`)
	if got := evalJS[string](t, s1, `document.getElementById('source-text').textContent.replace(/␣/g, ' ')`); !strings.Contains(got, "Once upon a time") {
		t.Errorf("the student's run tokenized %q, want their prompt", got)
	}
	h := evalJS[string](t, s1, `document.getElementById('share').href`)
	if !strings.Contains(h, "t=0.35") || strings.Contains(h, "room=") || !strings.Contains(h, "prompt=Once") {
		t.Errorf("the student's share link %q: want t=0.35 and their prompt, no room=", h)
	}
	if !evalJS[bool](t, s1, `new URLSearchParams(location.search).get('room') === `+jsString(code)) {
		t.Errorf("the student's address %q lost the class (a reload would not come back)", evalJS[string](t, s1, `location.href`))
	}
	// settings written later (a sampling_set reply, a resume's replay) keep
	// the class in the address too, and out of the link they return
	rw, err := chromedp.Run(s1, chromedp.Evaluate[[]string](`import("/static/js/settings.js").then(m => [m.writeURL(m.readURL()), location.search])`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rw[0], "room=") || !strings.Contains(rw[1], "room="+code) {
		t.Errorf("settings written while trying it: link %q, address %q; want the class in the address only", rw[0], rw[1])
	}
	if got := evalJS[string](t, pres, pageState); got != want {
		t.Errorf("the presenter's page changed with the student's run: %s, was %s", got, want)
	}
	shot(s1, "presenter-student-branched")

	// back to the class: exactly the presenter's state, following again
	c.must(s1, "back to the class", c.click("#btn-back"))
	c.wait(s1, `document.body.dataset.room === 'following' && `+pageState+` === `+jsString(want))
	c.wait(s1, `document.getElementById('temperature').value === '0.9' && document.getElementById('prompt').value === 'The President said' && document.getElementById('btn-start').disabled`)
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1' && document.getElementById('room-counts').dataset.branched === '0'`)
	step(pres, "btn-token")
	want = evalJS[string](t, pres, pageState)
	c.wait(s1, pageState+` === `+jsString(want))

	// a stranger's machine at another address follows in two browsers: the
	// presenter sees two networks and removes that one; the student stays
	var strangers []*wsClient
	for _, cookie := range []string{"SSSSSSSSSSSSSSSSSSSSSS", "TTTTTTTTTTTTTTTTTTTTTT"} {
		w, got := followFrom(t, ts.URL, "127.0.0.2", code, cookie)
		if got != wire.MsgRoomJoined {
			t.Fatalf("a follower from another network: %s", got)
		}
		strangers = append(strangers, w)
	}
	c.wait(pres, `document.querySelectorAll('[data-testid=room-network]').length === 2 && !document.getElementById('room-networks').hidden`)
	c.must(pres, "expand the class details", chromedp.Evaluate[chromedp.Void](`document.getElementById('room-bar').dataset.collapsed === '1' && document.getElementById('btn-room-collapse').click()`))
	c.must(pres, "open the networks", chromedp.Evaluate[chromedp.Void](`document.getElementById('room-networks').open = true`))
	nets := evalJS[[]string](t, pres, `[...document.querySelectorAll('[data-testid=room-network]')].map((li) => li.textContent)`)
	if len(nets) != 2 || !strings.Contains(nets[0], "2 students") || !strings.Contains(nets[1], "1 student") || strings.Contains(strings.Join(nets, " "), "127.") {
		t.Errorf("the presenter's networks: %q; want 2 students then 1, no addresses", nets)
	}
	b.AssertAccessible(t, "the presenter's class bar with its networks")
	c.must(pres, "scroll to the networks", chromedp.Evaluate[chromedp.Void](`document.getElementById('room-networks').scrollIntoView({ block: 'end' })`))
	shot(pres, "presenter-networks")
	c.must(pres, "remove: the first press asks again", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=btn-remove-network]').click()`))
	if got := evalJS[string](t, pres, `document.querySelector('[data-testid=btn-remove-network]').textContent`); !strings.Contains(got, "Press again to remove 2 students") {
		t.Errorf("after one press Remove reads %q, want it to ask again", got)
	}
	c.must(pres, "remove: the second press", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=btn-remove-network]').click()`))
	for _, w := range strangers {
		m := nextType(w, wire.MsgError)
		if !strings.Contains(string(m.Payload), `"removed"`) {
			t.Errorf("a removed follower got %s", m.Payload)
		}
	}
	c.wait(pres, `document.querySelectorAll('[data-testid=room-network]').length === 1 && /1 student\b/.test(document.querySelector('[data-testid=room-network]').textContent)`)
	c.wait(s1, `document.body.dataset.room === 'following'`)
	step(pres, "btn-token")
	want = evalJS[string](t, pres, pageState)
	c.wait(s1, pageState+` === `+jsString(want))
	c.b.AssertNoJSErrors(t)
}

// TestBrowserPresenterPages: "Try it myself" on compare and on a lesson,
// the presenter's display there (the join screen on a lesson, large type
// on compare), and a new section opening at its top for the presenter and
// for a student following.
func TestBrowserPresenterPages(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	c.b.SetViewport(t, 1280, 720, false)

	// compare: the presenter runs a comparison; a student tries their own temperature
	c.must(pres, "open compare", chromedp.Navigate(ts.URL+"/compare"))
	c.wait(pres, `!!document.getElementById('btn-present')`)
	c.must(pres, "present from compare", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	c.must(pres, "compare settings", chromedp.SetValue("#prompt", "The President said"), chromedp.SetValue("#temperature", "0.9"), chromedp.SetValue("#max-new", "5"), chromedp.SetValue("#sample-n", "20"))
	c.must(pres, "run both", c.click(`[data-testid="btn-compare"]`))
	c.wait(pres, `document.body.dataset.compare === 'done' && document.getElementById('chart-samples').dataset.n === '20'`)
	wantC := evalJS[string](t, pres, compareState)

	// large type on compare: the samples chart grows with the text
	c.must(pres, "large type on compare", c.click("#btn-large-type"))
	c.wait(pres, `(() => { const s = document.querySelector('#chart-samples svg'); return document.documentElement.classList.contains('large-type') && s.width.baseVal.value / s.viewBox.baseVal.width > 1.4; })()`)
	(&browsertest.Browser{Ctx: pres}).ViewportScreenshot(t, "presenter-compare-large-type")
	c.must(pres, "normal type", c.click("#btn-large-type"))

	s1 := c.tab()
	c.must(s1, "join", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s1, `location.pathname === '/compare' && document.body.dataset.room === 'following' && `+compareState+` === `+jsString(wantC))
	c.must(s1, "try it myself on compare", c.click("#btn-try"))
	c.wait(s1, `document.body.dataset.room === 'branched'`)
	c.wait(pres, `document.getElementById('room-counts').dataset.branched === '1' && document.getElementById('room-counts').dataset.followers === '0'`)
	if h := evalJS[string](t, s1, `document.getElementById('share').href`); strings.Contains(h, "room=") || !strings.Contains(h, "t=0.9") {
		t.Errorf("compare, branched: the share link %q, want the setup shown (t=0.9), not the class", h)
	}
	c.must(s1, "own temperature", chromedp.SetValue("#temperature", "0.35"), chromedp.SetValue("#max-new", "3"))
	c.must(s1, "run own comparison", c.click(`[data-testid="btn-compare"]`))
	c.wait(s1, `document.body.dataset.compare === 'done' && document.querySelectorAll('#gen-sampled .gen-tok').length === 3 && /T=0\.35/.test(document.getElementById('h-sampled').textContent)`)
	if h := evalJS[string](t, s1, `document.getElementById('share').href`); strings.Contains(h, "room=") || !strings.Contains(h, "t=0.35") {
		t.Errorf("compare, the student's own run: the share link %q, want t=0.35 and no room=", h)
	}
	if !evalJS[bool](t, s1, `new URLSearchParams(location.search).get('room') === `+jsString(code)) {
		t.Errorf("compare: the student's address %q lost the class", evalJS[string](t, s1, `location.href`))
	}
	c.must(s1, "back to the class on compare", c.click("#btn-back"))
	c.wait(s1, `document.body.dataset.room === 'following' && `+compareState+` === `+jsString(wantC))
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1' && document.getElementById('room-counts').dataset.branched === '0'`)

	// a lesson: the class follows; the join screen works there too
	sectionDone := func(n int) string {
		return fmt.Sprintf(`!document.getElementById('section-%d').hidden && document.querySelector('#section-%d .panel-out').dataset.state === 'done'`, n, n)
	}
	c.must(pres, "presenter opens a lesson", chromedp.Navigate(ts.URL+"/lessons/after-send?s=2"))
	c.wait(pres, sectionDone(2)+` && !!document.querySelector('[data-testid=room-code]')`)
	c.wait(s1, `location.pathname === '/lessons/after-send' && document.body.dataset.room === 'following'`)
	c.must(pres, "show the join screen on the lesson", c.click("#btn-join-screen"))
	c.wait(pres, `!document.getElementById('join-screen').hidden && document.activeElement.id === 'btn-join-close'`)
	c.must(pres, "Escape", chromedp.KeyEvent(kb.Escape))
	c.wait(pres, `document.getElementById('join-screen').hidden && new URLSearchParams(location.search).get('s') === '2'`)

	// Next section from the bottom of the page: the new section opens at its top, here and for the class
	c.must(s1, "the student scrolls down", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	c.must(pres, "scroll to the bottom", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	c.must(pres, "next section", c.click("#sec-next"))
	c.wait(pres, sectionDone(3))
	atTop := `(() => { const t = document.getElementById('section-3').getBoundingClientRect().top; return t >= 0 && t < innerHeight / 3; })()`
	if !evalJS[bool](t, pres, atTop) {
		t.Errorf("the presenter's new section opens at %v px, want at the top", evalJS[float64](t, pres, `document.getElementById('section-3').getBoundingClientRect().top`))
	}
	if err := waitJS(s1, `document.getElementById('section-3')?.hidden === false && `+atTop); err != nil {
		t.Errorf("the student's new section: %v (%s)", err, evalJS[string](t, s1, `JSON.stringify({top: document.getElementById('section-3').getBoundingClientRect().top, y: scrollY, h: document.documentElement.scrollHeight, s: location.search})`))
	}

	// the student tries the lesson themselves: the link to the view is theirs, not the class's
	c.must(s1, "try it myself on the lesson", c.click("#btn-try"))
	c.wait(s1, `document.body.dataset.room === 'branched' && document.querySelector('#section-3 .panel-out').dataset.state === 'done'`)
	if h := evalJS[string](t, s1, `document.getElementById('lesson-link').href`); strings.Contains(h, "room=") || !strings.Contains(h, "s=3") {
		t.Errorf("lesson, branched: the link to this view %q, want s=3 and no room=", h)
	}
	c.must(s1, "next section on their own", c.click("#sec-next"))
	c.wait(s1, `!document.getElementById('section-4').hidden`)
	if got := evalJS[string](t, pres, `new URLSearchParams(location.search).get('s')`); got != "3" {
		t.Errorf("the presenter moved with a branched student: s=%s", got)
	}
	c.must(s1, "back to the class on the lesson", c.click("#btn-back"))
	c.wait(s1, `document.body.dataset.room === 'following' && !document.getElementById('section-3').hidden`)
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '1' && document.getElementById('room-counts').dataset.branched === '0'`)
	c.b.AssertNoJSErrors(t)
}
