package tokenizer

// bpe.go: byte-level BPE (GPT-2 family): pre-split, byte mapping, ranked merges.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ByteLevelBPE is GPT-2's tokenizer: text is pre-split with GPT-2's pattern
// (contractions, letters, digits, punctuation, whitespace runs), each piece's
// bytes are mapped to printable characters (space → "Ġ"), and merges apply
// lowest rank first within each piece.
type ByteLevelBPE struct {
	vocabulary
	rank        map[[2]int]int
	splitDigits bool // SmolLM-style: every digit is its own pre-token

	mu    sync.Mutex
	cache map[string][]int // pre-token → ids
}

// byteToUnicode is GPT-2's reversible map from bytes to printable runes.
var byteToUnicode, unicodeToByte = func() ([256]rune, map[rune]byte) {
	var b2u [256]rune
	u2b := map[rune]byte{}
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			b2u[b] = rune(b)
		} else {
			b2u[b] = rune(256 + n)
			n++
		}
		u2b[b2u[b]] = byte(b)
	}
	return b2u, u2b
}()

func newByteLevel(vocab map[string]int, merges [][2]string, kind string) (*ByteLevelBPE, error) {
	size := 0
	for _, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("negative token id %d", id)
		}
		size = max(size, id+1)
	}
	if size == 0 {
		return nil, fmt.Errorf("vocabulary is empty")
	}
	if size > 1<<22 {
		return nil, fmt.Errorf("vocabulary ids reach %d, beyond the limit %d", size, 1<<22)
	}
	tk := &ByteLevelBPE{vocabulary: vocabulary{pieces: make([]string, size), raw: make([][]byte, size), ids: vocab,
		special: map[int]bool{}, bos: -1, eos: -1, kind: kind}, cache: map[string][]int{}}
	for p, id := range vocab {
		tk.pieces[id] = p
		var b []byte
		for _, r := range p {
			c, ok := unicodeToByte[r]
			if !ok { // not byte-level text (added tokens): keep UTF-8
				b = []byte(p)
				break
			}
			b = append(b, c)
		}
		tk.raw[id] = b
	}
	for b := 0; b < 256; b++ {
		id, ok := vocab[string(byteToUnicode[b])]
		if !ok {
			return nil, fmt.Errorf("vocabulary lacks the byte-level piece %q for byte 0x%02x", string(byteToUnicode[b]), b)
		}
		tk.byteID[b] = id
	}
	rank, err := mergeRanks(vocab, merges)
	if err != nil {
		return nil, err
	}
	tk.rank = rank
	if id, ok := vocab["<|endoftext|>"]; ok {
		tk.addSpecial("<|endoftext|>", id)
		tk.bos, tk.eos = id, id
	}
	return tk, nil
}

func (tk *ByteLevelBPE) addSpecial(s string, id int) {
	if id < 0 || id >= len(tk.pieces) {
		return
	}
	if !tk.special[id] {
		tk.specials = append(tk.specials, s)
		sortSpecials(tk.specials)
	}
	tk.special[id] = true
	tk.pieces[id] = s
	tk.raw[id] = []byte(s)
	tk.ids[s] = id
}

// LoadGPT2VocabMerges reads vocab.json + merges.txt.
func LoadGPT2VocabMerges(vocabPath, mergesPath string) (*ByteLevelBPE, error) {
	vb, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	mb, err := os.ReadFile(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	return parseGPT2VocabMerges(vb, mb, vocabPath, mergesPath)
}

func parseGPT2VocabMerges(vb, mb []byte, vocabPath, mergesPath string) (*ByteLevelBPE, error) {
	var vocab map[string]int
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of piece → id: %v", vocabPath, err)
	}
	merges, err := parseMerges(mb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mergesPath, err)
	}
	tk, err := newByteLevel(vocab, merges, "byte-level BPE (GPT-2 vocab.json + merges.txt)")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", vocabPath, err)
	}
	return tk, nil
}

// parseMerges reads merges.txt: an optional "#version" line, then "a b" per line.
func parseMerges(b []byte) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 && strings.HasPrefix(s, "#version") || s == "" {
			continue
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("line %d: %q is not two space-separated pieces", line, s)
		}
		out = append(out, [2]string{a, b})
	}
	return out, sc.Err()
}

func (tk *ByteLevelBPE) score(a, b int) (int, float64, bool) {
	r, ok := tk.rank[[2]int{a, b}]
	if !ok {
		return 0, 0, false
	}
	return tk.ids[tk.pieces[a]+tk.pieces[b]], -float64(r), true
}

