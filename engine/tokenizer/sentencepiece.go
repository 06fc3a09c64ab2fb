package tokenizer

// sentencepiece.go: SentencePiece BPE (llama2.c tokenizer.bin, Llama tokenizer.json): byte
// fallback, scored merges.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
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
	mergeRank   map[[2]int]int // HF: pair → rank; nil for llama2.c (score mode)
	dummyPrefix bool
	spaceRune   string // how the vocabulary spells a space: " " or "▁"
	maxLen      int
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
	tk := &SentencePiece{vocabulary: vocabulary{ids: map[string]int{}, special: map[int]bool{}, kind: "SentencePiece BPE (llama2.c tokenizer.bin)", bos: 1, eos: 2},
		dummyPrefix: true, spaceRune: " ", maxLen: maxLen}
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
		p := string(b[off : off+n])
		off += n
		tk.pieces = append(tk.pieces, p)
		tk.scores = append(tk.scores, score)
		if _, dup := tk.ids[p]; !dup {
			tk.ids[p] = i
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

// finish derives byte meanings and byte-fallback ids from the pieces.
func (tk *SentencePiece) finish() {
	for i := range tk.byteID {
		tk.byteID[i] = -1
	}
	tk.raw = make([][]byte, len(tk.pieces))
	for i, p := range tk.pieces {
		if len(p) == 6 && strings.HasPrefix(p, "<0x") && p[5] == '>' {
			var v byte
			if _, err := fmt.Sscanf(p, "<0x%02X>", &v); err == nil {
				tk.byteID[v] = i
				tk.raw[i] = []byte{v}
				continue
			}
		}
		if tk.spaceRune != " " {
			p = strings.ReplaceAll(p, tk.spaceRune, " ")
		}
		tk.raw[i] = []byte(p)
	}
}

func (tk *SentencePiece) score(a, b int) (int, float64, bool) {
	if tk.mergeRank != nil {
		r, ok := tk.mergeRank[[2]int{a, b}]
		if !ok {
			return 0, 0, false
		}
		id := tk.ids[tk.pieces[a]+tk.pieces[b]]
		return id, -float64(r), true
	}
	id, ok := tk.ids[tk.pieces[a]+tk.pieces[b]]
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
		out = append(out, Token{ID: tk.bos, Piece: tk.pieces[tk.bos], Special: true, Added: true})
	}
	segs := splitSpecial(text, tk.specials, tk.ids, opts.AllowSpecial)
	for si, seg := range segs {
		if seg.special >= 0 {
			out = append(out, Token{ID: seg.special, Piece: tk.pieces[seg.special], Text: seg.text, Start: seg.start, End: seg.start + len(seg.text), Special: true})
			continue
		}
		var syms []sym
		if tk.dummyPrefix && si == 0 && len(text) > 0 && !opts.Continuation {
			if id, ok := tk.ids[tk.spaceRune]; ok {
				syms = append(syms, sym{id: id, start: seg.start, end: seg.start, inserted: true})
			}
		}
		for i, r := range seg.text {
			st := seg.start + i
			sz := utf8.RuneLen(r)
			ch := string(r)
			if r == ' ' {
				ch = tk.spaceRune
			}
			if id, ok := tk.ids[ch]; ok && !tk.special[id] {
				syms = append(syms, sym{id: id, start: st, end: st + sz})
				continue
			}
			for k := 0; k < sz; k++ {
				id := tk.byteID[seg.text[i+k]]
				if id < 0 {
					id = 0 // <unk>
				}
				syms = append(syms, sym{id: id, start: st + k, end: st + k + 1})
			}
		}
		for _, s := range mergeSymbols(syms, tk.score) {
			out = append(out, Token{ID: s.id, Piece: tk.pieces[s.id], Text: string(tk.raw[s.id]), Start: s.start, End: s.end, Added: s.inserted})
		}
	}
	markPartial(text, out)
	return out, nil
}

// segment is a run of plain text, or one special token (special ≥ 0).
type segment struct {
	text    string
	start   int
	special int
}

// splitSpecial cuts text at occurrences of special-token strings when
// allowed (longest match first); otherwise the whole text is one segment.
func splitSpecial(text string, specials []string, ids map[string]int, allow bool) []segment {
	if !allow || len(specials) == 0 {
		return []segment{{text: text, special: -1}}
	}
	var segs []segment
	last := 0
	for i := 0; i < len(text); {
		found := ""
		for _, s := range specials {
			if strings.HasPrefix(text[i:], s) {
				found = s
				break
			}
		}
		if found == "" {
			i++
			continue
		}
		if i > last {
			segs = append(segs, segment{text: text[last:i], start: last, special: -1})
		}
		segs = append(segs, segment{text: found, start: i, special: ids[found]})
		i += len(found)
		last = i
	}
	if last < len(text) || len(segs) == 0 {
		segs = append(segs, segment{text: text[last:], start: last, special: -1})
	}
	return segs
}

func sortSpecials(s []string) {
	sort.Slice(s, func(i, j int) bool {
		if len(s[i]) != len(s[j]) {
			return len(s[i]) > len(s[j])
		}
		return s[i] < s[j]
	})
}
