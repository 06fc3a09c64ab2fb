package web_test

// e2e_lessonframe_test.go: the lesson framework in headless Chromium, on a
// phone-sized screen: every section of every lesson, its panels run, every
// question answered (right, and for exercises wrong first) against the live
// value, every slider moved once, no horizontal overflow, no console error;
// a second Run replaces the first; presenter mode, clicker keys and the
// view in the URL; screenshots and axe-core on one section per lesson.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// walkJS drives one section (window.__walk(n)) and returns what went wrong.
const walkJS = `window.__walk = async (n, allowed) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const waitFor = async (f, what, ms = 90000) => { const t0 = Date.now(); while (!f()) { if (Date.now() - t0 > ms) throw new Error("timed out waiting for " + what); await sleep(40); } };
  const sec = document.querySelector("#section-" + n), errs = [], rep = { errors: errs, questions: 0, exercises: 0, sliders: 0, checked: 0, href: "" };
  const outs = () => [...sec.querySelectorAll("[data-testid=panel-out]")];
  const settled = () => outs().length > 0 && outs().every((o) => o.dataset.state === "done" || o.dataset.state === "error");
  const overflow = (when) => {
    const w = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > w + 1) {
      const wide = [...sec.querySelectorAll("*")].filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest(".table-wrap,.lp-kvgrid,.heatmaps")).slice(0, 3).map((e) => e.tagName + "." + e.className);
      errs.push("horizontal overflow " + when + ": page " + document.documentElement.scrollWidth + " px wide at " + w + " px: " + wide.join(" "));
    }
  };
  await waitFor(settled, "the panels of section " + n);
  outs().forEach((o) => { if (o.dataset.state === "error") errs.push("panel " + o.dataset.kind + ": " + o.textContent.slice(0, 200)); });
  overflow("after the panels ran");
  const spec = JSON.parse(document.getElementById("lesson-data").textContent).sections[n - 1];
  const shown = (v) => Array.isArray(v) ? v.join(", ") : String(v);
  // the lesson lint on the rendered page, before any answer: with the
  // section's panels run and every answer published (window.ISLive), the
  // section is covered, its panels hidden, no live number in view, and no
  // answer in the page's visible text (the question forms aside); a choice
  // counts as said when the text names it and none of the other choices
  const asks = (spec.questions || []).filter((q) => !q.exercise);
  for (const q of asks) {
    try { await waitFor(() => window.ISLive && window.ISLive[q.answer] !== undefined, "live value " + q.answer, 30000); } catch (e) { errs.push(q.id + ": no panel published " + q.answer); }
  }
  for (const q of asks) {
    const real = window.ISLive && window.ISLive[q.answer];
    if (real === undefined) continue;
    rep.checked++;
    const where = "question " + q.id + " (answer " + JSON.stringify(shown(real)) + ")";
    if (!sec.classList.contains("predicting")) { errs.push(where + ": the section is not covered before the answer"); continue; }
    if (outs().some((o) => getComputedStyle(o).visibility !== "hidden")) errs.push(where + ": a panel is visible before the answer");
    const lives = [...sec.querySelectorAll(".live")].filter((e) => getComputedStyle(e).visibility !== "hidden").map((e) => e.dataset.live);
    if (lives.length) errs.push(where + ": live values " + lives.join(", ") + " are visible before the answer");
    const forms = [...document.querySelectorAll("form.question")];
    forms.forEach((f) => { f.style.display = "none"; });
    const text = document.body.innerText;
    forms.forEach((f) => { f.style.display = ""; });
    const ans = shown(real), form = sec.querySelector("form[data-id=" + JSON.stringify(q.id) + "]");
    let said;
    if (q.kind === "number") {
      said = new RegExp("(^|[^0-9.])" + ans.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "([^0-9.]|$)").test(text);
    } else {
      const lt = text.toLowerCase(), la = ans.toLowerCase();
      said = lt.includes(la) && ![...form.querySelectorAll("input[type=radio]")].map((r) => r.value.toLowerCase()).some((o) => o !== la && lt.includes(o));
    }
    if (said && !(allowed || []).includes(location.pathname.split("/").pop() + "/" + q.id)) errs.push(where + ": the answer is in the page's visible text before it is asked");
  }
  const answerWith = async (form, v, want) => {
    const q = spec.questions.find((x) => x.id === form.dataset.id);
    if (q.kind === "choice") {
      const r = [...form.querySelectorAll("input[type=radio]")].find((r) => r.value === String(v));
      if (!r) { errs.push(q.id + ": " + JSON.stringify(v) + " is not among the choices " + JSON.stringify([...form.querySelectorAll("input[type=radio]")].map((r) => r.value))); return; }
      r.click();
    } else {
      form.querySelector("[data-testid=q-input]").value = String(v);
    }
    form.querySelector("[data-testid=q-check]").click();
    const res = form.querySelector("[data-testid=q-result]");
    try { await waitFor(() => res.dataset.verdict, q.id + "'s verdict", 30000); } catch (e) { errs.push(e.message + ": " + res.textContent); return; }
    if (res.dataset.verdict !== want) errs.push(q.id + ": answered " + JSON.stringify(v) + ", verdict " + res.dataset.verdict + ", want " + want + " (" + res.textContent + ")");
    if (res.dataset.real !== shown(window.ISLive[q.answer])) errs.push(q.id + ": shows " + JSON.stringify(res.dataset.real) + ", live value " + JSON.stringify(shown(window.ISLive[q.answer])));
  };
  for (const form of sec.querySelectorAll("[data-testid=question]")) {
    const q = spec.questions.find((x) => x.id === form.dataset.id);
    try { await waitFor(() => window.ISLive && window.ISLive[q.answer] !== undefined, "live value " + q.answer, 30000); } catch (e) { errs.push(q.id + ": no panel published " + q.answer); continue; }
    const real = window.ISLive[q.answer];
    if (q.kind === "choice") {
      try { await waitFor(() => form.querySelectorAll("input[type=radio]").length >= 2, q.id + "'s choices", 30000); } catch (e) { errs.push(e.message); continue; }
    }
    if (!q.exercise) {
      rep.questions++;
      if (sec.classList.contains("predicting") && outs().some((o) => getComputedStyle(o).visibility !== "hidden")) errs.push(q.id + ": a panel shows its result before the question is answered");
      if (sec.classList.contains("predicting")) {
        // a covered number is one width, whatever its digits
        const ws = [...sec.querySelectorAll(".live")].map((e) => Math.round(e.getBoundingClientRect().width));
        if (new Set(ws).size > 1) errs.push(q.id + ": covered numbers differ in width (" + ws.join(", ") + " px): the width tells the digits");
        // the answer is nowhere on the page before it is asked: the prose
        // above and around the question (its own choices aside) must not say it
        if (q.kind === "choice") {
          // what the page shows now: the text outside the questions and panels, as rendered (covered text excluded)
          const text = [...sec.querySelectorAll(".lesson-body > :not(.lesson-question):not(.lesson-panel)")].map((e) => e.innerText).join(" ").toLowerCase(), ans = shown(real).toLowerCase();
          // (naming every choice, as a question's setup does, singles none out)
          const others = [...form.querySelectorAll("input[type=radio]")].map((r) => r.value.toLowerCase()).filter((o) => o !== ans && o.length >= 4);
          if (ans.length >= 4 && text.includes(ans) && !others.some((o) => text.includes(o))) errs.push(q.id + ": the section's text says the answer " + JSON.stringify(ans) + " before it is asked");
        }
      }
      await answerWith(form, real, "right");
      continue;
    }
    rep.exercises++;
    let wrong = "zzz-not-it";
    if (q.kind === "number") wrong = String(2 * Math.abs(Number(real)) + 1 + Number(q.tolerance) * 2);
    if (q.kind === "choice") wrong = [...form.querySelectorAll("input[type=radio]")].map((r) => r.value).find((v) => v !== String(real));
    await answerWith(form, wrong, "wrong");
    form.querySelector("[data-testid=q-again]").click();
    await answerWith(form, real, "right");
  }
  if (sec.classList.contains("predicting")) errs.push("the panels stay covered after every question was answered");
  for (const r of [...sec.querySelectorAll("input[type=range]")]) {
    rep.sliders++;
    const v = r.value === r.max ? r.min : r.max;
    r.value = v;
    r.dispatchEvent(new Event("input", { bubbles: true }));
    r.dispatchEvent(new Event("change", { bubbles: true }));
    await sleep(300);
    try { await waitFor(settled, "the panels after moving a slider"); } catch (e) { errs.push(e.message); }
    const key = r.dataset.testid || r.name;
    if (key && !location.search.includes("." + key + "=")) errs.push("slider " + key + " moved, but the URL " + location.search + " does not keep it");
    outs().forEach((o) => { if (o.dataset.state === "error") errs.push("after moving " + key + ": " + o.textContent.slice(0, 200)); });
  }
  if (rep.sliders) rep.href = location.href;
  overflow("after the questions and sliders");
  return rep;
}`

