package tokenizer

// sentencepiece.go: SentencePiece BPE (llama2.c tokenizer.bin, Llama tokenizer.json): byte
// fallback, scored merges.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"
)

// SentencePiece is SentencePiece-style BPE: the text (with a dummy-prefix
// space, spaces spelled "▁" in HF files) is cut into characters, unknown
// characters fall back to <0xNN> byte tokens, and adjacent pieces merge
// while the vocabulary allows. llama2.c's tokenizer.bin ranks a merge by the
// merged piece's score; HF tokenizer.json ranks it by the merges list.
type SentencePiece struct {
	vocabulary
	scores      []float32
	mergeRank   *pairRanks // HF: pair → rank; nil for llama2.c (score mode)
	dummyPrefix bool       // a space goes before the text (see prependAll, prependIfNoSpace)
	spaceRune   string     // how the vocabulary spells a space: " " or "▁"
	maxLen      int
	hf          hfSentencePiece // tokenizer.json options; zero for llama2.c
}

// hfSentencePiece holds the tokenizer.json options of the SentencePiece
// family, as Hugging Face tokenizers applies them.
type hfSentencePiece struct {
	prependAll       bool       // a space before every text span, also after added tokens (Metaspace "always", the Prepend normalizer)
	prependIfNoSpace bool       // Metaspace: no space before a span that starts with one
	splitWords       bool       // Metaspace split: each space starts a new word, and merges stay inside words
	noByteFallback   bool       // unknown characters become unk, not <0xNN> tokens
	unk              int        // the unk token's id; -1 if none
	fuseUnk          bool       // consecutive unknown characters make one unk token
	ignoreMerges     bool       // a word spelled in the vocabulary is that one token
	norm             normalizer // Unicode normalization
}

