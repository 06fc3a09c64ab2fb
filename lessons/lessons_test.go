package lessons_test

// lessons_test.go: lessons parse, contain no typed model numbers, and cover the reference lesson's ideas.

import (
	"regexp"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

func load(t *testing.T) []*lessons.Lesson {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := lessons.Load(web.LessonValues(catalog.ModelCardFor(m)))
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func TestLessonsParse(t *testing.T) {
	ls := load(t)
	if len(ls) != 4 {
		t.Fatalf("%d lessons, want 4", len(ls))
	}
	for _, l := range ls {
		for _, s := range l.Sections {
			if len(s.Panels) == 0 {
				t.Errorf("%s / %q: no live panel", l.Slug, s.Heading)
			}
			if strings.Contains(s.HTML, "{{") {
				t.Errorf("%s / %q: unresolved placeholder", l.Slug, s.Heading)
			}
		}
	}
}

// TestNoTypedNumbers: a number in a lesson's prose must come from a
// placeholder (computed from the model) or a live panel, never be typed.
func TestNoTypedNumbers(t *testing.T) {
	digit := regexp.MustCompile(`[0-9]`)
	for _, name := range lessons.Files() {
		b, _ := lessons.Source(name)
		inFront, inPanel := false, false
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case i == 0 && line == "---":
				inFront = true
				continue
			case inFront:
				inFront = line != "---"
				continue
			case strings.HasPrefix(line, "::: "): // a panel, question or exercise block
				inPanel = true
				continue
			case inPanel:
				inPanel = strings.TrimSpace(line) != ":::"
				continue
			}
			prose := regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(line, "")
			if digit.MatchString(prose) {
				t.Errorf("%s:%d: typed number in prose (use a {{placeholder}} or a live value): %q", name, i+1, line)
			}
		}
	}
}

// TestReferenceIdeasCovered lists each idea of the reference lesson
// (shared/reference/inference-lesson.txt) and the section that shows it live.
func TestReferenceIdeasCovered(t *testing.T) {
	ideas := []struct{ idea, lesson, section string }{
		{"inference reads trained weights; no backpropagation", "after-send", "The weights are already trained"},
		{"a tokenizer turns text into token ids from a vocabulary", "after-send", "Text becomes tokens"},
		{"tokens are not words: rare names and code split into several", "after-send", "Tokens are not words"},
		{"the application adds hidden tokens: system message, role markers", "after-send", "Hidden tokens the application adds"},
		{"each token id selects an embedding vector; positional information is added", "after-send", "Token ids become vectors"},
		{"prefill processes the prompt positions in parallel", "after-send", "Prefill: the whole prompt in one pass"},
		{"the final position yields one logit per vocabulary entry; logits are not probabilities", "after-send", "The last position yields logits"},
		{"the decode loop: calculate, select, append, stop or repeat", "after-send", "The decode loop"},
		{"decode is sequential", "after-send", "The decode loop"},
		{"stop conditions: stop token, stop string, output limit", "after-send", "The decode loop"},
		{"the KV cache stores earlier keys and values; it grows with the sequence", "after-send", "The KV cache keeps earlier work"},
		{"weights are one part of the memory budget", "kv-cache", "The memory budget"},
		{"weights stay fixed; tokens, activations, cache and logits change", "after-send", "What stays fixed and what changes"},
		{"saved memory lives outside the model", "after-send", "What the application adds"},
		{"tools, retrieved documents and earlier turns take room in the context", "after-send", "What the application adds"},
		{"position tells the same token apart; order changes the prediction", "after-send", "Position matters"},
		{"attention under the cache: read vs recomputed keys", "kv-cache", "Attention under the cache"},
		{"measure stages separately: TTFT, inter-token latency, output and prefill throughput; long vs short prompt", "after-send", "Measure the stages separately"},
		{"compare setups with the same workload", "after-send", "Measure the stages separately"},
		{"softmax turns logits into probabilities", "sampling", "From scores to probabilities"},
		{"temperature", "sampling", "Temperature"},
		{"top-k", "sampling", "Top-k"},
		{"top-p", "sampling", "Top-p, the nucleus"},
		{"greedy vs sampled", "sampling", "Greedy vs sampled"},
		{"seeds and reproducibility", "sampling", "Seeds and reproducibility"},
		{"keys and values per layer", "kv-cache", "Keys and values, per layer"},
		{"growth per token, bytes per token from the model's shape", "kv-cache", "What one more token costs"},
		{"context limit and what happens when it is reached", "kv-cache", "The context limit"},
		{"cache on vs off: same logits, different time", "kv-cache", "Cache on versus cache off"},
		{"a request's cache is freed when it ends", "serving", "Where the cache goes when a request ends"},
		{"a shared prefix's cache is reused", "serving", "A shared prefix is computed once"},
		{"context overflow: the oldest turns are truncated", "serving", "When the conversation outgrows the context"},
		{"a large or badly placed model decodes slowly", "serving", "Bigger models, the same arithmetic"},
		{"compare setups with the same workload", "serving", "Fair comparisons"},
	}
	ls := load(t)
	for _, id := range ideas {
		found := false
		for _, l := range ls {
			for _, s := range l.Sections {
				if l.Slug == id.lesson && s.Heading == id.section && len(s.Panels) > 0 {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("idea %q: no section %q with a live panel in lesson %q", id.idea, id.section, id.lesson)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"no front matter", "starts with front matter"},
		{"---\nslug: x\ntitle: y\n---\n## S\nstage: nowhere\n", `unknown stage "nowhere"`},
		{"---\nslug: x\ntitle: y\n---\n## S\nstage: logits\n::: panel magic\n:::\n", `unknown panel "magic"`},
		{"---\nslug: x\ntitle: y\n---\n## S\nstage: logits\n{{model.nope}}\n", "unknown placeholder {{model.nope}}"},
		{"---\nslug: x\ntitle: y\n---\n## S\nstage: logits\n::: panel logits\nprompt: x\n", "not closed"},
		{"---\nslug: x\ntitle: y\n---\n## S\ntext\n", "names no engine stage"},
	}
	for _, tt := range tests {
		_, err := lessons.Parse("t.md", []byte(tt.src), lessons.Values{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.src, err, tt.want)
		}
	}
}
