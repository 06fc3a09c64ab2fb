// Package lessons holds inferscope's teaching content: Markdown files with a
// small front matter, "## " sections, and embedded live panels. Adding a
// lesson needs no Go code: drop a .md file here.
//
// Format of a lesson file:
//
//	---
//	slug: sampling
//	title: Sampling: how temperature, top-k and top-p choose the next token
//	summary: one line for the index
//	order: 2
//	---
//	## Section heading
//	stage: logits                 (the engine stage this section demonstrates)
//
//	Markdown text. {{model.vocab}} is replaced by a number computed from the
//	model; {{live:logits.vocab}} is filled in by the panel from the engine's
//	event when it runs.
//
//	::: panel logits
//	prompt: The capital of France is
//	temperature: 0.8
//	:::
//
// A panel block names a view (see PanelKinds) and the run it needs; the
// student can edit its prompt. Panel options: prompt, system, temperature,
// top_k, top_p, seed, max_new_tokens, until (a stage), tokens (decode this
// many), compare (a second prompt or setting, view-specific), no_cache,
// runs (timed repetitions after a warm-up), requests (busy server, memory budget).
// A panel may offer alternatives drawn once per visit (so neighbours'
// answers differ): prompts, compares and notes, each a list separated by
// " | "; the page picks the same index of every list (?draw=N picks it, a
// class follows its presenter's draw), and a question's ask may say
// {{prompt}}: the prompt drawn for the section's first panel.
//
// A question block asks the student to predict what the section's panel
// will show; the page checks the answer against the live value the panel
// publishes when it runs (never against a typed answer). An exercise block
// has the same fields and is checked on demand, after the student changed
// and re-ran the panel (see question.go):
//
//	::: question
//	id: greedy-pick
//	ask: Which token will greedy decoding pick?
//	kind: choice                  (choice, number or text)
//	options: live:logits.top4     (choice only: a live list, or a | b | c)
//	answer: live:logits.top1
//	tolerance: 10%                (number only: relative with %, else absolute)
//	:::
//
// Words of the glossary (glossary.txt) get a definition on hover, focus or
// tap, the first time each appears in a section (glossary.go).
package lessons

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer/html"
)

//go:embed *.md glossary.txt
var files embed.FS

// PanelKinds are the live views a section can embed.
var PanelKinds = []string{"tokens", "chat", "logits", "checksum",
	// static/js/lessonpanels/ (aftersend.js, kvcache.js)
	"context-limit", "bytes", "same-row", "prefill-steps", "modelview", "loop", "stops", "busy", "stage-timing", "knows",
	"kvgrid", "kvgrow", "memory-budget", "cache-compare",
	// static/js/lessonpanels/ (appcontext.js, position.js, attncache.js)
	"app-context", "position", "attention-cache",
	// static/js/lessonpanels/serving.js
	"kv-lifecycle", "prefix-reuse", "context-overflow", "big-models", "fair-compare",
	// static/js/lessonpanels/quantization.js
	"quantization"}

// DrawnOptions are the panel options that list alternatives, one drawn per
// visit, and the option each one sets.
var DrawnOptions = map[string]string{"prompts": "prompt", "compares": "compare", "notes": "note"}

// Stages a section may name.
var Stages = []string{"tokenize", "embed", "prefill", "logits", "sample", "append", "stop"}

// Panel is one embedded live view.
type Panel struct {
	Kind    string            `json:"kind"`
	Options map[string]string `json:"options"`
}

// Section is one step of a lesson.
type Section struct {
	Heading string  `json:"heading"`
	Stage   string  `json:"stage"`
	HTML    string  `json:"-"`
	Source  string  `json:"-"` // Markdown after placeholders were resolved
	Panels  []Panel `json:"panels"`
	// Questions are the section's question and exercise blocks, in order.
	Questions []Question `json:"questions"`
	// Terms are the glossary entries the section's text explains on hover.
	Terms []string `json:"terms"`
}

// Lesson is a parsed lesson file.
type Lesson struct {
	Slug     string
	Title    string
	Summary  string
	Order    int
	File     string
	Sections []Section
}

