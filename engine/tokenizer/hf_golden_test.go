package tokenizer

// hf_golden_test.go: token ids equal Hugging Face tokenizers' (the Rust library transformers
// uses) for GPT-2's tokenizer, the default model's and small variants
// (engine/testdata/tokenizer/hf_*.json, written by scripts/tokgolden/gen_hf.mjs).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/testenv"
)

// hfGolden is one golden file: the tokenizer it came from and HF's ids.
type hfGolden struct {
	Regenerate      string `json:"regenerate"`
	Reference       string `json:"reference"`
	Tokenizer       string `json:"tokenizer"` // relative to the repository root
	TokenizerSHA256 string `json:"tokenizer_sha256"`
	Cases           []struct {
		Text       string `json:"text"`
		IDs        []int  `json:"ids"`
		JSTiktoken []int  `json:"js_tiktoken"` // the second opinion, where it differs
		// HF's ids with addSpecialTokens (the post-processor's BOS), where they differ from IDs
		IDsAddSpecial []int `json:"ids_add_special"`
	} `json:"cases"`
}

const hfGoldenDir = "../testdata/tokenizer"

// loadHFGolden reads a golden and its tokenizer.json, failing with the
// regenerate command when the tokenizer is not the one the golden was
// made from.
func loadHFGolden(t *testing.T, file string) (hfGolden, []byte) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g hfGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	path := filepath.Join(testenv.RepoRoot(), filepath.FromSlash(g.Tokenizer))
	if rel, ok := strings.CutPrefix(g.Tokenizer, "../shared/"); ok {
		path = testenv.SharedDir(t, rel)
	}
	tj, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.checkSource(filepath.Base(file), tj); err != nil {
		t.Fatal(err)
	}
	return g, tj
}

// checkSource says, with the command that fixes it, when tokenizer.json is
// not the file the golden was generated from (the default model's
// tokenizer is replaced when the model is retrained).
func (g hfGolden) checkSource(name string, tj []byte) error {
	sum := sha256.Sum256(tj)
	if got := hex.EncodeToString(sum[:]); got != g.TokenizerSHA256 {
		return fmt.Errorf("%s changed since %s was generated (sha256 %s, golden made from %s).\n"+
			"Regenerate the Hugging Face goldens with:\n\n    %s\n\nand review the diff",
			g.Tokenizer, name, got, g.TokenizerSHA256, g.Regenerate)
	}
	return nil
}

// TestHFGoldenStale: a changed tokenizer.json fails with the command to run.
func TestHFGoldenStale(t *testing.T) {
	g, tj := loadHFGolden(t, filepath.Join(hfGoldenDir, "hf_default.json"))
	changed := append(slices.Clone(tj), ' ')
	err := g.checkSource("hf_default.json", changed)
	if err == nil || !strings.Contains(err.Error(), "bash scripts/tokgolden/regen.sh default") ||
		!strings.Contains(err.Error(), "models/default/tokenizer.json changed") {
		t.Fatalf("stale golden: %v", err)
	}
}

// TestHFGoldens: for every golden, our ids equal HF tokenizers' on every
// case (hand-written and seeded random strings), special-token strings
// matched as HF does, and the tokens' spans tile the input.
func TestHFGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(hfGoldenDir, "hf_*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("HF goldens missing in %s (%v): run bash scripts/tokgolden/regen.sh", hfGoldenDir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "hf_"), ".json")
		t.Run(name, func(t *testing.T) {
			g, tj := loadHFGolden(t, file)
			tk, err := ParseTokenizerJSON(tj)
			if err != nil {
				t.Fatalf("%s: %v", g.Tokenizer, err)
			}
			compareHF(t, g, tk)
			if name == "tiny-gpt2" { // GPT-2's other file format, the same tokenizer
				t.Run("vocab.json+merges.txt", func(t *testing.T) { compareHF(t, g, gpt2Tokenizers(t)["vocab.json+merges.txt"]) })
			}
		})
	}
}

// compareHF encodes every case of g with tk, allowing special tokens as HF
// always does, and reports the cases whose ids differ (the first ten in
// full) and any whose spans do not tile the input.
func compareHF(t *testing.T, g hfGolden, tk Tokenizer) {
	t.Helper()
	bad := 0
	for _, c := range g.Cases {
		toks, err := tk.Encode(c.Text, EncodeOptions{AllowSpecial: true})
		if err != nil {
			t.Errorf("%q: %v", c.Text, err)
			bad++
			continue
		}
		checkSpans(t, c.Text, toks)
		if got := tokenIDs(toks); !slices.Equal(got, c.IDs) {
			if bad++; bad <= 10 {
				t.Errorf("%q:\n  got %v %s\n   HF %v %s", c.Text, got, pieces(tk, got), c.IDs, pieces(tk, c.IDs))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ from %s", bad, len(g.Cases), g.Reference)
	}
	// where HF's post-processor adds a BOS, AddBOS adds the same one
	withBOS := 0
	for _, c := range g.Cases {
		if c.IDsAddSpecial == nil {
			continue
		}
		withBOS++
		toks, err := tk.Encode(c.Text, EncodeOptions{AllowSpecial: true, AddBOS: true})
		if got := tokenIDs(toks); err != nil || !slices.Equal(got, c.IDsAddSpecial) {
			t.Errorf("%q with BOS: got %v (%v), HF with special tokens %v", c.Text, got, err, c.IDsAddSpecial)
		}
	}
	if withBOS > 0 {
		t.Logf("%d cases checked with the post-processor's BOS", withBOS)
	}
}

// TestHFGoldenSecondOpinion: where js-tiktoken (JavaScript regex \s) differs
// from HF on GPT-2, the input holds a character that one of them counts as
// whitespace and the other not (U+0085, U+FEFF) — nothing else.
func TestHFGoldenSecondOpinion(t *testing.T) {
	g, _ := loadHFGolden(t, filepath.Join(hfGoldenDir, "hf_tiny-gpt2.json"))
	n := 0
	for _, c := range g.Cases {
		if c.JSTiktoken == nil {
			continue
		}
		n++
		if !strings.ContainsAny(c.Text, "\u0085\ufeff") {
			t.Errorf("%q: js-tiktoken %v differs from HF %v without U+0085 or U+FEFF", c.Text, c.JSTiktoken, c.IDs)
		}
	}
	if n == 0 {
		t.Errorf("the golden records no disagreement with js-tiktoken; the U+0085/U+FEFF hand cases should")
	}
}

func pieces(tk Tokenizer, ids []int) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprintf("%q", tk.Piece(id)))
	}
	return "[" + strings.Join(s, " ") + "]"
}
