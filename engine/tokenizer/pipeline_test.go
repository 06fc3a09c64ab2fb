package tokenizer

// pipeline_test.go: the tokenizer.json pipeline pieces on their own — normalization offsets,
// pre-tokenizer steps, refusals of options we cannot apply — and fuzz targets for each.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// TestRefusedOptions: every option the loader cannot apply exactly is
// refused, naming the field and what is allowed.
func TestRefusedOptions(t *testing.T) {
	const model = `"model":{"type":"BPE","vocab":{"a":0},"merges":[]}`
	bl := `"pre_tokenizer":{"type":"ByteLevel"}`
	tests := []struct {
		name, json, want string
	}{
		{"lowercase", `{"normalizer":{"type":"Lowercase"},` + bl + `,` + model + `}`, `normalizer "Lowercase" is not supported (supported: NFC, NFD, NFKC, NFKD`},
		{"precompiled", `{"normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Precompiled"}]},` + bl + `,` + model + `}`, `normalizer "Precompiled" is not supported`},
		{"replace regex", `{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"Regex":" +"},"content":"▁"}]},` + model + `}`, `normalizer Replace " +" → "▁" is not supported (only " " → the Metaspace character`},
		{"prepend alone", `{"normalizer":{"type":"Prepend","prepend":"▁"},` + model + `}`, `normalizer Prepend without Replace`},
		{"prepend bytelevel", `{"normalizer":{"type":"Prepend","prepend":"▁"},` + bl + `,` + model + `}`, `normalizer Prepend "▁" is supported only`},
		{"whitespace", `{"pre_tokenizer":{"type":"Whitespace"},` + model + `}`, `pre_tokenizer "Whitespace" is not supported (supported: ByteLevel, Digits, Split with GPT-2's, Llama 3's or Qwen 2's pattern, Metaspace)`},
		{"split string", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"Isolated"},{"type":"ByteLevel"}]},` + model + `}`, `Split with pattern " " is not supported (GPT-2's, Llama 3's or Qwen 2's pattern as a Regex)`},
		{"split removed", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` + jsonString(gpt2Pattern) + `},"behavior":"Removed"},{"type":"ByteLevel"}]},` + model + `}`, `behavior "Removed", invert false is not supported (allowed: behavior "Isolated", invert false)`},
		{"split inverted", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":` + jsonString(gpt2Pattern) + `},"behavior":"Isolated","invert":true},{"type":"ByteLevel"}]},` + model + `}`, `invert true is not supported`},
		{"two bytelevels", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"ByteLevel"},{"type":"ByteLevel"}]},` + model + `}`, `more than one ByteLevel`},
		{"prepend scheme", `{"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"sometimes"},` + model + `}`, `prepend_scheme "sometimes" is not supported (allowed: first, always, never)`},
		{"metaspace and bytelevel", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Metaspace"},{"type":"ByteLevel"}]},` + model + `}`, `ByteLevel and Metaspace together`},
		{"digits without bytelevel", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Metaspace"},{"type":"Digits"}]},` + model + `}`, `Digits and Split are supported only together with ByteLevel`},
		{"metaspace plus prepend", `{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `Prepend/Replace together with a Metaspace`},
		{"wordpiece decoder", `{"decoder":{"type":"WordPiece"},` + bl + `,` + model + `}`, `decoder "WordPiece" is not supported for this byte-level tokenizer (supported: byte-level (ByteLevel))`},
		{"metaspace decoder on bytelevel", `{"decoder":{"type":"Metaspace"},` + bl + `,` + model + `}`, `decoder "Metaspace" is not supported for this byte-level`},
		{"bytelevel decoder on metaspace", `{"decoder":{"type":"ByteLevel"},"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `decoder "ByteLevel" is not supported for this SentencePiece-style tokenizer`},
		{"strip two", `{"decoder":{"type":"Strip","content":" ","start":2,"stop":0},"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `decoder "Strip" is not supported`},
		{"roberta", `{"post_processor":{"type":"RobertaProcessing"},` + bl + `,` + model + `}`, `post_processor "RobertaProcessing" is not supported (supported: ByteLevel, TemplateProcessing with [BOS] $A)`},
		{"template sep", `{"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>"}},{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"</s>"}}]},` + bl + `,` + model + `}`, `single template adds tokens other than one leading special token`},
		{"template unknown bos", `{"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<bos>"}},{"Sequence":{"id":"A"}}]},"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `leading token "<bos>" is not in the vocabulary`},
		{"dropout", `{` + bl + `,"model":{"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}}`, `model.dropout 0.1 is not supported (allowed: null or 0`},
		{"subword prefix", `{` + bl + `,"model":{"type":"BPE","continuing_subword_prefix":"##","vocab":{"a":0},"merges":[]}}`, `model.continuing_subword_prefix "##" is not supported`},
		{"word suffix", `{` + bl + `,"model":{"type":"BPE","end_of_word_suffix":"</w>","vocab":{"a":0},"merges":[]}}`, `model.end_of_word_suffix "</w>" is not supported`},
		{"lstrip", `{"added_tokens":[{"id":0,"content":"<mask>","lstrip":true,"special":true}],"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `added token "<mask>": lstrip, rstrip and single_word are not supported (allowed: false)`},
		{"empty added", `{"added_tokens":[{"id":0,"content":"","special":true}],"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, `has empty content`},
		{"added beyond vocab", `{"added_tokens":[{"id":7,"content":"<x>","special":true}],"pre_tokenizer":{"type":"Metaspace"},` + model + `}`, ``},
		{"unk missing", `{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"BPE","unk_token":"<unk>","vocab":{"a":0},"merges":[]}}`, `model.unk_token "<unk>" is not in the vocabulary`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, err := ParseTokenizerJSON([]byte(tt.json))
			if tt.want == "" { // accepted: must then encode without trouble
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tk.Encode("a <x> b", EncodeOptions{AllowSpecial: true}); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v\nwant %q", err, tt.want)
			}
		})
	}
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// TestNormalizeOffsets: normalized text maps back to input offsets that
// start at the span, end at its end, never go back, and land on character
// boundaries.
func TestNormalizeOffsets(t *testing.T) {
	tests := []struct {
		form       string
		in, want   string
		wantOrigin []int32 // input offset of each normalized byte, and of the end
	}{
		{"NFC", "e\u0301x", "\u00e9x", []int32{0, 3, 3, 4}}, // é covers "e" + U+0301; x stays one to one
		{"NFD", "\u00e9x", "e\u0301x", []int32{0, 2, 2, 2, 3}},
		{"NFKC", "ﬁ!", "fi!", []int32{0, 3, 3, 4}},
		{"NFC", "plain", "plain", nil},
	}
	for _, tt := range tests {
		s := normalizer{normForms[tt.form]}.apply(span{text: tt.in, special: -1})
		if s.text != tt.want || !slices.Equal(s.orig, tt.wantOrigin) {
			t.Errorf("%s(%q) = %q %v, want %q %v", tt.form, tt.in, s.text, s.orig, tt.want, tt.wantOrigin)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "e\u0301t\u00e9", "ﬁne ＡＢＣ", "\u1100\u1161\u11a8", "A\u030a\u0301\u0323", "x"} {
		f.Add(s, uint8(0))
	}
	forms := []string{"NFC", "NFD", "NFKC", "NFKD"}
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		if !utf8.ValidString(in) {
			return
		}
		name := forms[int(which)%len(forms)]
		form := normForms[name]
		s := normalizer{form}.apply(span{text: in, start: 5, special: -1})
		if s.text != form.String(in) {
			t.Fatalf("%s(%q) = %q, want %q", name, in, s.text, form.String(in))
		}
		if s.at(0) != 5 || s.at(len(s.text)) != 5+len(in) {
			t.Fatalf("%s(%q): offsets run %d..%d, want 5..%d", name, in, s.at(0), s.at(len(s.text)), 5+len(in))
		}
		for i := 1; i <= len(s.text); i++ {
			o := s.at(i)
			if o < s.at(i-1) {
				t.Fatalf("%s(%q): offset %d of byte %d goes back", name, in, o, i)
			}
			if i < len(s.text) && utf8.RuneStart(s.text[i]) && o < len(in)+5 && !utf8.RuneStart(in[o-5]) {
				t.Fatalf("%s(%q): character at byte %d maps inside an input character (offset %d)", name, in, i, o)
			}
		}
	})
}