// LoadLlama2cTokenizer reads llama2.c's tokenizer.bin for a model with
// vocabSize tokens: int32 max_token_length, then per token float32 score,
// int32 length, bytes.
func LoadLlama2cTokenizer(path string, vocabSize int) (*SentencePiece, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	tk, err := ParseLlama2cTokenizer(b, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tk, nil
}

// ParseLlama2cTokenizer parses tokenizer.bin bytes.
func ParseLlama2cTokenizer(b []byte, vocabSize int) (*SentencePiece, error) {
	if vocabSize <= 0 || vocabSize > 1<<22 {
		return nil, fmt.Errorf("vocab size %d out of range", vocabSize)
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("file has %d bytes, too short for the max_token_length header", len(b))
	}
	maxLen := int(int32(binary.LittleEndian.Uint32(b)))
	if maxLen <= 0 || maxLen > 1<<16 {
		return nil, fmt.Errorf("max_token_length %d out of range 1..65536", maxLen)
	}
	// every token takes at least 8 bytes: size the tables by what the file
	// can hold, not by a vocab size it may not match
	hint := min(vocabSize, (len(b)-4)/8)
	tk := &SentencePiece{vocabulary: vocabulary{ids: newIDTable(hint), special: map[int]bool{}, kind: "SentencePiece BPE (llama2.c tokenizer.bin)", bos: 1, eos: 2},
		dummyPrefix: true, spaceRune: " ", maxLen: maxLen}
	// The pieces share one string (a well-formed file's text bytes are what
	// is left after the header and the 8-byte score/length of each token):
	// one allocation instead of one per token.
	var text strings.Builder
	text.Grow(max(0, len(b)-4-8*vocabSize))
	ends := make([]uint32, 0, hint)
	tk.scores = make([]float32, 0, hint)
	off := 4
	for i := 0; i < vocabSize; i++ {
		if off+8 > len(b) {
			return nil, fmt.Errorf("token %d: file ends at byte %d, before its score and length", i, len(b))
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
		n := int(int32(binary.LittleEndian.Uint32(b[off+4:])))
		off += 8
		if n < 0 || n > maxLen {
			return nil, fmt.Errorf("token %d: length %d outside 0..max_token_length %d", i, n, maxLen)
		}
		if off+n > len(b) {
			return nil, fmt.Errorf("token %d: %d bytes run past the end of the file", i, n)
		}
		text.Write(b[off : off+n])
		off += n
		ends = append(ends, uint32(text.Len()))
		tk.scores = append(tk.scores, score)
	}
	tk.pieces = pieceTable{all: text.String(), ends: ends}
	for i := range tk.pieces.len() {
		p := tk.pieces.at(i)
		if _, dup := tk.Lookup(p); !dup {
			tk.setID(p, i)
		}
	}
	if off != len(b) {
		return nil, fmt.Errorf("%d bytes left after %d tokens: the vocab size does not match the file", len(b)-off, vocabSize)
	}
	tk.finish()
	if vocabSize <= 2 {
		tk.bos, tk.eos = -1, -1
	}
	for _, id := range []int{0, tk.bos, tk.eos} {
		if id >= 0 && id < vocabSize {
			tk.special[id] = true
		}
	}
	return tk, nil
}

// spChar is one character of a span on its way to BPE, with its input span
// (start == end for the inserted prefix space).
type spChar struct {
	r          rune
	start, end int
}

// words lists a text span's characters, after an inserted space when
// prefix is set, cut into words when the file says so (Metaspace split:
// each space, or the space character itself, starts a new word).
func (tk *SentencePiece) words(sp span, prefix bool) [][]spChar {
	var chars []spChar
	if prefix {
		chars = append(chars, spChar{r: ' ', start: sp.at(0), end: sp.at(0)})
	}
	for i, r := range sp.text {
		chars = append(chars, spChar{r: r, start: sp.at(i), end: sp.at(i + utf8.RuneLen(r))})
	}
	if !tk.hf.splitWords {
		return [][]spChar{chars}
	}
	space, _ := utf8.DecodeRuneInString(tk.spaceRune)
	var out [][]spChar
	last := 0
	for i, c := range chars {
		if i > last && (c.r == ' ' || c.r == space) {
			out = append(out, chars[last:i])
			last = i
		}
	}
	return append(out, chars[last:])
}

// encodeWord runs BPE over one word's characters: each is its piece, or
// its <0xNN> byte pieces (byte fallback), or unk.
func (tk *SentencePiece) encodeWord(chars []spChar) []sym {
	if tk.hf.ignoreMerges && len(chars) > 1 {
		var b strings.Builder
		for _, c := range chars {
			if c.r == ' ' {
				b.WriteString(tk.spaceRune)
			} else {
				b.WriteRune(c.r)
			}
		}
		if id, ok := tk.Lookup(b.String()); ok && !tk.special[id] {
			return []sym{{id: id, start: chars[0].start, end: chars[len(chars)-1].end, inserted: chars[len(chars)-1].end == chars[0].start}}
		}
	}
	var syms []sym
	var buf [utf8.UTFMax]byte
	for _, c := range chars {
		ch := string(c.r)
		if c.r == ' ' {
			ch = tk.spaceRune
		}
		if id, ok := tk.Lookup(ch); ok && !tk.special[id] {
			syms = append(syms, sym{id: id, start: c.start, end: c.end, inserted: c.start == c.end})
			continue
		}
		n := utf8.EncodeRune(buf[:], c.r)
		fallback := !tk.hf.noByteFallback
		for _, b := range buf[:n] {
			fallback = fallback && tk.byteID[b] >= 0
		}
		if fallback {
			for k, b := range buf[:n] {
				st, en := min(c.start+k, c.end), min(c.start+k+1, c.end)
				if k == n-1 { // a normalized character may stand for more input bytes
					en = c.end
				}
				syms = append(syms, sym{id: tk.byteID[b], start: st, end: en})
			}
			continue
		}
		unk := max(tk.hf.unk, 0)
		if l := len(syms) - 1; tk.hf.fuseUnk && l >= 0 && syms[l].id == unk && syms[l].end == c.start {
			syms[l].end = c.end
			continue
		}
		syms = append(syms, sym{id: unk, start: c.start, end: c.end})
	}
	return mergeSymbols(syms, tk.score)
}

// finish derives byte meanings and byte-fallback ids from the pieces.
func (tk *SentencePiece) finish() {
	for i := range tk.byteID {
		tk.byteID[i] = -1
	}
	// meaning is the bytes piece p stands for
	meaning := func(p string) (s string, isByte bool) {
		if len(p) == 6 && strings.HasPrefix(p, "<0x") && p[5] == '>' {
			var v byte
			if _, err := fmt.Sscanf(p, "<0x%02X>", &v); err == nil {
				return string([]byte{v}), true
			}
		}
		if tk.spaceRune != " " {
			p = strings.ReplaceAll(p, tk.spaceRune, " ")
		}
		return p, false
	}
	total := 0
	for i := range tk.pieces.len() {
		s, _ := meaning(tk.pieces.at(i))
		total += len(s)
	}
	// every piece's bytes in one array (not one allocation per piece); each
	// slice is capped at its own end, so a caller's append cannot reach its
	// neighbour
	tk.raw = byteTable{arena: make([]byte, 0, total), ends: make([]uint32, 0, tk.pieces.len())}
	for i := range tk.pieces.len() {
		s, isByte := meaning(tk.pieces.at(i))
		if isByte {
			tk.byteID[s[0]] = i
		}
		tk.raw.addString(s)
	}
}

func (tk *SentencePiece) score(a, b int) (int, float64, bool) {
	if tk.mergeRank != nil {
		r, ok := tk.mergeRank.get(a, b)
		if !ok {
			return 0, 0, false
		}
		id, _ := tk.Lookup(tk.pieces.at(a) + tk.pieces.at(b))
		return id, -float64(r), true
	}
	id, ok := tk.Lookup(tk.pieces.at(a) + tk.pieces.at(b))
	if !ok {
		return 0, 0, false
	}
	return id, float64(tk.scores[id]), true
}

// Encode implements Tokenizer.
func (tk *SentencePiece) Encode(text string, opts EncodeOptions) ([]Token, error) {
	if err := checkInput(text); err != nil {
		return nil, err
	}
	var out []Token
	if opts.AddBOS && tk.bos >= 0 {
		out = append(out, Token{ID: tk.bos, Piece: tk.pieces.at(tk.bos), Special: true, Added: true})
	}
	for si, sp := range tk.spans(text, opts.AllowSpecial, tk.hf.norm) {
		if sp.special >= 0 {
			out = append(out, Token{ID: sp.special, Piece: tk.pieces.at(sp.special), Text: sp.text, Start: sp.at(0), End: sp.at(len(sp.text)), Special: tk.special[sp.special]})
			continue
		}
		prefix := tk.dummyPrefix && len(sp.text) > 0 && !opts.Continuation && si == 0 && sp.at(0) == 0
		if tk.hf.prependAll {
			prefix = tk.dummyPrefix && len(sp.text) > 0 && !(opts.Continuation && sp.at(0) == 0)
		}
		if prefix && tk.hf.prependIfNoSpace && (sp.text[0] == ' ' || strings.HasPrefix(sp.text, tk.spaceRune)) {
			prefix = false
		}
		for _, word := range tk.words(sp, prefix) {
			for _, s := range tk.encodeWord(word) {
				out = append(out, Token{ID: s.id, Piece: tk.pieces.at(s.id), Text: string(tk.raw.at(s.id)), Start: s.start, End: s.end, Added: s.inserted})
			}
		}
	}
	markPartial(text, out)
	return out, nil
}
