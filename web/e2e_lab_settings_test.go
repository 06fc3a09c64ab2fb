package web_test

// e2e_lab_settings_test.go: settings edited mid-run apply where the run
// is. At the logits stage a new temperature, top-k and seed change the
// numbers shown at once, the share link says them, and the tokens from
// then on are a fresh run's with those settings along the same earlier
// tokens (computed here with the engine). A changed prompt says it needs
// Start.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferscope/inferscope/engine/session"
)

func TestBrowserLabSettingsMidRun(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m, b, must := labBrowser(t, "lab-settings-failure")
	ctx := b.Ctx
	ready := labReadyJS
	must("open the lab", chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=Once+upon+a+time&n=12&t=0.8&p=0.9&seed=42")))
	must("ready", waitJS(ctx, ready))
	for i := 1; i <= 2; i++ {
		must("a token", chromedp.Do(ctx, chromedp.KeyEvent("t")))
		must("token", waitJS(ctx, ready+fmt.Sprintf(` && document.getElementById('gen').dataset.count === '%d'`, i)))
	}
	must("the logits stage", chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)))
	must("logits", waitJS(ctx, ready+` && document.querySelector('#timeline li.done').dataset.stage === 'logits'`))
	set := func(id, v string) {
		must("set "+id, chromedp.Do(ctx, chromedp.SetValue("#"+id, v), chromedp.Evaluate[chromedp.Void](`document.getElementById('`+id+`').dispatchEvent(new Event('change'))`)))
	}
	set("temperature", "1.5")
	set("top-k", "20")
	set("seed", "11")
	// each change is its own message, acknowledged in turn: wait for top-k's (the chain's top-k
	// row keeps at most 20), not only the temperature's
	must("applied", waitJS(ctx, ready+` && /New settings \(T=1\.5\)/.test(document.getElementById('status').textContent) && /T=1\.5/.test(document.getElementById('cands').textContent)`+
		` && [...document.querySelectorAll('[data-testid=chain-table] tbody tr')].some((r) => r.dataset.rule === 'top-k' && +r.dataset.kept <= 20)`))
	// the sampler chain, step by step, as the engine applied it at this step
	chain := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid=chain-table] tbody tr')].map((r) => r.dataset.rule + ":" + r.dataset.kept)`)
	first := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid=gen-tok]')].map((e) => +e.dataset.id)`)
	ref, err := session.New(m, session.Config{Prompt: "Once upon a time", Sampling: session.SamplingParams{Temperature: 1.5, TopK: 20, TopP: 0.9, Seed: 11}, MaxNewTokens: 12})
	if err != nil {
		t.Fatal(err)
	}
	var atLogits *session.LogitsInfo
	for i := 0; atLogits == nil; {
		if ref.Next() == session.StageSample && i < len(first) {
			ref.Force(first[i])
			i++
		}
		ev, err := ref.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Logits != nil && i == len(first) {
			atLogits = ev.Logits
		}
	}
	var want []string
	for _, c := range atLogits.Chain {
		want = append(want, fmt.Sprintf("%s:%d", c.Rule, c.Kept))
	}
	if fmt.Sprint(chain) != fmt.Sprint(want) {
		t.Errorf("the lab's sampler chain %v, the engine's %v", chain, want)
	}
	must("scroll to the chain", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('cut-chain').scrollIntoView({ block: 'center' })`)))
	for _, dark := range []bool{false, true} {
		b.SetDark(t, dark)
		b.ViewportScreenshot(t, fmt.Sprintf("lab-sampler-chain-dark-%v", dark))
		b.AssertAccessible(t, fmt.Sprintf("the logits panel with the sampler chain (dark %v)", dark))
	}
	b.SetDark(t, false)
	if h := evalJS[string](t, ctx, `document.getElementById('share').href`); !strings.Contains(h, "t=1.5") || !strings.Contains(h, "seed=11") {
		t.Errorf("the share link %q does not say the settings on screen", h)
	}
	must("run to the end", chromedp.Do(ctx, chromedp.KeyEvent("r")))
	must("stopped", waitJS(ctx, `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`))
	got := evalJS[[]int](t, ctx, `[...document.querySelectorAll('[data-testid=gen-tok]')].map((e) => +e.dataset.id)`)

	// a fresh run with the new settings, forced along the first two tokens
	p := session.SamplingParams{Temperature: 1.5, TopK: 20, TopP: 0.9, Seed: 11}
	s, err := session.New(m, session.Config{Prompt: "Once upon a time", Sampling: p, MaxNewTokens: 12})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range got[:2] {
		for s.Next() != session.StageSample {
			s.Step(context.Background())
		}
		if err := s.Force(id); err != nil {
			t.Fatal(err)
		}
		s.Step(context.Background()) // the sample stage takes the forced token
	}
	if _, err := s.Advance(context.Background(), session.UntilStop, nil); err != nil {
		t.Fatal(err)
	}
	if want := s.Generated(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the lab's tokens after the change %v\na fresh run with the new settings along the same two tokens %v", got, want)
	}

	// a new prompt needs a new run, and says so
	if !evalJS[bool](t, ctx, `document.getElementById('form-changed').hidden`) {
		t.Error("'press Start to apply' shows before anything needs Start")
	}
	must("edit the prompt", chromedp.Do(ctx, chromedp.SendKeys("#prompt", " far away")))
	must("changed", waitJS(ctx, `!document.getElementById('form-changed').hidden`))
	b.AssertAccessible(t, "the lab with a changed prompt")
	b.AssertNoJSErrors(t)
}
