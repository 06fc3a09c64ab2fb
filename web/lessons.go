package web

// lessons.go: the lesson pages and the live values lessons' placeholders are filled with.

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/inferscope/inferscope/internal/human"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/views"
)

// LessonValues computes the numbers lessons quote from a model card: every
// number in a lesson's prose comes from here or from a live panel.
func LessonValues(m catalog.ModelCard) lessons.Values {
	mha := 2 * int64(m.Layers) * int64(m.Heads) * int64(m.HeadDim) * 4
	v := lessons.Values{
		"model.name":                   m.Name,
		"model.params":                 human.Count(m.Params),
		"model.weights":                human.Bytes(m.WeightsBytes),
		"model.vocab":                  strconv.Itoa(m.Vocab),
		"model.dim":                    strconv.Itoa(m.Dim),
		"model.layers":                 strconv.Itoa(m.Layers),
		"model.heads":                  strconv.Itoa(m.Heads),
		"model.kv_heads":               strconv.Itoa(m.KVHeads),
		"model.head_dim":               strconv.Itoa(m.HeadDim),
		"model.q_per_kv":               strconv.Itoa(m.Heads / max(m.KVHeads, 1)),
		"model.context":                strconv.Itoa(m.Context),
		"model.kv_bytes_per_token":     human.Bytes(m.KVBytesPerToken),
		"model.kv_bytes_per_token_mha": human.Bytes(mha),
		"model.kv_bytes_full_context":  human.Bytes(m.KVBytesPerToken * int64(m.Context)),
		"model.card_url":               m.CardURL,
	}
	// architecture words, from the card (a lesson never types them)
	elem := m.KVBytesPerToken / max(2*int64(m.Layers)*int64(m.KVHeads)*int64(m.HeadDim), 1)
	v["model.kv_number_bytes"] = strconv.FormatInt(elem, 10)
	v["model.kv_formula"] = fmt.Sprintf("2 × %d layers × %d heads × %d × %d bytes", m.Layers, m.KVHeads, m.HeadDim, elem)
	v["model.family"], v["model.position_sentence"] = "Llama-style", "This model adds no position vector here: rotary position embedding (RoPE) rotates the queries and keys inside every attention layer by an angle that grows with the position."
	if strings.HasPrefix(m.Arch, "gemma") {
		v["model.family"] = "Gemma-style"
	}
	if m.Arch == "gpt2" {
		v["model.family"], v["model.position_sentence"] = "GPT-2-style", "This model adds a learned position vector (one row per position) to the token's row before the first layer."
	}
	switch {
	case m.KVHeads == m.Heads:
		v["model.attention_kind"] = "multi-head attention: every query head has its own key/value head"
	case m.KVHeads == 1:
		v["model.attention_kind"] = "multi-query attention: all query heads share one key/value head"
	default:
		v["model.attention_kind"] = fmt.Sprintf("grouped-query attention: %d query heads share each key/value head", m.Heads/max(m.KVHeads, 1))
	}
	// the card's own words for the position encoding, and the size of one
	// weight (the precision the weights are held in)
	v["model.position_encoding"] = m.Position
	v["model.precision"] = m.Precision
	if m.Params > 0 {
		v["model.bytes_per_weight"] = strconv.FormatInt(m.WeightsBytes/m.Params, 10)
	}
	v["model.kv_numbers_per_token"] = strconv.FormatInt(2*int64(m.Layers)*int64(m.KVHeads)*int64(m.HeadDim), 10)
	if t := m.Trained; t != nil {
		v["model.trained_on"] = t.Corpus
		v["model.train_tokens"] = human.Count(t.Tokens)
		v["model.train_minutes"] = strconv.Itoa(int(math.Round(t.Minutes)))
		v["model.train_hardware"] = t.Hardware
		v["model.val_loss"] = strconv.FormatFloat(t.ValLoss, 'f', 2, 64)
		v["model.capitals_right"] = strconv.Itoa(t.CapitalsRight)
		v["model.capitals_total"] = strconv.Itoa(t.CapitalsTotal)
	}
	// A model without a card (never the embedded default) still fills every
	// placeholder, in words.
	for k, w := range map[string]string{"model.card_url": "/lab", "model.trained_on": "text its authors chose",
		"model.train_tokens": "an unknown number of", "model.train_minutes": "an unknown number of",
		"model.train_hardware": "unknown hardware", "model.val_loss": "unknown", "model.capitals_right": "an unknown share",
		"model.capitals_total": "the"} {
		if v[k] == "" {
			v[k] = w
		}
	}
	return v
}

