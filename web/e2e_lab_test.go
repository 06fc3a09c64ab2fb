package web_test

// e2e_lab_test.go: the lab and compare pages in headless Chromium: a run, reconnect, a GPT-2 model.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
)

func labServer(t testing.TB) (*httptest.Server, *engine.Model) {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := web.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	tr, err := models.Training()
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.AddDocs(m.Name, models.Docs(), &web.Training{Corpus: tr.Corpus, Tokens: tr.Tokens, Minutes: tr.Minutes,
		Hardware: tr.Hardware, ValLoss: tr.ValLoss, CapitalsRight: tr.CapitalsRight, CapitalsTotal: tr.CapitalsTotal}); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, m
}

func waitJS(ctx context.Context, expr string) error {
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", expr, err)
	}
	return nil
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// engineRun mirrors what the lab does, through the engine directly.
func engineRun(t *testing.T, m *engine.Model, cfg session.Config) (*session.Session, []*session.Event) {
	t.Helper()
	s, err := session.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Advance(context.Background(), session.UntilStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, evs
}

func TestBrowserLab(t *testing.T) {
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	prompt := "The President said that"
	cfg := session.Config{Prompt: prompt, Sampling: session.DefaultSampling(), MaxNewTokens: 12}
	_, want := engineRun(t, m, cfg)
	stage := func(s session.Stage, i int) *session.Event {
		n := 0
		for _, e := range want {
			if e.Stage == s {
				if n == i {
					return e
				}
				n++
			}
		}
		t.Fatalf("no %s event %d", s, i)
		return nil
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "lab-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="btn-start"]`))))
	must(waitJS(ctx, `document.getElementById("status").textContent.startsWith("Connected")`))
	must(chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("prompt").value = ""; document.getElementById("max-new").value = "12"`),
		chromedp.SendKeys(chromedp.CSS(`#prompt`), prompt),
		chromedp.Click(chromedp.CSS(`[data-testid="btn-start"]`)),
	))
	must(waitJS(ctx, `!document.getElementById("btn-step").disabled`))
	step := func(seq int) {
		t.Helper()
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, seq)))
	}

	// 1 tokenize: chips carry the engine's ids
	step(1)
	ids := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="chip"]')].map(c => +c.dataset.id)`)
	var wantIDs []int
	for _, tk := range stage(session.StageTokenize, 0).Tokenize.Tokens {
		wantIDs = append(wantIDs, tk.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(wantIDs) {
		t.Errorf("token chips %v, engine %v", ids, wantIDs)
	}
	if got := evalJS[int](t, ctx, `document.querySelectorAll('.chip.added').length`); got != 1 {
		t.Errorf("%d chips marked added, want 1 (BOS)", got)
	}
	// 2 embed
	step(2)
	if txt := evalJS[string](t, ctx, `document.querySelector('[data-testid="embed-pos"]').textContent`); !strings.Contains(txt, "128 numbers") {
		t.Errorf("embed view %q", txt)
	}
	// 3 prefill: every prompt position in one pass
	step(3)
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#positions .pos.pass').length`); n != len(wantIDs) {
		t.Errorf("%d positions marked in the prefill pass, want %d", n, len(wantIDs))
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#layers .layer-row').length`); n != m.Config.NLayers {
		t.Errorf("%d layer rows", n)
	}
	// 4 logits: top candidate and its raw logit equal the engine's
	step(4)
	lg := stage(session.StageLogits, 0).Logits
	top := evalJS[[]string](t, ctx, `[...document.querySelector('[data-testid="cand-row"]').children].map(td => td.textContent)`)
	if top[2] != strconv.Itoa(lg.Top[0].ID) || top[3] != fmt.Sprintf("%.4f", lg.Top[0].Logit) {
		t.Errorf("top candidate row %v, engine id %d logit %.4f", top, lg.Top[0].ID, lg.Top[0].Logit)
	}
	// 5 sample
	step(5)
	if got := evalJS[string](t, ctx, `document.getElementById("sample-text").dataset.chosen`); got != strconv.Itoa(stage(session.StageSample, 0).Sample.Chosen.ID) {
		t.Errorf("sampled %s, engine %d", got, stage(session.StageSample, 0).Sample.Chosen.ID)
	}
	// ranks count from 1 on the page; the engine's are 0-based
	if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="chosen-rank"]').textContent`); !strings.HasSuffix(got, fmt.Sprintf("at rank %d", stage(session.StageSample, 0).Sample.Chosen.Rank+1)) {
		t.Errorf("logits panel shows %q, engine rank %d (0-based)", got, stage(session.StageSample, 0).Sample.Chosen.Rank)
	}
	// 6 append: KV cache grows by one
	step(6)
	if got := evalJS[string](t, ctx, `document.getElementById("kv-grid").dataset.cacheLen`); got != strconv.Itoa(stage(session.StageAppend, 0).Append.CacheLen) {
		t.Errorf("kv grid cache len %s", got)
	}
	b.Screenshot(t, "lab-first-token")
	// next token ×2, then run to the end
	for i := 0; i < 2; i++ {
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, i+2)))
	}
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-run"]`))))
	must(waitJS(ctx, `document.getElementById("stop-text").dataset.reason !== undefined && document.body.dataset.busy === "0"`))
	gen := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(c => +c.dataset.id)`)
	var wantGen []int
	for _, e := range want {
		if e.Append != nil {
			wantGen = append(wantGen, e.Append.ID)
		}
	}
	if fmt.Sprint(gen) != fmt.Sprint(wantGen) {
		t.Errorf("generated %v, engine %v", gen, wantGen)
	}
	stop := want[len(want)-1].Stop
	if got := evalJS[string](t, ctx, `document.getElementById("stop-text").dataset.reason`); got != stop.Reason {
		t.Errorf("stop reason %s, engine %s", got, stop.Reason)
	}
	if v := evalJS[string](t, ctx, `document.querySelector('[data-testid="checksum-verdict"]').textContent`); !strings.HasPrefix(v, "unchanged") {
		t.Errorf("checksum verdict %q", v)
	}
	if txt := evalJS[string](t, ctx, `document.querySelector('[data-testid="ttft-text"]').textContent`); !strings.Contains(txt, "Time to first token") {
		t.Errorf("timing %q", txt)
	}
	b.Screenshot(t, "lab")

	// rewind one token, then force the second candidate
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-rewind"]`))))
	must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, len(wantGen)-1)))
	forced := evalJS[int](t, ctx, `+document.querySelectorAll('[data-testid="cand-row"]')[1].dataset.id`)
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="cand-row"][data-id="%d"]`, forced)))))
	must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, len(wantGen))))
	last := evalJS[int](t, ctx, `+[...document.querySelectorAll('[data-testid="gen-tok"]')].pop().dataset.id`)
	if last != forced {
		t.Errorf("after forcing %d the last token is %d", forced, last)
	}
	b.AssertNoJSErrors(t)
}

func TestBrowserCompare(t *testing.T) {
	ts, m := labServer(t)
	b := browsertest.New(t)
	prompt := "The President said that"
	p := session.DefaultSampling()
	p.Seed = 3
	g, _ := engineRun(t, m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 16})
	s, _ := engineRun(t, m, session.Config{Prompt: prompt, Sampling: p, MaxNewTokens: 16})
	first := -1
	gg, sg := g.Generated(), s.Generated()
	for i := 0; i < max(len(gg), len(sg)); i++ {
		if i >= len(gg) || i >= len(sg) || gg[i] != sg[i] {
			first = i
			break
		}
	}
	url := ts.URL + "/compare?prompt=" + strings.ReplaceAll(prompt, " ", "%20") + "&t=0.8&p=0.9&seed=3&n=16"
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(b.Ctx, `document.body.dataset.compare === "done"`); err != nil {
		b.Screenshot(t, "compare-failure")
		t.Fatal(err)
	}
	got := evalJS[string](t, b.Ctx, `document.getElementById("diverge").dataset.first`)
	if got != strconv.Itoa(first) {
		t.Errorf("page marks first divergence at %s, the engine's traces diverge at %d", got, first)
	}
	if n := evalJS[string](t, b.Ctx, `document.getElementById("chart-samples").dataset.n`); n != "200" {
		t.Errorf("sample histogram n = %q", n)
	}
	b.Screenshot(t, "compare")
	b.AssertNoJSErrors(t)
}

// TestBrowserLabReconnect: when the connection drops mid-run, the lab
// reconnects and restores the run with one resume message, so the student
// loses nothing.
func TestBrowserLabReconnect(t *testing.T) {
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	_, want := engineRun(t, m, session.Config{Prompt: "The President said", Sampling: session.DefaultSampling(), MaxNewTokens: 8})
	var wantGen []int
	for _, e := range want {
		if e.Append != nil {
			wantGen = append(wantGen, e.Append.ID)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "reconnect-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=8&t=0.8&p=0.9&seed=42")))
	must(waitJS(ctx, `!document.getElementById("btn-token").disabled`))
	for i := 1; i <= 3; i++ {
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
		must(waitJS(ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="gen-tok"]').length === %d && document.body.dataset.busy === "0"`, i)))
	}
	// drop the connection, recording every message the page sends after it
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.sentTypes = [];
		const send = WebSocket.prototype.send;
		WebSocket.prototype.send = function (d) { window.sentTypes.push(JSON.parse(d).type); return send.call(this, d); };
		window.ISClients[0].ws.close()`)))
	must(waitJS(ctx, `document.body.dataset.restored === "1" && document.body.dataset.busy === "0"`))
	if sent := evalJS[[]string](t, ctx, `window.sentTypes`); fmt.Sprint(sent) != "[resume]" {
		t.Errorf("after the drop the page sent %v, want exactly one resume", sent)
	}
	gen := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(c => +c.dataset.id)`)
	if fmt.Sprint(gen) != fmt.Sprint(wantGen[:3]) {
		t.Fatalf("after reconnect the page shows %v, want %v", gen, wantGen[:3])
	}
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
	must(waitJS(ctx, `document.querySelectorAll('[data-testid="gen-tok"]').length === 4 && document.body.dataset.busy === "0"`))
	if got := evalJS[int](t, ctx, `+[...document.querySelectorAll('[data-testid="gen-tok"]')].pop().dataset.id`); got != wantGen[3] {
		t.Errorf("the run continued with %d, the engine's next token is %d", got, wantGen[3])
	}

	// a cancelled run is restored to the token where it was cancelled
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=250&t=0.8&p=0.9&seed=42")))
	must(waitJS(ctx, `!document.getElementById("btn-run").disabled`))
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("btn-run").click(); setTimeout(() => document.getElementById("btn-cancel").click(), 15)`)))
	must(waitJS(ctx, `document.getElementById("stop-text").dataset.reason !== undefined && document.body.dataset.busy === "0"`))
	reason := evalJS[string](t, ctx, `document.getElementById("stop-text").dataset.reason`)
	before := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(c => +c.dataset.id)`)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.body.dataset.restored = ""; window.ISClients[0].ws.close()`)))
	must(waitJS(ctx, `document.body.dataset.restored === "1" && document.body.dataset.busy === "0"`))
	after := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="gen-tok"]')].map(c => +c.dataset.id)`)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("run stopped (%s) at %d tokens; after reconnect %d tokens", reason, len(before), len(after))
	}
	t.Logf("run stopped by %s after %d tokens, restored %d", reason, len(before), len(after))
	b.AssertNoJSErrors(t)
}

