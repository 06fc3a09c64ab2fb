package tokenizer

// tokenizer_test.go: tokenizers against goldens from the reference implementations, bad input, streaming decode, fuzz round-trips.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/inferscope/inferscope/internal/testenv"
)

type tokGolden struct {
	Cases []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	} `json:"cases"`
}

var gpt2Cache struct {
	once sync.Once
	tks  map[string]Tokenizer
	err  error
}

// gpt2Tokenizers loads the GPT-2 tokenizer both ways once per test binary
// (loading takes about a second; tests only read them).
func gpt2Tokenizers(t testing.TB) map[string]Tokenizer {
	t.Helper()
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	gpt2Cache.once.Do(func() {
		fromJSON, err := LoadTokenizerJSON(filepath.Join(dir, "tokenizer.json"))
		if err != nil {
			gpt2Cache.err = err
			return
		}
		fromFiles, err := loadGPT2VocabMerges(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
		if err != nil {
			gpt2Cache.err = err
			return
		}
		gpt2Cache.tks = map[string]Tokenizer{"tokenizer.json": fromJSON, "vocab.json+merges.txt": fromFiles}
	})
	if gpt2Cache.err != nil {
		t.Fatal(gpt2Cache.err)
	}
	return gpt2Cache.tks
}

// TestGPT2Golden: ids for tricky inputs equal those of js-tiktoken and
// gpt-3-encoder (testdata/gpt2_golden.json, from scripts/tokgolden).
func TestGPT2Golden(t *testing.T) {
	b, err := os.ReadFile("testdata/gpt2_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g tokGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for name, tk := range gpt2Tokenizers(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range g.Cases {
				toks, err := tk.Encode(c.Text, EncodeOptions{})
				if err != nil {
					t.Errorf("%q: %v", c.Text, err)
					continue
				}
				if got := tokenIDs(toks); !equalInts(got, c.IDs) {
					t.Errorf("%q:\n got %v\nwant %v", c.Text, got, c.IDs)
				}
				checkSpans(t, c.Text, toks)
				if d := Decode(tk, tokenIDs(toks)); d != c.Text {
					t.Errorf("decode(encode(%q)) = %q", c.Text, d)
				}
			}
		})
	}
}

// checkSpans: spans tile the input exactly, and each token's bytes are the
// input bytes of its span.
func checkSpans(t *testing.T, text string, toks []Token) {
	t.Helper()
	pos := 0
	for i, tk := range toks {
		if tk.Start == tk.End { // inserted (BOS, dummy prefix): covers no input
			continue
		}
		if tk.Start != pos {
			t.Errorf("%q token %d (%q): starts at %d, want %d", text, i, tk.Piece, tk.Start, pos)
			return
		}
		pos = tk.End
	}
	if pos != len(text) {
		t.Errorf("%q: spans end at %d, want %d", text, pos, len(text))
	}
}

func TestGPT2SpecialTokens(t *testing.T) {
	for name, tk := range gpt2Tokenizers(t) {
		t.Run(name, func(t *testing.T) {
			plain, _ := tk.Encode("a<|endoftext|>b", EncodeOptions{})
			if len(plain) < 4 {
				t.Errorf("as text, <|endoftext|> should be several tokens, got %v", tokenIDs(plain))
			}
			spec, _ := tk.Encode("a<|endoftext|>b", EncodeOptions{AllowSpecial: true})
			if ids := tokenIDs(spec); !equalInts(ids, []int{64, 50256, 65}) || !spec[1].Special {
				t.Errorf("allowed special: %v", spec)
			}
		})
	}
}

