package tokenizer

// json.go: the tokenizer.json loader: picks byte-level BPE or SentencePiece BPE from the file.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// maxVocabIDs bounds token ids read from files (4M entries).
const maxVocabIDs = 1 << 22

// tokenizerJSON is the subset of Hugging Face tokenizer.json we read.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Decoder       json.RawMessage `json:"decoder"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type         string          `json:"type"`
		Vocab        map[string]int  `json:"vocab"`
		Merges       json.RawMessage `json:"merges"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkToken     *string         `json:"unk_token"`
	} `json:"model"`
}

type component struct {
	Type          string      `json:"type"`
	Pretokenizers []component `json:"pretokenizers"`
	Normalizers   []component `json:"normalizers"`
	Decoders      []component `json:"decoders"`
	Replacement   string      `json:"replacement"`
	PrependScheme string      `json:"prepend_scheme"`
	AddPrefix     *bool       `json:"add_prefix_space"`
	Prepend       string      `json:"prepend"`
	Individual    bool        `json:"individual_digits"`
	Pattern       any         `json:"pattern"`
	Content       string      `json:"content"`
}

// flatten lists a component and, for Sequence, its parts.
func (c component) flatten() []component {
	var out []component
	for _, s := range [][]component{c.Pretokenizers, c.Normalizers, c.Decoders} {
		for _, p := range s {
			out = append(out, p.flatten()...)
		}
	}
	if c.Type != "Sequence" && c.Type != "" {
		out = append(out, c)
	}
	return out
}

func parseComponent(raw json.RawMessage) ([]component, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return c.flatten(), nil
}

// LoadTokenizerJSON reads a Hugging Face tokenizer.json with a BPE model:
// the ByteLevel family (GPT-2, SmolLM) or the Metaspace / SentencePiece
// family (Llama, TinyLlama) with byte fallback.
func LoadTokenizerJSON(path string) (Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	tk, err := ParseTokenizerJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tk, nil
}

// ParseTokenizerJSON parses tokenizer.json bytes.
func ParseTokenizerJSON(b []byte) (Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("not valid tokenizer JSON: %v", err)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("model type %q is not supported (supported: BPE)", tj.Model.Type)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, fmt.Errorf("model.vocab is empty")
	}
	merges, err := parseJSONMerges(tj.Model.Merges)
	if err != nil {
		return nil, err
	}
	pre, err := parseComponent(tj.PreTokenizer)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %v", err)
	}
	norm, err := parseComponent(tj.Normalizer)
	if err != nil {
		return nil, fmt.Errorf("normalizer: %v", err)
	}
	vocab := map[string]int{}
	for k, v := range tj.Model.Vocab {
		if v < 0 || v >= maxVocabIDs {
			return nil, fmt.Errorf("model.vocab: token %q has id %d; ids must be 0 to %d", k, v, maxVocabIDs-1)
		}
		vocab[k] = v
	}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 || a.ID >= maxVocabIDs {
			return nil, fmt.Errorf("added_tokens: token %q has id %d; ids must be 0 to %d", a.Content, a.ID, maxVocabIDs-1)
		}
		vocab[a.Content] = a.ID
	}
	byteLevel, metaspace, digits := false, false, false
	replacement, prependFirst := "▁", true
	for _, c := range pre {
		switch c.Type {
		case "ByteLevel":
			byteLevel = true
		case "Metaspace":
			metaspace = true
			if c.Replacement != "" {
				replacement = c.Replacement
			}
			if c.PrependScheme == "never" || c.AddPrefix != nil && !*c.AddPrefix {
				prependFirst = false
			}
		case "Digits":
			digits = c.Individual
		case "Split":
			// Accepted only when it is GPT-2's own pattern (which gpt2Split
			// implements); other patterns (Llama 3, Qwen) would silently cut
			// text differently, so they are refused.
			if pat := splitPattern(c.Pattern); pat != gpt2Pattern {
				return nil, fmt.Errorf("pre_tokenizer Split with pattern %q is not supported (only GPT-2's pattern)", pat)
			}
		default:
			return nil, fmt.Errorf("pre_tokenizer %q is not supported", c.Type)
		}
	}
	for _, c := range norm {
		switch c.Type {
		case "Prepend":
			metaspace = true
			replacement = c.Prepend
		case "Replace":
			metaspace = true
		case "NFC", "NFKC":
			// inputs are assumed normalized; most vocabularies are ASCII-dominated
		default:
			return nil, fmt.Errorf("normalizer %q is not supported", c.Type)
		}
	}
	switch {
	case byteLevel:
		tk, err := newByteLevel(vocab, merges, "byte-level BPE (tokenizer.json)")
		if err != nil {
			return nil, err
		}
		tk.splitDigits = digits
		for _, a := range tj.AddedTokens {
			if a.Special {
				tk.addSpecial(a.Content, a.ID)
			}
		}
		if id, ok := vocab["<|endoftext|>"]; ok {
			tk.bos, tk.eos = id, id
		}
		for _, name := range []string{"<s>", "<|im_start|>"} {
			if id, ok := vocab[name]; ok && tk.special[id] && name == "<s>" {
				tk.bos = id
			}
		}
		if id, ok := vocab["</s>"]; ok && tk.special[id] {
			tk.eos = id
		}
		return tk, nil
	case metaspace:
		return newSentencePieceJSON(vocab, merges, tj, replacement, prependFirst)
	}
	return nil, fmt.Errorf("cannot tell the tokenizer family: no ByteLevel or Metaspace pre-tokenizer, no Prepend normalizer")
}

// parseJSONMerges accepts both merges encodings: ["a b", ...] and [["a","b"], ...].
func parseJSONMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var asStrings []string
	if err := json.Unmarshal(raw, &asStrings); err == nil {
		out := make([][2]string, len(asStrings))
		for i, s := range asStrings {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("model.merges[%d] %q is not two space-separated pieces", i, s)
			}
			out[i] = [2]string{a, b}
		}
		return out, nil
	}
	var asPairs [][]string
	if err := json.Unmarshal(raw, &asPairs); err != nil {
		return nil, fmt.Errorf("model.merges: want a list of \"a b\" strings or [a, b] pairs: %v", err)
	}
	out := make([][2]string, len(asPairs))
	for i, p := range asPairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("model.merges[%d] has %d parts, want 2", i, len(p))
		}
		out[i] = [2]string{p[0], p[1]}
	}
	return out, nil
}

func newSentencePieceJSON(vocab map[string]int, merges [][2]string, tj tokenizerJSON, space string, prefix bool) (*SentencePiece, error) {
	size := 0
	for p, id := range vocab {
		if id < 0 || id >= maxVocabIDs {
			return nil, fmt.Errorf("token %q has id %d; ids must be 0 to %d", p, id, maxVocabIDs-1)
		}
		size = max(size, id+1)
	}
	if size > maxVocabIDs {
		return nil, fmt.Errorf("vocabulary ids reach %d, beyond the limit %d", size, 1<<22)
	}
	tk := &SentencePiece{vocabulary: vocabulary{pieces: make([]string, size), ids: vocab, special: map[int]bool{},
		kind: "SentencePiece BPE (tokenizer.json)", bos: -1, eos: -1}, scores: make([]float32, size), dummyPrefix: prefix, spaceRune: space}
	for p, id := range vocab {
		tk.pieces[id] = p
	}
	rank, err := mergeRanks(vocab, merges)
	if err != nil {
		return nil, err
	}
	tk.mergeRank = rank
	tk.finish()
	for _, a := range tj.AddedTokens {
		if a.Special {
			tk.special[a.ID] = true
			tk.specials = append(tk.specials, a.Content)
		}
	}
	sortSpecials(tk.specials)
	if id, ok := vocab["<s>"]; ok {
		tk.bos = id
	}
	if id, ok := vocab["</s>"]; ok {
		tk.eos = id
	}
	return tk, nil
}

const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func splitPattern(p any) string {
	if m, ok := p.(map[string]any); ok {
		for _, k := range []string{"Regex", "String"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	return fmt.Sprint(p)
}