// Encode implements Tokenizer.
func (tk *ByteLevelBPE) Encode(text string, opts EncodeOptions) ([]Token, error) {
	if err := checkInput(text); err != nil {
		return nil, err
	}
	var out []Token
	if opts.AddBOS && tk.bos >= 0 {
		out = append(out, Token{ID: tk.bos, Piece: tk.pieces[tk.bos], Special: true, Added: true})
	}
	for _, seg := range splitSpecial(text, tk.specials, tk.ids, opts.AllowSpecial) {
		if seg.special >= 0 {
			out = append(out, Token{ID: seg.special, Piece: tk.pieces[seg.special], Text: seg.text, Start: seg.start, End: seg.start + len(seg.text), Special: true})
			continue
		}
		for _, w := range gpt2Split(seg.text, tk.splitDigits) {
			ws := seg.start + w[0]
			word := seg.text[w[0]:w[1]]
			for _, s := range tk.encodeWord(word) {
				out = append(out, Token{ID: s.id, Piece: tk.pieces[s.id], Text: string(tk.raw[s.id]), Start: ws + s.start, End: ws + s.end})
			}
		}
	}
	markPartial(text, out)
	return out, nil
}

// encodeWord runs BPE on one pre-token, returning symbols with spans
// relative to the word.
func (tk *ByteLevelBPE) encodeWord(word string) []sym {
	tk.mu.Lock()
	ids, ok := tk.cache[word]
	tk.mu.Unlock()
	var syms []sym
	if ok {
		off := 0
		for _, id := range ids {
			n := len(tk.raw[id])
			syms = append(syms, sym{id: id, start: off, end: off + n})
			off += n
		}
		return syms
	}
	syms = make([]sym, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = sym{id: tk.byteID[word[i]], start: i, end: i + 1}
	}
	syms = mergeSymbols(syms, tk.score)
	if len(word) <= 64 {
		ids = make([]int, len(syms))
		for i, s := range syms {
			ids[i] = s.id
		}
		tk.mu.Lock()
		if len(tk.cache) > 1<<16 {
			clear(tk.cache)
		}
		tk.cache[word] = ids
		tk.mu.Unlock()
	}
	return syms
}

// isSpaceJS is \s as JavaScript's and Python's regex engines (with the
// Unicode flag) read GPT-2's pattern.
func isSpaceJS(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// gpt2Split applies GPT-2's pre-tokenization pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// by hand (Go's regexp has no look-ahead), returning [start,end) byte spans.
// With splitDigits each digit is a pre-token of its own.
func gpt2Split(s string, splitDigits bool) [][2]int {
	var out [][2]int
	isL := unicode.IsLetter
	isN := unicode.IsNumber
	at := func(i int) (rune, int) {
		if i >= len(s) {
			return -1, 0
		}
		return utf8.DecodeRuneInString(s[i:])
	}
	run := func(i int, pred func(rune) bool, limit int) int {
		n := 0
		for i < len(s) {
			r, sz := at(i)
			if !pred(r) || limit > 0 && n >= limit {
				break
			}
			i += sz
			n++
		}
		return i
	}
	other := func(r rune) bool { return !isSpaceJS(r) && !isL(r) && !isN(r) }
	i := 0
	for i < len(s) {
		r, sz := at(i)
		// contractions
		if r == '\'' {
			matched := false
			for _, c := range []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"} {
				if strings.HasPrefix(s[i:], c) {
					out = append(out, [2]int{i, i + len(c)})
					i += len(c)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		j := i
		r2 := r
		if r == ' ' {
			r2, _ = at(i + 1)
			j = i + 1
		}
		digitLimit := 0
		if splitDigits {
			digitLimit = 1
		}
		switch {
		case r2 >= 0 && isL(r2):
			e := run(j, isL, 0)
			out = append(out, [2]int{i, e})
			i = e
			continue
		case r2 >= 0 && isN(r2):
			e := run(j, isN, digitLimit)
			out = append(out, [2]int{i, e})
			i = e
			continue
		case r2 >= 0 && other(r2):
			e := run(j, other, 0)
			out = append(out, [2]int{i, e})
			i = e
			continue
		}
		// whitespace: \s+(?!\S) then \s+
		if isSpaceJS(r) {
			e := run(i, isSpaceJS, 0)
			if e < len(s) { // followed by non-space: leave the last space for it
				_, lsz := utf8.DecodeLastRuneInString(s[i:e])
				if e-lsz > i {
					e -= lsz
				}
			}
			out = append(out, [2]int{i, e})
			i = e
			continue
		}
		// unreachable for valid input; advance one rune defensively
		out = append(out, [2]int{i, i + sz})
		i += sz
	}
	return out
}

// mergeRanks maps each merge pair (by ids) to its priority: earlier lines
// merge first. Every piece and every merged piece must be in the vocabulary.
func mergeRanks(vocab map[string]int, merges [][2]string) (map[[2]int]int, error) {
	rank := make(map[[2]int]int, len(merges))
	for i, m := range merges {
		a, okA := vocab[m[0]]
		b, okB := vocab[m[1]]
		if !okA || !okB {
			return nil, fmt.Errorf("merge %d %q %q: piece not in the vocabulary", i+1, m[0], m[1])
		}
		if _, ok := vocab[m[0]+m[1]]; !ok {
			return nil, fmt.Errorf("merge %d %q %q: merged piece not in the vocabulary", i+1, m[0], m[1])
		}
		if _, dup := rank[[2]int{a, b}]; !dup {
			rank[[2]int{a, b}] = i
		}
	}
	return rank, nil
}
