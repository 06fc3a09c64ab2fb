package lessons_test

// content_test.go: what a lesson may say. Model facts come only through
// {{model.*}} placeholders (a typed architecture word or model count would
// go stale with another default model), and every idea of the reference
// lesson maps to a section whose panel shows it live (coverage.txt).

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/lessons"
)

// archWords are words that state a model's architecture or number format:
// true of one model, false of the next. Placeholders say them instead
// ({{model.family}}, {{model.position_encoding}}, {{model.attention_kind}},
// {{model.bytes_per_weight}}, {{model.precision}}…).
var archWords = regexp.MustCompile(`(?i)\b(` + strings.Join([]string{
	`rope`, `rotary`, `alibi`, `learned position (vector|embedding)s?`,
	`grouped-query`, `multi-query`, `multi-head attention`, `gqa`, `mqa`,
	`llama(-style|-like)?`, `gpt-?2(-style)?`, `mistral`, `[a-z0-9]+-style model`,
	`swiglu`, `gelu`, `rmsnorm`, `layernorm`,
	`float32|float16|bfloat16|bf16|fp16|fp32|f32|int8|half precision|single precision`,
	`(one|two|three|four|eight|sixteen|thirty-two)-(byte|bit)`,
}, "|") + `)\b`)

// modelCounts: a spelled-out count of a model part ("five layers", "eight
// heads") is a model number typed in words.
var modelCounts = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|sixteen|thirty-two|sixty-four)[ -](transformer )?(layers?|heads?|query heads?|key/value heads?|blocks?|dimensions?|bytes? per (weight|number|token))\b`)

// prose returns a lesson's lines a student reads, with placeholders
// removed: text outside blocks, and the ask of questions and exercises.
func prose(src string) map[int]string {
	out := map[int]string{}
	ph := regexp.MustCompile(`\{\{[^}]*\}\}`)
	inFront, inBlock := false, false
	for i, line := range strings.Split(src, "\n") {
		switch {
		case i == 0 && line == "---":
			inFront = true
			continue
		case inFront:
			inFront = line != "---"
			continue
		case strings.HasPrefix(line, ":::") && !inBlock:
			inBlock = true
			continue
		case inBlock:
			inBlock = strings.TrimSpace(line) != ":::"
			if a, ok := strings.CutPrefix(line, "ask:"); ok {
				out[i+1] = ph.ReplaceAllString(a, "")
			}
			continue
		case strings.HasPrefix(line, "stage:"):
			continue
		}
		out[i+1] = ph.ReplaceAllString(line, "")
	}
	return out
}

func TestNoTypedModelFacts(t *testing.T) {
	// the checks themselves: each must catch what the issue found typed
	for _, bad := range []string{"a small Llama-style model", "rotary position embedding (RoPE) rotates", "grouped-query attention",
		"as four-byte numbers", "through all five layers", "eight query heads", "kept in bf16", "a GPT-2-style model"} {
		if !archWords.MatchString(bad) && !modelCounts.MatchString(bad) {
			t.Errorf("the check misses %q", bad)
		}
	}
	for _, ok := range []string{"one position per step", "three temperatures side by side", "the large language model", "one pass", "a layer"} {
		if archWords.MatchString(ok) || modelCounts.MatchString(ok) {
			t.Errorf("the check flags %q", ok)
		}
	}
	digit := regexp.MustCompile(`[0-9]`)
	for _, name := range lessons.Files() {
		b, _ := lessons.Source(name)
		for n, line := range prose(string(b)) {
			if m := archWords.FindString(line); m != "" {
				t.Errorf("%s:%d: typed architecture word %q (use a {{model.*}} placeholder from the model card): %q", name, n, m, line)
			}
			if m := modelCounts.FindString(line); m != "" {
				t.Errorf("%s:%d: typed model count %q (use a {{model.*}} placeholder): %q", name, n, m, line)
			}
			if digit.MatchString(line) {
				t.Errorf("%s:%d: typed number (use a {{placeholder}} or a live value): %q", name, n, line)
			}
		}
	}
}

type idea struct {
	line                                int
	idea, quote, lesson, section, panel string
}

func readCoverage(t *testing.T) []idea {
	t.Helper()
	b, err := os.ReadFile("coverage.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []idea
	var cur *idea
	for i, line := range strings.Split(string(b)+"\n", "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if cur != nil {
				if cur.idea == "" || cur.quote == "" || cur.lesson == "" || cur.section == "" || cur.panel == "" {
					t.Errorf("coverage.txt:%d: an entry needs idea, quote, lesson, section and panel", cur.line)
				}
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if cur == nil {
			cur = &idea{line: i + 1}
		}
		k, v, ok := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch {
		case !ok:
			t.Errorf("coverage.txt:%d: %q is not key: value", i+1, line)
		case k == "idea":
			cur.idea = v
		case k == "quote":
			cur.quote = v
		case k == "lesson":
			cur.lesson = v
		case k == "section":
			cur.section = v
		case k == "panel":
			cur.panel = v
		default:
			t.Errorf("coverage.txt:%d: unknown key %q (allowed: idea, quote, lesson, section, panel)", i+1, k)
		}
	}
	return out
}

// TestCoverage: every mapped section exists and embeds a live panel of the
// named kind; every quote is verbatim in the reference, and every paragraph
// of the reference is quoted by some idea; both follow-up lessons are
// covered too.
func TestCoverage(t *testing.T) {
	ideas := readCoverage(t)
	ls := load(t)
	followUps := map[string]int{}
	for _, id := range ideas {
		found := false
		for _, l := range ls {
			for _, s := range l.Sections {
				if l.Slug != id.lesson || s.Heading != id.section {
					continue
				}
				for _, p := range s.Panels {
					found = found || p.Kind == id.panel
				}
			}
		}
		if !found {
			t.Errorf("coverage.txt:%d: idea %q: lesson %q has no section %q with a %q panel", id.line, id.idea, id.lesson, id.section, id.panel)
		}
		if f, ok := strings.CutPrefix(id.quote, "follow-up: "); ok {
			followUps[f]++
		}
	}
	for _, f := range []string{"sampling", "kv-cache"} {
		if followUps[f] < 4 {
			t.Errorf("follow-up lesson %q: %d ideas mapped, want its ideas (at least four)", f, followUps[f])
		}
	}
	ref, err := os.ReadFile(testenv.SharedDir(t, "reference/inference-lesson.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(ref)
	for _, id := range ideas {
		if !strings.HasPrefix(id.quote, "follow-up: ") && !strings.Contains(text, id.quote) {
			t.Errorf("coverage.txt:%d: quote %q is not in the reference", id.line, id.quote)
		}
	}
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.TrimSpace(para)
		if len(para) < 80 { // headings and one-line links between paragraphs
			continue
		}
		quoted := false
		for _, id := range ideas {
			quoted = quoted || strings.Contains(para, id.quote)
		}
		if !quoted {
			t.Errorf("no idea in coverage.txt quotes this paragraph of the reference: %.120q", para)
		}
	}
}
