package tokenizer

// idtable.go: a vocabulary's compact tables. idTable maps a spelling to its
// id with an open-addressing table of ids whose keys are the vocabulary's own
// pieces (no second copy of the strings and no map buckets: 4 bytes a slot,
// two slots a token), and a small map for the few spellings that name an id
// spelled otherwise (an added token's content over a vocabulary piece).
// pairRanks maps a merge pair of ids to its rank, 12 bytes a slot.
// byteTable holds every token's bytes in one array with a 4-byte end offset
// each (not a 24-byte slice header and an allocation each).

import "hash/maphash"

var idSeed = maphash.MakeSeed()

type idTable struct {
	slots []int32 // id+1 per slot, 0 empty; a power of two long
	used  int
	extra map[string]int // spellings whose id's piece is spelled otherwise (checked first)
}

// newIDTable sizes a table for about n spellings.
func newIDTable(n int) idTable {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return idTable{slots: make([]int32, size)}
}

// get returns the id of spelling k among pieces.
func (t *idTable) get(pieces *pieceTable, k string) (int, bool) {
	if id, ok := t.extra[k]; ok {
		return id, true
	}
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := maphash.String(idSeed, k) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false
		}
		if pieces.at(int(s-1)) == k {
			return int(s - 1), true
		}
	}
}

// set maps spelling k to id (as a map assignment would).
func (t *idTable) set(pieces *pieceTable, k string, id int) {
	if id < 0 || id >= pieces.len() || pieces.at(id) != k {
		if t.extra == nil {
			t.extra = map[string]int{}
		}
		t.extra[k] = id
		return
	}
	delete(t.extra, k)
	if 2*(t.used+1) > len(t.slots) {
		t.grow(pieces)
	}
	t.insert(pieces, k, int32(id+1))
}

func (t *idTable) insert(pieces *pieceTable, k string, v int32) {
	mask := uint64(len(t.slots) - 1)
	for i := maphash.String(idSeed, k) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = v
			t.used++
			return
		}
		if pieces.at(int(s-1)) == k {
			t.slots[i] = v
			return
		}
	}
}

func (t *idTable) grow(pieces *pieceTable) {
	old := t.slots
	*t = idTable{slots: make([]int32, max(16, 2*len(old))), extra: t.extra}
	for _, s := range old {
		if s != 0 {
			t.insert(pieces, pieces.at(int(s-1)), s)
		}
	}
}

// pairRanks maps a pair of ids (a, b) to a rank: open addressing on
// a<<32 | b (+1, 0 marking an empty slot).
type pairRanks struct {
	keys  []uint64
	ranks []int32
}

func newPairRanks(n int) *pairRanks {
	size := 16
	for size < n+n/4 {
		size *= 2
	}
	return &pairRanks{keys: make([]uint64, size), ranks: make([]int32, size)}
}

func pairKey(a, b int) uint64 { return uint64(a)<<32 | uint64(b) + 1 }

func pairSlot(k uint64, mask uint64) uint64 { return (k * 0x9E3779B97F4A7C15 >> 32) & mask }

// get returns the rank of (a, b).
func (p *pairRanks) get(a, b int) (int, bool) {
	k := pairKey(a, b)
	mask := uint64(len(p.keys) - 1)
	for i := pairSlot(k, mask); ; i = (i + 1) & mask {
		switch p.keys[i] {
		case k:
			return int(p.ranks[i]), true
		case 0:
			return 0, false
		}
	}
}

// add sets (a, b)'s rank unless it has one; the table holds at most the
// n pairs it was made for.
func (p *pairRanks) add(a, b, rank int) {
	k := pairKey(a, b)
	mask := uint64(len(p.keys) - 1)
	for i := pairSlot(k, mask); ; i = (i + 1) & mask {
		switch p.keys[i] {
		case k:
			return
		case 0:
			p.keys[i], p.ranks[i] = k, int32(rank)
			return
		}
	}
}

// each calls f for every spelling and its id.
func (t *idTable) each(pieces *pieceTable, f func(k string, id int)) {
	for _, s := range t.slots {
		if s != 0 {
			f(pieces.at(int(s-1)), int(s-1))
		}
	}
	for k, id := range t.extra {
		f(k, id)
	}
}

// len is the number of pairs with a rank.
func (p *pairRanks) len() int {
	n := 0
	for _, k := range p.keys {
		if k != 0 {
			n++
		}
	}
	return n
}

// each calls f for every pair and its rank.
func (p *pairRanks) each(f func(a, b, rank int)) {
	for i, k := range p.keys {
		if k != 0 {
			k--
			f(int(k>>32), int(k&(1<<32-1)), int(p.ranks[i]))
		}
	}
}

// byteTable is every id's bytes, one after another in arena: id's end at
// ends[id], its start at ends[id−1] (0 for id 0); over holds the few set
// afterwards (added and special tokens: their own text).
type byteTable struct {
	arena []byte
	ends  []uint32
	over  map[int][]byte
}

// add appends the next id's bytes.
func (t *byteTable) add(b []byte) {
	t.arena = append(t.arena, b...)
	t.ends = append(t.ends, uint32(len(t.arena)))
}

// addString is add for a string's bytes.
func (t *byteTable) addString(s string) {
	t.arena = append(t.arena, s...)
	t.ends = append(t.ends, uint32(len(t.arena)))
}

func (t *byteTable) len() int { return len(t.ends) }

// at returns id's bytes (capped at their end, so an append cannot reach
// the next id's).
func (t *byteTable) at(id int) []byte {
	if b, ok := t.over[id]; ok {
		return b
	}
	start := uint32(0)
	if id > 0 {
		start = t.ends[id-1]
	}
	end := t.ends[id]
	return t.arena[start:end:end]
}

// set makes b id's bytes.
func (t *byteTable) set(id int, b []byte) {
	if t.over == nil {
		t.over = map[int][]byte{}
	}
	t.over[id] = b
}
