package web_test

// e2e_lab_test.go: the lab and compare pages in headless Chromium: a run, reconnect, a GPT-2 model.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// labHandler is the web server with the default model (and its docs).
func labHandler(t testing.TB) (http.Handler, *engine.Model) {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	tr, err := models.Training()
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.AddDocs(m.Name, models.Docs(), &catalog.Training{Corpus: tr.Corpus, Tokens: tr.Tokens, Minutes: tr.Minutes,
		Hardware: tr.Hardware, ValLoss: tr.ValLoss, CapitalsRight: tr.CapitalsRight, CapitalsTotal: tr.CapitalsTotal}); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

func labServer(t testing.TB) (*httptest.Server, *engine.Model) {
	t.Helper()
	h, m := labHandler(t)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, m
}

// labReadyJS is true when the lab's run waits for the next command with
// everything it received drawn.
const labReadyJS = `document.getElementById('main').dataset.runState === 'ready' && document.body.dataset.busy === '0'`

// labBrowser is a lab server and a browser on it, with must: a failed step
// saves a screenshot (failure) and ends the test.
func labBrowser(t *testing.T, failure string) (*httptest.Server, *engine.Model, *browsertest.Browser, func(string, error)) {
	t.Helper()
	ts, m := labServer(t)
	b := browsertest.New(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, failure)
			t.Fatalf("%s: %v", what, err)
		}
	}
	return ts, m, b, must
}

