// Command samples writes samples.json for the default model's card:
// greedy and sampled continuations produced by inferscope's engine.
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
)

func main() {
	dir := "models/default"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	m, err := engine.LoadHFDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
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
	for _, prompt := range []string{"The President said", "In the morning the", "The capital of France is"} {
		for _, st := range settings {
			s, err := session.New(m, session.Config{Prompt: prompt, Sampling: st.p, MaxNewTokens: 40})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			evs, err := s.Advance(context.Background(), session.UntilStop, nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			out = append(out, sample{Setting: st.name, Prompt: prompt, Text: prompt + evs[len(evs)-1].Stop.Text})
		}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "samples.json"), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, s := range out {
		fmt.Printf("%s: %q\n", s.Setting, s.Text)
	}
}