// loadLessons parses the lessons with the default model's numbers.
func (s *Server) loadLessons() error {
	var card catalog.ModelCard
	for _, m := range s.models() {
		if m.Default || card.Name == "" {
			card = m
		}
	}
	if card.Name == "" {
		return nil
	}
	ls, err := loadLessonsCached(LessonValues(card))
	if err != nil {
		return err
	}
	s.lessons = ls
	for _, l := range ls {
		s.opts.Lessons = append(s.opts.Lessons, views.LessonLink{Slug: l.Slug, Title: l.Title, Summary: l.Summary})
	}
	return nil
}

// lessonCache holds the lessons rendered for each model's values: a server
// renders them when it starts (parsing, filling and glossing every section
// takes ~20 ms), and a process that starts many servers on one model, as the
// tests and replicas do, renders them once. Read only once made; at most
// lessonCacheMax sets are kept.
var lessonCache struct {
	mu   sync.Mutex
	sets map[string][]*lessons.Lesson
}

const lessonCacheMax = 32

func loadLessonsCached(vals lessons.Values) ([]*lessons.Lesson, error) {
	keys := make([]string, 0, len(vals))
	for k, v := range vals {
		keys = append(keys, k+"="+v)
	}
	slices.Sort(keys)
	key := strings.Join(keys, "\x00")
	lessonCache.mu.Lock()
	defer lessonCache.mu.Unlock()
	if ls, ok := lessonCache.sets[key]; ok {
		return ls, nil
	}
	ls, err := lessons.Load(vals)
	if err != nil {
		return nil, err
	}
	if lessonCache.sets == nil || len(lessonCache.sets) >= lessonCacheMax {
		lessonCache.sets = map[string][]*lessons.Lesson{}
	}
	lessonCache.sets[key] = ls
	return ls, nil
}

func (s *Server) lessonIndex(c echo.Context) error {
	return render(c, http.StatusOK, views.LessonIndex(s.opts.Lessons))
}

func (s *Server) lessonPage(c echo.Context) error {
	slug := c.Param("slug")
	for i, l := range s.lessons {
		if l.Slug != slug {
			continue
		}
		d := views.LessonPageData{Slug: l.Slug, Title: l.Title, Summary: l.Summary, Defaults: s.pageData().Defaults}
		used := map[string]bool{}
		for _, sec := range l.Sections {
			var panels []views.LessonPanel
			for _, p := range sec.Panels {
				panels = append(panels, views.LessonPanel{Kind: p.Kind, Options: p.Options})
			}
			var qs []views.LessonQuestion
			for _, q := range sec.Questions {
				qs = append(qs, views.LessonQuestion(q))
			}
			d.Sections = append(d.Sections, views.LessonSection{Heading: sec.Heading, Stage: sec.Stage, HTML: sec.HTML, Panels: panels, Questions: qs})
			for _, t := range sec.Terms {
				used[t] = true
			}
		}
		terms, _ := lessons.Glossary()
		for _, t := range terms {
			if used[t.ID] {
				d.Glossary = append(d.Glossary, views.GlossaryTerm{ID: t.ID, Name: t.Name, Kind: t.Kind, Def: t.Def, See: t.See})
			}
		}
		if i > 0 {
			d.Prev = &views.LessonLink{Slug: s.lessons[i-1].Slug, Title: s.lessons[i-1].Title}
		}
		if i+1 < len(s.lessons) {
			d.Next = &views.LessonLink{Slug: s.lessons[i+1].Slug, Title: s.lessons[i+1].Title}
		}
		return render(c, http.StatusOK, views.LessonPage(d))
	}
	return echo.NewHTTPError(http.StatusNotFound, "no lesson named "+strconv.Quote(slug))
}
