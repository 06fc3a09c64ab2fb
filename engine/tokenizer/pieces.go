package tokenizer

// pieces.go: the vocabulary's spellings by id, held compactly: every
// piece's bytes in one string and a 4-byte end offset each (a GGUF file's
// token array is already in this form and is kept without a copy). As a
// []string a 50,257-piece GPT-2 vocabulary took 804 KB of string headers
// alone; this takes 201 KB of offsets.

import "github.com/inferscope/inferscope/engine/gguf"

// pieceTable is id → spelling: piece i is all[ends[i−1]:ends[i]] (from 0
// for piece 0), unless respelled later (set), which over records.
type pieceTable struct {
	all  string
	ends []uint32
	over map[int]string // the few pieces respelled after the table was built
}

// piecesOf copies byID (spelling by id) into a pieceTable.
func piecesOf(byID []string) pieceTable {
	all, ends := gguf.StringArrayOf(byID).Parts()
	return pieceTable{all: all, ends: ends}
}

// len is the number of ids.
func (t *pieceTable) len() int { return len(t.ends) }

// at is id's spelling (a substring of the one string: no copy); id must be
// in range.
func (t *pieceTable) at(id int) string {
	if len(t.over) != 0 {
		if s, ok := t.over[id]; ok {
			return s
		}
	}
	start := uint32(0)
	if id > 0 {
		start = t.ends[id-1]
	}
	return t.all[start:t.ends[id]]
}

// set respells id as s.
func (t *pieceTable) set(id int, s string) {
	if t.over == nil {
		t.over = map[int]string{}
	}
	t.over[id] = s
}

// bytes is the length of the pieces' spellings together.
func (t *pieceTable) bytes() int {
	n := 0
	for i := range t.len() {
		n += len(t.at(i))
	}
	return n
}
