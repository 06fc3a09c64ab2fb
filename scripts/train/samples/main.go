// Command samples writes the default model card's engine-measured parts:
// samples.json (greedy and sampled continuations) and capitals_eval.json
// (greedy "The capital of X is" for every country in capitals.json), both
// produced by inferscope's own engine.
//
//	go run ./scripts/train/samples models/default
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

func main() {
	dir := "models/default"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := run(dir); err != nil {
		fmt.Fprintln(os.Stderr, "samples:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	m, err := engine.LoadHFDir(dir)
	if err != nil {
		return err
	}
	type sample struct {
		Setting string `json:"setting"`
		Prompt  string `json:"prompt"`
		Text    string `json:"text"`
	}
	var out []sample
	settings := []struct {
		name string
		p    session.SamplingParams
	}{
		{"greedy", session.SamplingParams{Temperature: 0, TopP: 1}},
		{"T=0.8, top-p 0.9, seed 42", session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 42}},
		{"T=0.8, top-p 0.9, seed 7", session.SamplingParams{Temperature: 0.8, TopP: 0.9, Seed: 7}},
	}
	for _, prompt := range []string{"The capital of France is", "Once upon a time", "The President said", "In the morning the"} {
		for _, st := range settings {
			s, err := session.New(m, session.Config{Prompt: prompt, Sampling: st.p, MaxNewTokens: 40})
			if err != nil {
				return err
			}
			evs, err := s.Advance(context.Background(), session.UntilStop, nil)
			if err != nil {
				return err
			}
			out = append(out, sample{Setting: st.name, Prompt: prompt, Text: prompt + evs[len(evs)-1].Stop.Text})
		}
	}
	if err := writeJSON(filepath.Join(dir, "samples.json"), out); err != nil {
		return err
	}
	for _, s := range out {
		fmt.Printf("%s: %q\n", s.Setting, s.Text)
	}

	b, err := os.ReadFile(filepath.Join(dir, "capitals.json"))
	if err != nil {
		return err
	}
	var caps []models.Capital
	if err := json.Unmarshal(b, &caps); err != nil {
		return fmt.Errorf("capitals.json: %w", err)
	}
	ev, err := models.EvalCapitals(m, caps)
	if err != nil {
		return err
	}
	fmt.Printf("capitals: %d of %d right; France → %q\n", ev.Right, ev.Total, ev.France)
	return writeJSON(filepath.Join(dir, "capitals_eval.json"), ev)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
