package tokenizer

// vocab.go: the vocabulary both tokenizer families share — pieces, the bytes
// each stands for, special tokens — and the Tokenizer accessors over it.

// vocabulary is a tokenizer's table of pieces. ByteLevelBPE and SentencePiece
// embed it and add their own merge rules.
type vocabulary struct {
	pieces   pieceTable // id → the vocabulary's spelling ("Ġthe", "▁the", "<0x0A>")
	raw      byteTable  // id → the bytes the piece stands for (idtable.go)
	ids      idTable    // spelling → id (idtable.go)
	byteID   [256]int   // id of each single-byte piece (byte fallback)
	special  map[int]bool
	specials []string // added-token strings matched in the input, longest first
	// normSpecials are tokenizer.json added tokens matched after
	// normalization ("normalized": true, with a normalizer), longest first.
	normSpecials []string
	normIDs      map[string]int  // normalized spelling → id, for normSpecials
	always       map[string]bool // added tokens that are not special: matched even when specials are not
	bos, eos     int             // -1 if none
	kind         string
	chat         *ChatTemplate // the model's own chat template, if it ships one (chat_template.go)
}

func (v *vocabulary) VocabSize() int       { return v.pieces.len() }
func (v *vocabulary) BOS() int             { return v.bos }
func (v *vocabulary) EOS() int             { return v.eos }
func (v *vocabulary) Kind() string         { return v.kind }
func (v *vocabulary) IsSpecial(i int) bool { return v.special[i] }

// Piece returns the vocabulary's spelling of id ("" when out of range).
func (v *vocabulary) Piece(id int) string {
	if id < 0 || id >= v.pieces.len() {
		return ""
	}
	return v.pieces.at(id)
}

// Lookup finds the id of a vocabulary piece.
func (v *vocabulary) Lookup(p string) (int, bool) { return v.ids.get(&v.pieces, p) }

// setID maps spelling p to id.
func (v *vocabulary) setID(p string, id int) { v.ids.set(&v.pieces, p, id) }

// setPiece respells id as s, its old spelling still naming it.
func (v *vocabulary) setPiece(id int, s string) {
	if old := v.pieces.at(id); old != s {
		if cur, ok := v.Lookup(old); ok && cur == id {
			if v.ids.extra == nil {
				v.ids.extra = map[string]int{}
			}
			v.ids.extra[old] = id
		}
		v.pieces.set(id, s)
	}
}

// TokenBytes returns the bytes id stands for; a special token stands for
// its own text.
func (v *vocabulary) TokenBytes(id int) []byte {
	if id < 0 || id >= v.raw.len() {
		return nil
	}
	if v.special[id] {
		return []byte(v.pieces.at(id))
	}
	return v.raw.at(id)
}
