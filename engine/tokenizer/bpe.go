package tokenizer

// bpe.go: byte-level BPE (GPT-2 family): pre-split, byte mapping, ranked merges.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// ByteLevelBPE is GPT-2's tokenizer: text is pre-split with GPT-2's pattern
// (contractions, letters, digits, punctuation, whitespace runs), each piece's
// bytes are mapped to printable characters (space → "Ġ"), and merges apply
// lowest rank first within each piece. A tokenizer.json may normalize the
// text first and add pre-tokenizer steps (pretokenize.go).
type ByteLevelBPE struct {
	vocabulary
	rank         *pairRanks // merge pair of ids → rank (idtable.go)
	steps        []preStep  // pre-tokenizers, in order (gpt2Steps for GPT-2)
	norm         normalizer // Unicode normalization before pre-tokenizing; nil = none
	ignoreMerges bool       // a pre-token that is itself in the vocabulary is one token (Llama 3)

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
	byID := make([]string, size)
	for p, id := range vocab {
		byID[id] = p
	}
	pieces, ids := piecesOf(byID), newIDTable(len(vocab))
	for p, id := range vocab {
		ids.set(&pieces, p, id)
	}
	return newByteLevelPieces(pieces, ids, len(merges), func(i int) (string, string) { return merges[i][0], merges[i][1] }, kind)
}

// newByteLevelPieces is newByteLevel on the vocabulary's pieces (by id)
// and their index, with nm merges given one by one. The bytes each piece
// stands for share one allocation.
func newByteLevelPieces(pieces pieceTable, ids idTable, nm int, merge func(i int) (string, string), kind string) (*ByteLevelBPE, error) {
	size := pieces.len()
	tk := &ByteLevelBPE{vocabulary: vocabulary{pieces: pieces, ids: ids,
		special: map[int]bool{}, bos: -1, eos: -1, kind: kind}, cache: map[string][]int{}, steps: gpt2Steps}
	n := pieces.bytes()
	tk.raw = byteTable{arena: make([]byte, 0, n), ends: make([]uint32, 0, size)}
	var b []byte
	for i := range size {
		p := pieces.at(i)
		b = b[:0]
		for _, r := range p {
			c, ok := unicodeToByte[r]
			if !ok { // not byte-level text (added tokens): keep UTF-8
				b = append(b[:0], p...)
				break
			}
			b = append(b, c)
		}
		tk.raw.add(b)
	}
	for b := 0; b < 256; b++ {
		id, ok := tk.Lookup(string(byteToUnicode[b]))
		if !ok {
			return nil, fmt.Errorf("vocabulary lacks the byte-level piece %q for byte 0x%02x", string(byteToUnicode[b]), b)
		}
		tk.byteID[b] = id
	}
	rank, err := mergeRanks(&tk.vocabulary, nm, merge)
	if err != nil {
		return nil, err
	}
	tk.rank = rank
	if id, ok := tk.Lookup("<|endoftext|>"); ok {
		tk.addSpecial("<|endoftext|>", id)
		tk.bos, tk.eos = id, id
	}
	return tk, nil
}

func (tk *ByteLevelBPE) addSpecial(s string, id int) {
	if id < 0 || id >= tk.pieces.len() {
		return
	}
	if !tk.special[id] {
		tk.specials = append(tk.specials, s)
		sortSpecials(tk.specials)
	}
	tk.special[id] = true
	tk.setPiece(id, s)
	tk.raw.set(id, []byte(s))
	tk.setID(s, id)
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
	r, ok := tk.rank.get(a, b)
	if !ok {
		return 0, 0, false
	}
	id, _ := tk.Lookup(tk.pieces.at(a) + tk.pieces.at(b))
	return id, -float64(r), true
}

// Encode implements Tokenizer.
func (tk *ByteLevelBPE) Encode(text string, opts EncodeOptions) ([]Token, error) {
	if err := checkInput(text); err != nil {
		return nil, err
	}
	var out []Token
	if opts.AddBOS && tk.bos >= 0 {
		out = append(out, Token{ID: tk.bos, Piece: tk.pieces.at(tk.bos), Special: true, Added: true})
	}
	for _, sp := range tk.spans(text, opts.AllowSpecial, tk.norm) {
		if sp.special >= 0 {
			out = append(out, Token{ID: sp.special, Piece: tk.pieces.at(sp.special), Text: sp.text, Start: sp.at(0), End: sp.at(len(sp.text)), Special: tk.special[sp.special]})
			continue
		}
		for _, w := range preTokenize(sp.text, tk.steps) {
			word := sp.text[w.start:w.end]
			if w.prefix {
				word = " " + word
			}
			for _, s := range tk.encodeWord(word) {
				a, b := s.start, s.end // in word, where an inserted space is byte 0
				if w.prefix {
					a, b = max(a-1, 0), max(b-1, 0)
				}
				out = append(out, Token{ID: s.id, Piece: tk.pieces.at(s.id), Text: string(tk.raw.at(s.id)),
					Start: sp.at(w.start + a), End: sp.at(w.start + b), Added: w.prefix && s.end <= 1})
			}
		}
	}
	markPartial(text, out)
	return out, nil
}

// wholeWord is ignore_merges: a pre-token spelled in the vocabulary is
// that one token, whatever the merges would make of it.
func (tk *ByteLevelBPE) wholeWord(word string) (int, bool) {
	if !tk.ignoreMerges || len(word) < 2 {
		return 0, false
	}
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		b.WriteRune(byteToUnicode[word[i]])
	}
	id, ok := tk.Lookup(b.String())
	return id, ok && !tk.special[id]
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
			n := len(tk.raw.at(id))
			syms = append(syms, sym{id: id, start: off, end: off + n})
			off += n
		}
		return syms
	}
	syms = make([]sym, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = sym{id: tk.byteID[word[i]], start: i, end: i + 1}
	}
	if id, ok := tk.wholeWord(word); ok {
		syms = []sym{{id: id, start: 0, end: len(word)}}
	} else {
		syms = mergeSymbols(syms, tk.score)
	}
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

// mergeRanks maps each merge pair (by ids) to its priority: earlier lines
// merge first. Every piece and every merged piece must be in the vocabulary.
func mergeRanks(v *vocabulary, n int, merge func(i int) (string, string)) (*pairRanks, error) {
	rank := newPairRanks(n)
	for i := range n {
		ma, mb := merge(i)
		a, okA := v.Lookup(ma)
		b, okB := v.Lookup(mb)
		if !okA || !okB {
			return nil, fmt.Errorf("merge %d %q %q: piece not in the vocabulary", i+1, ma, mb)
		}
		if _, ok := v.Lookup(ma + mb); !ok {
			return nil, fmt.Errorf("merge %d %q %q: merged piece not in the vocabulary", i+1, ma, mb)
		}
		rank.add(a, b, i)
	}
	return rank, nil
}
