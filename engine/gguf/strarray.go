package gguf

// strarray.go: an array of strings held compactly. A tokenizer's
// vocabulary and merges are arrays of ~50,000 short strings each; as a
// []string they are 100,000 small allocations and 16-byte headers (~5 MB
// of a GPT-2 file's load, all garbage once the tokenizer is built). A
// StringArray is two allocations: every element's bytes in one string and
// a 4-byte end offset each, and its elements are substrings of that one
// string (a tokenizer keeps them as its pieces without copying them).

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// StringArray is an array of strings: element i is all[ends[i−1]:ends[i]]
// (from 0 for element 0). The zero value is empty.
type StringArray struct {
	all  string
	ends []uint32
}

// StringArrayOf copies s into a StringArray; it panics if s holds 4 GiB or
// more of bytes (a file's arrays are refused before that: readStrings).
func StringArrayOf(s []string) StringArray {
	n := 0
	for _, x := range s {
		n += len(x)
	}
	if uint64(n) > math.MaxUint32 {
		panic(fmt.Sprintf("gguf: StringArrayOf: %d bytes of strings, more than 4 GiB", n))
	}
	var b strings.Builder
	b.Grow(n)
	a := StringArray{ends: make([]uint32, len(s))}
	for i, x := range s {
		b.WriteString(x)
		a.ends[i] = uint32(b.Len())
	}
	a.all = b.String()
	return a
}

// Len is the number of elements.
func (a StringArray) Len() int { return len(a.ends) }

// At is element i (a substring of the array's one string: no copy).
func (a StringArray) At(i int) string {
	start := uint32(0)
	if i > 0 {
		start = a.ends[i-1]
	}
	return a.all[start:a.ends[i]]
}

// Parts is the array's one string and its elements' end offsets, as held
// (not copies: the caller must not change ends).
func (a StringArray) Parts() (all string, ends []uint32) { return a.all, a.ends }

// Strings is the elements as a []string: new headers, the bytes shared
// (one allocation of 16 bytes an element).
func (a StringArray) Strings() []string {
	if len(a.ends) == 0 {
		return nil
	}
	out := make([]string, len(a.ends))
	start := uint32(0)
	for i, end := range a.ends {
		out[i] = a.all[start:end]
		start = end
	}
	return out
}

// readStrings reads n strings (each a uint64 length and its bytes) into a
// StringArray. A first pass checks every length against the file and sums
// them, so the second allocates exactly once for the bytes and once for
// the offsets; an array of 4 GiB or more of bytes is refused.
func (r *reader) readStrings(n int, key string) (StringArray, error) {
	start, total := r.pos, uint64(0)
	what := key + " length" // once: not an allocation an element
	for range n {
		l, err := r.count(1, what)
		if err != nil {
			return StringArray{}, err
		}
		r.pos += l
		if total += uint64(l); total > math.MaxUint32 {
			return StringArray{}, fmt.Errorf("gguf: key %q: an array of strings of more than 4 GiB", key)
		}
	}
	if n == 0 {
		return StringArray{}, nil
	}
	r.pos = start
	var b strings.Builder
	b.Grow(int(total))
	a := StringArray{ends: make([]uint32, n)}
	for i := range a.ends { // the first pass checked every length
		l := int(binary.LittleEndian.Uint64(r.b[r.pos:]))
		b.Write(r.b[r.pos+8 : r.pos+8+l])
		r.pos += 8 + l
		a.ends[i] = uint32(b.Len())
	}
	a.all = b.String()
	return a, nil
}
