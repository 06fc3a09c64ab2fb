package tokenizer

// gguf_vocab.go: a tokenizer from a GGUF file's tokenizer.ggml.* metadata:
// "gpt2" (byte-level BPE: tokens, merges, pre-tokenizer by name) and
// "llama" (SentencePiece BPE: tokens, scores, token types), as llama.cpp's
// llama-vocab.cpp reads them.

import (
	"fmt"
	"strings"

	"github.com/inferscope/inferscope/engine/gguf"
)

// GGUF token types (llama_token_type, gguf-py's TokenType).
const (
	ggufTokenNormal      = 1
	ggufTokenUnknown     = 2
	ggufTokenControl     = 3
	ggufTokenUserDefined = 4
)

// ggufPreSteps are the byte-level pre-tokenizers this package runs exactly,
// by their tokenizer.ggml.pre name (llama.cpp's LLAMA_VOCAB_PRE_TYPE_*):
// GPT-2's split, SmolLM's (each digit alone, then GPT-2's split), Llama
// 3's and Qwen 2's (split_llama3.go).
var ggufPreSteps = map[string][]preStep{
	"":       gpt2Steps,
	"gpt-2":  gpt2Steps,
	"gpt2":   gpt2Steps,
	"smollm": {{kind: stepDigits, individual: true}, {kind: stepByteLevel, useRegex: true}},
	// Llama 3 and Qwen 2: their pattern on the text, then the byte map
	"llama-bpe": {{kind: stepSplit, split: splitLlama3}, {kind: stepByteLevel}},
	"qwen2":     {{kind: stepSplit, split: splitQwen2}, {kind: stepByteLevel}},
}

// FromGGUF builds the tokenizer a GGUF file describes. Models other than
// "gpt2" and "llama", and byte-level pre-tokenizers other than GPT-2's and
// SmolLM's, are refused by name. Tokens of type CONTROL (and UNKNOWN) are
// special: matched in the input only when the caller allows specials;
// USER_DEFINED tokens are matched always, as llama.cpp does.
func FromGGUF(t *gguf.Tokenizer) (Tokenizer, error) {
	n := t.Tokens.Len()
	if n == 0 || n > maxVocabIDs {
		return nil, fmt.Errorf("gguf tokenizer: %d tokens (allowed 1 to %d)", n, maxVocabIDs)
	}
	typ := func(i int) int32 {
		if t.TokenTypes == nil {
			return ggufTokenNormal
		}
		return t.TokenTypes[i]
	}
	var v *vocabulary
	var tk Tokenizer
	switch t.Model {
	case "gpt2":
		steps, ok := ggufPreSteps[t.Pre]
		if !ok {
			return nil, fmt.Errorf("gguf tokenizer: pre-tokenizer %q is not supported (supported: gpt-2, smollm, llama-bpe, qwen2)", t.Pre)
		}
		// the pieces share the file's one string of tokens, indexed in
		// place (idtable.go)
		all, ends := t.Tokens.Parts()
		pieces, ids := pieceTable{all: all, ends: ends}, newIDTable(n)
		for i := range pieces.len() {
			p := pieces.at(i)
			if j, dup := ids.get(&pieces, p); dup {
				return nil, fmt.Errorf("gguf tokenizer: token %d %q is also token %d", i, p, j)
			}
			ids.set(&pieces, p, i)
		}
		for i := range t.Merges.Len() {
			m := t.Merges.At(i)
			a, b, ok := strings.Cut(m, " ")
			if !ok || a == "" || b == "" || strings.Contains(b, " ") {
				return nil, fmt.Errorf("gguf tokenizer: merge %d %q is not two pieces separated by one space", i+1, m)
			}
		}
		bl, err := newByteLevelPieces(pieces, ids, t.Merges.Len(), func(i int) (string, string) {
			a, b, _ := strings.Cut(t.Merges.At(i), " ")
			return a, b
		}, "byte-level BPE (GGUF)")
		if err != nil {
			return nil, fmt.Errorf("gguf tokenizer: %w", err)
		}
		bl.steps = steps
		v, tk = &bl.vocabulary, bl
	case "llama":
		if t.Scores == nil {
			return nil, fmt.Errorf("gguf tokenizer: a SentencePiece (llama) vocabulary needs tokenizer.ggml.scores")
		}
		all, ends := t.Tokens.Parts()
		sp := &SentencePiece{vocabulary: vocabulary{pieces: pieceTable{all: all, ends: ends}, ids: newIDTable(n),
			special: map[int]bool{}, kind: "SentencePiece BPE (GGUF)", bos: -1, eos: -1},
			scores: t.Scores, dummyPrefix: true, spaceRune: "▁"}
		for i := range sp.pieces.len() {
			p := sp.pieces.at(i)
			if _, dup := sp.Lookup(p); !dup {
				sp.setID(p, i)
			}
			sp.maxLen = max(sp.maxLen, len(p))
		}
		sp.finish()
		sp.hf.unk = -1
		if t.UNK >= 0 {
			sp.hf.unk = t.UNK
		}
		v, tk = &sp.vocabulary, sp
	default:
		return nil, fmt.Errorf("gguf tokenizer: model %q is not supported (supported: gpt2 (byte-level BPE), llama (SentencePiece))", t.Model)
	}
	for i := range n {
		switch typ(i) {
		case ggufTokenControl, ggufTokenUnknown:
			v.special[i] = true
			v.specials = append(v.specials, v.pieces.at(i))
			v.raw.set(i, []byte(v.pieces.at(i)))
		case ggufTokenUserDefined:
			if v.always == nil {
				v.always = map[string]bool{}
			}
			v.always[v.pieces.at(i)] = true
			v.specials = append(v.specials, v.pieces.at(i))
			v.raw.set(i, []byte(v.pieces.at(i)))
		}
	}
	// byte-level BPE marks <|endoftext|> special by convention; keep it once
	v.specials = dedupe(v.specials)
	sortSpecials(v.specials)
	if t.BOS >= 0 {
		v.bos = t.BOS
	}
	if t.EOS >= 0 {
		v.eos = t.EOS
	}
	return tk, nil
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
