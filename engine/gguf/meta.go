package gguf

// meta.go: the metadata a model loader needs, typed and checked.

import (
	"fmt"
	"math"
)

func (f *File) str(key string) (string, bool, error) {
	v, ok := f.Get(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.Str()
	if !isStr {
		return "", true, fmt.Errorf("gguf: %s is a %s, not a STRING", key, v.typeName())
	}
	return s, true, nil
}

// count reads a non-negative integer that fits an int (any integer type).
func (f *File) count(key string) (int, bool, error) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false, nil
	}
	if v.Type == Array {
		return 0, true, fmt.Errorf("gguf: %s is an array (per-layer values?), not one integer: not supported", key)
	}
	u, isUint := v.Uint()
	if !isUint || u > math.MaxInt32 {
		return 0, true, fmt.Errorf("gguf: %s is %s (a %s), not a count", key, v, v.typeName())
	}
	return int(u), true, nil
}

func (f *File) float(key string) (float64, bool, error) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false, nil
	}
	x, isFloat := v.Float()
	if !isFloat {
		return 0, true, fmt.Errorf("gguf: %s is a %s, not a FLOAT32/FLOAT64", key, v.typeName())
	}
	return x, true, nil
}

// Architecture is general.architecture ("llama", "qwen2", "gemma3", …).
func (f *File) Architecture() (string, error) {
	s, ok, err := f.str("general.architecture")
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", fmt.Errorf("gguf: no general.architecture")
	}
	return s, nil
}

// HyperParams are an architecture's shape keys ({arch}.…); a key the
// file lacks is 0 unless said otherwise.
type HyperParams struct {
	Arch               string
	ContextLength      int // {arch}.context_length
	EmbeddingLength    int // {arch}.embedding_length (required)
	BlockCount         int // {arch}.block_count (required)
	FeedForwardLength  int // {arch}.feed_forward_length
	HeadCount          int // {arch}.attention.head_count (required)
	HeadCountKV        int // {arch}.attention.head_count_kv; HeadCount when absent
	KeyLength          int // {arch}.attention.key_length
	ValueLength        int // {arch}.attention.value_length
	RopeDimensionCount int // {arch}.rope.dimension_count
	VocabSize          int // {arch}.vocab_size
	SlidingWindow      int // {arch}.attention.sliding_window

	RopeFreqBase     float64 // {arch}.rope.freq_base
	RMSEpsilon       float64 // {arch}.attention.layer_norm_rms_epsilon
	LayerNormEpsilon float64 // {arch}.attention.layer_norm_epsilon
}

// HyperParams reads the architecture's shape keys, checking their types
// and that the required ones are there and positive.
func (f *File) HyperParams() (*HyperParams, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	h := &HyperParams{Arch: arch}
	ints := []struct {
		key      string
		dst      *int
		required bool
	}{
		{"context_length", &h.ContextLength, false},
		{"embedding_length", &h.EmbeddingLength, true},
		{"block_count", &h.BlockCount, true},
		{"feed_forward_length", &h.FeedForwardLength, false},
		{"attention.head_count", &h.HeadCount, true},
		{"attention.head_count_kv", &h.HeadCountKV, false},
		{"attention.key_length", &h.KeyLength, false},
		{"attention.value_length", &h.ValueLength, false},
		{"rope.dimension_count", &h.RopeDimensionCount, false},
		{"vocab_size", &h.VocabSize, false},
		{"attention.sliding_window", &h.SlidingWindow, false},
	}
	for _, k := range ints {
		key := arch + "." + k.key
		n, ok, err := f.count(key)
		if err != nil {
			return nil, err
		}
		if k.required && (!ok || n == 0) {
			return nil, fmt.Errorf("gguf: %s is missing or 0", key)
		}
		*k.dst = n
	}
	if h.HeadCountKV == 0 {
		h.HeadCountKV = h.HeadCount
	}
	if h.HeadCount%h.HeadCountKV != 0 {
		return nil, fmt.Errorf("gguf: %d attention heads do not share %d key/value heads evenly", h.HeadCount, h.HeadCountKV)
	}
	floats := []struct {
		key string
		dst *float64
	}{
		{"rope.freq_base", &h.RopeFreqBase},
		{"attention.layer_norm_rms_epsilon", &h.RMSEpsilon},
		{"attention.layer_norm_epsilon", &h.LayerNormEpsilon},
	}
	for _, k := range floats {
		x, ok, err := f.float(arch + "." + k.key)
		if err != nil {
			return nil, err
		}
		if ok && !(x > 0 && x < math.Inf(1)) {
			return nil, fmt.Errorf("gguf: %s.%s is %g, not a positive number", arch, k.key, x)
		}
		*k.dst = x
	}
	return h, nil
}

