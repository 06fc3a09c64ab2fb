// Package tokenizer turns text into a model's token ids and back, exactly as
// the model's own tokenizer does: byte-level BPE (GPT-2 family, bpe.go) and
// SentencePiece BPE (llama2.c and Llama, sentencepiece.go) over one shared
// vocabulary type (vocab.go), plus chat templates (chat.go).
//
// tokenizer.go: the Tokenizer interface, Token, decoding (whole and
// streamed) and loading a tokenizer from a file or directory.
package tokenizer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// Token is one token of an encoded text, with everything a student needs to
// see how the text was cut.
type Token struct {
	ID      int    `json:"id"`
	Piece   string `json:"piece"` // as the vocabulary spells it: "Ġthe", "▁the", "<0x0A>"
	Text    string `json:"text"`  // the text it stands for (may be part of a character, see Partial)
	Start   int    `json:"start"` // byte span [Start, End) in the input; Start == End for inserted tokens
	End     int    `json:"end"`
	Partial bool   `json:"partial,omitempty"` // covers only part of a UTF-8 character
	Special bool   `json:"special,omitempty"` // a special/control token (<|endoftext|>, <s>, …)
	Added   bool   `json:"added,omitempty"`   // inserted by the application (BOS, dummy prefix, chat template)
}

// EncodeOptions controls Encode.
type EncodeOptions struct {
	// AddBOS prepends the model's begin-of-sequence token, if it has one.
	AddBOS bool
	// AllowSpecial lets special-token strings in the text ("<|endoftext|>")
	// become special tokens. Off, they are encoded as plain text.
	AllowSpecial bool
	// Continuation says the text continues earlier text, so SentencePiece
	// adds no dummy-prefix space.
	Continuation bool
}

// MaxEncodeBytes bounds one Encode call's input (1 MiB); longer input is an error.
const MaxEncodeBytes = 1 << 20

// Tokenizer turns text into token ids and back, exactly as the model's own
// tokenizer does.
type Tokenizer interface {
	// Encode splits text into tokens. Input must be valid UTF-8 and at most
	// MaxEncodeBytes long; otherwise it returns an error saying which.
	Encode(text string, opts EncodeOptions) ([]Token, error)
	// TokenBytes returns the raw bytes token id stands for (special tokens:
	// their text). Concatenating them reproduces the input.
	TokenBytes(id int) []byte
	// Piece returns the vocabulary's spelling of id.
	Piece(id int) string
	// Lookup finds the id of a vocabulary piece.
	Lookup(piece string) (int, bool)
	VocabSize() int
	BOS() int // -1 if none
	EOS() int // -1 if none
	IsSpecial(id int) bool
	// Kind names the algorithm, e.g. "byte-level BPE".
	Kind() string
}

// Decode joins the tokens' bytes into a string. Special tokens become their
// text; a SentencePiece dummy-prefix space after BOS is dropped, as the
// reference decoders do.
func Decode(tk Tokenizer, ids []int) string {
	var b []byte
	for i, id := range ids {
		if id < 0 || id >= tk.VocabSize() {
			continue
		}
		if tk.IsSpecial(id) && (id == tk.BOS() || id == tk.EOS()) {
			continue
		}
		p := tk.TokenBytes(id)
		if sp, ok := tk.(*SentencePiece); ok && sp.dummyPrefix && len(p) > 0 && p[0] == ' ' &&
			(i == 0 && len(b) == 0 || i > 0 && ids[i-1] == tk.BOS()) {
			p = p[1:]
		}
		b = append(b, p...)
	}
	return string(b)
}

// StreamDecoder emits text as tokens arrive without ever emitting a broken
// character: bytes of an incomplete UTF-8 sequence wait for the next token.
type StreamDecoder struct {
	tk      Tokenizer
	pending []byte
	prev    int
}

// NewStreamDecoder starts a stream after the given previous token (BOS, or
// the prompt's last token) so a dummy-prefix space is handled like Decode.
func NewStreamDecoder(tk Tokenizer, prev int) *StreamDecoder {
	return &StreamDecoder{tk: tk, prev: prev}
}

