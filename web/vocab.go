package web

// vocab.go: vocabulary search for the lab's "force any token" box: a
// token by id, or the tokens whose text or vocabulary spelling matches
// what the student typed.

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
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

// maxVocabResults bounds one search's answer.
const maxVocabResults = 50

// vocabPerSecond and vocabBurst are the per-visitor rate of vocabulary
// searches (the lab searches as the student types, debounced).
const (
	vocabPerSecond = 10.0
	vocabBurst     = 20
	// vocabRefusalDelay holds a refused search before its 429
	vocabRefusalDelay = time.Second
)

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

// apiVocab answers GET /api/vocab?model=M&q=Q with {"tokens": [...]}.
func (s *Server) apiVocab(c echo.Context) error {
	vs, ok := s.opts.Catalog.(VocabSearcher)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "this server cannot search vocabularies")
	}
	q := c.QueryParam("q")
	if len(q) > 256 {
		return echo.NewHTTPError(http.StatusBadRequest, "the search text is "+strconv.Itoa(len(q))+" bytes; the limit is 256")
	}
	// a search scans the whole vocabulary: it is engine-like work, so it
	// takes a slot of the fair queue like a stage does (sched.go), after a
	// per-visitor rate, so a flood of searches cannot slow others' steps
	visitor := s.visitorOf(c.Request())
	if !s.vocabRate.allow(visitor) {
		// the refusal waits a moment first: a client looping on refusals
		// then makes one request a second per connection instead of
		// thousands, which would take the cores from everyone's steps
		select {
		case <-time.After(s.vocabDelay):
		case <-c.Request().Context().Done():
		}
		return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf("too many vocabulary searches: the limit is %g per second per visitor (a burst of %d); try again in a moment", vocabPerSecond, vocabBurst))
	}
	var toks []VocabEntry
	var err error
	if qerr := s.sched.Run(c.Request().Context(), visitor, func() { toks, err = vs.SearchVocab(c.QueryParam("model"), q, maxVocabResults) }); qerr != nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "the search was cancelled before the server had time for it: try again")
	}
	if err != nil {
		if _, ok := err.(*echo.HTTPError); ok {
			return err
		}
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": toks})
}
