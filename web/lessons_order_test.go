package web_test

// lessons_order_test.go: the lessons' timing demos give the same ordering in
// 5 of 5 runs. Each round repeats what the panel computes (warm-up, then the
// median model time of several runs) through the engine, with the prompts
// and settings read from the lesson files, and checks the ordering the
// lesson's prose relies on.

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

const orderRounds = 5

// lessonPanel returns the options of the first panel of kind in lesson slug.
func lessonPanel(t *testing.T, m *engine.Model, slug, kind string) map[string]string {
	t.Helper()
	ls, err := lessons.Load(web.LessonValues(catalog.ModelCardFor(m)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		for _, s := range l.Sections {
			for _, p := range s.Panels {
				if l.Slug == slug && p.Kind == kind {
					return p.Options
				}
			}
		}
	}
	t.Fatalf("lesson %s has no %s panel", slug, kind)
	return nil
}

func med(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func optInt(o map[string]string, k string, def int) int {
	if n, err := strconv.Atoi(o[k]); err == nil {
		return n
	}
	return def
}

func lessonConfig(o map[string]string, prompt string, n int) session.Config {
	s := session.DefaultSampling()
	if v, err := strconv.ParseFloat(o["temperature"], 64); err == nil {
		s.Temperature = v
	}
	f := false
	return session.Config{Prompt: prompt, Sampling: s, MaxNewTokens: n, StopAtEOS: &f}
}

func lessonRunAll(t *testing.T, m *engine.Model, cfg session.Config) []*session.Event {
	t.Helper()
	s, err := session.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Advance(context.Background(), session.UntilStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func stopOf(evs []*session.Event) *session.StopInfo { return evs[len(evs)-1].Stop }

// TestLessonTimingShortVsLong: "Measure the stages separately" — the long
// prompt's prefill model time and time to first token exceed the short
// prompt's, medians of the panel's runs, in every round.
func TestLessonTimingShortVsLong(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	o := lessonPanel(t, m, "after-send", "stage-timing")
	n, runs := optInt(o, "tokens", 8), optInt(o, "runs", 5)
	one := func(prompt string) (prefill, ttft float64) {
		evs := lessonRunAll(t, m, lessonConfig(o, prompt, n))
		for _, e := range evs {
			if e.Prefill != nil {
				prefill = e.Prefill.ModelMs
			}
		}
		return prefill, stopOf(evs).Timings.TTFTMs
	}
	for round := range orderRounds {
		one(o["prompt"])
		one(o["compare"])
		var ps, pl, ts, tl []float64
		for range runs {
			a, b := one(o["prompt"])
			c, d := one(o["compare"])
			ps, ts, pl, tl = append(ps, a), append(ts, b), append(pl, c), append(tl, d)
		}
		t.Logf("round %d: prefill short %.3f ms, long %.3f ms (×%.1f); TTFT short %.3f, long %.3f", round+1, med(ps), med(pl), med(pl)/med(ps), med(ts), med(tl))
		if !(med(pl) > med(ps)) || !(med(tl) > med(ts)) {
			t.Errorf("round %d: the long prompt's prefill (%.3f ms) or TTFT (%.3f ms) is not above the short one's (%.3f, %.3f)", round+1, med(pl), med(tl), med(ps), med(ts))
		}
	}
}

// stepwise feeds the prompt's tokens one forward pass each (the start token
// alone, then each token forced), as the prefill-steps panel does; it
// returns the model time and the final logits.
func stepwise(t *testing.T, m *engine.Model, ids []int, o map[string]string) (float64, []float32) {
	t.Helper()
	cfg := lessonConfig(o, "", len(ids))
	s, err := session.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ms float64
	for s.Next() != session.StageLogits {
		e, err := s.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Prefill != nil {
			ms += e.Prefill.ModelMs
		}
	}
	for _, id := range ids[1:] {
		if err := s.Force(id); err != nil {
			t.Fatal(err)
		}
		evs, err := s.Advance(ctx, session.UntilToken, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Append != nil {
				ms += e.Append.ModelMs
			}
		}
	}
	if _, err := s.Step(ctx); err != nil { // logits of the last prompt position
		t.Fatal(err)
	}
	return ms, s.CurrentLogits()
}

// TestLessonPrefillOnePassVsSteps: "Prefill: the whole prompt in one pass"
// — one pass over the prompt takes less model time than one pass per
// position, and both end with the same logits, in every round.
func TestLessonPrefillOnePassVsSteps(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	o := lessonPanel(t, m, "after-send", "prefill-steps")
	runs := optInt(o, "runs", 3)
	onePass := func() (float64, []float32, []int) {
		s, err := session.New(m, lessonConfig(o, o["prompt"], 1))
		if err != nil {
			t.Fatal(err)
		}
		var ms float64
		for s.Next() != session.StageSample {
			e, err := s.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if e.Prefill != nil {
				ms = e.Prefill.ModelMs
			}
		}
		return ms, s.CurrentLogits(), s.PromptIDs()
	}
	_, _, ids := onePass()
	stepwise(t, m, ids, o)
	for round := range orderRounds {
		var a, b []float64
		var la, lb []float32
		for range runs {
			x, l1, _ := onePass()
			y, l2 := stepwise(t, m, ids, o)
			a, b, la, lb = append(a, x), append(b, y), l1, l2
		}
		var diff float64
		for i := range la {
			diff = math.Max(diff, math.Abs(float64(la[i]-lb[i])))
		}
		t.Logf("round %d: %d positions, one pass %.3f ms, one per pass %.3f ms (×%.1f), max logit difference %.2g", round+1, len(ids), med(a), med(b), med(b)/med(a), diff)
		if !(med(a) < med(b)) {
			t.Errorf("round %d: one pass (%.3f ms) is not faster than one position per pass (%.3f ms)", round+1, med(a), med(b))
		}
		if diff > 1e-3 {
			t.Errorf("round %d: the two ways' logits differ by %g", round+1, diff)
		}
	}
}

// TestLessonCacheOnVsOff: "Cache on versus cache off" — the same text, and
// the median decode step's model time is higher without the cache, in
// every round.
func TestLessonCacheOnVsOff(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	o := lessonPanel(t, m, "kv-cache", "cache-compare")
	n, runs := optInt(o, "tokens", 32), optInt(o, "runs", 3)
	one := func(noCache bool) (string, []float64) {
		cfg := lessonConfig(o, o["prompt"], n)
		cfg.NoCache = noCache
		s := stopOf(lessonRunAll(t, m, cfg))
		return s.Text, s.Timings.ITLModelMs
	}
	perTok := func(rs [][]float64) []float64 {
		out := make([]float64, len(rs[0]))
		for i := range out {
			var col []float64
			for _, r := range rs {
				col = append(col, r[i])
			}
			out[i] = med(col)
		}
		return out
	}
	one(false)
	one(true)
	for round := range orderRounds {
		var on, off [][]float64
		var tOn, tOff string
		for range runs {
			a, x := one(false)
			b, y := one(true)
			on, off, tOn, tOff = append(on, x), append(off, y), a, b
		}
		mOn, mOff := med(perTok(on)), med(perTok(off))
		t.Logf("round %d: per-token model time, cache on %.3f ms, off %.3f ms (×%.1f)", round+1, mOn, mOff, mOff/mOn)
		if tOn != tOff {
			t.Errorf("round %d: texts differ with the cache on (%q) and off (%q)", round+1, tOn, tOff)
		}
		if !(mOff > mOn) {
			t.Errorf("round %d: cache off (%.3f ms) is not slower than on (%.3f ms)", round+1, mOff, mOn)
		}
	}
}
