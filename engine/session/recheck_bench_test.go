package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

// BenchmarkShortRunsWeightsCheck: short runs (4 tokens) on the default
// model (16 MB of weights), their stops sharing a hash begun within
// session.WeightsRecheckEvery, against a hash of every weight at every stop
// (what each stop cost before).
func BenchmarkShortRunsWeightsCheck(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	m.WeightsChecksum()
	for _, v := range []struct {
		name    string
		perStop bool
	}{{"shared-within-5s", false}, {"hash-every-stop", true}} {
		b.Run(v.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := session.New(m, session.Config{Prompt: "Once upon a time", Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 4})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Advance(context.Background(), session.UntilStop, nil); err != nil {
					b.Fatal(err)
				}
				if v.perStop {
					m.RecheckWeightsSince(time.Now())
				}
			}
		})
	}
}
