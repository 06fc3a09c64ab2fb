package web

// quantview.go: /api/quantization, read only: the default model's weights
// in F32 (as loaded), BF16, Q8_0 and Q4_K side by side, measured on this
// machine now (engine.CompareWeights: bytes per parameter, bytes read per
// decode step, greedy decode speed in interleaved rounds, the largest
// logit change against F32 and whether the greedy next token and text
// change), for the quantization section of the serving lesson. The
// quantized copies are made once; one measurement runs at a time and its
// answer is kept for a few seconds, so a class opening the lesson together
// costs one.

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// The measurement's bounds and defaults.
const (
	quantPromptMax     = 64 // tokens of the prompt kept
	quantStepsMax      = 64
	quantRoundsMax     = 7
	quantStepsDefault  = 32
	quantRoundsDefault = 3
	quantKeep          = 5 * time.Second
)

// QuantPrecisions are the precisions compared, the reference first.
var QuantPrecisions = []engine.DType{engine.F32, engine.BF16, engine.Q8_0, engine.Q4_K}

// QuantView is the /api/quantization answer.
type QuantView struct {
	Model string `json:"model"`
	*engine.PrecisionComparison
	PromptText    string  `json:"prompt"`
	MeasuredAgoMs float64 `json:"measured_ago_ms"`
}

// modelSource is a catalog that hands out its loaded models.
type modelSource interface {
	Model(name string) (*engine.Model, error)
}

// quantState is a server's quantized copies of its default model and its
// latest measurement.
type quantState struct {
	mu     sync.Mutex
	model  *engine.Model
	models []*engine.Model
	last   map[string]quantCached
}

type quantCached struct {
	v  QuantView
	at time.Time
}

// QuantModels returns m in every QuantPrecisions precision (m itself for
// F32 when it is stored so), with their names.
func QuantModels(m *engine.Model) ([]*engine.Model, []string) {
	out, names := make([]*engine.Model, len(QuantPrecisions)), make([]string, len(QuantPrecisions))
	for i, d := range QuantPrecisions {
		out[i], names[i] = m.WithWeights(d), d.String()
	}
	return out, names
}

// QuantPrompt tokenizes a lesson prompt as the comparison runs it: BOS
// first when the tokenizer adds one, at most quantPromptMax tokens.
func QuantPrompt(m *engine.Model, text string) ([]int, error) {
	toks, err := m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(toks))
	for _, t := range toks[:min(len(toks), quantPromptMax)] {
		ids = append(ids, t.ID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("the prompt has no tokens")
	}
	return ids, nil
}

func (s *Server) initQuantView() {
	s.echo.GET("/api/quantization", func(c echo.Context) error {
		if site := c.Request().Header.Get("Sec-Fetch-Site"); site == "cross-site" {
			return echo.NewHTTPError(http.StatusForbidden, "the quantization comparison is readable from this site's pages only")
		}
		src, ok := s.opts.Catalog.(modelSource)
		if !ok {
			return echo.NewHTTPError(http.StatusNotFound, "this server has no engine models")
		}
		m, err := src.Model("")
		if err != nil {
			return echo.NewHTTPError(http.StatusNotFound, err.Error())
		}
		// the reference is float32: the weights as stored, or BF16 ones
		// widened exactly
		if d := m.Weights.DType(); m.Original != nil || d != engine.F32 && d != engine.BF16 {
			return echo.NewHTTPError(http.StatusConflict, "the default model is stored as "+m.Precision()+": the comparison starts from float32 or bfloat16 weights")
		}
		num := func(key string, def, hi int) (int, error) {
			q := c.QueryParam(key)
			if q == "" {
				return def, nil
			}
			n, err := strconv.Atoi(q)
			if err != nil || n < 1 || n > hi {
				return 0, fmt.Errorf("%s %q: allowed 1 to %d", key, q, hi)
			}
			return n, nil
		}
		steps, err := num("steps", quantStepsDefault, quantStepsMax)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		rounds, err := num("rounds", quantRoundsDefault, quantRoundsMax)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		text := c.QueryParam("prompt")
		if text == "" {
			text = "Once upon a time"
		}
		v, ok := s.quant.recent(m, text, steps, rounds)
		if !ok {
			// a measurement is engine work: it takes a fair-queue slot, so a
			// visitor asking for many prompts gets its share of the cores
			r := c.Request()
			if qerr := s.sched.Run(r.Context(), s.visitorOf(r), func() {
				v, err = s.quant.measure(m, text, steps, rounds)
			}); qerr != nil {
				return echo.NewHTTPError(http.StatusServiceUnavailable, "the measurement was cancelled before the server had time for it: reload the page")
			}
			if err != nil {
				return echo.NewHTTPError(http.StatusBadRequest, err.Error())
			}
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, v)
	})
}

func quantKey(steps, rounds int, text string) string {
	return fmt.Sprintf("%d|%d|%s", steps, rounds, text)
}

// recent returns a measurement of m younger than quantKeep with the same
// prompt, steps and rounds.
func (q *quantState) recent(m *engine.Model, text string, steps, rounds int) (QuantView, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c, ok := q.last[quantKey(steps, rounds, text)]
	if !ok || q.model != m || time.Since(c.at) >= quantKeep {
		return QuantView{}, false
	}
	v := c.v
	v.MeasuredAgoMs = float64(time.Since(c.at).Microseconds()) / 1000
	return v, true
}

// measure runs the comparison on m's quantized copies (made on first use)
// and keeps the answer; one measurement runs at a time, so two do not
// slow each other's timings.
func (q *quantState) measure(m *engine.Model, text string, steps, rounds int) (QuantView, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.model != m {
		q.model = m
		q.models, _ = QuantModels(m)
		q.last = map[string]quantCached{}
	}
	key := quantKey(steps, rounds, text)
	if c, ok := q.last[key]; ok && time.Since(c.at) < quantKeep { // measured while this one waited
		v := c.v
		v.MeasuredAgoMs = float64(time.Since(c.at).Microseconds()) / 1000
		return v, nil
	}
	prompt, err := QuantPrompt(m, text)
	if err != nil {
		return QuantView{}, err
	}
	// a model with a short context decodes what fits after the prompt
	if room := m.Config.SeqLen - len(prompt); room < 1 {
		return QuantView{}, fmt.Errorf("the prompt's %d tokens fill this model's context of %d: write a shorter one", len(prompt), m.Config.SeqLen)
	} else if steps > room {
		steps = room
	}
	names := make([]string, len(QuantPrecisions))
	for i, d := range QuantPrecisions {
		names[i] = d.String()
	}
	cmp, err := engine.CompareWeights(q.models, names, prompt, steps, rounds)
	if err != nil {
		return QuantView{}, err
	}
	v := QuantView{Model: m.Name, PrecisionComparison: cmp, PromptText: text}
	clear(q.last)
	q.last[key] = quantCached{v: v, at: time.Now()}
	return v, nil
}
