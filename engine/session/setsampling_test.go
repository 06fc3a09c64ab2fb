package session

import (
	"context"
	"fmt"
	"testing"
)

// TestSetSamplingIsAFreshRunAlongTheSameTokens: settings changed mid-run,
// at each stage of a step, give the tokens a fresh run with the new
// settings gives when forced along the tokens chosen before the change —
// the draw at the current step included when it had already happened.
func TestSetSamplingIsAFreshRunAlongTheSameTokens(t *testing.T) {
	m := loadStories(t)
	const prompt = "Once upon a time"
	old := SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 42}
	p := SamplingParams{Temperature: 1.5, TopK: 20, TopP: 1, MinP: 0.02, Seed: 11}
	cases := []struct {
		at    Stage // the next stage when the settings change
		after int   // tokens generated before
		keep  int   // tokens of the old run the fresh one is forced along
	}{
		{StageLogits, 3, 3},
		{StageSample, 3, 3},
		{StageAppend, 3, 3}, // the current token was drawn: it is drawn again
		{StageSample, 0, 0},
		{StageAppend, 0, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_after_%d", c.at, c.after), func(t *testing.T) {
			s := newSession(t, m, Config{Prompt: prompt, Sampling: old, MaxNewTokens: 20, TopN: 12})
			for range c.after {
				stepTo(t, s, StageAppend)
				stepTo(t, s, StageLogits)
			}
			stepTo(t, s, c.at)
			r, err := s.SetSampling(p)
			if err != nil {
				t.Fatal(err)
			}
			if r == nil || r.Logits == nil || (c.at == StageAppend) != (r.Sample != nil) {
				t.Fatalf("SetSampling at %s: %+v; want the current step's logits, and the new draw when the token was already drawn", c.at, r)
			}
			if r.Logits.Params != p {
				t.Errorf("the logits shown use %+v, want %+v", r.Logits.Params, p)
			}
			if _, err := s.Advance(context.Background(), UntilStop, nil); err != nil {
				t.Fatal(err)
			}
			got := s.Generated()
			fresh := newSession(t, m, Config{Prompt: prompt, Sampling: p, MaxNewTokens: 20, TopN: 12})
			for _, id := range got[:c.keep] {
				stepTo(t, fresh, StageSample)
				if err := fresh.Force(id); err != nil {
					t.Fatal(err)
				}
				stepTo(t, fresh, StageAppend)
				stepTo(t, fresh, StageLogits)
			}
			if _, err := fresh.Advance(context.Background(), UntilStop, nil); err != nil {
				t.Fatal(err)
			}
			if want := fresh.Generated(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("changed at %s after %d tokens: %v\nfresh run with the new settings: %v", c.at, c.after, got, want)
			}
			if c.at == StageAppend && r.Sample.Chosen.ID != got[c.after] {
				t.Errorf("the redrawn token %d is not the run's next token %d", r.Sample.Chosen.ID, got[c.after])
			}
		})
	}
	// refused by name: a stopped run, settings out of range
	s := newSession(t, m, Config{Prompt: prompt, Sampling: old, MaxNewTokens: 2})
	if _, err := s.SetSampling(SamplingParams{Temperature: -1}); err == nil {
		t.Error("a negative temperature was accepted")
	}
	s.Advance(context.Background(), UntilStop, nil)
	if _, err := s.SetSampling(p); err == nil {
		t.Error("new settings for a stopped run were accepted")
	}
}