// TestBrowserLabGPT2: a GPT-2-family model shows its learned position
// vectors in the embeddings panel (the default model uses RoPE instead).
func TestBrowserLabGPT2(t *testing.T) {
	gm, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
	if err != nil {
		t.Fatal(err)
	}
	dm, _ := models.Default()
	cat := web.NewEngineCatalog()
	cat.Add(dm, "", true)
	cat.Add(gm, "", false)
	srv, _ := web.New(web.Options{Catalog: cat})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b := browsertest.New(t)
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?model=tiny-gpt2&prompt=Hello%20world&n=3")); err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 2; seq++ {
		if err := waitJS(ctx, `!document.getElementById("btn-step").disabled`); err != nil {
			t.Fatal(err)
		}
		chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`)))
		if err := waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d"`, seq)); err != nil {
			t.Fatal(err)
		}
	}
	labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#embed-view .strip-label')].map(e => e.textContent)`)
	if len(labels) != 3 || !strings.Contains(labels[1], "position vector") {
		t.Errorf("GPT-2 embedding strips %q", labels)
	}
	ids := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="chip"]')].map(c => +c.dataset.id)`)
	if fmt.Sprint(ids) != "[50256 15496 995]" {
		t.Errorf("GPT-2 chips %v", ids)
	}
	b.AssertNoJSErrors(t)
}