// TestPreTokenizeSteps: the steps cut as Hugging Face does (see the
// variant goldens for the full check); a few cases by hand.
func TestPreTokenizeSteps(t *testing.T) {
	digits := func(ind bool) preStep { return preStep{kind: stepDigits, individual: ind} }
	bl := func(prefix, regex bool) preStep {
		return preStep{kind: stepByteLevel, addPrefixSpace: prefix, useRegex: regex}
	}
	tests := []struct {
		name  string
		steps []preStep
		in    string
		want  []string // pieces, "+" marking an inserted space
	}{
		{"gpt2", []preStep{bl(false, true)}, "Hi  you 42", []string{"Hi", " ", " you", " 42"}},
		{"NEL is space", []preStep{bl(false, true)}, "a \u0085b", []string{"a", " ", "\u0085", "b"}}, // \s+(?!\S) leaves U+0085 to \s+
		{"BOM is not", []preStep{bl(false, true)}, "a \ufeffb", []string{"a", " \ufeff", "b"}},
		{"prefix", []preStep{bl(true, true)}, "Hi you", []string{"+Hi", " you"}},
		{"no prefix before a space", []preStep{bl(true, true)}, " Hi", []string{" Hi"}},
		{"no regex", []preStep{bl(true, false)}, "Hi you", []string{"+Hi you"}},
		{"digits then bytelevel", []preStep{digits(true), bl(false, true)}, "a 123", []string{"a", " ", "1", "2", "3"}},
		{"digit runs", []preStep{digits(false), bl(false, true)}, "a 123b", []string{"a", " ", "123", "b"}},
		{"bytelevel then digits", []preStep{bl(true, true), digits(false)}, "12 ab", []string{"+", "12", " ab"}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range preTokenize(tt.in, tt.steps) {
			s := tt.in[p.start:p.end]
			if p.prefix {
				s = "+" + s
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q → %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func FuzzPreTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello  world 42", "a \u0085b\ufeff", "x'll 12³", "  \n\t "} {
		f.Add(s, uint8(0))
	}
	combos := [][]preStep{
		gpt2Steps,
		{{kind: stepByteLevel, addPrefixSpace: true, useRegex: true}},
		{{kind: stepDigits, individual: true}, {kind: stepByteLevel, useRegex: true}},
		{{kind: stepSplit}, {kind: stepByteLevel, addPrefixSpace: true}},
		{{kind: stepByteLevel, addPrefixSpace: true, useRegex: true}, {kind: stepDigits}},
	}
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		if !utf8.ValidString(in) {
			return
		}
		// ByteLevel's add_prefix_space puts a space before every piece
		// that does not start with one, also pieces an earlier Split cut.
		pos := 0
		for _, p := range preTokenize(in, combos[int(which)%len(combos)]) {
			if p.start != pos || p.end < p.start || p.end == p.start && !p.prefix {
				t.Fatalf("%q: piece %+v does not continue at %d", in, p, pos)
			}
			if p.prefix && p.end > p.start && in[p.start] == ' ' {
				t.Fatalf("%q: piece %+v has an inserted space before a space", in, p)
			}
			pos = p.end
		}
		if pos != len(in) {
			t.Fatalf("%q: pieces end at %d, want %d", in, pos, len(in))
		}
	})
}

var variantCache sync.Map // file → Tokenizer

// variantTokenizers loads the HF golden variants (in every clone).
func variantTokenizers(t testing.TB) map[string]Tokenizer {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(hfGoldenDir, "variants", "*.tokenizer.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tokenizer variants in %s/variants: run bash scripts/tokgolden/regen.sh", hfGoldenDir)
	}
	out := map[string]Tokenizer{}
	for _, f := range files {
		if tk, ok := variantCache.Load(f); ok {
			out[f] = tk.(Tokenizer)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := ParseTokenizerJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		variantCache.Store(f, tk)
		out[f] = tk
	}
	return out
}

// FuzzVariantEncode: every variant encodes any valid text; its tokens'
// spans tile the input, and their bytes spell the normalized input apart
// from spaces (which prefixes add and Metaspace spells "▁").
func FuzzVariantEncode(f *testing.F) {
	for _, s := range []string{"", "Hello world", "e\u0301 ﬁ ² 12345", "a \u0085b\ufeff", "<s>x</s> <|endoftext|>", "▁▁ x", "ff"} {
		f.Add(s, true)
	}
	tks := variantTokenizers(f)
	strip := strings.NewReplacer(" ", "", "▁", "")
	f.Fuzz(func(t *testing.T, s string, allow bool) {
		if !utf8.ValidString(s) {
			return
		}
		for file, tk := range tks {
			toks, err := tk.Encode(s, EncodeOptions{AllowSpecial: allow})
			if err != nil {
				t.Fatalf("%s: %q: %v", file, s, err)
			}
			checkSpans(t, s, toks)
			var got strings.Builder
			for _, x := range toks {
				got.Write(tk.TokenBytes(x.ID))
			}
			// an added token matched on normalized text spells its content
			// as written ("ﬀ" for "ff" under NFKC): both sides normalized
			want, spelled := s, got.String()
			for _, f := range tokNorm(tk) {
				want, spelled = f.String(want), f.String(spelled)
			}
			if strip.Replace(spelled) != strip.Replace(want) {
				t.Fatalf("%s: %q: tokens spell %q, want %q (spaces aside)", filepath.Base(file), s, got.String(), want)
			}
		}
	})
}

func tokNorm(tk Tokenizer) normalizer {
	switch x := tk.(type) {
	case *ByteLevelBPE:
		return x.norm
	case *SentencePiece:
		return x.hf.norm
	}
	return nil
}
