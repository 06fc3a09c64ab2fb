package web_test

// resample_test.go: the resample command over a real websocket: the answer
// equals the engine's own sample step with the same settings and seed,
// absent fields keep the run's settings, the run does not move, and bad
// values get errors naming what is allowed.

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// engineStep is what a fresh run with settings p shows at its first logits
// and sample stages.
func engineStep(t *testing.T, prompt string, p session.SamplingParams, topN int) (*session.LogitsInfo, *session.SampleInfo) {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: p, MaxNewTokens: 4, TopN: topN})
	if err != nil {
		t.Fatal(err)
	}
	var l *session.LogitsInfo
	for {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Logits != nil {
			l = ev.Logits
		}
		if ev.Sample != nil {
			return l, ev.Sample
		}
	}
}

// wire is what the client receives of a step: the engine's structs after
// a JSON round trip, times dropped.
type wireStep struct {
	Logits map[string]any `json:"logits"`
	Sample map[string]any `json:"sample"`
}

func toWire(t *testing.T, v any) wireStep {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var w wireStep
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	delete(w.Logits, "duration_ms")
	delete(w.Sample, "duration_ms")
	return w
}

func TestWebsocketResample(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	const prompt = "The President said"

	w.send("resample", map[string]any{"temperature": 1})
	w.expectError("no_session")

	run := session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 42}
	w.send("start", map[string]any{"prompt": prompt, "max_new_tokens": 4, "top_n": 12,
		"sampling": map[string]any{"temperature": run.Temperature, "top_p": run.TopP, "seed": run.Seed}})
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("got %s %s", m.Type, m.Payload)
	}
	w.send("step", nil) // tokenize: no logits yet
	w.event()
	w.send("resample", nil)
	m := w.read()
	var e wire.ErrorPayload
	json.Unmarshal(m.Payload, &e)
	if m.Type != wire.MsgError || e.Code != "bad_request" || !strings.Contains(e.Message, "next stage is logits or sample (it is embed)") {
		t.Fatalf("resample before prefill: %s %s", m.Type, m.Payload)
	}
	for range 3 { // embed, prefill, logits
		w.send("step", nil)
		w.event()
	}

	tests := []struct {
		name    string
		payload map[string]any
		want    session.SamplingParams // the settings the answer must equal a sample step with
		topN    int
	}{
		{"the run's own settings", nil, run, 12},
		{"temperature only", map[string]any{"temperature": 1.5}, session.SamplingParams{Temperature: 1.5, TopP: 0.9, Seed: 42}, 12},
		{"greedy", map[string]any{"temperature": 0}, session.SamplingParams{Temperature: 0, TopP: 0.9, Seed: 42}, 12},
		{"top-k and seed", map[string]any{"top_k": 5, "top_p": 1, "seed": 7, "top_n": 8}, session.SamplingParams{Temperature: 0.8, TopK: 5, TopP: 1, Seed: 7}, 8},
		{"min-p", map[string]any{"temperature": 1.2, "top_p": 1, "min_p": 0.1, "seed": 3}, session.SamplingParams{Temperature: 1.2, TopP: 1, MinP: 0.1, Seed: 3}, 12},
		{"everything", map[string]any{"temperature": 2, "top_k": 50, "top_p": 0.5, "min_p": 0.01, "seed": 99, "top_n": 20}, session.SamplingParams{Temperature: 2, TopK: 50, TopP: 0.5, MinP: 0.01, Seed: 99}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := w.send("resample", tt.payload)
			m := w.read()
			if m.Type != wire.MsgResampled || m.ID != id {
				t.Fatalf("got %s (id %d) %s", m.Type, m.ID, m.Payload)
			}
			var got wireStep
			if err := json.Unmarshal(m.Payload, &got); err != nil {
				t.Fatal(err)
			}
			delete(got.Logits, "duration_ms")
			delete(got.Sample, "duration_ms")
			l, s := engineStep(t, prompt, tt.want, tt.topN)
			want := toWire(t, struct {
				Logits *session.LogitsInfo `json:"logits"`
				Sample *session.SampleInfo `json:"sample"`
			}{l, s})
			if !reflect.DeepEqual(got.Logits, want.Logits) {
				t.Errorf("logits differ from the engine's sample step:\ngot  %v\nwant %v", got.Logits, want.Logits)
			}
			if !reflect.DeepEqual(got.Sample, want.Sample) {
				t.Errorf("sample differs from the engine's sample step:\ngot  %v\nwant %v", got.Sample, want.Sample)
			}
		})
	}

	// bad values: a clear error, and the connection and run stay usable
	for _, tt := range []struct {
		name, code, want string
		payload          any
	}{
		{"temperature too high", "bad_request", "temperature 11 out of range: allowed 0 (greedy) to 10", map[string]any{"temperature": 11}},
		{"top_p zero", "bad_request", "top_p 0 out of range: allowed (0, 1]", map[string]any{"top_p": 0}},
		{"min_p one", "bad_request", "min_p 1 out of range: allowed [0, 1)", map[string]any{"min_p": 1}},
		{"top_k negative", "bad_request", "top_k -3 out of range", map[string]any{"top_k": -3}},
		{"top_k past vocabulary", "bad_request", "the vocabulary has", map[string]any{"top_k": 1 << 20}},
		{"top_n too large", "bad_request", "top_n 500 out of range", map[string]any{"top_n": 500}},
		{"wrong type", "bad_payload", `field "temperature" has a string, want a number`, map[string]any{"temperature": "warm"}},
		{"unknown field", "bad_payload", `unknown field "tempreature"`, map[string]any{"tempreature": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w.send("resample", tt.payload)
			m := w.read()
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if m.Type != wire.MsgError || e.Code != tt.code || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("got %s %s, want %s containing %q", m.Type, m.Payload, tt.code, tt.want)
			}
		})
	}

	// the run did not move: its own sample step picks what the engine's does
	w.send("step", nil)
	m = w.read()
	var ev struct {
		Stage  string          `json:"stage"`
		Sample json.RawMessage `json:"sample"`
	}
	json.Unmarshal(m.Payload, &ev)
	_, s := engineStep(t, prompt, run, 12)
	var gotS, wantS map[string]any
	json.Unmarshal(ev.Sample, &gotS)
	b, _ := json.Marshal(s)
	json.Unmarshal(b, &wantS)
	delete(gotS, "duration_ms")
	delete(wantS, "duration_ms")
	if ev.Stage != "sample" || !reflect.DeepEqual(gotS, wantS) {
		t.Fatalf("after resamples the run's sample step is %s %v, want %v", ev.Stage, gotS, wantS)
	}
}

// BenchmarkResample: what one slider move costs the engine with the
// resample command, against the old way of showing other settings (a new
// run stepped to its sample stage: tokenize, prefill, logits, sample), on
// the default model.
func BenchmarkResample(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	cfg := session.Config{Prompt: "The President said that", Sampling: session.DefaultSampling(), MaxNewTokens: 4, TopN: 12}
	p := session.SamplingParams{Temperature: 1.2, TopK: 20, TopP: 0.95, MinP: 0.02, Seed: 7}
	b.Run("resample", func(b *testing.B) {
		s, err := session.New(m, cfg)
		if err != nil {
			b.Fatal(err)
		}
		for s.Next() != session.StageSample {
			if _, err := s.Step(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if _, err := s.Resample(p, 12); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restart", func(b *testing.B) {
		c := cfg
		c.Sampling = p
		for b.Loop() {
			s, err := session.New(m, c)
			if err != nil {
				b.Fatal(err)
			}
			for s.Next() != session.StageAppend {
				if _, err := s.Step(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
