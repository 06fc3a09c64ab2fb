package session

// textonly_test.go: a text-only run (Config.TextOnly, the CLI's generate)
// picks the same tokens as a full run, stage for stage, and skips only the
// lab's inspection.

import (
	"context"
	"strings"
	"testing"
)

func TestTextOnlyRunEqualsFullRun(t *testing.T) {
	m := loadStories(t)
	no := false
	tests := []struct {
		name string
		cfg  Config
	}{
		{"greedy", Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 40}},
		{"default sampling", Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 40}},
		{"T=1", Config{Prompt: "The dog", Sampling: SamplingParams{Temperature: 1, TopP: 1, Seed: 3}, MaxNewTokens: 40}},
		{"top-k and min-p", Config{Prompt: "Lily", Sampling: SamplingParams{Temperature: 1.3, TopK: 40, TopP: 0.95, MinP: 0.02, Seed: 9}, MaxNewTokens: 40}},
		{"hot, flat", Config{Prompt: "Tom", Sampling: SamplingParams{Temperature: 5, TopP: 0.99, Seed: 1}, MaxNewTokens: 30, StopAtEOS: &no}},
		{"stop string", Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 30, StopStrings: []string{"named Li"}}},
		{"no cache", Config{Prompt: "Hi", Sampling: DefaultSampling(), MaxNewTokens: 10, NoCache: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := newSession(t, m, tt.cfg)
			fullEvs := runAll(t, full)
			cfg := tt.cfg
			cfg.TextOnly = true
			text := newSession(t, m, cfg)
			textEvs := runAll(t, text)
			if len(textEvs) != len(fullEvs) {
				t.Fatalf("%d events, full run %d", len(textEvs), len(fullEvs))
			}
			for i, ev := range textEvs {
				fe := fullEvs[i]
				if ev.Stage != fe.Stage || ev.Next != fe.Next || ev.Seq != fe.Seq {
					t.Fatalf("event %d: %s→%s #%d, full run %s→%s #%d", i, ev.Stage, ev.Next, ev.Seq, fe.Stage, fe.Next, fe.Seq)
				}
				switch {
				case ev.Logits != nil:
					l, fl := ev.Logits, fe.Logits
					if l.Kept != fl.Kept || l.AfterTopK != fl.AfterTopK || l.AfterTopP != fl.AfterTopP || l.Pos != fl.Pos {
						t.Fatalf("event %d: logits %+v, full run %+v", i, l, fl)
					}
					if !cfg.Sampling.Greedy() && l.KeptMass != fl.KeptMass {
						t.Fatalf("event %d: kept mass %v, full run %v", i, l.KeptMass, fl.KeptMass)
					}
					if l.Top != nil || l.Histogram.Counts != nil || l.Entropy1 != 0 {
						t.Fatalf("event %d: a text-only logits event carries the lab's statistics: %+v", i, l)
					}
				case ev.Sample != nil:
					c, fc := ev.Sample.Chosen, fe.Sample.Chosen
					if c.ID != fc.ID || c.Rank != fc.Rank || c.ProbKept != fc.ProbKept || c.Text != fc.Text || ev.Sample.Draw != fe.Sample.Draw {
						t.Fatalf("event %d: chose %+v (draw %v), full run %+v (draw %v)", i, c, ev.Sample.Draw, fc, fe.Sample.Draw)
					}
					if !cfg.Sampling.Greedy() && c.ProbT != fc.ProbT {
						t.Fatalf("event %d: prob_t %v, full run %v", i, c.ProbT, fc.ProbT)
					}
					if ev.Sample.CDF != nil || c.Prob != 0 {
						t.Fatalf("event %d: a text-only sample event carries the lab's CDF or T=1 probability: %+v", i, ev.Sample)
					}
				case ev.Append != nil:
					a, fa := ev.Append, fe.Append
					if a.ID != fa.ID || a.Text != fa.Text || a.CacheLen != fa.CacheLen || a.Forwarded != fa.Forwarded {
						t.Fatalf("event %d: append %+v, full run %+v", i, a, fa)
					}
					if a.LayerTraces != nil {
						t.Fatalf("event %d: a text-only append carries layer traces", i)
					}
				case ev.Prefill != nil:
					if ev.Prefill.Layers != nil {
						t.Fatalf("event %d: a text-only prefill carries layer traces", i)
					}
				case ev.Stop != nil:
					s, fs := ev.Stop, fe.Stop
					if s.Reason != fs.Reason || s.Text != fs.Text || s.Generated != fs.Generated {
						t.Fatalf("stop %+v, full run %+v", s, fs)
					}
					if s.ChecksumAfter != "" || !fs.WeightsUnchanged {
						t.Fatalf("checksums: text-only %q, full run unchanged=%v", s.ChecksumAfter, fs.WeightsUnchanged)
					}
					if s.Timings.ModelMs <= 0 || s.Timings.OutputTokPerS <= 0 {
						t.Fatalf("text-only timings missing: %+v", s.Timings)
					}
				}
			}
			if !equalInts(text.Generated(), full.Generated()) {
				t.Fatalf("tokens %v, full run %v", text.Generated(), full.Generated())
			}
		})
	}
}

// TestTextOnlyRewindAndForce: rewinding and forcing work in a text-only
// run as in a full one; Inspect and the lens say they are not kept.
func TestTextOnlyRewindAndForce(t *testing.T) {
	m := loadStories(t)
	ctx := context.Background()
	cfg := Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 20}
	var gens [2][]int
	for i, textOnly := range []bool{false, true} {
		cfg.TextOnly = textOnly
		s := newSession(t, m, cfg)
		runAll(t, s)
		if _, err := s.Rewind(8); err != nil {
			t.Fatal(err)
		}
		if err := s.Force(383); err != nil {
			t.Fatal(err)
		}
		ev, err := s.Step(ctx) // sample: the forced token
		if err != nil || ev.Sample == nil || ev.Sample.Chosen.ID != 383 || !ev.Sample.Forced {
			t.Fatalf("text-only %v: forced sample %+v, %v", textOnly, ev, err)
		}
		runAll(t, s)
		gens[i] = s.Generated()
		_, err = s.Inspect(InspectRequest{What: InspectResidual})
		if textOnly != (err != nil && strings.Contains(err.Error(), "text-only")) {
			t.Errorf("text-only %v: Inspect error %v", textOnly, err)
		}
	}
	if !equalInts(gens[0], gens[1]) {
		t.Errorf("after rewind and force: text-only %v, full %v", gens[1], gens[0])
	}
	cfg.Lens = true
	if _, err := New(m, cfg); err == nil || !strings.Contains(err.Error(), "lens") {
		t.Errorf("text-only with the lens: %v", err)
	}
}