// Values resolves {{name}} placeholders with numbers computed from the model.
type Values map[string]string

var (
	placeholder = regexp.MustCompile(`\{\{\s*([a-z_:.]+)\s*\}\}`)
	// Lessons are our own files, so their raw HTML (the panel and live
	// placeholders this package inserts) is trusted.
	md = goldmark.New(goldmark.WithRendererOptions(html.WithUnsafe()))
)

// Load parses every lesson, resolving placeholders from vals. An unknown
// placeholder, panel kind or stage is an error naming the file and line.
func Load(vals Values) ([]*Lesson, error) {
	names, err := fs.Glob(files, "*.md")
	if err != nil {
		return nil, err
	}
	var out []*Lesson
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		l, err := Parse(n, b, vals)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out, nil
}

// Source returns a lesson file's raw text (for content checks).
func Source(name string) ([]byte, error) { return files.ReadFile(name) }

// Files lists the lesson files.
func Files() []string {
	n, _ := fs.Glob(files, "*.md")
	return n
}

// Parse reads one lesson file.
func Parse(name string, b []byte, vals Values) (*Lesson, error) {
	l := &Lesson{File: name}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	errf := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	inFront, frontDone := false, false
	var cur *Section
	var text strings.Builder
	var panel *Panel
	var q *qblock
	ids := map[string]bool{}
	flush := func() error {
		if cur == nil {
			return nil
		}
		src := text.String()
		var ferr error
		src = placeholder.ReplaceAllStringFunc(src, func(m string) string {
			key := placeholder.FindStringSubmatch(m)[1]
			if live, ok := strings.CutPrefix(key, "live:"); ok {
				return `<span class="live" data-live="` + live + `">…</span>`
			}
			v, ok := vals[key]
			if !ok {
				ferr = fmt.Errorf("%s: section %q: unknown placeholder {{%s}}", name, cur.Heading, key)
			}
			return v
		})
		if ferr != nil {
			return ferr
		}
		var h bytes.Buffer
		if err := md.Convert([]byte(src), &h); err != nil {
			return err
		}
		cur.Source = src
		cur.HTML, cur.Terms = gloss(h.String(), len(l.Sections))
		l.Sections = append(l.Sections, *cur)
		text.Reset()
		return nil
	}
	for sc.Scan() {
		line++
		s := sc.Text()
		switch {
		case line == 1 && s == "---":
			inFront = true
			continue
		case inFront && s == "---":
			inFront, frontDone = false, true
			continue
		case inFront:
			k, v, ok := strings.Cut(s, ":")
			if !ok {
				return nil, errf("front matter line %q is not key: value", s)
			}
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "slug":
				l.Slug = v
			case "title":
				l.Title = v
			case "summary":
				l.Summary = v
			case "order":
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, errf("order %q is not a number", v)
				}
				l.Order = n
			default:
				return nil, errf("unknown front matter key %q (allowed: slug, title, summary, order)", k)
			}
			continue
		}
		if !frontDone {
			return nil, errf("a lesson starts with front matter between --- lines")
		}
		if q != nil {
			if strings.TrimSpace(s) == ":::" {
				qq, err := q.finish(vals)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %s %q: %w", name, q.line, q.block, qq.ID, err)
				}
				if ids[qq.ID] {
					return nil, fmt.Errorf("%s:%d: %s id %q is used twice in this lesson", name, q.line, q.block, qq.ID)
				}
				ids[qq.ID] = true
				cur.Questions = append(cur.Questions, qq)
				fmt.Fprintf(&text, "\n<div class=\"lesson-question\" data-question=\"%d\"></div>\n\n", len(cur.Questions)-1)
				q = nil
				continue
			}
			if err := q.field(s); err != nil {
				return nil, errf("%s", err)
			}
			continue
		}
		if panel != nil {
			if strings.TrimSpace(s) == ":::" {
				cur.Panels = append(cur.Panels, *panel)
				fmt.Fprintf(&text, "\n<div class=\"lesson-panel\" data-panel=\"%d\"></div>\n\n", len(cur.Panels)-1)
				panel = nil
				continue
			}
			k, v, ok := strings.Cut(s, ":")
			if !ok {
				return nil, errf("panel option %q is not key: value", s)
			}
			panel.Options[strings.TrimSpace(k)] = strings.TrimSpace(v)
			continue
		}
		if h, ok := strings.CutPrefix(s, "## "); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &Section{Heading: strings.TrimSpace(h)}
			continue
		}
		if cur == nil {
			if strings.TrimSpace(s) != "" {
				return nil, errf("text before the first ## section")
			}
			continue
		}
		if st, ok := strings.CutPrefix(s, "stage:"); ok && text.Len() == 0 {
			cur.Stage = strings.TrimSpace(st)
			if !contains(Stages, cur.Stage) {
				return nil, errf("unknown stage %q (allowed: %s)", cur.Stage, strings.Join(Stages, ", "))
			}
			continue
		}
		if b, ok := strings.CutPrefix(s, ":::"); ok && isQuestionBlock(b) {
			q = &qblock{block: strings.TrimSpace(b), line: line, fields: map[string]string{}}
			continue
		}
		if kind, ok := strings.CutPrefix(s, "::: panel "); ok {
			kind = strings.TrimSpace(kind)
			if !contains(PanelKinds, kind) {
				return nil, errf("unknown panel %q (allowed: %s)", kind, strings.Join(PanelKinds, ", "))
			}
			panel = &Panel{Kind: kind, Options: map[string]string{}}
			continue
		}
		if b, ok := strings.CutPrefix(s, ":::"); ok {
			return nil, errf("unknown block %q (allowed: ::: panel KIND, ::: question, ::: exercise)", strings.TrimSpace(b))
		}
		text.WriteString(s)
		text.WriteByte('\n')
	}
	if panel != nil {
		return nil, errf("panel block not closed with :::")
	}
	if q != nil {
		return nil, fmt.Errorf("%s:%d: %s block not closed (a line of ::: ends it)", name, q.line, q.block)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if l.Slug == "" || l.Title == "" || len(l.Sections) == 0 {
		return nil, fmt.Errorf("%s: a lesson needs a slug, a title and at least one ## section", name)
	}
	for _, sec := range l.Sections {
		if sec.Stage == "" {
			return nil, fmt.Errorf("%s: section %q names no engine stage (add a line stage: …)", name, sec.Heading)
		}
		if err := checkDraws(sec); err != nil {
			return nil, fmt.Errorf("%s: section %q: %w", name, sec.Heading, err)
		}
	}
	return l, nil
}

