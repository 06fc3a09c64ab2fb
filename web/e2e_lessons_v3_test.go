package web_test

// e2e_lessons_v3_test.go: the lessons' v3 sections in headless Chromium,
// each checked against the engine (computed here in Go), on every prompt
// the page can draw (?draw=N), the question covering the panel until it is
// answered: "What the application adds" (a chat context's parts as real
// tokens, the model naming the saved note's country only with the note,
// the weights' hash unchanged), "Position matters" (one token at two
// positions: RoPE turns each pair of its key, lengths kept; learned
// position vectors on GPT-2; two prompts of the same tokens in another
// order predict differently) and "Attention under the cache" (the newest
// query against every key, read or new, recomputed with the cache off; the
// page's own softmax and value mix equal the engine's to 1e-5). Screenshots
// at 1366×900 and 390×844, axe-core clean, no horizontal overflow.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

// v3Panel is a lesson panel's options and its section's heading.
func v3Panel(t *testing.T, m *engine.Model, slug, kind string) (map[string]string, string) {
	t.Helper()
	ls, err := lessons.Load(web.LessonValues(catalog.ModelCardFor(m)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		for _, s := range l.Sections {
			for _, p := range s.Panels {
				if l.Slug == slug && p.Kind == kind {
					return p.Options, s.Heading
				}
			}
		}
	}
	t.Fatalf("lesson %s has no %s panel", slug, kind)
	return nil, ""
}

// drawn is option list's alternative the page draws for ?draw=d.
func drawn(o map[string]string, list string, d int) string {
	alts := lessons.Alternatives(o[list])
	return alts[d%len(alts)]
}

// openDrawn opens a lesson section with draw d and waits for its panels;
// the section's question still covers them.
func openDrawn(t *testing.T, b *browsertest.Browser, url, slug string, s, d int) string {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(fmt.Sprintf("%s/lessons/%s?s=%d&draw=%d", url, slug, s, d))); err != nil {
		t.Fatal(err)
	}
	sel := fmt.Sprintf("#section-%d", s)
	if err := waitJS(b.Ctx, fmt.Sprintf(`!document.querySelector('%[1]s').hidden && document.querySelectorAll('%[1]s [data-testid="panel-out"]').length > 0 && [...document.querySelectorAll('%[1]s [data-testid="panel-out"]')].every(p => p.dataset.state === "done" || p.dataset.state === "error")`, sel)); err != nil {
		b.Screenshot(t, fmt.Sprintf("lesson-v3-%s-%d-fail", slug, s))
		t.Fatalf("%s section %d: %v", slug, s, err)
	}
	if errs := evalJS[[]string](t, b.Ctx, `[...document.querySelectorAll('`+sel+` [data-testid="panel-out"] .error')].map(e => e.textContent)`); len(errs) > 0 {
		t.Fatalf("%s section %d: panel error %v", slug, s, errs)
	}
	return sel
}

// predictThenReveal checks that the section is covered with its question
// open and the answer nowhere in view, then answers it with want (the
// right answer, from the engine) and expects "right".
func predictThenReveal(t *testing.T, ctx context.Context, sel, qid, want string) {
	t.Helper()
	got := evalJS[[]string](t, ctx, `(() => { const s = document.querySelector('`+sel+`'), o = s.querySelector('[data-testid="panel-out"]');
		return [String(s.classList.contains("predicting")), getComputedStyle(o).visibility, s.innerText]; })()`)
	if got[0] != "true" || got[1] != "hidden" {
		t.Errorf("%s: before the answer, predicting %s and the panel's visibility %s", qid, got[0], got[1])
	}
	// the page's visible text outside the question form does not say the answer
	outside := evalJS[string](t, ctx, `(() => { const s = document.querySelector('`+sel+`'); return [...s.querySelectorAll('.lesson-body > :not(.lesson-question)')].map(e => e.innerText).join(" "); })()`)
	if strings.Contains(strings.ToLower(outside), strings.ToLower(want)) {
		t.Errorf("%s: the answer %q is in view before it is asked", qid, want)
	}
	evalJS[bool](t, ctx, `(() => { const f = document.querySelector('`+sel+` form[data-id="`+qid+`"]'); const r = [...f.querySelectorAll('input[type=radio]')].find(r => r.value === `+strconv.Quote(want)+`); if (!r) return false; r.click(); f.querySelector('[data-testid=q-check]').click(); return true; })()`)
	if err := waitJS(ctx, `(document.querySelector('`+sel+` form[data-id="`+qid+`"] [data-testid=q-result]').dataset.verdict || "") !== ""`); err != nil {
		t.Fatalf("%s: %v", qid, err)
	}
	if v := evalJS[string](t, ctx, `document.querySelector('`+sel+` form[data-id="`+qid+`"] [data-testid=q-result]').dataset.verdict`); v != "right" {
		t.Errorf("%s: answered %q (the engine's answer), verdict %q", qid, want, v)
	}
	if evalJS[bool](t, ctx, `document.querySelector('`+sel+`').classList.contains("predicting")`) {
		t.Errorf("%s: still covered after the answer", qid)
	}
}