func TestStories260KTokenizer(t *testing.T) {
	sp := loadTok512(t)
	tests := []struct {
		text string
		want []int
	}{
		{"Once upon a time", []int{1, 403, 407, 261, 378}}, // expected-greedy.md
		{"", []int{1}},
	}
	for _, tt := range tests {
		toks, err := sp.Encode(tt.text, EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := tokenIDs(toks); !equalInts(got, tt.want) {
			t.Errorf("%q: got %v want %v", tt.text, got, tt.want)
		}
	}
	// byte fallback: a character not in the 512-token vocabulary
	toks, _ := sp.Encode("日", EncodeOptions{})
	var ids []int
	for _, tk := range toks {
		ids = append(ids, tk.ID)
		if tk.ID >= 3 && tk.ID < 259 && !tk.Partial {
			t.Errorf("byte token %q should be marked partial", tk.Piece)
		}
	}
	if !strings.Contains(toks[len(toks)-1].Piece, "<0x") {
		t.Errorf("日 should fall back to bytes, got %v", ids)
	}
	if got := Decode(sp, append([]int{1}, ids...)); got != "日" {
		t.Errorf("decode = %q", got)
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	tk := gpt2Tokenizers(t)["tokenizer.json"]
	tests := []struct {
		name, text, want string
	}{
		{"invalid utf8", "ab\xffcd", "not valid UTF-8 (bad byte 0xff at offset 2)"},
		{"too long", strings.Repeat("a", MaxEncodeBytes+1), "the limit is 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tk.Encode(tt.text, EncodeOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	// exactly at the limit is fine
	if _, err := tk.Encode(strings.Repeat("ab ", MaxEncodeBytes/3), EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedTokenizerFiles(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"not json", "{", "not valid tokenizer JSON"},
		{"wordpiece", `{"model":{"type":"WordPiece","vocab":{"a":0}}}`, `model type "WordPiece" is not supported`},
		{"empty vocab", `{"model":{"type":"BPE","vocab":{}}}`, "model.vocab is empty"},
		{"bad merge", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]}}`, `model.merges[0] "a" is not two`},
		{"missing bytes", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, "lacks the byte-level piece"},
		{"unknown pre", `{"pre_tokenizer":{"type":"BertPreTokenizer"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, `pre_tokenizer "BertPreTokenizer" is not supported`},
		{"llama3 split", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?i:'s|'t)|\\p{N}{1,3}"}},{"type":"ByteLevel"}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`, "Split with pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTokenizerJSON([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := ParseLlama2cTokenizer([]byte{7, 0, 0, 0, 0, 0}, 3); err == nil || !strings.Contains(err.Error(), "token 0") {
		t.Errorf("truncated tokenizer.bin: %v", err)
	}
}

func TestStreamDecoderNeverSplitsCharacters(t *testing.T) {
	tk := gpt2Tokenizers(t)["tokenizer.json"]
	text := "emoji 😀🎉👍🏽 日本語 café"
	toks, err := tk.Encode(text, EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := NewStreamDecoder(tk, -1)
	var got strings.Builder
	for _, tok := range toks {
		s := d.Add(tok.ID)
		if !utf8.ValidString(s) {
			t.Fatalf("stream emitted broken UTF-8 %q after token %q", s, tok.Piece)
		}
		got.WriteString(s)
	}
	got.WriteString(d.Flush())
	if got.String() != text {
		t.Fatalf("stream = %q", got.String())
	}
	partial := 0
	for _, tok := range toks {
		if tok.Partial {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("emoji should produce tokens that split a character")
	}
}

func FuzzGPT2RoundTrip(f *testing.F) {
	for _, s := range []string{"", "Hello world", "  x\n\ty", "😀é日本", "it's 42!"} {
		f.Add(s)
	}
	tk := gpt2Tokenizers(f)["tokenizer.json"]
	f.Fuzz(func(t *testing.T, s string) {
		toks, err := tk.Encode(s, EncodeOptions{})
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("invalid UTF-8 %q accepted", s)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := Decode(tk, tokenIDs(toks)); d != s {
			t.Fatalf("round trip %q → %q", s, d)
		}
		checkSpans(t, s, toks)
	})
}

func FuzzLlama2cTokenizerRoundTrip(f *testing.F) {
	for _, s := range []string{"", "Once upon a time", " spaced  out ", "é\n日本"} {
		f.Add(s)
	}
	sp := loadTok512(f)
	f.Fuzz(func(t *testing.T, s string) {
		toks, err := sp.Encode(s, EncodeOptions{AddBOS: true})
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("invalid UTF-8 %q accepted", s)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := Decode(sp, tokenIDs(toks)); d != s {
			t.Fatalf("round trip %q → %q", s, d)
		}
	})
}

func FuzzTokenizerJSON(f *testing.F) {
	const bytes = `"vocab":{"a":0},"merges":[]`
	for _, s := range []string{
		`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`,
		`{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"model":{"type":"BPE","vocab":{"▁":0,"a":1,"▁a":2},"merges":["▁ a"]}}`,
		`{"normalizer":{"type":"NFKC"},"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},"decoder":{"type":"Metaspace"},` +
			`"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>"}},{"Sequence":{"id":"A"}}]},` +
			`"added_tokens":[{"id":1,"content":"<s>","special":true,"normalized":false}],` +
			`"model":{"type":"BPE","byte_fallback":true,"unk_token":"<unk>","fuse_unk":true,"ignore_merges":true,"vocab":{"<unk>":0,"<s>":1,"▁":2,"a":3,"▁a":4,"<0x62>":5},"merges":[["▁","a"]]}}`,
		`{"normalizer":{"type":"NFD"},"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":true,"use_regex":false}]},"model":{"type":"BPE",` + bytes + `}}`,
		`{"added_tokens":[{"id":0,"content":"<x>","special":false,"normalized":true}],"normalizer":{"type":"NFC"},"pre_tokenizer":{"type":"Metaspace","prepend_scheme":"always","split":false},"model":{"type":"BPE","vocab":{"<x>":0,"▁":1},"merges":[]}}`,
		`{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"BPE","vocab":{"▁":0,"a":-7},"merges":[]},"added_tokens":[{"id":-1,"content":"x","special":true}]}`,
		`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":9223372036854775807},"merges":[]},"added_tokens":[{"id":4194303,"content":"<s>","special":true}]}`,
	} {
		f.Add([]byte(s), "a b ▁ é <s><x> 12")
	}
	f.Fuzz(func(t *testing.T, b []byte, text string) {
		tk, err := ParseTokenizerJSON(b)
		if err != nil {
			return
		}
		if _, err := tk.Encode("a b ▁ é", EncodeOptions{AddBOS: true, AllowSpecial: true}); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(text) {
			return
		}
		toks, err := tk.Encode(text, EncodeOptions{AllowSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, text, toks)
		for _, x := range toks {
			if x.ID < 0 || x.ID >= tk.VocabSize() {
				t.Fatalf("%q: token id %d outside the vocabulary (%d)", text, x.ID, tk.VocabSize())
			}
		}
	})
}

func FuzzLlama2cTokenizerFile(f *testing.F) {
	f.Add([]byte{7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'a'}, 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		tk, err := ParseLlama2cTokenizer(b, n%600)
		if err != nil {
			return
		}
		if _, err := tk.Encode("hello wörld", EncodeOptions{AddBOS: true}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMetaspaceTokenizerJSON: an HF Llama-style tokenizer.json (Prepend +
// Replace normalizer, byte fallback, merges by rank, special tokens).
func TestMetaspaceTokenizerJSON(t *testing.T) {
	vocab := map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2}
	for b := 0; b < 256; b++ {
		vocab[fmtByte(b)] = 3 + b
	}
	next := 259
	for _, p := range []string{"▁", "h", "e", "l", "o", "w", "r", "d", "he", "ll", "llo", "hello", "▁hello", "▁w", "or", "▁wor", "▁worl", "▁world"} {
		vocab[p] = next
		next++
	}
	merges := []string{"h e", "l l", "ll o", "he llo", "▁ hello", "▁ w", "o r", "▁w or", "▁wor l", "▁worl d"}
	tj := map[string]any{
		"added_tokens": []map[string]any{{"id": 1, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true}},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []map[string]any{
			{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": map[string]string{"String": " "}, "content": "▁"}}},
		"pre_tokenizer": nil,
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "byte_fallback": true},
	}
	b, _ := json.Marshal(tj)
	tk, err := ParseTokenizerJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text   string
		pieces []string
	}{
		{"hello world", []string{"<s>", "▁hello", "▁world"}},
		{"hello</s>", []string{"<s>", "▁hello", "<", "/", "s", ">"}},
		{"hé", []string{"<s>", "▁", "h", "<0xC3>", "<0xA9>"}},
	}
	for _, tt := range tests {
		toks, err := tk.Encode(tt.text, EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range toks {
			got = append(got, x.Piece)
		}
		// "<", "/", "s", ">" are not in this vocabulary: they fall back to bytes.
		if tt.text == "hello</s>" {
			if len(got) != 6 || got[2] != "<0x3C>" {
				t.Errorf("%q → %v", tt.text, got)
			}
		} else if strings.Join(got, "|") != strings.Join(tt.pieces, "|") {
			t.Errorf("%q → %v, want %v", tt.text, got, tt.pieces)
		}
		if d := Decode(tk, tokenIDs(toks)); d != tt.text {
			t.Errorf("decode %q → %q", tt.text, d)
		}
	}
	spec, _ := tk.Encode("hello</s>", EncodeOptions{AllowSpecial: true})
	if spec[len(spec)-1].ID != 2 || !spec[len(spec)-1].Special {
		t.Errorf("allowed special </s>: %v", spec)
	}
}

func fmtByte(b int) string { return "<0x" + strings.ToUpper(hex2(b)) + ">" }

func hex2(b int) string {
	const d = "0123456789abcdef"
	return string([]byte{d[b>>4], d[b&15]})
}

// TestSplitWithGPT2PatternAccepted: a tokenizer.json that spells GPT-2's
// pattern as an explicit Split step loads and encodes like GPT-2.
func TestSplitWithGPT2PatternAccepted(t *testing.T) {
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	json.Unmarshal(b, &tj)
	tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]any{"Regex": gpt2Pattern}, "behavior": "Isolated"},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
	}}
	b, _ = json.Marshal(tj)
	tk, err := ParseTokenizerJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	toks, _ := tk.Encode("Hello world", EncodeOptions{})
	if ids := tokenIDs(toks); !equalInts(ids, []int{15496, 995}) {
		t.Errorf("ids %v", ids)
	}
}

// loadTok512 is stories260K's 512-token SentencePiece vocabulary
// (engine/testdata/stories260K, present in every clone).
func loadTok512(t testing.TB) *SentencePiece {
	t.Helper()
	sp, err := LoadLlama2cTokenizer(filepath.Join(testenv.Stories260K(), "tok512.bin"), 512)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func tokenIDs(toks []Token) []int {
	var ids []int
	for _, t := range toks {
		ids = append(ids, t.ID)
	}
	return ids
}

func equalInts(a, b []int) bool { return slices.Equal(a, b) }

// TestTokenizerJSONRefusesOutOfRangeIDs: ids outside 0..4M-1 in model.vocab
// or added_tokens are an error naming the token, for both families (a
// negative Metaspace id used to index pieces[-7]).
func TestTokenizerJSONRefusesOutOfRangeIDs(t *testing.T) {
	meta := `{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"model":{"type":"BPE","vocab":%s,"merges":[]}%s}`
	byteLevel := `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":%s,"merges":[]}%s}`
	tests := []struct{ name, tmpl, vocab, added, want string }{
		{"metaspace negative", meta, `{"▁":0,"a":-7}`, "", `"a" has id -7`},
		{"metaspace max int", meta, `{"▁":0,"a":9223372036854775807}`, "", `"a" has id 9223372036854775807`},
		{"metaspace added negative", meta, `{"▁":0}`, `,"added_tokens":[{"id":-1,"content":"<s>","special":true}]`, `"<s>" has id -1`},
		{"byte-level huge", byteLevel, `{"a":4194304}`, "", `"a" has id 4194304`},
		{"byte-level added huge", byteLevel, `{"a":0}`, `,"added_tokens":[{"id":99999999,"content":"<x>","special":true}]`, `"<x>" has id 99999999`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTokenizerJSON([]byte(fmt.Sprintf(tt.tmpl, tt.vocab, tt.added)))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "ids must be 0 to 4194303") {
				t.Errorf("err %v, want one naming %s and the allowed range", err, tt.want)
			}
		})
	}
}

// loadGPT2VocabMerges reads vocab.json + merges.txt (a GPT-2 tokenizer as
// two files, not tokenizer.json).
func loadGPT2VocabMerges(vocabPath, mergesPath string) (*ByteLevelBPE, error) {
	vb, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, err
	}
	mb, err := os.ReadFile(mergesPath)
	if err != nil {
		return nil, err
	}
	return parseGPT2VocabMerges(vb, mb, vocabPath, mergesPath)
}
