package tokenizer

// pretokenize.go: the byte-level family's pre-tokenizer steps — ByteLevel (optional prefix
// space, GPT-2's split, the byte-to-character map), Digits and Split with GPT-2's pattern — run
// in the file's order over pieces, as Hugging Face tokenizers runs them.

import (
	"unicode"
	"unicode/utf8"
)

type preStepKind int

const (
	stepByteLevel preStepKind = iota // optional prefix space, optional GPT-2 split, then bytes → characters
	stepDigits                       // isolate digits: each one, or each run
	stepSplit                        // GPT-2's, Llama 3's or Qwen 2's pattern, matches isolated
)

// preStep is one pre-tokenizer of a tokenizer.json Sequence.
type preStep struct {
	kind           preStepKind
	addPrefixSpace bool      // ByteLevel: a space before every piece that does not start with one
	useRegex       bool      // ByteLevel: split with GPT-2's pattern
	individual     bool      // Digits: every digit alone (else runs of digits)
	split          splitKind // Split (and a GGUF pre-tokenizer's split): which pattern
}

// gpt2Steps is GPT-2's own pre-tokenizer: ByteLevel with GPT-2's split.
var gpt2Steps = []preStep{{kind: stepByteLevel, useRegex: true}}

// piece is a pre-token: bytes [start, end) of a text span, after an
// inserted space (covering no input) when prefix is set.
type piece struct {
	start, end int
	prefix     bool
}

// preTokenize runs steps over text. Steps after ByteLevel see the byte-level
// characters ("Ġ" for a space), as in Hugging Face tokenizers.
func preTokenize(text string, steps []preStep) []piece {
	pieces := []piece{{0, len(text), false}}
	if len(text) == 0 {
		return nil
	}
	mapped := false
	// scratch, sized for the whole text once: a piece has at most one
	// unit per byte, plus an inserted space
	units := make([]rune, 0, len(text)+1)
	offs := make([]int, 0, len(text)+2)
	var cuts [][2]int
	for _, st := range steps {
		out := make([]piece, 0, len(pieces)+len(text)/4)
		for _, p := range pieces {
			if st.kind == stepByteLevel && st.addPrefixSpace && !p.prefix && p.end > p.start && text[p.start] != ' ' {
				p.prefix = true
			}
			if st.kind == stepByteLevel && !st.useRegex {
				out = append(out, p)
				continue
			}
			units, offs = pieceUnits(text, p, mapped, units[:0], offs[:0])
			if st.kind == stepDigits {
				cuts = digitSplit(cuts[:0], units, st.individual)
			} else if st.kind == stepSplit && st.split != splitGPT2 {
				cuts = llama3Split(cuts[:0], units, map[splitKind]int{splitLlama3: 3, splitQwen2: 1}[st.split])
			} else { // ByteLevel with regex, Split with GPT-2's pattern
				cuts = gpt2Split(cuts[:0], units)
			}
			for _, c := range cuts {
				out = append(out, piece{start: offs[c[0]], end: offs[c[1]], prefix: p.prefix && c[0] == 0})
			}
		}
		pieces = out
		if st.kind == stepByteLevel {
			mapped = true
		}
	}
	return pieces
}

// pieceUnits lists a piece's characters (its bytes' byte-level characters
// once mapped) and the text offset where each starts; offs has one more
// entry, the piece's end. An inserted space starts and ends at p.start.
func pieceUnits(text string, p piece, mapped bool, units []rune, offs []int) ([]rune, []int) {
	if p.prefix {
		if mapped {
			units = append(units, byteToUnicode[' '])
		} else {
			units = append(units, ' ')
		}
		offs = append(offs, p.start)
	}
	if mapped {
		for i := p.start; i < p.end; i++ {
			units = append(units, byteToUnicode[text[i]])
			offs = append(offs, i)
		}
	} else {
		for i, r := range text[p.start:p.end] {
			units = append(units, r)
			offs = append(offs, p.start+i)
		}
	}
	return units, append(offs, p.end)
}

// isSpace is \s as Hugging Face tokenizers (Oniguruma), OpenAI's encoder.py
// (Python regex) and tiktoken read GPT-2's pattern: the Unicode White_Space
// property. U+0085 is space; U+FEFF and U+180E are not (JavaScript's \s
// says the opposite for U+0085 and U+FEFF).
func isSpace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.Is(unicode.White_Space, r)
}

// digitSplit isolates numeric characters (Unicode N, Rust's
// char::is_numeric): each one, or each run.
func digitSplit(out [][2]int, u []rune, individual bool) [][2]int {
	for i := 0; i < len(u); {
		j := i + 1
		num := unicode.IsNumber(u[i])
		for j < len(u) && unicode.IsNumber(u[j]) == num && !(num && individual) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

var contractions = []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}

// gpt2Split applies GPT-2's pre-tokenization pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// by hand (Go's regexp has no look-ahead), returning [start, end) ranges of
// characters, appended to out.
func gpt2Split(out [][2]int, u []rune) [][2]int {
	isL, isN := unicode.IsLetter, unicode.IsNumber
	other := func(r rune) bool { return !isSpace(r) && !isL(r) && !isN(r) }
	run := func(i int, pred func(rune) bool) int {
		for i < len(u) && pred(u[i]) {
			i++
		}
		return i
	}
	for i := 0; i < len(u); {
		if u[i] == '\'' {
			matched := false
			for _, c := range contractions {
				if hasRunePrefix(u[i:], c) {
					n := utf8.RuneCountInString(c)
					out = append(out, [2]int{i, i + n})
					i += n
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		j := i
		if u[i] == ' ' && i+1 < len(u) {
			j = i + 1
		}
		if r := u[j]; j > i || !isSpace(r) {
			var pred func(rune) bool
			switch {
			case isL(r):
				pred = isL
			case isN(r):
				pred = isN
			case other(r):
				pred = other
			}
			if pred != nil {
				e := run(j, pred)
				out = append(out, [2]int{i, e})
				i = e
				continue
			}
		}
		// whitespace: \s+(?!\S) then \s+
		e := run(i, isSpace)
		if e < len(u) && e-1 > i { // followed by non-space: leave the last space for it
			e--
		}
		out = append(out, [2]int{i, e})
		i = e
	}
	return out
}

func hasRunePrefix(u []rune, s string) bool {
	for _, r := range s {
		if len(u) == 0 || u[0] != r {
			return false
		}
		u = u[1:]
	}
	return true
}

// gpt2Pattern is the pattern gpt2Split implements, as tokenizer.json spells it.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
