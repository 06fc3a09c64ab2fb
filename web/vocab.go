package web

// vocab.go: vocabulary search for the lab's "force any token" box: a
// token by id, or the tokens whose text or vocabulary spelling matches
// what the student typed.

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/inferscope/inferscope/web/catalog"
	"github.com/labstack/echo/v4"
)

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

// apiVocab answers GET /api/vocab?model=M&q=Q with {"tokens": [...]}.
func (s *Server) apiVocab(c echo.Context) error {
	vs, ok := s.opts.Catalog.(catalog.VocabSearcher)
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
	if !s.vocabRate.Allow(visitor) {
		// the refusal waits a moment first: a client looping on refusals
		// then makes one request a second per connection instead of
		// thousands, which would take the cores from everyone's steps
		select {
		case <-time.After(s.vocabDelay):
		case <-c.Request().Context().Done():
		}
		return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf("too many vocabulary searches: the limit is %g per second per visitor (a burst of %d); try again in a moment", vocabPerSecond, vocabBurst))
	}
	var toks []catalog.VocabEntry
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
