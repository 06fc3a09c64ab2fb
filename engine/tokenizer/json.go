package tokenizer

// json.go: the tokenizer.json loader: picks byte-level BPE or SentencePiece BPE from the file,
// applies every normalizer, pre-tokenizer and model option it reads, and refuses, naming the
// field and what is allowed, every option it cannot apply exactly as Hugging Face tokenizers does.

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
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Special    bool   `json:"special"`
		Normalized *bool  `json:"normalized"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		SingleWord bool   `json:"single_word"`
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
		Dropout      *float64        `json:"dropout"`
		FuseUnk      bool            `json:"fuse_unk"`
		IgnoreMerges bool            `json:"ignore_merges"`
		Prefix       *string         `json:"continuing_subword_prefix"`
		Suffix       *string         `json:"end_of_word_suffix"`
	} `json:"model"`
}

// component is a normalizer, pre-tokenizer, decoder or post-processor.
type component struct {
	Type          string          `json:"type"`
	Pretokenizers []component     `json:"pretokenizers"`
	Normalizers   []component     `json:"normalizers"`
	Decoders      []component     `json:"decoders"`
	Processors    []component     `json:"processors"`
	Replacement   string          `json:"replacement"`
	PrependScheme *string         `json:"prepend_scheme"`
	Split         *bool           `json:"split"`
	AddPrefix     *bool           `json:"add_prefix_space"`
	UseRegex      *bool           `json:"use_regex"`
	Prepend       string          `json:"prepend"`
	Individual    bool            `json:"individual_digits"`
	Pattern       json.RawMessage `json:"pattern"`
	Behavior      string          `json:"behavior"`
	Invert        bool            `json:"invert"`
	Content       string          `json:"content"`
	Start         int             `json:"start"`
	Stop          int             `json:"stop"`
	Single        []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
}

// flatten lists a component and, for Sequence, its parts.
func (c component) flatten() []component {
	var out []component
	for _, s := range [][]component{c.Pretokenizers, c.Normalizers, c.Decoders, c.Processors} {
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

// jsonOptions is what the normalizer, pre-tokenizer, decoder and
// post-processor sections ask for.
type jsonOptions struct {
	byteLevel     bool
	steps         []preStep
	metaspace     bool   // a Metaspace pre-tokenizer, or the legacy Prepend + Replace normalizers
	replacement   string // how spaces are spelled ("▁")
	prependScheme string // first, always, never
	prependAlways bool   // the Prepend normalizer: unconditional, before every text span
	split         bool   // Metaspace split
	norm          normalizer
	bos           string // the post-processor's leading special token
}

// ParseTokenizerJSON parses tokenizer.json bytes.
func ParseTokenizerJSON(b []byte) (Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("not valid tokenizer JSON: %v", err)
	}
	m := tj.Model
	switch {
	case m.Type != "BPE":
		return nil, fmt.Errorf("model type %q is not supported (supported: BPE)", m.Type)
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("model.vocab is empty")
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("model.dropout %v is not supported (allowed: null or 0; dropout makes encoding random)", *m.Dropout)
	case m.Prefix != nil && *m.Prefix != "":
		return nil, fmt.Errorf("model.continuing_subword_prefix %q is not supported (allowed: null or \"\")", *m.Prefix)
	case m.Suffix != nil && *m.Suffix != "":
		return nil, fmt.Errorf("model.end_of_word_suffix %q is not supported (allowed: null or \"\")", *m.Suffix)
	}
	merges, err := parseJSONMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	o, err := parseSections(tj)
	if err != nil {
		return nil, err
	}
	vocab := map[string]int{}
	for k, v := range m.Vocab {
		if v < 0 || v >= maxVocabIDs {
			return nil, fmt.Errorf("model.vocab: token %q has id %d; ids must be 0 to %d", k, v, maxVocabIDs-1)
		}
		vocab[k] = v
	}
	for i, a := range tj.AddedTokens {
		switch {
		case a.ID < 0 || a.ID >= maxVocabIDs:
			return nil, fmt.Errorf("added_tokens: token %q has id %d; ids must be 0 to %d", a.Content, a.ID, maxVocabIDs-1)
		case a.Content == "":
			return nil, fmt.Errorf("added_tokens[%d] (id %d) has empty content", i, a.ID)
		case a.LStrip || a.RStrip || a.SingleWord:
			return nil, fmt.Errorf("added token %q: lstrip, rstrip and single_word are not supported (allowed: false)", a.Content)
		}
		vocab[a.Content] = a.ID
	}
	var v *vocabulary
	var tk Tokenizer
	switch {
	case o.byteLevel:
		bl, err := newByteLevel(vocab, merges, "byte-level BPE (tokenizer.json)")
		if err != nil {
			return nil, err
		}
		bl.steps, bl.norm, bl.ignoreMerges = o.steps, o.norm, m.IgnoreMerges
		v, tk = &bl.vocabulary, bl
	case o.metaspace:
		sp, err := newSentencePieceJSON(vocab, merges, tj, o)
		if err != nil {
			return nil, err
		}
		v, tk = &sp.vocabulary, sp
	default:
		return nil, fmt.Errorf("cannot tell the tokenizer family: no ByteLevel or Metaspace pre-tokenizer, no Prepend normalizer")
	}
	if err := addTokens(v, tj, o.norm); err != nil {
		return nil, err
	}
	if o.byteLevel {
		if id, ok := vocab["<|endoftext|>"]; ok {
			v.bos, v.eos = id, id
		}
		if id, ok := vocab["<s>"]; ok && v.special[id] {
			v.bos = id
		}
		if id, ok := vocab["</s>"]; ok && v.special[id] {
			v.eos = id
		}
	}
	if o.bos != "" {
		id, ok := vocab[o.bos]
		if !ok {
			return nil, fmt.Errorf("post_processor: its leading token %q is not in the vocabulary", o.bos)
		}
		v.bos = id
	}
	return tk, nil
}

// addTokens registers tokenizer.json's added tokens: special ones are
// matched when the caller allows specials, the others always; with a
// normalizer, "normalized": true ones are matched after normalization.
func addTokens(v *vocabulary, tj tokenizerJSON, nf normalizer) error {
	v.specials, v.normSpecials, v.normIDs = nil, nil, nil
	for _, a := range tj.AddedTokens {
		if a.ID >= v.pieces.len() {
			return fmt.Errorf("added token %q has id %d, beyond the vocabulary's %d ids", a.Content, a.ID, v.pieces.len())
		}
		if a.Special {
			v.special[a.ID] = true
		} else {
			if v.always == nil {
				v.always = map[string]bool{}
			}
			v.always[a.Content] = true
		}
		v.setPiece(a.ID, a.Content)
		v.raw.set(a.ID, []byte(a.Content))
		v.setID(a.Content, a.ID)
		// "normalized" defaults to true for non-special added tokens, false for special ones
		normalized := !a.Special
		if a.Normalized != nil {
			normalized = *a.Normalized
		}
		if len(nf) > 0 && normalized { // matched by its normalized spelling, as HF does
			key := nf.apply(span{text: a.Content, special: -1}).text
			if v.normIDs == nil {
				v.normIDs = map[string]int{}
			}
			if _, dup := v.normIDs[key]; !dup {
				v.normIDs[key] = a.ID
				v.normSpecials = append(v.normSpecials, key)
			}
			if !a.Special {
				v.always[key] = true
			}
		} else {
			v.specials = append(v.specials, a.Content)
		}
	}
	listed := map[int]bool{}
	for _, a := range tj.AddedTokens {
		listed[a.ID] = true
	}
	for id := range v.special { // special by convention (<|endoftext|>) but not an added token
		if !listed[id] {
			v.specials = append(v.specials, v.pieces.at(id))
		}
	}
	sortSpecials(v.specials)
	sortSpecials(v.normSpecials)
	return nil
}

// parseSections reads the normalizer, pre-tokenizer, decoder and
// post-processor, refusing what we cannot apply exactly.
func parseSections(tj tokenizerJSON) (jsonOptions, error) {
	o := jsonOptions{replacement: "▁", prependScheme: "always", split: true}
	pre, err := parseComponent(tj.PreTokenizer)
	if err != nil {
		return o, fmt.Errorf("pre_tokenizer: %v", err)
	}
	norms, err := parseComponent(tj.Normalizer)
	if err != nil {
		return o, fmt.Errorf("normalizer: %v", err)
	}
	for _, c := range pre {
		switch c.Type {
		case "ByteLevel":
			if o.byteLevel {
				return o, fmt.Errorf("pre_tokenizer: more than one ByteLevel is not supported")
			}
			o.byteLevel = true
			o.steps = append(o.steps, preStep{kind: stepByteLevel, addPrefixSpace: c.AddPrefix == nil || *c.AddPrefix,
				useRegex: c.UseRegex == nil || *c.UseRegex})
		case "Digits":
			o.steps = append(o.steps, preStep{kind: stepDigits, individual: c.Individual})
		case "Split":
			// Only the patterns gpt2Split and llama3Split implement (GPT-2's,
			// Llama 3's, Qwen 2's); others would silently cut text differently.
			pat, isRegex := splitPattern(c.Pattern)
			kind, known := splitOf(strings.TrimSpace(pat))
			if !isRegex || !known {
				return o, fmt.Errorf("pre_tokenizer Split with pattern %q is not supported (GPT-2's, Llama 3's or Qwen 2's pattern as a Regex)", pat)
			}
			if c.Behavior != "Isolated" || c.Invert {
				return o, fmt.Errorf("pre_tokenizer Split with behavior %q, invert %v is not supported (allowed: behavior \"Isolated\", invert false)", c.Behavior, c.Invert)
			}
			o.steps = append(o.steps, preStep{kind: stepSplit, split: kind})
		case "Metaspace":
			o.metaspace = true
			if c.Replacement != "" {
				o.replacement = c.Replacement
			}
			switch {
			case c.PrependScheme != nil:
				o.prependScheme = *c.PrependScheme
			case c.AddPrefix != nil && !*c.AddPrefix:
				o.prependScheme = "never"
			}
			if s := o.prependScheme; s != "first" && s != "always" && s != "never" {
				return o, fmt.Errorf("pre_tokenizer Metaspace prepend_scheme %q is not supported (allowed: first, always, never)", s)
			}
			o.split = c.Split == nil || *c.Split
		default:
			return o, fmt.Errorf("pre_tokenizer %q is not supported (supported: ByteLevel, Digits, Split with GPT-2's, Llama 3's or Qwen 2's pattern, Metaspace)", c.Type)
		}
	}
	if o.byteLevel && o.metaspace {
		return o, fmt.Errorf("pre_tokenizer: ByteLevel and Metaspace together are not supported")
	}
	if !o.byteLevel && len(o.steps) > 0 {
		return o, fmt.Errorf("pre_tokenizer: Digits and Split are supported only together with ByteLevel")
	}
	replaced := false
	for _, c := range norms {
		if f, ok := parseNormForm(c.Type); ok {
			o.norm = append(o.norm, f)
			continue
		}
		switch c.Type {
		case "Prepend":
			if o.byteLevel || c.Prepend == "" {
				return o, fmt.Errorf("normalizer Prepend %q is supported only to put the Metaspace character before SentencePiece-style text", c.Prepend)
			}
			o.prependAlways = true
			o.replacement = c.Prepend
		case "Replace":
			pat, isRegex := splitPattern(c.Pattern)
			if o.byteLevel || isRegex || pat != " " || c.Content == "" {
				return o, fmt.Errorf("normalizer Replace %q → %q is not supported (only \" \" → the Metaspace character, in SentencePiece-style files)", pat, c.Content)
			}
			replaced = true
			o.replacement = c.Content
		default:
			return o, unsupportedNormalizer(c)
		}
	}
	if o.prependAlways || replaced {
		if o.metaspace {
			return o, fmt.Errorf("normalizer Prepend/Replace together with a Metaspace pre-tokenizer is not supported")
		}
		if !replaced {
			return o, fmt.Errorf("normalizer Prepend without Replace of \" \" is not supported")
		}
		o.metaspace = true
		o.prependScheme, o.split = "never", false
		if o.prependAlways {
			o.prependScheme = "always"
		}
	}
	if err := checkDecoder(tj.Decoder, o); err != nil {
		return o, err
	}
	bos, err := checkPostProcessor(tj.PostProcessor)
	if err != nil {
		return o, err
	}
	o.bos = bos
	return o, nil
}

// checkDecoder accepts the decoders whose output our Decode reproduces:
// ByteLevel for the byte-level family; Metaspace, or Replace of the
// Metaspace character, ByteFallback, Fuse and Strip for SentencePiece.
func checkDecoder(raw json.RawMessage, o jsonOptions) error {
	decs, err := parseComponent(raw)
	if err != nil {
		return fmt.Errorf("decoder: %v", err)
	}
	for _, c := range decs {
		ok := false
		switch c.Type {
		case "ByteLevel":
			ok = o.byteLevel
		case "Metaspace", "ByteFallback", "Fuse":
			ok = !o.byteLevel
		case "Replace":
			pat, _ := splitPattern(c.Pattern)
			ok = !o.byteLevel && pat == o.replacement && c.Content == " "
		case "Strip":
			ok = !o.byteLevel && c.Content == " " && c.Start <= 1 && c.Stop == 0
		}
		if !ok {
			family := "SentencePiece-style (Metaspace, Replace of the Metaspace character by \" \", ByteFallback, Fuse, Strip of one leading space)"
			if o.byteLevel {
				family = "byte-level (ByteLevel)"
			}
			return fmt.Errorf("decoder %q is not supported for this %s tokenizer (supported: %s)", c.Type, strings.Fields(family)[0], family)
		}
	}
	return nil
}

// checkPostProcessor accepts no post-processor, ByteLevel (offsets only),
// and TemplateProcessing that puts at most one special token before the
// text and none after it; it returns that token (the BOS that AddBOS adds).
func checkPostProcessor(raw json.RawMessage) (string, error) {
	procs, err := parseComponent(raw)
	if err != nil {
		return "", fmt.Errorf("post_processor: %v", err)
	}
	bos := ""
	for _, c := range procs {
		switch c.Type {
		case "ByteLevel":
		case "TemplateProcessing":
			seen := false
			for _, p := range c.Single {
				switch {
				case p.Sequence != nil:
					seen = true
				case p.SpecialToken != nil && !seen && bos == "":
					bos = p.SpecialToken.ID
				default:
					return "", fmt.Errorf("post_processor TemplateProcessing: single template adds tokens other than one leading special token; not supported (allowed: [BOS] $A or $A)")
				}
			}
			if st, ok := c.SpecialTokens[bos]; bos != "" && ok && len(st.IDs) != 1 {
				return "", fmt.Errorf("post_processor TemplateProcessing: special token %q stands for %d ids, want 1", bos, len(st.IDs))
			}
		default:
			return "", fmt.Errorf("post_processor %q is not supported (supported: ByteLevel, TemplateProcessing with [BOS] $A)", c.Type)
		}
	}
	return bos, nil
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

func newSentencePieceJSON(vocab map[string]int, merges [][2]string, tj tokenizerJSON, o jsonOptions) (*SentencePiece, error) {
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
	byID := make([]string, size)
	for p, id := range vocab {
		byID[id] = p
	}
	tk := &SentencePiece{vocabulary: vocabulary{pieces: piecesOf(byID), ids: newIDTable(len(vocab)), special: map[int]bool{},
		kind: "SentencePiece BPE (tokenizer.json)", bos: -1, eos: -1}, scores: make([]float32, size),
		dummyPrefix: o.prependScheme != "never", spaceRune: o.replacement}
	tk.hf = hfSentencePiece{prependAll: o.prependScheme == "always", prependIfNoSpace: !o.prependAlways,
		splitWords: o.split, noByteFallback: !tj.Model.ByteFallback, unk: -1, fuseUnk: tj.Model.FuseUnk,
		ignoreMerges: tj.Model.IgnoreMerges, norm: o.norm}
	for p, id := range vocab {
		tk.setID(p, id)
	}
	rank, err := mergeRanks(&tk.vocabulary, len(merges), func(i int) (string, string) { return merges[i][0], merges[i][1] })
	if err != nil {
		return nil, err
	}
	tk.mergeRank = rank
	tk.finish()
	if u := tj.Model.UnkToken; u != nil {
		id, ok := vocab[*u]
		if !ok {
			return nil, fmt.Errorf("model.unk_token %q is not in the vocabulary", *u)
		}
		tk.hf.unk = id
	}
	if id, ok := vocab["<s>"]; ok {
		tk.bos = id
	}
	if id, ok := vocab["</s>"]; ok {
		tk.eos = id
	}
	return tk, nil
}

// splitPattern reads a Split or Replace pattern: {"Regex": ...} or {"String": ...}.
func splitPattern(raw json.RawMessage) (pat string, isRegex bool) {
	var p struct {
		Regex  *string
		String *string
	}
	if err := json.Unmarshal(raw, &p); err == nil {
		switch {
		case p.Regex != nil:
			return *p.Regex, true
		case p.String != nil:
			return *p.String, false
		}
	}
	return string(raw), false
}
