package session_test

// labstage_bench_test.go: the serial work of the lab's thinned run beside
// its forward passes — the logits stage as a thinned token makes it
// (greedy, DeferLens: the first LightTopN candidates, the histogram's
// range), on the logits of a 250-token greedy run of the default model.

import (
	"context"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

func BenchmarkLabLogitsStage(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	cfg := session.Config{Prompt: "The capital of France is", Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 250}
	s, err := session.New(m, cfg)
	if err != nil {
		b.Fatal(err)
	}
	var steps [][]float32
	if _, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
		if e.Logits != nil {
			steps = append(steps, append([]float32(nil), e.Logits.Full...))
		}
		return true
	}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		light, serial bool
	}{{"thin", true, false}, {"thin-serial", true, true}, {"full", false, false}, {"full-serial", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := session.New(m, cfg)
			if err != nil {
				b.Fatal(err)
			}
			s.DeferLens(tc.light)
			session.SerialTasks(tc.serial)
			defer session.SerialTasks(false)
			for b.Loop() {
				for _, l := range steps {
					s.LogitsStageOn(l)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*len(steps)), "µs/step")
		})
	}
}
