package lessons_test

// lint_test.go: the lesson lint. Every number a lesson states is a
// placeholder (a model fact, {{model.*}}, or a live value, {{live:*}})
// unless it is whitelisted below with its reason: digits anywhere in what a
// student reads (prose, asks, literal options; TestNoTypedModelFacts), and
// numbers in words beside a unit ("twice as long", "ten milliseconds", "a
// million"). Every question is asked before its answer can be seen: its
// block comes before the section's panels, no placeholder of its answer
// stands above it, the text above it does not single out one of its
// literal options, and a panel module publishes its answer. Drawn lists
// (prompts:, compares:, notes:) parse. The rendered check, the answer's
// value nowhere in view until the reveal, is in web's lesson walk
// (TestBrowserLongest/LessonFramework).

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/lessons"
)

// allowedNumbers are numbers in words a lesson may type, each with why it
// is no run's number (matched within the line that has it).
var allowedNumbers = map[string]string{
	"one part in a million": "the order of float32 rounding after a pass (a property of the number format, not of a run), said as an order of magnitude",
	"sixteen gigabytes":     "the size of a hypothetical model the serving lesson's question asks about (an 8B model in BF16); its answer is computed live from this model's weights",
}

const numberWords = `zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|half|quarter|twice|double|triple|dozen`

var (
	// a number in words with a unit of measure after it (up to two words between)
	wordWithUnit = regexp.MustCompile(`(?i)\b(` + numberWords + `)\b(?:[ -][a-z]+){0,2}?[ -](bytes?|kib|mib|gib|kb|mb|gb|kilobytes?|megabytes?|gigabytes?|ms|milliseconds?|microseconds?|seconds?|minutes?|hours?|percent|per ?cent|nats|parameters|as (?:fast|slow|long|much|many|large|small)|times (?:as|faster|slower|longer|shorter|more|less|fewer|larger|smaller)|faster|slower|tokens per second)\b`)
	// a magnitude: "a million", "two thousand"
	magnitude = regexp.MustCompile(`(?i)\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|hundred|several)\s+(hundred|thousand|million|billion|trillion)\b`)
	liveRef   = regexp.MustCompile(`\{\{\s*live:([a-z0-9_.]+)\s*\}\}`)
	anyRef    = regexp.MustCompile(`\{\{[^}]*\}\}`)
)

func TestLintNumbersInWords(t *testing.T) {
	for _, bad := range []string{"twice as long", "ten milliseconds", "about one part in a million", "three times faster", "half a second", "two bytes per number", "a thousand tokens"} {
		if !wordWithUnit.MatchString(bad) && !magnitude.MatchString(bad) {
			t.Errorf("the lint misses %q", bad)
		}
	}
	for _, ok := range []string{"one position per step", "one more token", "two prompts", "a few tokens", "billions of parameters", "one pass per position", "the second is"} {
		if wordWithUnit.MatchString(ok) || magnitude.MatchString(ok) {
			t.Errorf("the lint flags %q", ok)
		}
	}
	used := map[string]bool{}
	for _, name := range lessons.Files() {
		b, _ := lessons.Source(name)
		lines := prose(string(b))
		for n, o := range options(string(b)) {
			lines[n] = o
		}
		for n, line := range lines {
			for _, m := range append(wordWithUnit.FindAllString(line, -1), magnitude.FindAllString(line, -1)...) {
				ok := false
				for phrase := range allowedNumbers {
					if strings.Contains(strings.ToLower(line), phrase) && strings.Contains(phrase, strings.ToLower(m)) {
						ok, used[phrase] = true, true
					}
				}
				if !ok {
					t.Errorf("%s:%d: typed number %q (use a {{model.*}} or {{live:*}} placeholder, or whitelist it in allowedNumbers with a reason): %q", name, n, m, line)
				}
			}
			if regexp.MustCompile(`[0-9]`).MatchString(line) {
				t.Errorf("%s:%d: typed number (use a placeholder): %q", name, n, line)
			}
		}
	}
	for phrase, why := range allowedNumbers {
		if !used[phrase] {
			t.Errorf("allowedNumbers: %q (%s) is in no lesson any more: remove it", phrase, why)
		}
	}
}

// options returns the literal options of question blocks, by line.
func options(src string) map[int]string {
	out := map[int]string{}
	in := false
	for i, line := range strings.Split(src, "\n") {
		switch {
		case strings.HasPrefix(line, "::: question") || strings.HasPrefix(line, "::: exercise"):
			in = true
		case in && strings.TrimSpace(line) == ":::":
			in = false
		case in:
			if o, ok := strings.CutPrefix(line, "options:"); ok && !strings.HasPrefix(strings.TrimSpace(o), "live:") {
				out[i+1] = o
			}
		}
	}
	return out
}

// block is one ::: block of a lesson file.
type block struct {
	line   int
	kind   string // "panel", "question" or "exercise"
	fields map[string]string
}

// sectionSrc is one ## section of a lesson file: its blocks and its prose lines.
type sectionSrc struct {
	heading string
	blocks  []block
	prose   map[int]string // line → text outside blocks
}

func sectionsOf(src string) []sectionSrc {
	var out []sectionSrc
	var cur *sectionSrc
	var b *block
	front := false
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		switch {
		case i == 0 && line == "---":
			front = true
		case front:
			front = line != "---"
		case b != nil:
			if strings.TrimSpace(line) == ":::" {
				cur.blocks = append(cur.blocks, *b)
				b = nil
			} else if k, v, ok := strings.Cut(line, ":"); ok {
				b.fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		case strings.HasPrefix(line, "## "):
			out = append(out, sectionSrc{heading: strings.TrimPrefix(line, "## "), prose: map[int]string{}})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(line, "::: "):
			kind := strings.Fields(strings.TrimPrefix(line, "::: "))[0]
			b = &block{line: n, kind: kind, fields: map[string]string{}}
		case !strings.HasPrefix(line, "stage:"):
			cur.prose[n] = line
		}
	}
	return out
}

