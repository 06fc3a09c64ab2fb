package ws

// eventsjson_test.go: an events or detail message ({"events": [...]}) is
// encoded event by event (appendEvents) into the bytes json.Marshal
// writes: a real run's full and thin events, none, and an empty list.

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

func TestEventsMessageEqualsMarshal(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(m, session.Config{Prompt: "The <capital> of France & is", MaxNewTokens: 4, AllAttention: true, Lens: true,
		Sampling: session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var full, thin []*session.Event
	for i := 0; !s.Done(); i++ {
		s.DeferLens(i%2 == 1) // partial events too, as a thinned run makes
		evs, err := s.Advance(context.Background(), session.UntilStage, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			full = append(full, ev)
			thin = append(thin, ThinEvent(ev))
		}
	}
	for _, evs := range [][]*session.Event{full, thin, thin[:1], {}, nil} {
		payload := map[string]any{"events": evs}
		want, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalPayload(payload)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d events: appendEvents differs from json.Marshal:\n got %.300s\nwant %.300s", len(evs), got, want)
		}
	}
}

// BenchmarkEventsMessage: one events message of a thinned run's group
// (the thin events of 48 tokens of the default model), by appendEvents
// and by json.Marshal.
func BenchmarkEventsMessage(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.New(m, session.Config{Prompt: "Once upon a time", MaxNewTokens: 48, AllAttention: true, Lens: true,
		Sampling: session.SamplingParams{Temperature: 0, TopP: 1}})
	if err != nil {
		b.Fatal(err)
	}
	s.DeferLens(true)
	var thin []*session.Event
	for !s.Done() {
		evs, err := s.Advance(context.Background(), session.UntilStage, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Logits != nil || ev.Sample != nil || ev.Append != nil {
				thin = append(thin, ThinEvent(ev))
			}
		}
	}
	payload := map[string]any{"events": thin}
	enc, _ := marshalPayload(payload)
	b.Run("appendEvents", func(b *testing.B) {
		for b.Loop() {
			marshalPayload(payload)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(thin)), "ns/event")
		b.ReportMetric(float64(len(enc))/float64(len(thin)), "B/event")
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(payload)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(thin)), "ns/event")
	})
}