// Add appends a token and returns the text that is now complete.
func (d *StreamDecoder) Add(id int) string {
	var p []byte
	if id >= 0 && id < d.tk.VocabSize() && !(d.tk.IsSpecial(id) && (id == d.tk.BOS() || id == d.tk.EOS())) {
		p = d.tk.TokenBytes(id)
		if sp, ok := d.tk.(*SentencePiece); ok && sp.dummyPrefix && d.prev == d.tk.BOS() && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
	}
	d.prev = id
	d.pending = append(d.pending, p...)
	n := completeUTF8Prefix(d.pending)
	out := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Pending is the held-back bytes as text (for matching, not display).
func (d *StreamDecoder) Pending() string { return string(d.pending) }

// Flush returns what is left (an incomplete character becomes U+FFFD).
func (d *StreamDecoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}

// completeUTF8Prefix returns the length of b without a trailing incomplete
// (but possibly completable) UTF-8 sequence. Invalid bytes pass through.
func completeUTF8Prefix(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		i := len(b) - back
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xC0 { // a lead byte: is its sequence complete?
			need := 2
			if c >= 0xE0 {
				need = 3
			}
			if c >= 0xF0 {
				need = 4
			}
			if back < need && !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}

// checkInput enforces the Encode contract on text.
func checkInput(text string) error {
	if len(text) > MaxEncodeBytes {
		return fmt.Errorf("tokenize: input is %d bytes, the limit is %d", len(text), MaxEncodeBytes)
	}
	if !utf8.ValidString(text) {
		for i, r := range text {
			if r == utf8.RuneError {
				if _, sz := utf8.DecodeRuneInString(text[i:]); sz == 1 {
					return fmt.Errorf("tokenize: input is not valid UTF-8 (bad byte 0x%02x at offset %d)", text[i], i)
				}
			}
		}
		return fmt.Errorf("tokenize: input is not valid UTF-8")
	}
	return nil
}

// markPartial sets Partial on tokens whose span starts or ends inside a
// multi-byte character of text.
func markPartial(text string, toks []Token) {
	for i := range toks {
		t := &toks[i]
		if t.Start == t.End {
			continue
		}
		if t.Start < len(text) && !utf8.RuneStart(text[t.Start]) || t.End < len(text) && !utf8.RuneStart(text[t.End]) {
			t.Partial = true
		}
	}
}

// LoadTokenizerDir loads the tokenizer in a model directory: tokenizer.json,
// or vocab.json + merges.txt, or tokenizer.bin (llama2.c). It returns nil
// and no error when the directory has none of them.
func LoadTokenizerDir(dir string) (Tokenizer, error) {
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS is LoadTokenizerDir over a file system (dir names it in errors).
func LoadFS(fsys fs.FS, dir string) (Tokenizer, error) {
	read := func(name string) ([]byte, bool, error) {
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return b, err == nil, err
	}
	if b, ok, err := read("tokenizer.json"); err != nil || ok {
		if err != nil {
			return nil, fmt.Errorf("load tokenizer: %w", err)
		}
		tk, err := ParseTokenizerJSON(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "tokenizer.json"), err)
		}
		return withChatTemplate(fsys, dir, tk)
	}
	vb, okV, err := read("vocab.json")
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	mb, okM, err := read("merges.txt")
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	if okV && okM {
		tk, err := parseGPT2VocabMerges(vb, mb, filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
		if err != nil {
			return nil, err
		}
		return withChatTemplate(fsys, dir, tk)
	}
	return nil, nil
}

// withChatTemplate attaches the directory's chat template, if it has one.
func withChatTemplate(fsys fs.FS, dir string, tk Tokenizer) (Tokenizer, error) {
	t, err := loadChatTemplateFS(fsys, dir, tk)
	if err != nil || t == nil {
		return tk, err
	}
	return tk, attachChatTemplate(tk, t)
}

// LoadTokenizerFile loads a tokenizer from a file: tokenizer.json, a
// directory's files, or llama2.c's tokenizer.bin (which needs vocabSize).
func LoadTokenizerFile(path string, vocabSize int) (Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	if st.IsDir() {
		tk, err := LoadTokenizerDir(path)
		if err == nil && tk == nil {
			err = fmt.Errorf("%s: no tokenizer.json or vocab.json + merges.txt", path)
		}
		return tk, err
	}
	if filepath.Ext(path) == ".json" {
		tk, err := LoadTokenizerJSON(path)
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(path)
		return withChatTemplate(os.DirFS(dir), dir, tk)
	}
	return LoadLlama2cTokenizer(path, vocabSize)
}