// appText is the context the app-context panel builds (appcontext.js's
// segments), and each part's byte range in it.
type appSpan struct {
	part       string
	start, end int
}

func appText(o map[string]string, note string, withNote bool) (string, []appSpan) {
	var text strings.Builder
	var spans []appSpan
	add := func(part, s string) {
		spans = append(spans, appSpan{part, text.Len(), text.Len() + len(s)})
		text.WriteString(s)
	}
	msg := func(role, part, s string) { add("template", role+": "); add(part, s); add("template", "\n") }
	msg("System", "system", o["instructions"])
	add("tool", "Tool: "+o["tool"])
	add("template", "\n")
	add("document", "Document: "+o["document"])
	add("template", "\n")
	msg("User", "turns", o["turn_user"])
	msg("Assistant", "turns", o["turn_assistant"])
	if withNote {
		add("memory", "Memory: "+note)
		add("template", "\n")
	}
	msg("User", "question", o["prompt"])
	add("template", "Assistant: ")
	add("reply", o["reply"])
	return text.String(), spans
}

// engineTop is the engine's logits at the prompt's last position (greedy).
func engineTop(t *testing.T, m *engine.Model, prompt string) *session.LogitsInfo {
	t.Helper()
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Logits != nil {
			return ev.Logits
		}
	}
}

const v3Runs = 3 // each claim is checked on this many draws (each a fresh page and run)

func TestBrowserLessonAppContext(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	o, heading := v3Panel(t, m, "after-send", "app-context")
	openSection(t, b, ts.URL, "after-send", 1)
	s := sectionOf(t, ctx, heading)
	for d := range max(v3Runs, len(lessons.Alternatives(o["notes"]))) {
		note := drawn(o, "notes", d)
		sel := openDrawn(t, b, ts.URL, "after-send", s, d)
		predictThenReveal(t, ctx, sel, "memory-weights", "the same")
		// every part's tokens, counted as the engine's tokenizer cuts the same text
		text, spans := appText(o, note, true)
		toks := encode(t, m, text)
		want := map[string]int{}
		for _, tk := range toks {
			// the message part the token covers most bytes of, else the template
			part, most := "template", 0
			for _, sp := range spans {
				if n := min(tk.End, sp.end) - max(tk.Start, sp.start); sp.part != "template" && n > most {
					part, most = sp.part, n
				}
			}
			want[part]++
		}
		got := evalJS[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('`+sel+` [data-testid="app-part"]')].map(p => [p.dataset.part, p.dataset.tokens]))`)
		for part, n := range want {
			if got[part] != strconv.Itoa(n) {
				t.Errorf("draw %d: part %s has %s tokens on the page, %d by the engine's tokenizer", d, part, got[part], n)
			}
		}
		if total := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-testid="app-total"]').dataset.total`); total != strconv.Itoa(len(toks)) {
			t.Errorf("draw %d: context of %s tokens, engine %d", d, total, len(toks))
		}
		// the model names the note's country only with the note; the weights' hash never changes
		without, _ := appText(o, note, false)
		lw, lo := engineTop(t, m, text), engineTop(t, m, without)
		// the note's word (its last), as the token that starts it in the note
		word := strings.TrimRight(note[strings.LastIndex(note, " ")+1:], ".")
		var wordTok tokenizer.Token
		for _, sp := range spans {
			if sp.part != "memory" {
				continue
			}
			at := sp.start + strings.LastIndex(text[sp.start:sp.end], word)
			for _, tk := range toks {
				if tk.Start == at-1 || tk.Start == at {
					wordTok = tk
				}
			}
		}
		info := evalJS[map[string]string](t, ctx, `(() => { const n = document.querySelector('`+sel+` [data-testid="app-note"]').dataset, h = document.querySelector('`+sel+` [data-testid="app-hash"]').dataset;
			return {top_with: n.topWith, top_without: n.topWithout, uses: n.usesNote, changed: n.changed, word: n.wordId, same: h.same, hash: h.hash}; })()`)
		if info["top_with"] != strconv.Itoa(lw.Top[0].ID) || info["top_without"] != strconv.Itoa(lo.Top[0].ID) {
			t.Errorf("draw %d: top tokens %s / %s on the page, engine %d (%q) / %d (%q)", d, info["top_with"], info["top_without"], lw.Top[0].ID, lw.Top[0].Text, lo.Top[0].ID, lo.Top[0].Text)
		}
		if info["uses"] != "true" || info["changed"] != "true" || info["word"] != strconv.Itoa(wordTok.ID) || lw.Top[0].ID != wordTok.ID || lo.Top[0].ID == wordTok.ID {
			t.Errorf("draw %d (note %q): the model does not name the note's word %q (id %d) only with the note: page %v; engine with %q, without %q", d, note, wordTok.Text, wordTok.ID, info, lw.Top[0].Text, lo.Top[0].Text)
		}
		if info["same"] != "true" || info["hash"] != m.WeightsChecksum() {
			t.Errorf("draw %d: weights hash same=%s, %s; the model's %s", d, info["same"], info["hash"], m.WeightsChecksum())
		}
		if live := evalJS[string](t, ctx, `document.querySelector('`+sel+` [data-live="app.verdict"]').textContent`); !strings.Contains(live, "note's word") || !strings.Contains(live, "stayed the same") {
			t.Errorf("draw %d: the verdict says %q", d, live)
		}
	}
	v3Shots(t, b, ts.URL, "after-send", s, "app-context")
	b.AssertNoJSErrors(t)
}

