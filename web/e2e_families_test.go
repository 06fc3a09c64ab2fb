package web_test

// e2e_families_test.go: the lab, the model view, the lessons and the classroom on the tiny
// random checkpoints of each decoder family (engine/testdata/arch: Llama 3
// RoPE scaling, Qwen 2, Qwen 3, Mistral, Phi-3, Gemma 2, Gemma 3), each the
// server's only model: a seeded sampled run in the lab draws the engine's
// tokens; every lesson section's panels run on the family without an error
// (or, where a section needs more context than the model has, say so);
// a student following the presenter's run sees the presenter's tokens.

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/room"
)

// archFamilies are the checkpoints under engine/testdata/arch, each with
// texts its model view must show.
var archFamilies = []struct {
	dir  string
	view []string
}{
	{"llama3-rope-f32", []string{"scaling llama3 ×8"}},
	{"qwen2-bias-bf16", []string{"bias on q, k, v"}},
	{"qwen3-qknorm-f32", []string{"q, k norm"}},
	{"mistral-window-f32", []string{"local: sliding window of 5", "0/5 window"}},
	{"phi3-fused-f32", []string{"fused qkv_proj", "gate_up_proj", "first 12 dims of each head"}},
	{"gemma2-softcap-bf16", []string{"global: full attention", "soft-cap 2", "soft-cap 4", "RMS 1+w"}},
	{"gemma3-local-global-f32", []string{"local layers θ 10000", "scaling linear ×2", "each row × √32", "soft-cap 6"}},
}

// familyServer serves one family's checkpoint as its only model, rooms on.
func familyServer(t *testing.T, dir string) (*httptest.Server, *engine.Model) {
	t.Helper()
	m, err := engine.LoadModel(filepath.Join("..", "engine", "testdata", "arch", dir), "")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat, Rooms: room.RoomOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, m
}

func browserFamilies(t *testing.T) {
	// Run by TestBrowserLongest (e2e_longest_test.go) beside the other
	// longest browser tests, in go test's serial phase.
	for _, f := range archFamilies {
		t.Run(f.dir, func(t *testing.T) {
			t.Parallel()
			ts, m := familyServer(t, f.dir)
			t.Run("lab, class and model view", func(t *testing.T) { familyLabAndClass(t, ts, m, f.dir, f.view) })
			t.Run("lessons", func(t *testing.T) { familyLessons(t, ts, m) })
		})
	}
}

// familyLabAndClass: the presenter's seeded run in the lab draws the
// engine's tokens, and a student following it sees the same ones; then the
// presenter's tab opens the lab again and checks the family's model view
// (checkFamilyView, with the page's axe-core check).
func familyLabAndClass(t *testing.T, ts *httptest.Server, m *engine.Model, dir string, view []string) {
	const prompt, n = "The President said", 8
	_, evs := engineRun(t, m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0.9, TopP: 0.95, Seed: 3}, MaxNewTokens: n})
	var want []int
	for _, e := range evs {
		if e.Stage == session.StageSample {
			want = append(want, e.Sample.Chosen.ID)
		}
		if e.Stage == session.StageStop && e.Stop.Generated < len(want) {
			want = want[:e.Stop.Generated] // an end-of-text token ends the run unshown
		}
	}
	c := &classTabs{t: t, b: browsertest.New(t), t0: time.Now()}
	pres := c.b.Ctx
	c.must(pres, "1366×900", chromedp.EmulateViewport(1366, 900))
	ready := `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`
	c.must(pres, "open the lab", chromedp.Navigate(fmt.Sprintf("%s/lab?prompt=%s&n=%d&t=0.9&p=0.95&seed=3", ts.URL, strings.ReplaceAll(prompt, " ", "+"), n)))
	c.wait(pres, ready)
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	s := c.tab()
	c.must(s, "a student joins", chromedp.Navigate(ts.URL+"/join?code="+code))
	c.wait(s, `document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1'`)
	c.must(pres, "run to the end", c.click("#btn-run"))
	genIDs := `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(e => +e.dataset.id)`
	c.wait(pres, `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`)
	if got := evalJS[[]int](t, pres, genIDs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the lab drew %v, the engine %v", dir, got, want)
	}
	c.wait(s, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.getElementById('main').dataset.runState === 'stopped'`, len(want)))
	if got := evalJS[[]int](t, s, genIDs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the student sees %v, the engine drew %v", dir, got, want)
	}
	c.b.AssertNoJSErrors(t)
	checkFamilyView(t, c.b, ts, m, catalog.ModelCardFor(m), dir, view)
}

// familyLessons walks every section of every lesson on the family's model:
// each panel ends done, or in an error that names the model's limit.
func familyLessons(t *testing.T, ts *httptest.Server, m *engine.Model) {
	ls, err := lessons.Load(web.LessonValues(catalog.ModelCardFor(m)))
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	ctx := b.Ctx
	for _, l := range ls {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lessons/"+l.Slug)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](familyWalkJS)); err != nil {
			t.Fatal(err)
		}
		for s := 1; s <= len(l.Sections); s++ {
			rep, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ Errors, Limits []string }](fmt.Sprintf(`window.__familyWalk(%d)`, s), chromedp.EvalAwaitPromise))
			if err != nil {
				b.Screenshot(t, "families-lesson-failure")
				t.Fatalf("%s section %d (%s): %v", l.Slug, s, l.Sections[s-1].Heading, err)
			}
			for _, e := range rep.Errors {
				t.Errorf("%s section %d (%s): %s", l.Slug, s, l.Sections[s-1].Heading, e)
			}
			for _, e := range rep.Limits {
				t.Logf("%s section %d (%s): the model's limit: %s", l.Slug, s, l.Sections[s-1].Heading, e)
			}
		}
	}
	b.AssertNoJSErrors(t)
}

// familyWalkJS shows section n, waits for its panels and returns the
// errors that do not name a limit of the model.
const familyWalkJS = `window.__familyWalk = async (n) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  document.querySelectorAll("#toc a")[n - 1].click();
  const sec = document.querySelector("#section-" + n);
  const outs = () => [...sec.querySelectorAll("[data-testid=panel-out]")];
  const t0 = Date.now();
  while (!(sec && !sec.hidden && outs().every((o) => o.dataset.state === "done" || o.dataset.state === "error"))) {
    if (Date.now() - t0 > 60000) return { errors: ["timed out waiting for the panels: " + outs().map((o) => o.dataset.kind + " " + o.dataset.state).join(", ")], limits: [] };
    await sleep(40);
  }
  const limit = (o) => /context|longer than|too long|at most \d+ tokens/i.test(o.textContent), failed = outs().filter((o) => o.dataset.state === "error");
  const say = (o) => "panel " + o.dataset.kind + ": " + o.textContent.slice(0, 200);
  return { errors: failed.filter((o) => !limit(o)).map(say), limits: failed.filter(limit).map(say) };
}`
