package session

// resample_test.go: Resample equals a normal sample step with the same
// settings and seed, bit for bit, leaves the run as it was, and refuses bad
// settings with errors naming what is allowed.

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

// stepTo advances s until its next stage is `next`.
func stepTo(t *testing.T, s *Session, next Stage) []*Event {
	t.Helper()
	var evs []*Event
	for s.Next() != next {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// timeless drops the fields that measure time (they differ between runs).
func timeless(l *LogitsInfo, smp *SampleInfo) (LogitsInfo, SampleInfo) {
	a, b := *l, *smp
	a.DurationMs, b.Duration = 0, 0
	return a, b
}

func TestResampleEqualsSampleStep(t *testing.T) {
	m := loadStories(t)
	const prompt = "Once upon a time"
	run := SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 42} // the run's own settings
	settings := []SamplingParams{
		{Temperature: 0, TopP: 1},
		{Temperature: 1, TopP: 1, Seed: 1},
		{Temperature: 0.8, TopP: 0.9, Seed: 42},
		{Temperature: 1.7, TopK: 5, TopP: 1, Seed: 7},
		{Temperature: 0.5, TopP: 0.5, Seed: 3},
		{Temperature: 1.2, TopP: 1, MinP: 0.1, Seed: 9},
		{Temperature: 2, TopK: 40, TopP: 0.95, MinP: 0.02, Seed: 123456789},
		{Temperature: 10, TopP: 1, Seed: 5}, // nearly flat: the whole vocabulary is kept
		{Temperature: 0.05, TopK: 1, TopP: 1, Seed: 8},
	}
	for _, at := range []int{0, 3} { // generated tokens before the step
		for _, p := range settings {
			t.Run(strings.ReplaceAll(paramString(p), " ", "_")+"_at_"+string(rune('0'+at)), func(t *testing.T) {
				base := newSession(t, m, Config{Prompt: prompt, Sampling: run, MaxNewTokens: 8, TopN: 12})
				for range at {
					stepTo(t, base, StageAppend)
					stepTo(t, base, StageLogits)
				}
				stepTo(t, base, StageLogits)
				got, err := base.Resample(p, 0)
				if err != nil {
					t.Fatal(err)
				}
				// a fresh run with settings p, forced along the same tokens
				fresh := newSession(t, m, Config{Prompt: prompt, Sampling: p, MaxNewTokens: 8, TopN: 12})
				for _, id := range base.Generated() {
					stepTo(t, fresh, StageSample)
					if err := fresh.Force(id); err != nil {
						t.Fatal(err)
					}
					stepTo(t, fresh, StageLogits)
				}
				evs := stepTo(t, fresh, StageAppend)
				wl, ws := evs[len(evs)-2].Logits, evs[len(evs)-1].Sample
				if wl == nil || ws == nil {
					t.Fatalf("fresh run's last events: %+v", evs[len(evs)-2:])
				}
				gl, gs := timeless(got.Logits, got.Sample)
				el, es := timeless(wl, ws)
				if !reflect.DeepEqual(gl, el) {
					t.Errorf("logits differ:\nresample %+v\nstep     %+v", gl, el)
				}
				if !reflect.DeepEqual(gs, es) {
					t.Errorf("sample differs:\nresample %+v\nstep     %+v", gs, es)
				}
				if gs.Step != at || (p.Greedy() != (gs.Draw < 0)) {
					t.Errorf("step %d draw %v for %s", gs.Step, gs.Draw, paramString(p))
				}
				// the run itself is unchanged: same next stage, same settings, and
				// its own sample step picks what an untouched twin picks
				if base.Next() != StageLogits || base.Config().Sampling != run {
					t.Fatalf("resample changed the run: next %s, settings %+v", base.Next(), base.Config().Sampling)
				}
				twin := newSession(t, m, Config{Prompt: prompt, Sampling: run, MaxNewTokens: 8, TopN: 12})
				for range at {
					stepTo(t, twin, StageAppend)
					stepTo(t, twin, StageLogits)
				}
				a := stepTo(t, base, StageAppend)
				b := stepTo(t, twin, StageAppend)
				_, sa := timeless(a[len(a)-2].Logits, a[len(a)-1].Sample)
				_, sb := timeless(b[len(b)-2].Logits, b[len(b)-1].Sample)
				if !reflect.DeepEqual(sa, sb) {
					t.Errorf("after a resample the run's own sample step differs:\n%+v\n%+v", sa, sb)
				}
			})
		}
	}
}

// TestResampleAtSampleStage: between the logits and sample stages (the
// logits event already sent) Resample works the same.
func TestResampleAtSampleStage(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Lily", Sampling: DefaultSampling(), MaxNewTokens: 4})
	evs := stepTo(t, s, StageSample)
	p := SamplingParams{Temperature: 1.3, TopK: 3, TopP: 1, Seed: 11}
	r, err := s.Resample(p, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Logits.Top) != 5 || r.Logits.Params != p || r.Logits.Kept != 3 || r.Sample.Kept != 3 {
		t.Errorf("top %d params %+v kept %d/%d", len(r.Logits.Top), r.Logits.Params, r.Logits.Kept, r.Sample.Kept)
	}
	var sum float64
	for _, c := range r.Logits.Top[:3] {
		sum += float64(c.ProbKept)
	}
	if math.Abs(sum-1) > 1e-6 || r.Sample.CDF[len(r.Sample.CDF)-1].Cum < 0.999999 {
		t.Errorf("kept probabilities sum to %v, CDF ends at %v", sum, r.Sample.CDF[len(r.Sample.CDF)-1].Cum)
	}
	if got := evs[len(evs)-1].Logits.Params; got != DefaultSampling() {
		t.Errorf("the run's logits event has settings %+v", got)
	}
}

func TestResampleErrors(t *testing.T) {
	m := loadStories(t)
	vocab := m.Config.VocabSize
	ok := SamplingParams{Temperature: 1, TopP: 1}
	tests := []struct {
		name  string
		next  Stage // how far the run is stepped first ("" = stopped)
		p     SamplingParams
		topN  int
		wants []string
	}{
		{"before prefill", StageEmbed, ok, 0, []string{"resample needs the current step's logits", "it is embed"}},
		{"prefill not run", StagePrefill, ok, 0, []string{"it is prefill"}},
		{"after append", StageAppend, ok, 0, []string{"it is append"}},
		{"stopped", "", ok, 0, []string{"it is stop"}},
		{"negative temperature", StageLogits, SamplingParams{Temperature: -0.5, TopP: 1}, 0, []string{"temperature -0.5 out of range", "allowed 0 (greedy) to 10"}},
		{"temperature too high", StageLogits, SamplingParams{Temperature: 11, TopP: 1}, 0, []string{"temperature 11 out of range"}},
		{"NaN temperature", StageLogits, SamplingParams{Temperature: math.NaN(), TopP: 1}, 0, []string{"temperature NaN"}},
		{"negative top_k", StageLogits, SamplingParams{Temperature: 1, TopP: 1, TopK: -1}, 0, []string{"top_k -1 out of range", "allowed 0 (off)"}},
		{"top_k past vocabulary", StageLogits, SamplingParams{Temperature: 1, TopP: 1, TopK: vocab + 1}, 0, []string{"the vocabulary has"}},
		{"top_p zero", StageLogits, SamplingParams{Temperature: 1, TopP: 0}, 0, []string{"top_p 0 out of range", "allowed (0, 1]"}},
		{"top_p above one", StageLogits, SamplingParams{Temperature: 1, TopP: 1.01}, 0, []string{"top_p 1.01 out of range"}},
		{"min_p one", StageLogits, SamplingParams{Temperature: 1, TopP: 1, MinP: 1}, 0, []string{"min_p 1 out of range", "allowed [0, 1)"}},
		{"min_p negative", StageLogits, SamplingParams{Temperature: 1, TopP: 1, MinP: -0.1}, 0, []string{"min_p -0.1 out of range"}},
		{"top_n negative", StageLogits, ok, -1, []string{"top_n -1 out of range", "to 200"}},
		{"top_n too large", StageLogits, ok, 201, []string{"top_n 201 out of range"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, m, Config{Prompt: "Once", Sampling: greedy(), MaxNewTokens: 1})
			if tt.next == "" {
				runAll(t, s)
			} else {
				stepTo(t, s, tt.next)
			}
			r, err := s.Resample(tt.p, tt.topN)
			if err == nil {
				t.Fatalf("no error, got %+v", r)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
