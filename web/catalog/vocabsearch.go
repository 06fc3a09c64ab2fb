package catalog

// vocabsearch.go: vocabulary search over a loaded model: a token by id, or
// the tokens whose text or vocabulary spelling matches what the student
// typed (the lab's "force any token" box).

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// VocabEntry is one vocabulary token as the search returns it.
type VocabEntry struct {
	ID    int    `json:"id"`
	Piece string `json:"token"` // the vocabulary's spelling
	Text  string `json:"text"`  // the text it stands for ("" for part of a character)
	Bytes []int  `json:"bytes,omitempty"`
}

// VocabSearcher is what a Catalog offers when it can search vocabularies
// (EngineCatalog does); without it the lab only forces listed candidates.
type VocabSearcher interface {
	SearchVocab(model, query string, limit int) ([]VocabEntry, error)
}

// SearchVocab implements VocabSearcher. A query that is a number finds
// that id; otherwise tokens whose text equals the query come first, then
// those that start with it, then those that contain it (text or
// spelling), by id within each group.
func (c *EngineCatalog) SearchVocab(model, query string, limit int) ([]VocabEntry, error) {
	m, err := c.Model(model)
	if err != nil {
		return nil, err
	}
	tk := m.Tokenizer
	n := m.Config.VocabSize
	entry := func(id int) VocabEntry {
		b := tk.TokenBytes(id)
		e := VocabEntry{ID: id, Piece: tk.Piece(id), Text: string(b)}
		if !utf8.Valid(b) {
			e.Text = ""
			for _, x := range b {
				e.Bytes = append(e.Bytes, int(x))
			}
		}
		return e
	}
	if id, err := strconv.Atoi(strings.TrimSpace(query)); err == nil {
		if id < 0 || id >= n {
			return nil, echo.NewHTTPError(http.StatusBadRequest, "token id "+strconv.Itoa(id)+" is out of range: this vocabulary has ids 0 to "+strconv.Itoa(n-1))
		}
		return []VocabEntry{entry(id)}, nil
	}
	if query == "" {
		return nil, nil
	}
	type hit struct{ group, id int }
	var hits []hit
	lq := strings.ToLower(query)
	for id := 0; id < n; id++ {
		text, piece := string(tk.TokenBytes(id)), tk.Piece(id)
		switch lt := strings.ToLower(text); {
		case text == query || piece == query:
			hits = append(hits, hit{0, id})
		case strings.HasPrefix(text, query):
			hits = append(hits, hit{1, id})
		case strings.HasPrefix(lt, lq):
			hits = append(hits, hit{2, id})
		case strings.Contains(lt, lq) || strings.Contains(strings.ToLower(piece), lq):
			hits = append(hits, hit{3, id})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].group != hits[j].group {
			return hits[i].group < hits[j].group
		}
		return hits[i].id < hits[j].id
	})
	out := make([]VocabEntry, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, entry(h.id))
	}
	return out, nil
}