func waitJS(ctx context.Context, expr string) error {
	var err error
	for try := 0; try < 3; try++ {
		// every 20 ms, not chromedp's default of every animation frame: a
		// requestAnimationFrame loop keeps the page producing frames while
		// it waits
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
		if !staleContext(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", expr, err)
	}
	return nil
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	for try := 0; try < 2 && staleContext(err); try++ {
		time.Sleep(100 * time.Millisecond)
		v, err = chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	}
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// staleContext reports the DevTools error of a script sent to the page's
// previous JavaScript context, which a navigation has just replaced
// (chromedp can hand out the old context id for a moment under load):
// the script never ran, so it is sent again.
func staleContext(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Cannot find context with specified id")
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
	t.Parallel()
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
	if txt := evalJS[string](t, ctx, `document.querySelector('[data-testid="embed-pos"]').textContent`); !strings.Contains(txt, fmt.Sprintf("%d numbers", m.Config.Dim)) {
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
	wantGen := eventIDs(want)
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
	// "Run to end" streams with detail_ms: most events arrive thin, and the
	// panels end on the last token's full numbers (the detail message)
	var lastLogits *session.LogitsInfo
	var lastSample *session.SampleInfo
	var lastPass *session.AppendInfo
	for _, e := range want {
		if e.Logits != nil {
			lastLogits = e.Logits
		}
		if e.Sample != nil {
			lastSample = e.Sample
		}
		if e.Append != nil && e.Append.Forwarded {
			lastPass = e.Append
		}
	}
	var wantTop []int
	for _, c := range lastLogits.Top {
		wantTop = append(wantTop, c.ID)
	}
	if got := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid="cand-row"]')].map(r => +r.dataset.id)`); fmt.Sprint(got) != fmt.Sprint(wantTop) {
		t.Errorf("after the run the candidates are %v, the engine's last step %v", got, wantTop)
	}
	if got := evalJS[string](t, ctx, `document.querySelector('[data-stat="position"]').textContent`); !strings.HasSuffix(got, fmt.Sprint(lastLogits.Pos)) {
		t.Errorf("after the run the logits panel shows %q, the engine's last logits are at position %d", got, lastLogits.Pos)
	}
	if got := evalJS[int](t, ctx, `+document.getElementById("sample-text").dataset.chosen`); got != lastSample.Chosen.ID {
		t.Errorf("after the run the sample panel shows token %d, the engine's last draw %d", got, lastSample.Chosen.ID)
	}
	if got := evalJS[string](t, ctx, `document.getElementById("pass-explain").textContent`); !strings.HasPrefix(got, fmt.Sprintf("Decode step %d: only the new position %d ", lastPass.Step+1, lastPass.Pos)) {
		t.Errorf("after the run the pass reads %q, the engine's last forward pass is step %d at position %d", got, lastPass.Step+1, lastPass.Pos)
	}
	if got := evalJS[int](t, ctx, `+document.querySelector('[data-testid="lens-table"]').dataset.pos`); got != lastPass.Pos {
		t.Errorf("after the run the logit lens is at position %d, the engine's last pass at %d", got, lastPass.Pos)
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
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
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
	t.Parallel()
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	_, want := engineRun(t, m, session.Config{Prompt: "The President said", Sampling: session.DefaultSampling(), MaxNewTokens: 8})
	wantGen := eventIDs(want)
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
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	gm, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
	if err != nil {
		t.Fatal(err)
	}
	dm, _ := models.Default()
	cat := catalog.NewEngineCatalog()
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
		if err := waitJS(ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, seq)); err != nil {
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

// labAt opens the lab with the query's settings and waits until the run
// has started.
func labAt(t *testing.T, b *browsertest.Browser, url string) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(b.Ctx, `!document.getElementById("btn-step").disabled && document.querySelector("main").dataset.runState === "ready"`); err != nil {
		b.Screenshot(t, "lab-start-failure")
		t.Fatal(err)
	}
}

// stepTo clicks "Next stage" until the page has drawn the event numbered seq.
func stepTo(t *testing.T, b *browsertest.Browser, seq int) {
	t.Helper()
	for {
		cur := evalJS[string](t, b.Ctx, `document.body.dataset.seq || "0"`)
		n, _ := strconv.Atoi(cur)
		if n >= seq {
			return
		}
		if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-step"]`))); err != nil {
			t.Fatal(err)
		}
		if err := waitJS(b.Ctx, fmt.Sprintf(`document.body.dataset.seq === "%d" && document.body.dataset.busy === "0"`, n+1)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserLabNumbers: the candidates table shows the engine's three
// probabilities under their labels, ranks from 1; the probability chart's
// cut-off line sits between the engine's last kept rank and the next one;
// the CDF reaches the last kept rank at 1; the attention heatmap has one
// map per head with the prompt's tokens as rows and columns.
func TestBrowserLabNumbers(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	for _, tc := range []struct {
		name string
		p    session.SamplingParams
	}{
		{"top-k 5", session.SamplingParams{Temperature: 0.8, TopK: 5, TopP: 1, Seed: 1}},
		{"top-p 0.5", session.SamplingParams{Temperature: 1.2, TopP: 0.5, Seed: 2}},
		{"greedy", session.SamplingParams{Temperature: 0, TopP: 1, Seed: 3}},
		{"min-p 0.1", session.SamplingParams{Temperature: 1, TopP: 1, MinP: 0.1, Seed: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prompt := "The President said that"
			_, want := engineRun(t, m, session.Config{Prompt: prompt, Sampling: tc.p, MaxNewTokens: 2, AllAttention: true})
			url := fmt.Sprintf("%s/lab?prompt=The%%20President%%20said%%20that&n=2&t=%g&k=%d&p=%g&minp=%g&seed=%d", ts.URL, tc.p.Temperature, tc.p.TopK, tc.p.TopP, tc.p.MinP, tc.p.Seed)
			labAt(t, b, url)
			stepTo(t, b, 3)
			prefill := want[2].Prefill
			if got := evalJS[[]int](t, ctx, `[+attn.dataset.heads, +attn.dataset.rows, +attn.dataset.cols]`); fmt.Sprint(got) != fmt.Sprint([]int{m.Config.NHeads, prefill.Positions, prefill.Positions}) {
				t.Errorf("prefill heatmap heads/rows/cols %v; want %d heads of %d×%d", got, m.Config.NHeads, prefill.Positions, prefill.Positions)
			}
			stepTo(t, b, 4)
			lg := want[3].Logits
			rows := evalJS[[][]string](t, ctx, `[...document.querySelectorAll('[data-testid="cand-row"]')].map(r => [...r.children].map(td => td.textContent))`)
			if len(rows) != len(lg.Top) {
				t.Fatalf("%d candidate rows, engine lists %d", len(rows), len(lg.Top))
			}
			for i, tp := range lg.Top {
				kept := "cut"
				if tp.Kept {
					kept = jsFixed4(tp.ProbKept)
				}
				w := []string{strconv.Itoa(tp.Rank + 1), "", strconv.Itoa(tp.ID), jsFixed4(tp.Logit), jsFixed4(tp.Prob), jsFixed4(tp.ProbT), kept}
				r := rows[i]
				r[1], w[1] = "", ""
				if fmt.Sprint(r) != fmt.Sprint(w) {
					t.Errorf("row %d: page %v, engine %v", i, r, w)
				}
			}
			heads := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#cands th')].map(th => th.textContent)`)
			if !strings.Contains(heads[4], "T=1") || !strings.Contains(heads[5], "after temperature") || !strings.Contains(heads[6], "after the cut") {
				t.Errorf("probability columns are not labelled: %q", heads)
			}
			// the cut-off line: below the engine's last kept rank, above the next
			if lg.Kept < len(lg.Top) {
				geo := evalJS[[]float64](t, ctx, fmt.Sprintf(`(() => {
					const line = document.querySelector('#chart-probs [data-testid="cutoff-line"] line').getBoundingClientRect();
					const row = r => document.querySelector('#chart-probs g.ch-row[data-rank="' + r + '"]').getBBox();
					const svg = document.querySelector('#chart-probs svg').getBoundingClientRect();
					const a = row(%d), b = row(%d);
					return [line.top - svg.top, a.y + a.height, b.y, +document.querySelector('#chart-probs [data-testid="cutoff-line"]').dataset.after];
				})()`, lg.Kept, lg.Kept+1))
				if int(geo[3]) != lg.Kept || geo[0] < geo[1] || geo[0] > geo[2] {
					t.Errorf("cut-off line after %v rows at y=%.1f; engine keeps %d: rank %d ends at %.1f, rank %d starts at %.1f", geo[3], geo[0], lg.Kept, lg.Kept, geo[1], lg.Kept+1, geo[2])
				}
			} else {
				note := evalJS[string](t, ctx, `document.getElementById("probs-note").textContent`)
				if !strings.Contains(note, fmt.Sprintf("after rank %d of", lg.Kept)) {
					t.Errorf("every listed candidate is kept (%d kept) but the note says %q", lg.Kept, note)
				}
			}
			stepTo(t, b, 5)
			sm := want[4].Sample
			cdf := evalJS[[]float64](t, ctx, `[+document.getElementById("chart-cdf").dataset.lastRank, +document.getElementById("chart-cdf").dataset.lastCum]`)
			if int(cdf[0]) != lg.Kept || cdf[1] < 0.9999 || cdf[1] > 1.0001 {
				t.Errorf("CDF ends at rank %v with %v; the engine kept %d candidates", cdf[0], cdf[1], lg.Kept)
			}
			txt := evalJS[string](t, ctx, `document.getElementById("sample-text").textContent`)
			if !strings.Contains(txt, fmt.Sprintf("rank %d, p after the cut (the draw uses this) %.4f", sm.Chosen.Rank+1, sm.Chosen.ProbKept)) {
				t.Errorf("sample text %q lacks the engine's rank %d and p %.4f", txt, sm.Chosen.Rank+1, sm.Chosen.ProbKept)
			}
			stepTo(t, b, 6)
			// the decode step's heatmap: one query row against every position
			if got := evalJS[[]int](t, ctx, `[+attn.dataset.heads, +attn.dataset.rows, +attn.dataset.cols]`); fmt.Sprint(got) != fmt.Sprint([]int{m.Config.NHeads, 1, prefill.Positions + 1}) {
				t.Errorf("decode heatmap heads/rows/cols %v", got)
			}
		})
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabForceSearch: a token far below the listed candidates is
// found by the search box (by its text, then by its id) and forced.
func TestBrowserLabForceSearch(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	prompt := "The President said that"
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.DefaultSampling(), MaxNewTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Advance(context.Background(), session.UntilStage, nil); err != nil {
		t.Fatal(err)
	}
	for s.Next() != session.StageSample {
		if _, err := s.Advance(context.Background(), session.UntilStage, nil); err != nil {
			t.Fatal(err)
		}
	}
	// a word-like token ranked beyond the top 20, chosen from the engine's own order
	d := session.NewDistribution(s.CurrentLogits(), session.DefaultSampling())
	target := -1
	var text string
	for r := 100; r < len(d.Sorted); r++ {
		id := d.Sorted[r].ID
		tx := string(m.Tokenizer.TokenBytes(id))
		if len(strings.TrimSpace(tx)) >= 4 && !m.Tokenizer.IsSpecial(id) && strings.IndexFunc(tx, func(r rune) bool { return r > 127 || r == '<' }) < 0 {
			target, text = id, tx
			break
		}
	}
	if target < 0 {
		t.Fatal("no word-like token beyond rank 100")
	}
	t.Logf("forcing %q (id %d) at rank %d", text, target, d.Rank(target)+1)
	for _, q := range []string{text, strconv.Itoa(target)} {
		labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said%20that&n=4")
		stepTo(t, b, 4)
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="force-search"]`), q)); err != nil {
			t.Fatal(err)
		}
		hit := fmt.Sprintf(`[data-testid="force-hit"][data-id="%d"]`, target)
		if err := waitJS(ctx, fmt.Sprintf(`!!document.querySelector('%s')`, hit)); err != nil {
			t.Fatalf("search %q: %v; results: %s", q, err, evalJS[string](t, ctx, `document.getElementById("force-results").textContent`))
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(hit))); err != nil {
			t.Fatal(err)
		}
		if err := waitJS(ctx, tokenCountJS+` === 1 && `+pageIdleJS); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[int](t, ctx, `+document.querySelector('[data-testid="gen-tok"]').dataset.id`); got != target {
			t.Errorf("search %q: forced token is %d, want %d", q, got, target)
		}
		if got := evalJS[string](t, ctx, `document.getElementById("sample-text").textContent`); !strings.Contains(got, "You forced this token") || !strings.Contains(got, fmt.Sprintf("rank %d,", d.Rank(target)+1)) {
			t.Errorf("sample text %q: want the forced token at the engine's rank %d", got, d.Rank(target)+1)
		}
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabBytes: a character the tokenizer splits across tokens
// shows as byte chips (one <XX> per byte the engine's token covers) and
// joined in the text.
func TestBrowserLabBytes(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	for _, text := range []string{"café", "naïve café 🙂"} {
		toks, err := m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		labAt(t, b, ts.URL+"/lab?n=2&prompt="+url.QueryEscape(text))
		stepTo(t, b, 1)
		chips := evalJS[[][]string](t, ctx, `[...document.querySelectorAll('[data-testid="chip"]')].map(c => [c.dataset.id, c.dataset.bytes || "", c.querySelector(".chip-text").textContent])`)
		if len(chips) != len(toks) {
			t.Fatalf("%q: %d chips, engine %d tokens", text, len(chips), len(toks))
		}
		partial := 0
		for i, tk := range toks {
			if chips[i][0] != strconv.Itoa(tk.ID) {
				t.Errorf("%q chip %d: id %s, engine %d", text, i, chips[i][0], tk.ID)
			}
			if !tk.Partial {
				continue
			}
			partial++
			var want strings.Builder
			for _, c := range []byte(text[tk.Start:tk.End]) {
				fmt.Fprintf(&want, "<%02X>", c)
			}
			if chips[i][1] != want.String() || chips[i][2] != want.String() {
				t.Errorf("%q chip %d (part of a character): shows %q, bytes %q; want %q", text, i, chips[i][2], chips[i][1], want.String())
			}
		}
		if src := evalJS[string](t, ctx, `document.getElementById("source-text").textContent`); src != strings.ReplaceAll(text, " ", "␣") {
			t.Errorf("source text %q, want %q joined", src, text)
		}
		t.Logf("%q: %d tokens, %d of them parts of a character", text, len(toks), partial)
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabStop: Stop shows "cancelled" at once (in the same task as
// the click), the server's stop confirms it, and nothing is left running.
func TestBrowserLabStop(t *testing.T) {
	t.Parallel()
	ts := slowLabServer(t, 2*time.Millisecond)
	b := browsertest.New(t)
	ctx := b.Ctx
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said&n=250&t=0.8&p=0.9")
	// Stop as soon as the first token is drawn: at the engine's speed the
	// whole run takes tens of ms, so a fixed delay could come after its end
	res, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`new Promise(res => {
		const gen = document.getElementById("gen");
		const obs = new MutationObserver(() => {
			if (+gen.dataset.count < 1) return;
			obs.disconnect();
			document.getElementById("btn-cancel").click();
			res([document.getElementById("stop-text").dataset.reason || "", document.querySelector("main").dataset.runState]);
		});
		obs.observe(gen, { attributes: true, childList: true, subtree: true });
		document.getElementById("btn-run").click();
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != "cancelled" || res[1] != "stopped" {
		t.Errorf("right after Stop: reason %q, run state %q; want cancelled, stopped", res[0], res[1])
	}
	if err := waitJS(ctx, pageIdleJS); err != nil {
		t.Fatal(err)
	}
	got := evalJS[[]string](t, ctx, `[document.getElementById("stop-text").dataset.reason, document.querySelector("main").dataset.runState, document.getElementById("stop-text").textContent]`)
	if got[0] != "cancelled" || got[1] != "stopped" || strings.Contains(got[2], "cancelled") {
		t.Errorf("after the server's stop: %q (the text should say it in words)", got)
	}
	n := evalJS[int](t, ctx, tokenCountJS)
	if count := evalJS[string](t, ctx, `document.getElementById("gen").dataset.count`); count != strconv.Itoa(n) || n >= 250 {
		t.Errorf("data-count %s, %d tokens shown (of at most 250)", count, n)
	}
	if evalJS[bool](t, ctx, `!document.getElementById("btn-step").disabled || !document.getElementById("btn-run").disabled`) {
		t.Error("step buttons are live after the run stopped")
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabRejectedStart: a Start the server refuses leaves no live
// run: the buttons are disabled, the error is plain English, and the old
// run's panels are gone.
func TestBrowserLabRejectedStart(t *testing.T) {
	t.Parallel()
	ts, m := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said&n=8")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, tokenCountJS+` === 1 && `+pageIdleJS); err != nil {
		t.Fatal(err)
	}
	tooMany := m.Config.SeqLen + 1
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("max-new").value = "%d"`, tooMany)),
		chromedp.Click(chromedp.CSS(`[data-testid="btn-start"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.getElementById("status").classList.contains("error")`); err != nil {
		t.Fatal(err)
	}
	st := evalJS[[]any](t, ctx, `[document.querySelector("main").dataset.runState, document.getElementById("status").textContent,
		["btn-step", "btn-token", "btn-run", "btn-rewind", "btn-reset", "btn-cancel"].every(id => document.getElementById(id).disabled), `+tokenCountJS+`]`)
	if st[0] != "idle" || st[2] != true || st[3].(float64) != 0 {
		t.Errorf("after a rejected Start: run state %v, all buttons disabled %v, %v tokens shown", st[0], st[2], st[3])
	}
	msg := st[1].(string)
	if !strings.Contains(msg, strconv.Itoa(tooMany)) || strings.Contains(msg, "bad_request") || strings.Contains(msg, "max_new_tokens") {
		t.Errorf("error message %q: want plain English naming %d", msg, tooMany)
	}
	// keyboard shortcuts do not drive the old run either
	chromedp.Do(ctx, chromedp.KeyEvent("t"))
	time.Sleep(200 * time.Millisecond)
	if n := evalJS[int](t, ctx, tokenCountJS); n != 0 {
		t.Errorf("a key press after the rejected Start drew %d tokens", n)
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabPhone: at 390 px wide the lab never scrolls sideways (before
// and after a run), the stepping controls stay on screen, and every
// control is at least 24×24 px.
func TestBrowserLabPhone(t *testing.T) {
	t.Parallel()
	ts, _ := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	b.SetViewport(t, 390, 844, true)
	overflow := `document.documentElement.scrollWidth - document.documentElement.clientWidth`
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said%2C%20and%20the%20people%20of%20the%20United%20States&n=40")
	if w := evalJS[float64](t, ctx, overflow); w > 0 {
		t.Errorf("before the run the page is %v px wider than the screen", w)
	}
	stepTo(t, b, 6)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-run"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.querySelector("main").dataset.runState === "stopped" && `+pageIdleJS); err != nil {
		t.Fatal(err)
	}
	if w := evalJS[float64](t, ctx, overflow); w > 0 {
		wide := evalJS[[]string](t, ctx, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 8).map(e => e.tagName + "#" + e.id + "." + e.className)`)
		t.Errorf("after a run the page is %v px wider than the screen: %v", w, wide)
	}
	// no chart text is cut off at the chart's edges (titles wrap on a phone)
	if cut := evalJS[[]string](t, ctx, `[...document.querySelectorAll(".chart svg text")].filter(e => {
		const s = e.ownerSVGElement.getBoundingClientRect(), r = e.getBoundingClientRect();
		return r.width > 0 && (r.left < s.left - 1 || r.right > s.right + 1) }).slice(0, 8).map(e => e.textContent)`); len(cut) > 0 {
		t.Errorf("chart texts cut off at the chart's edge at 390 px: %q", cut)
	}
	small := evalJS[[]string](t, ctx, `[...document.querySelectorAll("main button, main select, main input, main textarea, main summary, main .pipeline a, main [data-testid=cand-row]")]
		.filter(e => e.offsetParent !== null).map(e => [e, e.getBoundingClientRect()]).filter(([e, r]) => r.height < 24 || r.width < 24)
		.map(([e, r]) => e.tagName + "#" + e.id + " " + Math.round(r.width) + "x" + Math.round(r.height))`)
	if len(small) > 0 {
		t.Errorf("tap targets under 24×24 px: %v", small)
	}
	// the stepping bar stays in view when the page scrolls to a panel
	chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("panel-timing").scrollIntoView()`))
	if top := evalJS[float64](t, ctx, `document.getElementById("runbar").getBoundingClientRect().top`); top < -1 || top > 10 {
		t.Errorf("stepping bar at y=%v after scrolling, want stuck to the top", top)
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserLabLiveTiming: time to first token shows after the first
// token and the inter-token chart grows with each token, before the run
// stops.
func TestBrowserLabLiveTiming(t *testing.T) {
	t.Parallel()
	ts, _ := labServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	labAt(t, b, ts.URL+"/lab?prompt=The%20President%20said&n=20")
	for i := 1; i <= 3; i++ {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))); err != nil {
			t.Fatal(err)
		}
		if err := waitJS(ctx, fmt.Sprintf(`%s === %d && %s`, tokenCountJS, i, pageIdleJS)); err != nil {
			t.Fatal(err)
		}
		ttft := evalJS[bool](t, ctx, `!!document.querySelector('[data-testid="ttft-text"]')`)
		points := evalJS[string](t, ctx, `document.getElementById("chart-itl").dataset.points`)
		if !ttft || points != strconv.Itoa(i-1) {
			t.Errorf("after %d tokens: time to first token shown %v, %s inter-token latencies drawn (want %d)", i, ttft, points, i-1)
		}
	}
	if evalJS[string](t, ctx, `document.querySelector("main").dataset.runState`) != "ready" {
		t.Error("run state is not ready between tokens")
	}
	b.AssertNoJSErrors(t)
}

// jsFixed4 formats v as the page does: the JSON number (float32's shortest
// decimal) parsed as a float64, then toFixed(4). Formatting the float32's
// exact value instead differs when it sits on a rounding boundary
// (3.17135 is 3.1713500022… as a float32 but 3.1713499999… in float64).
func jsFixed4(v float32) string {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return strconv.FormatFloat(f, 'f', 4, 64)
}

// eventIDs is the token ids a run's events appended, in order.
func eventIDs(evs []*session.Event) []int {
	var ids []int
	for _, e := range evs {
		if e.Append != nil {
			ids = append(ids, e.Append.ID)
		}
	}
	return ids
}

// slowCatalog runs its catalog's models at most one stage per `per`: at
// the engine's own speed the default model's whole run takes tens of ms,
// less than a click's round trip, so tests of Stop and Pause at "engine
// speed" run on it (the page cannot tell a slower engine apart).
type slowCatalog struct {
	catalog.Catalog
	per time.Duration
}

func (c slowCatalog) NewRun(model string, cfg session.Config) (catalog.Run, error) {
	run, err := c.Catalog.NewRun(model, cfg)
	if err == nil {
		run.Runner = slowRunner{run.Runner, c.per}
	}
	return run, err
}

type slowRunner struct {
	catalog.Runner
	per time.Duration
}

func (r slowRunner) Advance(ctx context.Context, until session.Until, emit func(*session.Event) bool) ([]*session.Event, error) {
	select {
	case <-time.After(r.per):
	case <-ctx.Done():
	}
	return r.Runner.Advance(ctx, until, emit)
}

// slowLabServer is labServer on a slowCatalog of per per stage.
func slowLabServer(t testing.TB, per time.Duration) *httptest.Server {
	t.Helper()
	cat, err := catalog.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: slowCatalog{cat, per}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}