// answerShownAllowed are questions ("slug/id") whose answer may appear in
// the page's visible text before the reveal, each with why that gives
// nothing away.
var answerShownAllowed = map[string]string{}

type walkReport struct {
	Errors                                 []string
	Questions, Exercises, Sliders, Checked int // Checked: questions whose answer was looked for in view
	Href                                   string
}

func browserLessonFramework(t *testing.T) {
	// Run by TestBrowserLongest (e2e_longest_test.go) beside the other
	// longest browser tests, in go test's serial phase.
	ts, m := labServer(t)
	ls, err := lessons.Load(web.LessonValues(catalog.ModelCardFor(m)))
	if err != nil {
		t.Fatal(err)
	}
	// each lesson is walked in a tab of its own, beside the others
	var mu sync.Mutex
	sliderHref, sliderSection := "", ""
	checked := 0
	allowed := make([]string, 0, len(answerShownAllowed))
	for k := range answerShownAllowed {
		allowed = append(allowed, k)
	}
	allowedJSON, _ := json.Marshal(allowed)
	t.Run("walk", func(t *testing.T) {
		for _, l := range ls {
			t.Run(l.Slug, func(t *testing.T) {
				t.Parallel()
				b := browsertest.New(t)
				ctx := b.Ctx
				b.SetViewport(t, 390, 844, true)
				// another draw than the lesson's first prompts
				if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/"+l.Slug+"?draw=1")); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](walkJS)); err != nil {
					t.Fatal(err)
				}
				questions, exercises := 0, 0
				for s := 1; s <= len(l.Sections); s++ {
					if s > 1 {
						// a clicker's PageDown scrolls within a section and moves on at
						// its end (never from inside a text box)
						evalJS[bool](t, ctx, `(document.activeElement && document.activeElement.blur(), window.scrollTo(0, document.documentElement.scrollHeight), true)`)
						if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.PageDown)); err != nil {
							t.Fatal(err)
						}
					}
					if err := waitJS(ctx, fmt.Sprintf(`!document.querySelector('#section-%d').hidden && new URLSearchParams(location.search).get("s") === "%d"`, s, s)); err != nil {
						t.Fatalf("%s: PageDown to section %d: %v", l.Slug, s, err)
					}
					rep, err := chromedp.Run(ctx, chromedp.Evaluate[walkReport](fmt.Sprintf(`window.__walk(%d, %s)`, s, allowedJSON), chromedp.EvalAwaitPromise))
					if err != nil {
						b.Screenshot(t, "lessonframe-fail-"+l.Slug)
						t.Fatalf("%s section %d (%s): %v", l.Slug, s, l.Sections[s-1].Heading, err)
					}
					for _, e := range rep.Errors {
						t.Errorf("%s section %d (%s): %s", l.Slug, s, l.Sections[s-1].Heading, e)
					}
					if slices.Contains(layoutShots[l.Slug], s) && os.Getenv("ARTIFACTS_DIR") != "" {
						for _, mode := range []string{"light", "dark"} {
							b.SetDark(t, mode == "dark")
							b.Screenshot(t, fmt.Sprintf("lesson-%s-s%d-390x844-%s", l.Slug, s, mode))
						}
						b.SetDark(t, false)
					}
					questions += rep.Questions
					exercises += rep.Exercises
					mu.Lock()
					checked += rep.Checked
					if rep.Href != "" && sliderHref == "" {
						sliderHref, sliderSection = rep.Href, fmt.Sprintf("%s section %d", l.Slug, s)
					}
					mu.Unlock()
				}
				if questions == 0 || exercises == 0 {
					t.Errorf("%s: answered %d questions and %d exercises, want at least one of each", l.Slug, questions, exercises)
				}
				// PageUp at the section's top goes back
				evalJS[bool](t, ctx, `(document.activeElement && document.activeElement.blur(), window.scrollTo(0, 0), true)`)
				if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.PageUp)); err != nil {
					t.Fatal(err)
				}
				if err := waitJS(ctx, fmt.Sprintf(`new URLSearchParams(location.search).get("s") === "%d"`, len(l.Sections)-1)); err != nil {
					t.Errorf("%s: PageUp: %v", l.Slug, err)
				}
				b.AssertNoJSErrors(t)
			})
		}
	})
	if checked < 12 {
		t.Errorf("looked for %d questions' answers in view before they were asked, want at least 12", checked)
	}

	// the checks below share one tab, opened after the walk (a tab's
	// context has a deadline: the walk can take minutes on a busy machine)
	b := browsertest.New(t)
	ctx := b.Ctx
	b.SetViewport(t, 390, 844, true)
	go0 := func(t *testing.T, u string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](walkJS)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("run twice shows one result", func(t *testing.T) {
		go0(t, ts.URL+"/lessons/sampling?s=1")
		if err := waitJS(ctx, `document.querySelector('#section-1 [data-testid=panel-out]').dataset.state === "done"`); err != nil {
			t.Fatal(err)
		}
		one := evalJS[int](t, ctx, `document.querySelectorAll('#section-1 [data-testid=panel-out] table').length`)
		evalJS[bool](t, ctx, `(() => { const b = document.querySelector('#section-1 [data-testid=panel-run]'); b.click(); b.click(); return true; })()`)
		if err := waitJS(ctx, `(() => { const o = document.querySelector('#section-1 [data-testid=panel-out]'); return o.dataset.runs === "3" && o.dataset.state === "done"; })()`); err != nil {
			t.Fatal(err)
		}
		// let a stale run finish, had it not been cancelled
		if err := chromedp.Do(ctx, chromedp.Sleep(1500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		boxes := evalJS[int](t, ctx, `document.querySelectorAll('#section-1 [data-testid=panel-out] .run-box').length`)
		tables := evalJS[int](t, ctx, `document.querySelectorAll('#section-1 [data-testid=panel-out] table').length`)
		if boxes != 1 || tables != one {
			t.Errorf("after Run twice: %d result boxes, %d tables; one run draws %d", boxes, tables, one)
		}
	})

	t.Run("view in the URL", func(t *testing.T) {
		go0(t, ts.URL+"/lessons/after-send?s=3&present=1&p1="+url.QueryEscape("Hello there"))
		if err := waitJS(ctx, `!document.querySelector('#section-3').hidden && document.body.classList.contains("presenter")`); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector('#section-3 [data-testid=panel-prompt]').value`); got != "Hello there" {
			t.Errorf("prompt from the URL: %q", got)
		}
		if sliderHref == "" {
			t.Fatal("no lesson section has a slider")
		}
		u, _ := url.Parse(sliderHref)
		go0(t, sliderHref)
		for k, v := range u.Query() {
			p, key, ok := strings.Cut(k, ".")
			if !ok || !strings.HasPrefix(p, "p") {
				continue
			}
			js := fmt.Sprintf(`(() => { const s = document.querySelector('#section-%s'); const r = s && s.querySelector('.lesson-panel[data-panel="%d"] input[type=range][data-testid="%s"]'); return !!r && r.value === %q && s.querySelector('[data-testid=panel-out]').dataset.state === "done"; })()`,
				u.Query().Get("s"), atoi(p[1:])-1, key, v[0])
			if err := waitJS(ctx, js); err != nil {
				t.Errorf("%s: slider %s not restored to %s from %s: %v", sliderSection, key, v[0], sliderHref, err)
			}
		}
	})

	t.Run("screenshots and axe", func(t *testing.T) {
		for _, l := range ls {
			t.Run(l.Slug, func(t *testing.T) {
				t.Parallel()
				b := browsertest.New(t)
				ctx := b.Ctx
				go0 := func(u string) {
					t.Helper()
					if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
						t.Fatal(err)
					}
					if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](walkJS)); err != nil {
						t.Fatal(err)
					}
				}
				s := 1
				for i, sec := range l.Sections {
					if len(sec.Questions) > 0 && !sec.Questions[0].Exercise {
						s = i + 1
						break
					}
				}
				for _, v := range []struct {
					name    string
					w, h    int64
					mobile  bool
					dark    bool
					present bool
				}{{"1366-light", 1366, 900, false, false, false}, {"1366-dark", 1366, 900, false, true, false}, {"390-light", 390, 844, true, false, false},
					{"390-dark", 390, 844, true, true, false}, {"presenter-1366", 1366, 900, false, false, true}, {"presenter-390-dark", 390, 844, true, true, true}} {
					b.SetViewport(t, v.w, v.h, v.mobile)
					b.SetDark(t, v.dark)
					u := fmt.Sprintf("%s/lessons/%s?s=%d", ts.URL, l.Slug, s)
					if v.present {
						u += "&present=1"
					}
					go0(u)
					if err := waitJS(ctx, fmt.Sprintf(`[...document.querySelectorAll('#section-%d [data-testid=panel-out]')].every(o => o.dataset.state === "done")`, s)); err != nil {
						t.Fatal(err)
					}
					name := "lesson-" + l.Slug + "-s" + itoa(s) + "-" + v.name
					if v.name == "1366-light" { // the question, before its answer
						b.ViewportScreenshot(t, name+"-question")
						b.AssertAccessible(t, name+" (question open)")
					}
					// answer the section's questions with the live value, then look
					rep, err := chromedp.Run(ctx, chromedp.Evaluate[walkReport](fmt.Sprintf(`window.__walk(%d)`, s), chromedp.EvalAwaitPromise))
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range rep.Errors {
						t.Errorf("%s: %s", name, e)
					}
					// a glossary term, focused: its definition shows
					evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const b = document.querySelector('#section-%d .term'); if (b) b.focus(); return true; })()`, s))
					b.ViewportScreenshot(t, name)
					if v.name == "1366-light" || v.name == "1366-dark" || v.name == "presenter-390-dark" {
						b.AssertAccessible(t, name)
					}
				}
				b.AssertNoJSErrors(t)
			})
		}
	})
	b.AssertNoJSErrors(t)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func itoa(n int) string { return fmt.Sprint(n) }
