package tokenizer

// split_llama3.go: the pre-tokenization pattern of Llama 3 (llama.cpp's
// tokenizer.ggml.pre "llama-bpe") and Qwen 2 ("qwen2"), matched by hand as
// gpt2Split matches GPT-2's (Go's regexp has no look-ahead):
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Qwen 2's differs only in \p{N} (one digit a piece) for \p{N}{1,3}. The
// contractions are matched ASCII case-insensitively, as llama.cpp spells
// them ('[sS]|'[tT]|'[rR][eE]|…).

import "unicode"

// splitKind names the patterns a Split step (or a GGUF pre-tokenizer) runs.
type splitKind int

const (
	splitGPT2   splitKind = iota // GPT-2's pattern (gpt2Split)
	splitLlama3                  // Llama 3's: letters with one leading non-letter, digits by three, newlines kept together
	splitQwen2                   // Llama 3's with digits one by one
)

// llama3Pattern and qwen2Pattern are the patterns as tokenizer.json spells them.
const (
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// splitOf is the pattern a tokenizer.json Split Regex names, if one we match.
func splitOf(p string) (splitKind, bool) {
	switch p {
	case gpt2Pattern:
		return splitGPT2, true
	case llama3Pattern:
		return splitLlama3, true
	case qwen2Pattern:
		return splitQwen2, true
	}
	return 0, false
}

// contraction is the length of the contraction at u[i:] ('s, 't, 're,
// 've, 'm, 'll, 'd in either case), 0 if none.
func contraction(u []rune) int {
	if len(u) < 2 || u[0] != '\'' {
		return 0
	}
	lower := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	switch lower(u[1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(u) > 2 && lower(u[2]) == 'e' {
			return 3
		}
	case 'l':
		if len(u) > 2 && lower(u[2]) == 'l' {
			return 3
		}
	}
	return 0
}

// llama3Split cuts u by Llama 3's pattern (maxDigits 3) or Qwen 2's
// (maxDigits 1), appending [start, end) ranges of characters to out.
func llama3Split(out [][2]int, u []rune, maxDigits int) [][2]int {
	isL, isN := unicode.IsLetter, unicode.IsNumber
	isNL := func(r rune) bool { return r == '\r' || r == '\n' }
	other := func(r rune) bool { return !isSpace(r) && !isL(r) && !isN(r) }
	run := func(i int, pred func(rune) bool) int {
		for i < len(u) && pred(u[i]) {
			i++
		}
		return i
	}
	for i := 0; i < len(u); {
		r := u[i]
		// (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if n := contraction(u[i:]); n > 0 {
			out = append(out, [2]int{i, i + n})
			i += n
			continue
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if isL(r) {
			e := run(i, isL)
			out, i = append(out, [2]int{i, e}), e
			continue
		}
		if !isNL(r) && !isN(r) && i+1 < len(u) && isL(u[i+1]) {
			e := run(i+1, isL)
			out, i = append(out, [2]int{i, e}), e
			continue
		}
		// \p{N}{1,maxDigits}
		if isN(r) {
			e := i + 1
			for e < len(u) && e-i < maxDigits && isN(u[e]) {
				e++
			}
			out, i = append(out, [2]int{i, e}), e
			continue
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
		if j := i + btoi(r == ' '); j < len(u) && other(u[j]) {
			e := run(run(j, other), isNL)
			out, i = append(out, [2]int{i, e}), e
			continue
		}
		// whitespace from here on (every other character was matched above)
		e := run(i, isSpace)
		// \s*[\r\n]+: through the run's last newline
		last := -1
		for k := i; k < e; k++ {
			if isNL(u[k]) {
				last = k
			}
		}
		switch {
		case last >= 0:
			e = last + 1
		case e < len(u) && e-1 > i: // \s+(?!\S): leave the last space for what follows
			e--
		}
		// else \s+(?!\S) to the end of the text, or \s+: the whole run
		out, i = append(out, [2]int{i, e}), e
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
