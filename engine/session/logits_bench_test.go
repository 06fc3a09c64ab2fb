package session_test

// logits_bench_test.go: the logits stage as the 64-session load test runs
// it — the default model, the lab's default sampling (T 0.8, top-p 0.9),
// 200 tokens — timed from the stage's own events (its DurationMs: the
// distribution, the top list and the statistics, not the forward pass).

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

func BenchmarkLogitsStage(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	var ms float64
	var steps, wide, kept int
	for i := 0; b.Loop(); i++ {
		s, err := session.New(m, session.Config{Prompt: fmt.Sprintf("The President said %d", i%64), Sampling: session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 1}, MaxNewTokens: 200})
		if err != nil {
			b.Fatal(err)
		}
		_, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
			if l := e.Logits; l != nil {
				ms += l.DurationMs
				steps++
				kept += l.Kept
				if l.Kept > 64 {
					wide++
				}
			}
			return true
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ms*1000/float64(steps), "µs/logits-stage")
	b.ReportMetric(float64(kept)/float64(steps), "kept/step")
	b.ReportMetric(float64(wide)/float64(steps), "share-kept>64")
}

// BenchmarkDistributionDefaultModel: NewDistributionTop alone on the
// logits of a 200-token run of the default model (T 0.8, top-p 0.9).
func BenchmarkDistributionDefaultModel(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.New(m, session.Config{Prompt: "The President said 7", Sampling: session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 1}, MaxNewTokens: 200})
	if err != nil {
		b.Fatal(err)
	}
	var steps [][]float32
	_, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
		if e.Logits != nil {
			steps = append(steps, append([]float32(nil), e.Logits.Full...))
		}
		return true
	})
	if err != nil {
		b.Fatal(err)
	}
	p := session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 1}
	for b.Loop() {
		for _, l := range steps {
			session.NewDistributionTop(l, p, 20)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(steps)), "µs/step")
}
