package web_test

// e2e_class_lesson_test.go: a lesson presented to a class. Students get
// the section's question on their own device while the presenter's panel
// stays covered on theirs too; the presenter sees the class's answers fill
// in and reveals them beside the panel's answer, which then checks each
// student's answer; a slider the presenter moves reaches the students at
// once. The lab's "which token comes next" reveals the model's
// probabilities beside the votes.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

// student is a browser of its own (its own cookies: its own visitor and
// its own vote), at 390×844 like a phone.
func (c *classTabs) student() context.Context {
	ctx, cancel := chromedp.NewContext(c.b.Ctx, chromedp.WithNewBrowserContext())
	c.t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		c.t.Fatal(err)
	}
	return ctx
}

func TestBrowserClassLesson(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	c.must(pres, "1280×720", chromedp.EmulateViewport(1280, 720))
	c.must(pres, "open the sampling lesson", chromedp.Navigate(ts.URL+"/lessons/sampling?s=1"))
	c.wait(pres, `document.querySelectorAll('#section-1 form.question input[type=radio]').length >= 2 && !!document.getElementById('btn-present')`)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)

	students := []context.Context{c.student(), c.student()}
	for i, s := range students {
		c.must(s, fmt.Sprintf("student %d joins", i+1), chromedp.Navigate(ts.URL+"/join?code="+code))
		c.wait(s, `location.pathname === '/lessons/sampling' && document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1'`)
		// the question is theirs to answer; the panel is covered as on the presenter's screen
		c.wait(s, `!!document.querySelector('#section-1 form.question[data-id=greedy-pick]') && !!document.querySelector('#section-1 [data-testid=mirror-covered]')`)
		if leaked := evalJS[int](t, s, `document.querySelectorAll('#section-1 .panel-out table').length`); leaked != 0 {
			t.Errorf("student %d sees %d tables of the presenter's covered panel", i+1, leaked)
		}
	}
	c.wait(pres, `document.getElementById('room-counts').dataset.followers === '2'`)
	axe := func(ctx context.Context, what string) {
		(&browsertest.Browser{Ctx: ctx}).AssertAccessible(t, what)
	}

	c.must(pres, "ask the class", c.click("#btn-poll"))
	options := evalJS[[]string](t, pres, `[...document.querySelectorAll('#section-1 form.question input[type=radio]')].map(r => r.value)`)
	for i, s := range students {
		c.wait(s, `document.getElementById('room-poll').dataset.open === '1'`)
		// each student answers in the lesson's own question form
		c.must(s, fmt.Sprintf("student %d answers", i+1), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const f = document.querySelector('#section-1 form.question[data-id=greedy-pick]');
			[...f.querySelectorAll('input[type=radio]')].find(r => r.value === %q).checked = true;
			f.requestSubmit();
		})()`, options[i])))
		c.wait(s, `/Sent to the class/.test(document.querySelector('#section-1 [data-testid=q-result]').textContent)`)
	}
	axe(students[0], "a student's lesson with the class's question open (390×844)")
	// the presenter's histogram fills in live
	c.wait(pres, `[...document.querySelectorAll('#room-poll [data-testid=poll-result]')].reduce((n, e) => n + +e.dataset.count, 0) === 2`)
	axe(pres, "the presenter's lesson with the class's answers (1280×720)")

	c.must(pres, "reveal", c.click("#btn-reveal"))
	real := ""
	c.wait(pres, `!!document.querySelector('#section-1 [data-testid=q-result]').dataset.real && !document.getElementById('section-1').classList.contains('predicting')`)
	real = evalJS[string](t, pres, `document.querySelector('#section-1 [data-testid=q-result]').dataset.real`)
	for i, s := range students {
		// the class's answers with the panel's answer beside them, the panel uncovered, the student's own verdict
		c.wait(s, `document.getElementById('room-poll').dataset.open === '0' && [...document.querySelectorAll('#room-poll [data-testid=poll-result]')].some(e => e.dataset.reveal === "the panel's answer")`)
		c.wait(s, `document.querySelector('#section-1 .panel-out').dataset.state === 'mirror' && !!document.querySelector('#section-1 .panel-out table')`)
		c.wait(s, `['right', 'wrong'].includes(document.querySelector('#section-1 [data-testid=q-result]').dataset.verdict)`)
		want := "wrong"
		if options[i] == real {
			want = "right"
		}
		if got := evalJS[string](t, s, `document.querySelector('#section-1 [data-testid=q-result]').dataset.verdict`); got != want {
			t.Errorf("student %d answered %q, the panel's answer is %q: verdict %s, want %s", i+1, options[i], real, got, want)
		}
		counts := evalJS[string](t, s, `[...document.querySelectorAll('#room-poll [data-testid=poll-result]')].map(e => e.dataset.count).join(',')`)
		if strings.Count(counts, "1") != 2 && !strings.Contains(counts, "2") {
			t.Errorf("student %d sees the class's counts %s, want the two answers", i+1, counts)
		}
	}
	axe(students[1], "a student's lesson after the reveal (390×844)")
	// the class after the reveal, as presenter and student see it, at each
	// size and scheme
	for _, who := range []struct {
		name string
		ctx  context.Context
	}{{"presenter", pres}, {"student", students[0]}} {
		b := &browsertest.Browser{Ctx: who.ctx}
		for _, vp := range []struct {
			w, h   int64
			mobile bool
		}{{1366, 900, false}, {1280, 720, false}, {390, 844, true}} {
			for _, dark := range []bool{false, true} {
				b.SetViewport(t, vp.w, vp.h, vp.mobile)
				b.SetDark(t, dark)
				scheme := "light"
				if dark {
					scheme = "dark"
				}
				name := fmt.Sprintf("class-reveal-%s-%dx%d-%s", who.name, vp.w, vp.h, scheme)
				b.ViewportScreenshot(t, name)
				if browsertest.AxeView(vp.w, dark) {
					b.AssertAccessible(t, name)
				}
			}
		}
		b.SetDark(t, false)
	}
	c.must(pres, "1280×720 again", chromedp.EmulateViewport(1280, 720))
	for _, s := range students {
		c.must(s, "390×844 again", chromedp.EmulateViewport(390, 844))
	}

	// the next section: the presenter's slider reaches the students within 200 ms
	c.must(pres, "next section", c.click("#sec-next"))
	for _, s := range students {
		c.wait(s, `document.getElementById('section-2')?.hidden === false && !!document.querySelector('#section-2 [data-testid=mirror-covered]')`)
	}
	c.wait(pres, `!!document.querySelector('#section-2 [data-testid=slider-temperature]') && !!document.querySelector('#section-2 [data-testid=q-skip]')`)
	c.must(pres, "show the panel", c.click("#section-2 [data-testid=q-skip]"))
	for _, s := range students {
		c.wait(s, `!!document.querySelector('#section-2 .panel-out input[data-name=temperature]')`)
		c.must(s, "watch the slider", chromedp.Evaluate[chromedp.Void](`(() => {
			window.__seen = 0;
			new MutationObserver(() => {
				const i = document.querySelector('#section-2 .panel-out input[data-name=temperature]');
				if (!window.__seen && i && i.value === '1.6') window.__seen = Date.now();
			}).observe(document.getElementById('section-2'), { subtree: true, childList: true, attributes: true, characterData: true });
		})()`))
	}
	moved := evalJS[float64](t, pres, `(() => {
		const i = document.querySelector('#section-2 [data-testid=slider-temperature]');
		i.value = '1.6';
		i.dispatchEvent(new Event('input', { bubbles: true }));
		return Date.now();
	})()`)
	for i, s := range students {
		c.wait(s, `window.__seen > 0`)
		lag := evalJS[float64](t, s, `window.__seen`) - moved
		t.Logf("student %d saw the presenter's temperature 1.6 after %.0f ms", i+1, lag)
		// pushed, not polled: the latency is logged (193-221 ms with a load
		// average of 20); the bound only catches a move that waits for a
		// reload or a poll, since the test runs beside other browser tests
		if lag > 2000 {
			t.Errorf("student %d: the slider move reached them after %.0f ms, want it pushed at once (≤ 2 s)", i+1, lag)
		}
		if v := evalJS[string](t, s, `document.querySelector('#section-2 [data-testid=slider-value-temperature]').textContent`); !strings.Contains(v, "1.6") {
			t.Errorf("student %d: temperature shown %q, want 1.6", i+1, v)
		}
	}
	(&browsertest.Browser{Ctx: students[0]}).ViewportScreenshot(t, "class-lesson-student-390")
	(&browsertest.Browser{Ctx: pres}).ViewportScreenshot(t, "class-lesson-presenter-1280")

	// another lesson: the class follows; the presenter's steps on the decode
	// loop reach the students as they happen
	c.must(pres, "the decode loop", chromedp.Navigate(ts.URL+"/lessons/after-send?s=12"))
	c.wait(pres, `document.querySelector('#section-12 .lp-root') && document.querySelector('#section-12 .lp-root').dataset.ready === '1'`)
	if evalJS[bool](t, pres, `document.getElementById('section-12').classList.contains('predicting')`) {
		c.must(pres, "show the panel", c.click("#section-12 [data-testid=q-skip]"))
	}
	for i := range 3 {
		c.must(pres, "step", c.click("#section-12 [data-testid=loop-step]"))
		c.wait(pres, fmt.Sprintf(`document.querySelectorAll('#section-12 [data-testid=loop-log] li').length >= %d`, i+2))
	}
	want := evalJS[int](t, pres, `document.querySelectorAll('#section-12 [data-testid=loop-log] li').length`)
	for i, s := range students {
		c.wait(s, fmt.Sprintf(`location.pathname === '/lessons/after-send' && document.querySelectorAll('#section-12 .panel-out [data-testid=loop-log] li').length === %d`, want))
		if on := evalJS[string](t, s, `(document.querySelector('#section-12 .panel-out [data-testid=loop-cycle] li.on') || {}).textContent || ''`); on == "" {
			t.Errorf("student %d: the mirrored loop lights no stage", i+1)
		}
	}
}

// TestBrowserClassNextToken: in the lab, "which token comes next" is
// answered on each student's device; the reveal shows, beside each
// candidate's votes, the model's probability the draw uses, as the
// presenter's logits panel has it.
func TestBrowserClassNextToken(t *testing.T) {
	t.Parallel()
	ts, c, pres := newClass(t)
	ready := `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`
	c.must(pres, "open the lab", chromedp.Navigate(ts.URL+"/lab?prompt=The+President+said&n=8&t=0.9&seed=3"))
	c.wait(pres, ready)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	for range 4 { // tokenize, embed, prefill, logits
		before := evalJS[string](t, pres, pageState)
		c.must(pres, "next stage", c.click("#btn-step"))
		c.wait(pres, ready+` && `+pageState+` !== `+jsString(before))
	}
	students := []context.Context{c.student(), c.student()}
	for i, s := range students {
		c.must(s, fmt.Sprintf("student %d joins", i+1), chromedp.Navigate(ts.URL+"/join?code="+code))
		c.wait(s, `document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1'`)
	}
	c.must(pres, "ask which token comes next", c.click("#btn-poll"))
	for i, s := range students {
		c.wait(s, `document.querySelectorAll('#room-poll [data-testid=poll-option]').length >= 2`)
		c.must(s, "vote", c.click(fmt.Sprintf(`#room-poll [data-testid=poll-option][data-option="%d"]`, i)))
	}
	c.wait(pres, `[...document.querySelectorAll('#room-poll [data-testid=poll-result]')].reduce((n, e) => n + +e.dataset.count, 0) === 2`)
	c.must(pres, "reveal", c.click("#btn-reveal"))
	for i, s := range students {
		c.wait(s, `document.getElementById('room-poll').dataset.open === '0' && [...document.querySelectorAll('#room-poll [data-testid=poll-result]')].every(e => /^model: [0-9.]+% \(p the draw uses\)$/.test(e.dataset.reveal))`)
		got := evalJS[[]string](t, s, `[...document.querySelectorAll('#room-poll [data-testid=poll-result]')].map(e => e.dataset.count + ' ' + e.dataset.reveal)`)
		if len(got) < 2 || !strings.HasPrefix(got[0], "1 ") || !strings.HasPrefix(got[1], "1 ") {
			t.Errorf("student %d sees %v, want one vote on each of the first two candidates", i+1, got)
		}
	}
	(&browsertest.Browser{Ctx: students[0]}).AssertAccessible(t, "a student's lab after the next-token reveal (390×844)")
}
