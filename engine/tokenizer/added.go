package tokenizer

// added.go: cutting the input at added tokens (special tokens such as <|endoftext|>, and
// tokenizer.json's other added tokens) before and after normalization, as Hugging Face does.

import (
	"sort"
	"strings"
)

// segment is a run of plain text, or one added token (special ≥ 0).
type segment struct {
	text    string
	start   int
	special int
}

// spans cuts text into added tokens and text spans, normalizing the text
// with nf: first at added tokens matched in the input (specials, and
// tokenizer.json's added tokens with "normalized": false), then, in each
// normalized span, at those matched after normalization ("normalized":
// true). Special tokens are matched only when allow is set; other added
// tokens always are.
func (v *vocabulary) spans(text string, allow bool, nf normalizer) []span {
	var out []span
	for _, seg := range splitSpecial(text, v.specials, v.Lookup, allow, v.always) {
		if seg.special >= 0 {
			out = append(out, span{text: seg.text, start: seg.start, special: seg.special})
			continue
		}
		s := nf.apply(span{text: seg.text, start: seg.start, special: -1})
		if len(v.normSpecials) == 0 {
			out = append(out, s)
			continue
		}
		for _, sub := range splitSpecial(s.text, v.normSpecials, mapLookup(v.normIDs), allow, v.always) {
			t := span{text: sub.text, start: s.at(sub.start), special: sub.special}
			if s.orig != nil {
				t.orig = s.orig[sub.start : sub.start+len(sub.text)+1]
			}
			out = append(out, t)
		}
	}
	return out
}

// splitSpecial cuts text at occurrences of added-token strings (longest
// match first): all of them when allow is set, otherwise only those in
// always. Without any, the whole text is one segment.
func splitSpecial(text string, specials []string, lookup func(string) (int, bool), allow bool, always map[string]bool) []segment {
	if !allow && len(always) == 0 || len(specials) == 0 {
		return []segment{{text: text, special: -1}}
	}
	var segs []segment
	last := 0
	for i := 0; i < len(text); {
		found := ""
		for _, s := range specials {
			if (allow || always[s]) && strings.HasPrefix(text[i:], s) {
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
		id, _ := lookup(found)
		segs = append(segs, segment{text: found, start: i, special: id})
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

// mapLookup is a map's lookup as splitSpecial takes it.
func mapLookup(m map[string]int) func(string) (int, bool) {
	return func(s string) (int, bool) { id, ok := m[s]; return id, ok }
}
