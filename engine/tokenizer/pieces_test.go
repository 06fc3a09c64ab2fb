package tokenizer

// pieces_test.go: the compact table of spellings, and a respelled piece
// (an added token whose content differs from the vocabulary's spelling of
// its id) through the vocabulary.

import "testing"

func TestPieceTable(t *testing.T) {
	byID := []string{"a", "", "Ġthe", "<|endoftext|>", "▁x"}
	p := piecesOf(byID)
	if p.len() != len(byID) || p.bytes() != len("a")+len("Ġthe")+len("<|endoftext|>")+len("▁x") {
		t.Fatalf("len %d, bytes %d", p.len(), p.bytes())
	}
	for id, want := range byID {
		if got := p.at(id); got != want {
			t.Errorf("piece %d: %q, want %q", id, got, want)
		}
	}
	p.set(2, "THE")
	for id, want := range []string{"a", "", "THE", "<|endoftext|>", "▁x"} {
		if got := p.at(id); got != want {
			t.Errorf("after set, piece %d: %q, want %q", id, got, want)
		}
	}
	if p.bytes() != len("a")+len("THE")+len("<|endoftext|>")+len("▁x") {
		t.Errorf("bytes after set: %d", p.bytes())
	}
}

func TestVocabularyRespelledPiece(t *testing.T) {
	byID := []string{"a", "b", "old", "c"}
	v := vocabulary{pieces: piecesOf(byID), ids: newIDTable(len(byID))}
	for id, s := range byID {
		v.setID(s, id)
	}
	v.setPiece(2, "<new>")
	v.setID("<new>", 2)
	for _, tc := range []struct {
		spelling string
		id       int
		ok       bool
	}{{"a", 0, true}, {"c", 3, true}, {"<new>", 2, true}, {"old", 2, true}, {"missing", 0, false}} {
		id, ok := v.Lookup(tc.spelling)
		if ok != tc.ok || ok && id != tc.id {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.spelling, id, ok, tc.id, tc.ok)
		}
	}
	if got := v.Piece(2); got != "<new>" {
		t.Errorf("Piece(2) = %q, want the new spelling", got)
	}
	if got := v.Piece(4); got != "" {
		t.Errorf("Piece(4) out of range = %q", got)
	}
}
