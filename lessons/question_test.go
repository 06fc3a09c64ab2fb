package lessons_test

// question_test.go: question and exercise blocks parse, and bad ones fail
// with an error that names what is wrong; the glossary marks terms.

import (
	"strings"
	"testing"

	"github.com/inferscope/inferscope/lessons"
)

const head = "---\nslug: x\ntitle: y\n---\n## S\nstage: logits\n"

func TestQuestionParse(t *testing.T) {
	tests := []struct {
		name, block string
		want        lessons.Question
	}{
		{"live choice", "::: question\nid: greedy-pick\nask: Which token will greedy pick?\nkind: choice\noptions: live:logits.top4\nanswer: live:logits.top1\n:::\n",
			lessons.Question{ID: "greedy-pick", Ask: "Which token will greedy pick?", Kind: "choice", OptionsLive: "logits.top4", Answer: "logits.top1"}},
		{"literal choice", "::: question\nid: q\nask: Faster?\nkind: choice\noptions: one pass | one pass per position\nanswer: live:prefill.faster\n:::\n",
			lessons.Question{ID: "q", Ask: "Faster?", Kind: "choice", Options: []string{"one pass", "one pass per position"}, Answer: "prefill.faster"}},
		{"relative tolerance", "::: question\nid: n\nask: How many?\nkind: number\ntolerance: 10%\nanswer: live:kv.bytes\n:::\n",
			lessons.Question{ID: "n", Ask: "How many?", Kind: "number", Answer: "kv.bytes", Tolerance: 0.1, Relative: true}},
		{"absolute tolerance", "::: exercise\nid: n\nask: How many {{model.layers}}?\nkind: number\ntolerance: 0.5\nanswer: live:kv.bytes\n:::\n",
			lessons.Question{ID: "n", Exercise: true, Ask: "How many 5?", Kind: "number", Answer: "kv.bytes", Tolerance: 0.5}},
		{"text", "::: exercise\nid: t\nask: Which word?\nkind: text\nanswer: live:tokens.first\n:::\n",
			lessons.Question{ID: "t", Exercise: true, Ask: "Which word?", Kind: "text", Answer: "tokens.first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := lessons.Parse("t.md", []byte(head+"Text.\n\n"+tt.block+"\n::: panel logits\nprompt: a\n:::\n"), lessons.Values{"model.layers": "5"})
			if err != nil {
				t.Fatal(err)
			}
			s := l.Sections[0]
			if len(s.Questions) != 1 {
				t.Fatalf("%d questions", len(s.Questions))
			}
			got := s.Questions[0]
			if got.ID != tt.want.ID || got.Ask != tt.want.Ask || got.Kind != tt.want.Kind || got.OptionsLive != tt.want.OptionsLive ||
				strings.Join(got.Options, "|") != strings.Join(tt.want.Options, "|") || got.Answer != tt.want.Answer ||
				got.Tolerance != tt.want.Tolerance || got.Relative != tt.want.Relative || got.Exercise != tt.want.Exercise {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			// the question sits where it was written: before the panel
			qi, pi := strings.Index(s.HTML, `data-question="0"`), strings.Index(s.HTML, `data-panel="0"`)
			if qi < 0 || pi < 0 || qi > pi {
				t.Errorf("question at %d, panel at %d in %s", qi, pi, s.HTML)
			}
		})
	}
}

func TestQuestionErrors(t *testing.T) {
	q := func(body string) string { return head + "::: question\n" + body + ":::\n" }
	tests := []struct{ name, src, want string }{
		{"unknown field", q("id: a\nask: b\nkind: text\nanswer: live:x.y\nhint: no\n"), `unknown question field "hint" (allowed: id, ask, kind, options, answer, tolerance)`},
		{"missing answer", q("id: a\nask: b\nkind: text\n"), `question "a": missing answer`},
		{"typed answer", q("id: a\nask: b\nkind: text\nanswer: Paris\n"), `answer "Paris" must be a live value`},
		{"bad live key", q("id: a\nask: b\nkind: text\nanswer: live:Top One\n"), `a live key is lowercase words joined by dots`},
		{"bad kind", q("id: a\nask: b\nkind: essay\nanswer: live:x.y\n"), `bad kind "essay" (allowed: choice, number, text)`},
		{"missing kind", q("id: a\nask: b\nanswer: live:x.y\n"), `missing kind`},
		{"missing id", q("ask: b\nkind: text\nanswer: live:x.y\n"), `missing id`},
		{"bad id", q("id: Greedy Pick\nask: b\nkind: text\nanswer: live:x.y\n"), `use lowercase letters, digits and dashes`},
		{"missing ask", q("id: a\nkind: text\nanswer: live:x.y\n"), `missing ask`},
		{"choice without options", q("id: a\nask: b\nkind: choice\nanswer: live:x.y\n"), `a choice question needs options`},
		{"one option", q("id: a\nask: b\nkind: choice\noptions: only\nanswer: live:x.y\n"), `at least two options`},
		{"empty option", q("id: a\nask: b\nkind: choice\noptions: a || c\nanswer: live:x.y\n"), `has an empty option`},
		{"options on a number", q("id: a\nask: b\nkind: number\noptions: a | b\nanswer: live:x.y\n"), `options are for kind choice`},
		{"tolerance on text", q("id: a\nask: b\nkind: text\ntolerance: 1\nanswer: live:x.y\n"), `tolerance is for kind number`},
		{"bad tolerance", q("id: a\nask: b\nkind: number\ntolerance: lots\nanswer: live:x.y\n"), `tolerance "lots"`},
		{"negative tolerance", q("id: a\nask: b\nkind: number\ntolerance: -1\nanswer: live:x.y\n"), `tolerance "-1"`},
		{"field twice", q("id: a\nid: b\n"), `field "id" given twice`},
		{"not key: value", q("id: a\nwhat\n"), `question field "what" is not key: value`},
		{"live value in ask", q("id: a\nask: is it {{live:x.y}}?\nkind: text\nanswer: live:x.y\n"), `give the answer away`},
		{"not closed", head + "::: exercise\nid: a\n", `exercise block not closed`},
		{"unknown block", head + "::: quiz\n", `unknown block "quiz"`},
		{"duplicate id", q("id: a\nask: b\nkind: text\nanswer: live:x.y\n") + "::: exercise\nid: a\nask: b\nkind: text\nanswer: live:x.y\n:::\n", `id "a" is used twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lessons.Parse("t.md", []byte(tt.src), lessons.Values{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "t.md:") {
				t.Errorf("error %q does not name the file and line", err)
			}
		})
	}
}

// Every lesson asks at least one question before a panel and has an
// exercise; every question's answer (and live options) is a key a panel of
// its section can publish, which the browser test checks live.
func TestLessonsAskQuestions(t *testing.T) {
	for _, l := range load(t) {
		questions, exercises := 0, 0
		for _, s := range l.Sections {
			for _, q := range s.Questions {
				if q.Exercise {
					exercises++
				} else {
					questions++
				}
				if len(s.Panels) == 0 {
					t.Errorf("%s / %q: question %q in a section without a panel to answer it", l.Slug, s.Heading, q.ID)
				}
			}
		}
		if questions == 0 || exercises == 0 {
			t.Errorf("%s: %d questions and %d exercises, want at least one of each", l.Slug, questions, exercises)
		}
	}
}

func TestGlossary(t *testing.T) {
	terms, err := lessons.Glossary()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"token", "token id", "logit", "softmax", "probability", "temperature", "KV cache", "prefill", "decode", "TTFT", "ITL", "start-of-text token", "Ġ", "raw bytes",
		"min-p", "attention", "query vector", "key vector", "value vector", "layer", "entropy", "batch", "end-of-text token", "stop string", "RoPE", "residual", "logit lens", "RMSNorm", "SwiGLU", "GQA"}
	have := map[string]bool{}
	for _, tm := range terms {
		have[tm.Name] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("glossary lacks %q", w)
		}
	}
	src := head + "A token id is not a token; the `logit` in code stays, but logits and the logits again.\n\n::: panel logits\nprompt: a\n:::\n"
	l, err := lessons.Parse("t.md", []byte(src), lessons.Values{})
	if err != nil {
		t.Fatal(err)
	}
	h := l.Sections[0].HTML
	for _, w := range []string{
		`<button type="button" class="term n-id" data-term="token-id" aria-describedby="gl-0-token-id" aria-expanded="false">token id</button>`,
		`<span role="tooltip" class="term-def" id="gl-0-token-id">`,
		`data-term="token"`, `<code>logit</code>`, `data-term="logit"`,
	} {
		if !strings.Contains(h, w) {
			t.Errorf("section HTML lacks %s:\n%s", w, h)
		}
	}
	if n := strings.Count(h, `data-term="logit"`); n != 1 {
		t.Errorf("logit glossed %d times, want once per section", n)
	}
	if got := strings.Join(l.Sections[0].Terms, ","); got != "token-id,token,logit" {
		t.Errorf("terms %q", got)
	}
}

func TestGlossaryErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"term: a\n", "needs a term and a definition"},
		{"term: a\ndef: b\nkind: weight\n", `kind "weight" (allowed: token, id, logit, prob)`},
		{"term: a\ndef: b\ncolour: red\n", `unknown glossary key "colour"`},
		{"term: a\ndef: b\n\nterm: b\naka: A\ndef: c\n", `"A" is already a spelling of "a"`},
		{"term: a\nterm: b\n", "two term: lines"},
		{"just words\n", "is not key: value"},
	}
	for _, tt := range tests {
		_, err := lessons.ParseGlossary("g.txt", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.src, err, tt.want)
		}
	}
}

// FuzzParse: no lesson file, however malformed, panics the parser or the
// glossary pass; a file that parses has only valid questions.
func FuzzParse(f *testing.F) {
	for _, name := range lessons.Files() {
		b, _ := lessons.Source(name)
		f.Add(b)
	}
	f.Add([]byte(head + "::: question\nid: a\nask: b\nkind: number\ntolerance: 5%\nanswer: live:x.y\n:::\n<p>token <code>logit</code></p>\n"))
	f.Add([]byte(head + "<b>logits <i>softmax</b> KV cache</i> Ġ &amp; token&#39;s\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := lessons.Parse("f.md", b, lessons.Values{"model.vocab": "1"})
		if err != nil {
			return
		}
		for _, s := range l.Sections {
			for _, q := range s.Questions {
				if q.Answer == "" || q.ID == "" || (q.Kind == "choice" && q.OptionsLive == "" && len(q.Options) < 2) {
					t.Fatalf("invalid question accepted: %+v", q)
				}
			}
		}
	})
}

func FuzzParseGlossary(f *testing.F) {
	f.Add([]byte("term: a\naka: b | c\nkind: prob\ndef: d\n\n# c\nterm: e\ndef: f\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		terms, err := lessons.ParseGlossary("g.txt", b)
		if err != nil {
			return
		}
		for _, tm := range terms {
			if tm.Name == "" || tm.Def == "" || tm.ID == "" {
				t.Fatalf("invalid term accepted: %+v", tm)
			}
		}
	})
}