// Alternatives splits a drawn option's list ("a | b | c").
func Alternatives(v string) []string {
	var out []string
	for _, a := range strings.Split(v, "|") {
		out = append(out, strings.TrimSpace(a))
	}
	return out
}

// checkDraws: a panel's drawn lists have no empty alternative and the same
// length; an ask that says {{prompt}} belongs to a section whose first
// panel has a prompt.
func checkDraws(sec Section) error {
	for i, p := range sec.Panels {
		n, first := 0, ""
		for _, k := range sortedKeys(DrawnOptions) {
			v, ok := p.Options[k]
			if !ok {
				continue
			}
			alts := Alternatives(v)
			for _, a := range alts {
				if a == "" {
					return fmt.Errorf("panel %d (%s): %s %q has an empty alternative", i+1, p.Kind, k, v)
				}
			}
			if n > 0 && len(alts) != n {
				return fmt.Errorf("panel %d (%s): %s has %d alternatives and %s %d: the page draws the same index of each", i+1, p.Kind, k, len(alts), first, n)
			}
			n, first = len(alts), k
			if one := p.Options[DrawnOptions[k]]; one != "" && !contains(alts, one) {
				return fmt.Errorf("panel %d (%s): %s %q is not one of its %s", i+1, p.Kind, DrawnOptions[k], one, k)
			}
		}
	}
	for _, q := range sec.Questions {
		if strings.Contains(q.Ask, AskPrompt) && (len(sec.Panels) == 0 || (sec.Panels[0].Options["prompt"] == "" && sec.Panels[0].Options["prompts"] == "")) {
			return fmt.Errorf("question %q says %s, but the section's first panel has no prompt", q.ID, AskPrompt)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
