package tokenizer

// normalize.go: tokenizer.json's Unicode normalizers (NFC, NFD, NFKC, NFKD), keeping a map from
// the normalized text back to input offsets so tokens still point at what the student typed.

import (
	"fmt"

	"golang.org/x/text/unicode/norm"
)

// normForms names the normalizers we apply, as tokenizer.json spells them.
var normForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

// normalizer is a chain of Unicode normalization forms (usually one).
type normalizer []norm.Form

// span is a run of input on its way to the model: an added token, or text —
// normalized when the tokenizer has a normalizer — with the way back to
// input offsets.
type span struct {
	text    string
	start   int     // input offset of text[0]
	orig    []int32 // orig[i]: input offset of text[i:]; nil when text is the input itself
	special int     // ≥ 0: an added token's id
}

// at returns the input offset of text[i:].
func (s span) at(i int) int {
	if s.orig == nil {
		return s.start + i
	}
	return int(s.orig[i])
}

// apply normalizes a text span. The input is cut at normalization
// boundaries; a boundary in the output maps to the same boundary in the
// input, and an offset inside a rewritten piece maps to the piece's end, so
// tokens' input spans still tile the input (a token wholly inside a
// rewritten piece covers no input).
func (n normalizer) apply(s span) span {
	for _, f := range n {
		s = normalizeForm(f, s)
	}
	return s
}

func normalizeForm(f norm.Form, s span) span {
	if f.IsNormalString(s.text) {
		return s
	}
	out := make([]byte, 0, len(s.text)+len(s.text)/4)
	orig := make([]int32, 0, len(s.text)+1)
	var it norm.Iter
	it.InitString(f, s.text)
	var pend []byte // output of the input consumed since p0
	p0 := 0
	for !it.Done() {
		pend = append(pend, it.Next()...)
		p1 := it.Pos()
		if p1 == p0 && !it.Done() { // output ahead of the input: wait for the rest
			continue
		}
		if string(pend) == s.text[p0:p1] { // unchanged: offsets carry over one to one
			for k := range pend {
				orig = append(orig, int32(s.at(p0+k)))
			}
		} else if len(pend) > 0 {
			orig = append(orig, int32(s.at(p0)))
			for range len(pend) - 1 {
				orig = append(orig, int32(s.at(p1)))
			}
		}
		out = append(out, pend...)
		pend, p0 = pend[:0], p1
	}
	orig = append(orig, int32(s.at(len(s.text))))
	return span{text: string(out), start: s.start, orig: orig, special: -1}
}

// parseNormalizers reads the normalizer section's Unicode forms; other
// normalizer types are the caller's to handle or refuse.
func parseNormForm(typ string) (norm.Form, bool) {
	f, ok := normForms[typ]
	return f, ok
}

func unsupportedNormalizer(c component) error {
	return fmt.Errorf("normalizer %q is not supported (supported: NFC, NFD, NFKC, NFKD, and for SentencePiece-style files Prepend and Replace of \" \" by the Metaspace character)", c.Type)
}