// Tokenizer is the tokenizer.* metadata.
type Tokenizer struct {
	Model      string      // tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama" (SentencePiece), …
	Pre        string      // tokenizer.ggml.pre: the pre-tokenizer's name ("" when absent)
	Tokens     StringArray // tokenizer.ggml.tokens: one string, not 50,000 (strarray.go; StringArrayOf by hand)
	Scores     []float32   // tokenizer.ggml.scores (nil when absent)
	TokenTypes []int32     // tokenizer.ggml.token_type (nil when absent)
	Merges     StringArray // tokenizer.ggml.merges (empty when absent)

	// Special token ids (tokenizer.ggml.*_token_id); −1 when absent.
	BOS, EOS, UNK, PAD, SEP, EOT int
	// AddBOS and AddEOS are tokenizer.ggml.add_bos_token / add_eos_token; nil when absent.
	AddBOS, AddEOS *bool

	ChatTemplate string // tokenizer.chat_template ("" when absent)
}

// Tokenizer reads the tokenizer metadata, checking the types, that the
// per-token arrays have one entry per token and that the special ids are
// tokens.
func (f *File) Tokenizer() (*Tokenizer, error) {
	t := &Tokenizer{}
	var err error
	var ok bool
	if t.Model, ok, err = f.str("tokenizer.ggml.model"); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("gguf: no tokenizer.ggml.model")
	}
	if t.Pre, _, err = f.str("tokenizer.ggml.pre"); err != nil {
		return nil, err
	}
	if t.ChatTemplate, _, err = f.str("tokenizer.chat_template"); err != nil {
		return nil, err
	}
	arr := func(key string, want ValueType, required bool) (Value, bool, error) {
		v, ok := f.Get(key)
		if !ok {
			if required {
				return v, false, fmt.Errorf("gguf: no %s", key)
			}
			return v, false, nil
		}
		if v.Type != Array || v.Elem != want {
			return v, true, fmt.Errorf("gguf: %s is a %s, not an ARRAY of %s", key, v.typeName(), want)
		}
		return v, true, nil
	}
	v, _, err := arr("tokenizer.ggml.tokens", String, true)
	if err != nil {
		return nil, err
	}
	t.Tokens, _ = v.StringArray()
	if t.Tokens.Len() == 0 {
		return nil, fmt.Errorf("gguf: tokenizer.ggml.tokens is empty")
	}
	if v, ok, err = arr("tokenizer.ggml.scores", Float32, false); err != nil {
		return nil, err
	} else if ok {
		t.Scores, _ = v.Float32s()
	}
	if v, ok, err = arr("tokenizer.ggml.token_type", Int32, false); err != nil {
		return nil, err
	} else if ok {
		t.TokenTypes, _ = v.Int32s()
	}
	if v, ok, err = arr("tokenizer.ggml.merges", String, false); err != nil {
		return nil, err
	} else if ok {
		t.Merges, _ = v.StringArray()
	}
	if t.Scores != nil && len(t.Scores) != t.Tokens.Len() {
		return nil, fmt.Errorf("gguf: %d tokenizer.ggml.scores for %d tokens", len(t.Scores), t.Tokens.Len())
	}
	if t.TokenTypes != nil && len(t.TokenTypes) != t.Tokens.Len() {
		return nil, fmt.Errorf("gguf: %d tokenizer.ggml.token_type entries for %d tokens", len(t.TokenTypes), t.Tokens.Len())
	}
	for _, s := range []struct {
		name string
		dst  *int
	}{{"bos", &t.BOS}, {"eos", &t.EOS}, {"unknown", &t.UNK}, {"padding", &t.PAD}, {"seperator", &t.SEP}, {"eot", &t.EOT}} {
		key := "tokenizer.ggml." + s.name + "_token_id"
		id, ok, err := f.count(key)
		if err != nil {
			return nil, err
		}
		*s.dst = -1
		if ok {
			if id >= t.Tokens.Len() {
				return nil, fmt.Errorf("gguf: %s is %d, outside the %d-token vocabulary", key, id, t.Tokens.Len())
			}
			*s.dst = id
		}
	}
	for _, b := range []struct {
		key string
		dst **bool
	}{{"tokenizer.ggml.add_bos_token", &t.AddBOS}, {"tokenizer.ggml.add_eos_token", &t.AddEOS}} {
		v, ok := f.Get(b.key)
		if !ok {
			continue
		}
		x, isBool := v.Bool()
		if !isBool {
			return nil, fmt.Errorf("gguf: %s is a %s, not a BOOL", b.key, v.typeName())
		}
		*b.dst = &x
	}
	return t, nil
}
