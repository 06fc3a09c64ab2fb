package tokenizer

// split_llama3_test.go: Llama 3's and Qwen 2's pre-tokenizer. Through
// tokenizer.json (Split + ByteLevel) the HF goldens hf_variant_bl-llama3-split
// and hf_variant_bl-qwen2-split check it (TestHFGoldens); here the same
// vocabularies as GGUF metadata (tokenizer.ggml.pre "llama-bpe", "qwen2")
// encode every golden case as Hugging Face tokenizers does, hand cases
// pin the pieces, and a fuzz target checks the split tiles any text.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/inferscope/inferscope/engine/gguf"
)

// ggufFromJSON is tokenizer.json's vocabulary as GGUF "gpt2" metadata
// (tokens by id, merges, special added tokens CONTROL) with pre-tokenizer pre.
func ggufFromJSON(t *testing.T, tj []byte, pre string) *gguf.Tokenizer {
	t.Helper()
	var j struct {
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tj, &j); err != nil {
		t.Fatal(err)
	}
	n := len(j.Model.Vocab) + len(j.Added)
	g := &gguf.Tokenizer{Model: "gpt2", Pre: pre, TokenTypes: make([]int32, n),
		BOS: -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1, EOT: -1}
	tokens := make([]string, n)
	for p, id := range j.Model.Vocab {
		tokens[id], g.TokenTypes[id] = p, ggufTokenNormal
	}
	for _, a := range j.Added {
		tokens[a.ID], g.TokenTypes[a.ID] = a.Content, map[bool]int32{true: 3, false: 4}[a.Special]
	}
	var merges []string
	for _, m := range j.Model.Merges {
		var pair []string
		if json.Unmarshal(m, &pair) == nil && len(pair) == 2 {
			merges = append(merges, pair[0]+" "+pair[1])
			continue
		}
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			t.Fatal(err)
		}
		merges = append(merges, s)
	}
	g.Tokens, g.Merges = gguf.StringArrayOf(tokens), gguf.StringArrayOf(merges)
	return g
}

// TestGGUFLlama3Qwen2Pre: the GGUF pre-tokenizers llama-bpe and qwen2 on
// the variants' vocabulary give Hugging Face tokenizers' ids.
func TestGGUFLlama3Qwen2Pre(t *testing.T) {
	for variant, pre := range map[string]string{"bl-llama3-split": "llama-bpe", "bl-qwen2-split": "qwen2"} {
		t.Run(pre, func(t *testing.T) {
			g, tj := loadHFGolden(t, filepath.Join(hfGoldenDir, "hf_variant_"+variant+".json"))
			tk, err := FromGGUF(ggufFromJSON(t, tj, pre))
			if err != nil {
				t.Fatal(err)
			}
			compareHF(t, g, tk)
		})
	}
}

// TestLlama3Split pins the pieces of a few texts (Hugging Face tokenizers'
// pre_tokenize_str on Llama 3's and Qwen 2's Split, by hand).
func TestLlama3Split(t *testing.T) {
	tests := []struct {
		in          string
		llama, qwen []string
	}{
		{"Hello world", []string{"Hello", " world"}, nil},
		{"I'M sure'S", []string{"I", "'M", " sure", "'S"}, nil},
		{"1234567", []string{"123", "456", "7"}, []string{"1", "2", "3", "4", "5", "6", "7"}},
		{"x  \n\n  y", []string{"x", "  \n\n", " ", " y"}, nil},
		{"$$$\n\nabc", []string{"$$$\n\n", "abc"}, nil},
		{" !!\n x", []string{" !!\n", " x"}, nil},
		{"(abc) [x]y", []string{"(abc", ")", " [", "x", "]y"}, nil},
		{"\tword \u00a0word", []string{"\tword", " ", "\u00a0word"}, nil},
		{"a   ", []string{"a", "   "}, nil},
		{"a\r\n", []string{"a", "\r\n"}, nil},
		{"'", []string{"'"}, nil},
		{"'ll've", []string{"'ll", "'ve"}, nil},
	}
	for _, tt := range tests {
		for _, k := range []struct {
			digits int
			want   []string
		}{{3, tt.llama}, {1, tt.qwen}} {
			if k.want == nil {
				k.want = tt.llama
			}
			u := []rune(tt.in)
			var got []string
			for _, c := range llama3Split(nil, u, k.digits) {
				got = append(got, string(u[c[0]:c[1]]))
			}
			if !slices.Equal(got, k.want) {
				t.Errorf("%q (digits by %d): %q, want %q", tt.in, k.digits, got, k.want)
			}
		}
	}
}

// FuzzLlama3Split: any text splits into non-empty pieces that tile it, as
// characters and (through the GGUF steps) as bytes; digit pieces hold at
// most the pattern's count.
func FuzzLlama3Split(f *testing.F) {
	for _, s := range []string{"", "Hello  world 42", "a \u0085b\ufeff", "x'LL 1234567³", "  \n\t \r\n x", "$$$\n\nabc"} {
		f.Add(s, false)
	}
	if b, err := os.ReadFile(filepath.Join(hfGoldenDir, "hf_variant_bl-llama3-split.json")); err == nil {
		var g hfGolden
		if json.Unmarshal(b, &g) == nil {
			for i, c := range g.Cases {
				if i%7 == 0 {
					f.Add(c.Text, i%2 == 0)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in string, qwen bool) {
		if !utf8.ValidString(in) {
			return
		}
		digits := map[bool]int{false: 3, true: 1}[qwen]
		u := []rune(in)
		pos := 0
		cuts := llama3Split(nil, u, digits)
		for i, c := range cuts {
			if c[0] != pos || c[1] <= c[0] {
				t.Fatalf("%q: piece %d %v does not continue at %d", in, i, c, pos)
			}
			allN := true
			for _, r := range u[c[0]:c[1]] {
				allN = allN && unicode.IsNumber(r)
			}
			if allN && c[1]-c[0] > digits {
				t.Fatalf("%q: digit piece %q longer than %d", in, string(u[c[0]:c[1]]), digits)
			}
			pos = c[1]
		}
		if pos != len(u) {
			t.Fatalf("%q: pieces end at %d, want %d", in, pos, len(u))
		}
		// through preTokenize (the GGUF steps): byte pieces tile the text
		end := 0
		for _, p := range preTokenize(in, ggufPreSteps[map[bool]string{false: "llama-bpe", true: "qwen2"}[qwen]]) {
			if p.start != end || p.end <= p.start {
				t.Fatalf("%q: byte piece %+v does not continue at %d", in, p, end)
			}
			end = p.end
		}
		if end != len(in) {
			t.Fatalf("%q: byte pieces end at %d, want %d", in, end, len(in))
		}
	})
}
