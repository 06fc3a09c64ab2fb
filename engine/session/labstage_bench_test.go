package session_test

// labstage_bench_test.go: the serial work of the lab's thinned run beside
// its forward passes — the logits stage as a thinned token makes it
// (greedy, DeferLens: the first LightTopN candidates, the histogram's
// range) and in full, timed by its own events over a 250-token greedy run
// of the default model.

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
	for _, light := range []bool{true, false} {
		name := "full"
		if light {
			name = "thin"
		}
		b.Run(name, func(b *testing.B) {
			var ms float64
			var steps int
			for b.Loop() {
				s, err := session.New(m, cfg)
				if err != nil {
					b.Fatal(err)
				}
				s.DeferLens(light)
				if _, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
					if e.Logits != nil {
						ms += e.Logits.DurationMs
						steps++
					}
					return true
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ms*1000/float64(steps), "µs/logits-stage")
		})
	}
}