// published: whether a panel module (static/js) publishes a live key: the
// key as a string literal, or its two halves joined in code.
func published(t *testing.T) func(key string) bool {
	t.Helper()
	var js strings.Builder
	for _, g := range []string{"../static/js/*.js", "../static/js/lessonpanels/*.js"} {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			js.Write(b)
		}
	}
	src := js.String()
	if len(src) == 0 {
		t.Fatal("no JavaScript found under ../static/js")
	}
	return func(key string) bool {
		if strings.Contains(src, `"`+key+`"`) {
			return true
		}
		// a key built in code: name + ".suffix", or "name." + suffix
		pre, suf, _ := strings.Cut(key, ".")
		return strings.Contains(src, `"`+pre+`"`) && strings.Contains(src, `".`+suf+`"`) ||
			strings.Contains(src, `"`+pre+`."`) && strings.Contains(src, `"`+suf+`"`)
	}
}

func TestLintQuestionsAskedBeforeAnswered(t *testing.T) {
	pub := published(t)
	questions := 0
	for _, name := range lessons.Files() {
		b, _ := lessons.Source(name)
		for _, sec := range sectionsOf(string(b)) {
			firstPanel := 0
			for _, bl := range sec.blocks {
				if bl.kind == "panel" && firstPanel == 0 {
					firstPanel = bl.line
				}
			}
			for _, q := range sec.blocks {
				if q.kind != "question" && q.kind != "exercise" {
					continue
				}
				answer := strings.TrimPrefix(q.fields["answer"], "live:")
				if !pub(answer) {
					t.Errorf("%s:%d (%s): no panel module publishes the answer %q", name, q.line, sec.heading, answer)
				}
				if ol := strings.TrimPrefix(q.fields["options"], "live:"); ol != q.fields["options"] && !pub(ol) {
					t.Errorf("%s:%d (%s): no panel module publishes the options %q", name, q.line, sec.heading, ol)
				}
				if q.kind == "exercise" { // checked after the student changed the panel
					continue
				}
				questions++
				if firstPanel == 0 || q.line > firstPanel {
					t.Errorf("%s:%d (%s): question %s comes after the section's panel (line %d): ask before showing", name, q.line, sec.heading, q.fields["id"], firstPanel)
				}
				var above strings.Builder
				for n, line := range sec.prose {
					if n > q.line {
						continue
					}
					for _, m := range liveRef.FindAllStringSubmatch(line, -1) {
						if m[1] == answer {
							t.Errorf("%s:%d: the answer of question %s ({{live:%s}}) stands above the question", name, n, q.fields["id"], answer)
						}
					}
					above.WriteString(strings.ToLower(anyRef.ReplaceAllString(line, " ")) + " ")
				}
				if o := q.fields["options"]; o != "" && !strings.HasPrefix(o, "live:") {
					var named []string
					for _, opt := range lessons.Alternatives(o) {
						if strings.Contains(above.String(), strings.ToLower(opt)) {
							named = append(named, opt)
						}
					}
					if len(named) == 1 {
						t.Errorf("%s:%d: the text above question %s names one of its options, %q, and no other", name, q.line, q.fields["id"], named[0])
					}
				}
			}
		}
	}
	if questions < 10 {
		t.Errorf("the lint saw %d questions: is the parser still reading the lessons?", questions)
	}
}

func TestDrawnOptions(t *testing.T) {
	head := "---\nslug: x\ntitle: y\n---\n## S\nstage: logits\n"
	tests := []struct{ src, want string }{
		{head + "::: panel logits\nprompts: a | b\ncompares: c\n:::\n", "the page draws the same index"},
		{head + "::: panel logits\nprompts: a |  | b\n:::\n", "empty alternative"},
		{head + "::: panel logits\nprompt: z\nprompts: a | b\n:::\n", `prompt "z" is not one of its prompts`},
		{head + "::: question\nid: q\nask: How many tokens is {{prompt}}?\nkind: number\nanswer: live:tokens.count\n:::\n::: panel checksum\ntokens: 2\n:::\n", "first panel has no prompt"},
	}
	for _, tt := range tests {
		_, err := lessons.Parse("t.md", []byte(tt.src), lessons.Values{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.src, err, tt.want)
		}
	}
	l, err := lessons.Parse("t.md", []byte(head+"::: question\nid: q\nask: How many tokens is {{prompt}}?\nkind: number\nanswer: live:tokens.count\n:::\n::: panel bytes\nprompts: a b | c\n:::\n"), lessons.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if q := l.Sections[0].Questions[0]; q.Ask != "How many tokens is "+lessons.AskPrompt+"?" {
		t.Errorf("ask %q: {{prompt}} is for the page to fill", q.Ask)
	}
	// every drawn list of the lessons: the alternatives a page can draw
	for _, l := range load(t) {
		for _, s := range l.Sections {
			for _, p := range s.Panels {
				for list := range lessons.DrawnOptions {
					if v, ok := p.Options[list]; ok && len(lessons.Alternatives(v)) < 2 {
						t.Errorf("%s / %s: %s has a single alternative: nothing to draw", l.Slug, s.Heading, list)
					}
				}
			}
		}
	}
}
