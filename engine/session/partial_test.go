package session

// partial_test.go: events made with DeferLens on carry only what a thin copy
// keeps and are Partial; FillLens, while their state is at hand, makes them
// whole, equal to an eager session's; after that it refuses.

import (
	"context"
	"reflect"
	"testing"
)

func TestPartialEventsCompleted(t *testing.T) {
	m := loadStories(t)
	for _, sp := range []SamplingParams{greedy(), {Temperature: 0.9, TopP: 0.95, Seed: 3}} {
		cfg := Config{Prompt: "Once upon a time", Sampling: sp, MaxNewTokens: 7}
		eager := runAll(t, newSession(t, m, cfg))
		s := newSession(t, m, cfg)
		var token []*Event // the current token's events, completed after its append
		var old []*Event   // the token before's, which FillLens must refuse by now
		i := 0
		for !s.Done() {
			s.DeferLens(s.Next() == StageLogits || s.Next() == StageSample || s.Next() == StageAppend)
			ev, err := s.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := eager[i]
			i++
			switch {
			case ev.Logits != nil:
				if !ev.Partial() || len(ev.Logits.Top) > LightTopN || len(ev.Logits.Histogram.Counts) > 0 {
					t.Fatalf("logits event not light: partial %v, top %d, counts %d", ev.Partial(), len(ev.Logits.Top), len(ev.Logits.Histogram.Counts))
				}
				if ev.Logits.Histogram.Lo != want.Logits.Histogram.Lo || ev.Logits.Histogram.Hi != want.Logits.Histogram.Hi ||
					!reflect.DeepEqual(ev.Logits.Top, want.Logits.Top[:len(ev.Logits.Top)]) || ev.Logits.Mean != want.Logits.Mean {
					t.Fatalf("light logits event differs from the eager one's first part")
				}
				token = append(token[:0], ev)
			case ev.Sample != nil:
				if !ev.Partial() || ev.Sample.CDF != nil || ev.Sample.Chosen != want.Sample.Chosen {
					t.Fatalf("sample event not light, or another choice")
				}
				token = append(token, ev)
			case ev.Append != nil:
				if ev.Append.Forwarded != ev.Partial() || ev.Append.LayerTraces != nil {
					t.Fatalf("append event: partial %v, forwarded %v, %d traces", ev.Partial(), ev.Append.Forwarded, len(ev.Append.LayerTraces))
				}
				for _, o := range old {
					// (an append without a pass leaves the last token's state at hand)
					if ev.Append.Forwarded && s.FillLens(o) {
						t.Fatalf("FillLens completed a %s event two passes old", o.Stage)
					}
				}
				token = append(token, ev)
				for k, e := range token {
					if e.Partial() && !s.FillLens(e) {
						t.Fatalf("FillLens refused the %s event of the last token", e.Stage)
					}
					if e.Partial() || s.FillLens(e) {
						t.Fatalf("%s event still partial, or completed twice", e.Stage)
					}
					w := eager[i-len(token)+k]
					switch {
					case e.Logits != nil:
						if !reflect.DeepEqual(e.Logits.Top, w.Logits.Top) || !reflect.DeepEqual(e.Logits.Histogram, w.Logits.Histogram) {
							t.Fatalf("completed logits event differs from the eager one")
						}
					case e.Sample != nil:
						if !reflect.DeepEqual(e.Sample.CDF, w.Sample.CDF) || !reflect.DeepEqual(e.Sample.CDFTail, w.Sample.CDFTail) {
							t.Fatalf("completed sample event differs from the eager one")
						}
					case e.Append != nil:
						if !reflect.DeepEqual(e.Append.LayerTraces, w.Append.LayerTraces) {
							t.Fatalf("completed append event's traces differ from the eager one's")
						}
					}
				}
				// stale copies: the same events made partial again
				old = old[:0]
				for _, e := range token {
					c := *e
					c.partial = true
					old = append(old, &c)
				}
			}
		}
	}
}
