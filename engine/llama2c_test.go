package engine

// llama2c_test.go: stories260K logits and greedy text equal llama2.c's.

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/testenv"
)

func loadStories(t *testing.T) *Model { return loadStoriesTB(t) }

func loadStoriesTB(t testing.TB) *Model {
	t.Helper()
	dir := testenv.Stories260K()
	m, err := LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// parseExpected reads expected-greedy.md (internal/testenv).
func parseExpected(t *testing.T) (map[string]string, []testenv.ExpectedTop) {
	return testenv.Stories260KExpected(t)
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func TestStories260KTop5Logits(t *testing.T) {
	m := loadStories(t)
	_, rows := parseExpected(t)
	toks, err := m.Tokenizer.Encode("Once upon a time", tokenizer.EncodeOptions{AddBOS: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := tokenIDs(toks)
	if want := []int{1, 403, 407, 261, 378}; !equalInts(ids, want) {
		t.Fatalf("encode: got %v want %v", ids, want)
	}
	// The table continues greedily past the prompt: feed the listed tokens.
	st := NewState(m.Config)
	kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
	var worst float64
	for _, r := range rows {
		logits, err := m.Forward(st, kv, []int{r.Token}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := argmax(logits); got != r.Argmax {
			t.Errorf("pos %d: argmax %d, want %d", r.Pos, got, r.Argmax)
		}
		for _, p := range r.Top {
			d := float64(logits[int(p[0])]) - p[1]
			if d < 0 {
				d = -d
			}
			worst = max(worst, d)
			if d > 1e-4 {
				t.Errorf("pos %d token %d: logit %.6f, want %.6f (diff %.2g)", r.Pos, int(p[0]), logits[int(p[0])], p[1], d)
			}
		}
	}
	t.Logf("largest |logit - llama2.c| over %d positions × 5: %.3g", len(rows), worst)
}

func TestStories260KGreedyText(t *testing.T) {
	m := loadStories(t)
	texts, _ := parseExpected(t)
	for prompt, want := range texts {
		t.Run(prompt, func(t *testing.T) {
			got := greedyLlama2c(t, m, prompt, 64)
			if got != want {
				t.Errorf("greedy text differs from llama2.c\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

// greedyLlama2c reproduces run.c's loop: steps counts positions including
// BOS and the prompt; output is every token after BOS.
func greedyLlama2c(t *testing.T, m *Model, prompt string, steps int) string {
	toks, err := m.Tokenizer.Encode(prompt, tokenizer.EncodeOptions{AddBOS: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := tokenIDs(toks)
	st := NewState(m.Config)
	kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
	out := []int{ids[0]}
	tok := ids[0]
	for pos := 0; pos < steps; pos++ {
		logits, err := m.Forward(st, kv, []int{tok}, nil)
		if err != nil {
			t.Fatal(err)
		}
		next := argmax(logits)
		if pos < len(ids)-1 {
			next = ids[pos+1]
		}
		if next == 1 {
			break
		}
		out = append(out, next)
		tok = next
	}
	return tokenizer.Decode(m.Tokenizer, out)
}

func tokenIDs(toks []tokenizer.Token) []int {
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
	}
	return ids
}

func equalInts(a, b []int) bool { return slices.Equal(a, b) }
