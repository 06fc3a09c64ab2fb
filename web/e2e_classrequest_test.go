package web_test

// e2e_classrequest_test.go: the class request in Chromium. A presenter on
// the lab and two students following on phones: the presenter sends a
// request from every student's device; each student's page sends it as its
// own session and shows its own timings and rank; the presenter's chart has
// a row per student, the class's output against one request alone, and a
// second run without batching beside the first. Then the after-send
// lesson's busy-server section, presented, uses the class instead of its
// simulated requests.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web"
)

func TestBrowserClassRequest(t *testing.T) {
	t.Parallel()
	cat, _ := batchingCatalog(t, true, serve.DefaultOptions())
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b := browsertest.New(t)
	pres := b.Ctx
	c := &classTabs{t: t, b: b, t0: time.Now()}
	c.must(pres, "1366×900", chromedp.EmulateViewport(1366, 900))
	c.must(pres, "open the lab", chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=16&t=0"))
	c.wait(pres, `!!document.getElementById('btn-present') && document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	students := []context.Context{c.student(), c.student()}
	for i, s := range students {
		c.must(s, fmt.Sprintf("student %d joins", i+1), chromedp.Navigate(ts.URL+"/join?code="+code))
		if err := waitJS(s, `document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1'`); err != nil {
			t.Fatalf("%v: %v", err, evalJS[any](t, s, `({href: location.href, ds: Object.assign({}, document.body.dataset), status: (document.getElementById('room-status')||{}).textContent, main: document.body.innerText.slice(0, 300)})`))
		}
	}
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '2'`)

	c.must(pres, "open the class request", c.click("#btn-class"))
	c.wait(pres, `!document.getElementById('room-class').hidden && document.getElementById('class-prompt').value === 'Once upon a time' && document.getElementById('class-tokens').value === '16'`)
	c.must(pres, "send it", c.click("[data-testid=btn-class-send]"))
	c.wait(pres, `document.querySelector('[data-testid=class-request]').dataset.state === 'done' && document.querySelector('[data-testid=class-run]').dataset.rows === '2'`)

	// each student: their own request's times, adding up, and their rank
	var ttfts []string
	for i, s := range students {
		c.wait(s, `document.getElementById('class-mine').dataset.state === 'done' && !!document.getElementById('class-mine').dataset.rank`)
		got := evalJS[map[string]any](t, s, `(() => { const m = document.getElementById('class-mine');
		  return { facts: m.querySelector('[data-testid=class-mine-facts]').textContent, rank: m.querySelector('[data-testid=class-mine-rank]').textContent,
		    ttft: m.dataset.ttft, passes: m.querySelectorAll('[data-testid=class-mine-batches] svg').length, sessions: (window.ISClients || []).filter((c) => c.open()).length }; })()`)
		facts, rank := got["facts"].(string), got["rank"].(string)
		for _, want := range []string{"waited before the first token", "prefill", "time to first token", "batch sizes of your decode passes"} {
			if !strings.Contains(facts, want) {
				t.Errorf("student %d's own timings %q lack %q", i+1, facts, want)
			}
		}
		if !strings.Contains(rank, "of 2 in the class") || got["passes"].(float64) != 1 || got["sessions"].(float64) != 0 {
			t.Errorf("student %d: rank %q, %v batch charts, %v sessions still open after the request", i+1, rank, got["passes"], got["sessions"])
		}
		ttfts = append(ttfts, got["ttft"].(string))
	}
	// the presenter: both rows, whose TTFTs are the students' own
	rows := evalJS[map[string]any](t, pres, `(() => { const r = document.querySelector('[data-testid=class-run]');
	  return { rows: r.querySelectorAll('[data-testid=class-rows-chart] .class-row').length, cells: [...r.querySelectorAll('.class-table tbody tr')].map((tr) => tr.children[3].textContent),
	    summary: r.querySelector('[data-testid=class-summary]').textContent, memory: r.querySelector('[data-testid=class-memory]').textContent,
	    gaps: r.querySelector('[data-testid=class-gap-chart]').dataset.points, batches: r.querySelector('[data-testid=class-batch-chart]').dataset.points }; })()`)
	if rows["rows"].(float64) != 2 || !strings.Contains(rows["summary"].(string), "One request alone") || !strings.Contains(rows["memory"].(string), "weights") {
		t.Errorf("the presenter's class run: %v", rows)
	}
	if rows["gaps"] == "0" || rows["batches"] == "0" {
		t.Errorf("the presenter's charts over time are empty: %v", rows)
	}
	for i, ttft := range ttfts {
		if !strings.Contains(fmt.Sprint(rows["cells"]), trimMs(ttft)) {
			t.Errorf("student %d's TTFT %s ms is not among the presenter's rows %v", i+1, ttft, rows["cells"])
		}
	}
	b.AssertAccessible(t, "the presenter's class request")
	for i, s := range students {
		(&browsertest.Browser{Ctx: s}).AssertAccessible(t, fmt.Sprintf("student %d's own request", i+1))
	}

	// again without batching: two runs side by side
	c.must(pres, "again without batching", c.click("[data-testid=btn-class-again-batch]"))
	c.wait(pres, `document.querySelectorAll('[data-testid=class-run]').length === 2 && document.querySelector('[data-testid=class-run]').dataset.done === '1' && document.querySelector('[data-testid=class-request]').dataset.state === 'done'`)
	if got := evalJS[string](t, pres, `document.querySelector('[data-testid=class-run] h4').textContent`); !strings.Contains(got, "batching off") {
		t.Errorf("the second run's heading %q, want batching off", got)
	}
	for _, vp := range []struct {
		w, h   int64
		mobile bool
	}{{1366, 900, false}, {1280, 720, false}, {390, 844, true}} {
		for _, dark := range []bool{false, true} {
			pb := &browsertest.Browser{Ctx: pres}
			pb.SetViewport(t, vp.w, vp.h, vp.mobile)
			pb.SetDark(t, dark)
			c.must(pres, "scroll to the class runs", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=class-runs]').scrollIntoView()`))
			name := fmt.Sprintf("class-request-presenter-%dx%d-%v", vp.w, vp.h, map[bool]string{false: "light", true: "dark"}[dark])
			pb.ViewportScreenshot(t, name)
			if browsertest.AxeView(vp.w, dark) {
				pb.AssertAccessible(t, name)
			}
		}
	}
	sb := &browsertest.Browser{Ctx: students[0]}
	c.must(students[0], "scroll to the student's request", chromedp.Evaluate[chromedp.Void](`document.getElementById('class-mine').scrollIntoView()`))
	sb.ViewportScreenshot(t, "class-request-student-390x844")
	sb.SetDark(t, true)
	sb.ViewportScreenshot(t, "class-request-student-390x844-dark")
	sb.AssertAccessible(t, "a student's request, dark")

	// the after-send lesson's busy server, presented: the class instead of
	// six requests from the presenter's browser; the section's numbers
	// come from the class's run
	sb.SetDark(t, false)
	c.must(pres, "1366×900 again", chromedp.EmulateViewport(1366, 900))
	c.must(pres, "the busy-server section", chromedp.Navigate(ts.URL+"/lessons/after-send?s=16"))
	if err := waitJS(pres, `!!document.querySelector('#section-16 [data-testid=busy-class-note]') && !!document.querySelector('#section-16 [data-testid=class-request]')`); err != nil {
		t.Fatalf("%v: %v", err, evalJS[any](t, pres, `({cls: typeof window.ISClass, p: window.ISClass && window.ISClass.presenting(), sec: document.getElementById('section-16') && document.getElementById('section-16').innerText.slice(0, 400), errs: 0})`))
	}
	for _, s := range students {
		c.wait(s, `location.pathname === '/lessons/after-send' && document.getElementById('section-16')?.hidden === false`)
	}
	c.must(pres, "send it from the lesson", c.click("#section-16 [data-testid=btn-class-send]"))
	c.wait(pres, `document.querySelector('#section-16 [data-testid=class-request]').dataset.state === 'done' && document.querySelector('#section-16 [data-live="busy.n"]').textContent === '2'`)
	for i, s := range students {
		c.wait(s, `document.getElementById('class-mine').dataset.state === 'done'`)
		// the presenter's chart reaches the students with the section
		c.wait(s, `!!document.querySelector('#section-16 [data-testid=class-run]') || !!document.querySelector('#section-16 .class-run')`)
		(&browsertest.Browser{Ctx: s}).AssertAccessible(t, fmt.Sprintf("student %d on the presented busy-server section", i+1))
	}
	b.AssertAccessible(t, "the presented busy-server section")
	c.must(pres, "scroll to the section's class run", chromedp.Evaluate[chromedp.Void](`document.querySelector('#section-16 [data-testid=class-runs]').scrollIntoView()`))
	b.ViewportScreenshot(t, "class-request-lesson-presenter")
	// the charts fill their boxes (drawn again when the panel moved into the section)
	if got := evalJS[[]float64](t, pres, `[...document.querySelectorAll('#section-16 [data-testid=class-run] .chart')].map((b) => b.firstChild.getBoundingClientRect().width / b.clientWidth)`); len(got) != 3 || got[0] < 0.95 || got[0] > 1.01 || got[1] < 0.95 || got[2] > 1.01 {
		t.Errorf("the class charts' widths over their boxes: %v, want 1", got)
	}
	c.b.AssertNoJSErrors(t)
}

// trimMs is a data-ttft value as the table prints it (C.ms: 2 decimals
// under 10 ms, 1 under 100, none above).
func trimMs(s string) string {
	var v float64
	fmt.Sscan(s, &v)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