// ropeAngles are the angles (degrees, in (-180, 180]) RoPE turns each pair
// of a head by when a token moves by dp positions.
func ropeAngles(c engine.Config, dp int) []float64 {
	var out []float64
	for j := 0; j < c.HeadDim/2; j++ {
		a := float64(dp) / math.Pow(c.RopeTheta, float64(2*j)/float64(c.HeadDim)) * 180 / math.Pi
		out = append(out, math.Mod(math.Mod(a+180, 360)+360, 360)-180)
	}
	return out
}

func TestBrowserLessonPosition(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	o, heading := v3Panel(t, m, "after-send", "position")
	openSection(t, b, ts.URL, "after-send", 1)
	s := sectionOf(t, ctx, heading)
	for d := range max(v3Runs, len(lessons.Alternatives(o["prompts"]))) {
		pa, pb := drawn(o, "prompts", d), drawn(o, "compares", d)
		sel := openDrawn(t, b, ts.URL, "after-send", s, d)
		predictThenReveal(t, ctx, sel, "position-length", "the same length")
		// the repeated token's keys in layer 0, from the engine's cache
		toks := encode(t, m, pa)
		seen, a, c := map[int]int{}, -1, -1
		for i, tk := range toks {
			if tk.Special || a >= 0 {
				continue
			}
			if j, ok := seen[tk.ID]; ok {
				a, c = j, i
			}
			seen[tk.ID] = i
		}
		got := evalJS[map[string]string](t, ctx, `Object.assign({}, document.querySelector('`+sel+` [data-testid="pos-rope-sum"]').dataset)`)
		if got["posA"] != strconv.Itoa(a) || got["posB"] != strconv.Itoa(c) || got["id"] != strconv.Itoa(toks[a].ID) {
			t.Fatalf("draw %d: the page's repeated token %v, engine's %d at %d and %d", d, got, toks[a].ID, a, c)
		}
		se, err := session.New(m, session.Config{Prompt: pa, Sampling: session.DefaultSampling(), MaxNewTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		for se.Next() != session.StageLogits {
			if _, err := se.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		ka, _ := se.Inspect(session.InspectRequest{What: session.InspectKV, Layer: 0, Pos: a})
		kb, _ := se.Inspect(session.InspectRequest{What: session.InspectKV, Layer: 0, Pos: c})
		var diff, na, nb float64
		for i := range ka.Keys[0] {
			diff = max(diff, math.Abs(float64(ka.Keys[0][i]-kb.Keys[0][i])))
			na += float64(ka.Keys[0][i]) * float64(ka.Keys[0][i])
			nb += float64(kb.Keys[0][i]) * float64(kb.Keys[0][i])
		}
		f := func(k string) float64 { v, _ := strconv.ParseFloat(got[k], 64); return v }
		if math.Abs(f("diff")-diff) > 1e-6 || math.Abs(f("lenA")-math.Sqrt(na)) > 1e-4 || math.Abs(f("lenB")-math.Sqrt(nb)) > 1e-4 {
			t.Errorf("draw %d: page diff %v lengths %v %v; engine %v, %v, %v", d, f("diff"), f("lenA"), f("lenB"), diff, math.Sqrt(na), math.Sqrt(nb))
		}
		// same lengths pair by pair, each pair turned by RoPE's angle for c−a positions
		if f("pairDiff") > 1e-5 || math.Abs(f("lenA")-f("lenB")) > 1e-5*f("lenA") || diff < 1e-3 {
			t.Errorf("draw %d: the keys differ by %v, pair lengths by %v, lengths %v and %v: not one key turned", d, diff, f("pairDiff"), f("lenA"), f("lenB"))
		}
		var degs []float64
		if err := json.Unmarshal([]byte(got["degrees"]), &degs); err != nil {
			t.Fatal(err)
		}
		want := ropeAngles(m.Config, c-a)
		if len(degs) != len(want) {
			t.Fatalf("draw %d: %d dials, head has %d pairs", d, len(degs), len(want))
		}
		for j := range want {
			if e := math.Abs(math.Mod(degs[j]-want[j]+540, 360) - 180); e > 0.05 {
				t.Errorf("draw %d pair %d: turned %.3f°, RoPE turns %.3f° for %d positions", d, j, degs[j], want[j], c-a)
			}
		}
		// two prompts with the same tokens in another order: different predictions, the engine's
		ids := func(p string) []int {
			var out []int
			for _, tk := range encode(t, m, p) {
				out = append(out, tk.ID)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(pa), ids(pb)) {
			t.Fatalf("draw %d: %q and %q are not the same tokens", d, pa, pb)
		}
		la, lb := engineTop(t, m, pa), engineTop(t, m, pb)
		ord := evalJS[map[string]string](t, ctx, `Object.assign({}, document.querySelector('`+sel+` [data-testid="pos-order"]').dataset)`)
		if ord["sameTokens"] != "true" || ord["topA"] != strconv.Itoa(la.Top[0].ID) || ord["topB"] != strconv.Itoa(lb.Top[0].ID) || la.Top[0].ID == lb.Top[0].ID {
			t.Errorf("draw %d: page %v; engine's top tokens %q and %q", d, ord, la.Top[0].Text, lb.Top[0].Text)
		}
		// move the key/value head: the same holds in every head
		setSlider(t, ctx, "pos-head", m.Config.NKVHeads-1)
		if h := evalJS[map[string]string](t, ctx, `Object.assign({}, document.querySelector('`+sel+` [data-testid="pos-rope-sum"]').dataset)`); h["head"] != strconv.Itoa(m.Config.NKVHeads-1) || h["pairDiff"] == "" {
			t.Errorf("draw %d: after the head slider: %v", d, h)
		} else if v, _ := strconv.ParseFloat(h["pairDiff"], 64); v > 1e-5 {
			t.Errorf("draw %d: head %s: pair lengths differ by %v", d, h["head"], v)
		}
	}
	v3Shots(t, b, ts.URL, "after-send", s, "position")
	b.AssertNoJSErrors(t)

	// a GPT-2 model adds a learned position vector: the sums differ in length
	t.Run("learned", func(t *testing.T) {
		gm, err := engine.LoadModel(testenv.SharedDir(t, "models/tiny-gpt2"), "")
		if err != nil {
			t.Fatal(err)
		}
		cat := catalog.NewEngineCatalog()
		if err := cat.Add(gm, "", true); err != nil {
			t.Fatal(err)
		}
		srv, err := web.New(web.Options{Catalog: cat})
		if err != nil {
			t.Fatal(err)
		}
		gs := httptest.NewServer(srv)
		defer gs.Close()
		sel := openDrawn(t, b, gs.URL, "after-send", s, 0)
		predictThenReveal(t, ctx, sel, "position-length", "different lengths")
		got := evalJS[map[string]string](t, ctx, `Object.assign({}, document.querySelector('`+sel+` [data-testid="pos-learned-sum"]').dataset)`)
		la, _ := strconv.ParseFloat(got["lenA"], 64)
		lb, _ := strconv.ParseFloat(got["lenB"], 64)
		if math.Abs(la-lb) < 1e-4 {
			t.Errorf("GPT-2: the sums at two positions have lengths %v and %v", la, lb)
		}
		b.Screenshot(t, "lesson-v3-position-gpt2")
	})
}

func TestBrowserLessonAttentionCache(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, m := batchedLessonServer(t)
	b := browsertest.New(t)
	ctx := b.Ctx
	o, heading := v3Panel(t, m, "kv-cache", "attention-cache")
	openSection(t, b, ts.URL, "kv-cache", 1)
	s := sectionOf(t, ctx, heading)
	c := m.Config
	for d := range max(v3Runs, len(lessons.Alternatives(o["prompts"]))) {
		prompt := drawn(o, "prompts", d)
		sel := openDrawn(t, b, ts.URL, "kv-cache", s, d)
		predictThenReveal(t, ctx, sel, "attention-keys", "every key: those read from the cache and its own")
		// the engine's own step: the prompt, then one greedy token
		se, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 4, StopAtEOS: new(bool)})
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := se.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if ev.Append != nil {
				break
			}
		}
		n := len(encode(t, m, prompt)) + 1
		for _, lh := range [][2]int{{0, 0}, {c.NLayers - 1, c.NHeads - 1}, {c.NLayers / 2, 1 + d%(c.NHeads-1)}} {
			setSlider(t, ctx, "attn-layer", lh[0])
			setSlider(t, ctx, "attn-head", lh[1])
			js := `document.querySelector('` + sel + ` [data-testid="attn-checks"]')`
			if err := waitJS(ctx, js+` && `+js+`.dataset.layer === "`+strconv.Itoa(lh[0])+`" && `+js+`.dataset.head === "`+strconv.Itoa(lh[1])+`"`); err != nil {
				t.Fatalf("draw %d, layer %d head %d: %v", d, lh[0], lh[1], err)
			}
			got := evalJS[map[string]string](t, ctx, `Object.assign({}, `+js+`.dataset)`)
			f := func(k string) float64 { v, _ := strconv.ParseFloat(got[k], 64); return v }
			if f("softmaxDiff") > 1e-5 || f("mixDiff") > 1e-5 || f("offSoftmaxDiff") > 1e-5 || f("onoffDiff") > 1e-5 {
				t.Errorf("draw %d, layer %d head %d: the page's softmax differs by %v (cache off %v), its mix by %v, on vs off %v", d, lh[0], lh[1], f("softmaxDiff"), f("offSoftmaxDiff"), f("mixDiff"), f("onoffDiff"))
			}
			if got["keys"] != strconv.Itoa(n) || got["read"] != strconv.Itoa(n-1) || got["new"] != "1" || got["recomputed"] != strconv.Itoa(n-1) {
				t.Errorf("draw %d, layer %d head %d: %s keys, %s read, %s new, %s recomputed; want %d, %d, 1, %d", d, lh[0], lh[1], got["keys"], got["read"], got["new"], got["recomputed"], n, n-1, n-1)
			}
			marks := evalJS[[]string](t, ctx, `[...document.querySelectorAll('`+sel+` [data-testid="attn-row"]')].map(r => r.dataset.on + "/" + r.dataset.off)`)
			for p, mk := range marks {
				want := "read/recomputed"
				if p == n-1 {
					want = "new/new"
				}
				if mk != want {
					t.Errorf("draw %d, layer %d head %d, position %d: marked %s, want %s", d, lh[0], lh[1], p, mk, want)
				}
			}
			// the weights are the engine's
			var w []float64
			if err := json.Unmarshal([]byte(got["weights"]), &w); err != nil {
				t.Fatal(err)
			}
			in, err := se.Inspect(session.InspectRequest{What: session.InspectAttention, Layer: lh[0], Head: lh[1]})
			if err != nil {
				t.Fatal(err)
			}
			if len(w) != len(in.Attention.Keys) {
				t.Fatalf("draw %d: %d weights, engine %d", d, len(w), len(in.Attention.Keys))
			}
			for p, k := range in.Attention.Keys {
				if math.Abs(w[p]-float64(k.Weight)) > 1e-5 {
					t.Errorf("draw %d, layer %d head %d, position %d: weight %v, engine %v", d, lh[0], lh[1], p, w[p], k.Weight)
				}
			}
		}
	}
	v3Shots(t, b, ts.URL, "kv-cache", s, "attention-cache")
	b.AssertNoJSErrors(t)
}

// v3Shots: the section after its answer at 1366×900 and 390×844, light
// and dark, axe-core clean (browsertest.AxeView's views), no horizontal
// overflow on the phone.
func v3Shots(t *testing.T, b *browsertest.Browser, url, slug string, s int, name string) {
	t.Helper()
	defer b.SetViewport(t, 1366, 900, false)
	for _, v := range []struct {
		w, h   int64
		mobile bool
	}{{1366, 900, false}, {390, 844, true}} {
		b.SetViewport(t, v.w, v.h, v.mobile)
		openSection(t, b, url, slug, s)
		if v.mobile {
			if w := evalJS[int](t, b.Ctx, `document.documentElement.scrollWidth`); w > 390 {
				t.Errorf("%s: page is %d px wide at 390 px", name, w)
			}
		}
		for _, dark := range []bool{false, true} {
			mode := map[bool]string{false: "light", true: "dark"}[dark]
			b.SetDark(t, dark)
			b.Screenshot(t, fmt.Sprintf("lesson-v3-%s-%dx%d-%s", name, v.w, v.h, mode))
			if browsertest.AxeView(v.w, dark) {
				b.AssertAccessible(t, fmt.Sprintf("%s %dx%d %s", name, v.w, v.h, mode))
			}
		}
		b.SetDark(t, false)
	}
}

// TestBrowserClassDraw: a class follows its presenter's draw. The presenter
// opens a question that names its drawn prompt ({{prompt}}); a student who
// joins sees the same prompt in the same question (its own page drew
// another), and answers the class's question in that form.
func TestBrowserClassDraw(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts, c, pres := newClass(t)
	o, heading := v3Panel(t, models0(t), "after-send", "bytes")
	c.must(pres, "open the lesson", chromedp.Navigate(ts.URL+"/lessons/after-send"))
	c.wait(pres, `!!document.getElementById('btn-present')`)
	s := sectionOf(t, pres, heading)
	want := drawn(o, "prompts", 2)
	c.must(pres, "open the section with draw 2", chromedp.Navigate(fmt.Sprintf("%s/lessons/after-send?s=%d&draw=2", ts.URL, s)))
	sel := fmt.Sprintf("#section-%d", s)
	c.wait(pres, `!!document.querySelector('`+sel+` form.question[data-id=token-count]') && !!document.getElementById('btn-present')`)
	ask := evalJS[string](t, pres, `document.querySelector('`+sel+` form.question[data-id=token-count]').dataset.ask`)
	if !strings.Contains(ask, "“"+want+"”") || evalJS[string](t, pres, `document.querySelector('`+sel+` .panel-prompt').value`) != want {
		t.Fatalf("presenter: ask %q, prompt %q; want the drawn prompt %q", ask, evalJS[string](t, pres, `document.querySelector('`+sel+` .panel-prompt').value`), want)
	}
	c.must(pres, "present", c.click("#btn-present"))
	c.wait(pres, `!!document.querySelector('[data-testid=room-code]')`)
	code := evalJS[string](t, pres, `document.querySelector('[data-testid=room-code]').textContent`)
	st := c.student()
	// the student's page draws its own prompt first (draw 0), then follows the class
	c.must(st, "the student joins", chromedp.Navigate(fmt.Sprintf("%s/lessons/after-send?s=%d&draw=0&room=%s", ts.URL, s, code)))
	c.wait(st, `location.pathname === '/lessons/after-send' && document.body.dataset.room === 'following' && document.body.dataset.roomSynced === '1' && !!document.querySelector('`+sel+` form.question[data-id=token-count]')`)
	c.wait(st, `document.querySelector('`+sel+` form.question[data-id=token-count]').dataset.ask === `+strconv.Quote(ask))
	c.must(pres, "ask the class", c.click("#btn-poll"))
	c.wait(st, `document.getElementById('room-poll').dataset.open === '1'`)
	c.must(st, "the student answers", chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector('`+sel+` form.question[data-id=token-count]'); f.querySelector('[data-testid=q-input]').value = "7"; f.requestSubmit(); })()`))
	c.wait(st, `/Sent to the class/.test(document.querySelector('`+sel+` form.question[data-id=token-count] [data-testid=q-result]').textContent)`)
}

func models0(t *testing.T) *engine.Model {
	t.Helper()
	_, m := defaultCatalog(t)
	return m
}
