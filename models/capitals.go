package models

// capitals.go: what the default model knows, measured: greedy "The capital
// of X is" for every country of its facts corpus, run on inferscope's engine.

import (
	"context"
	"fmt"
	"strings"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
)

// Capital is one country of capitals.json (written by scripts/train).
type Capital struct {
	Country string `json:"country"`
	Capital string `json:"capital"`
}

// CapitalResult is the engine's greedy answer for one country.
type CapitalResult struct {
	Country string `json:"country"`
	Capital string `json:"capital"`
	Got     string `json:"got"` // the greedy continuation, as long as the capital's text
	OK      bool   `json:"ok"`
}

// CapitalEval is the share of countries whose capital greedy decoding names.
type CapitalEval struct {
	Right     int             `json:"right"`
	Total     int             `json:"total"`
	France    string          `json:"france"` // greedy continuation of "The capital of France is"
	Countries []CapitalResult `json:"countries"`
}

// EvalCapitals runs "The capital of <country> is" greedily for every country
// and counts those whose continuation starts with " <capital>". The
// continuation is cut at the capital's length in characters; a longer name
// that merely starts with it (" Parisville") still counts as right only if
// the next character is not a letter.
func EvalCapitals(m *engine.Model, caps []Capital) (CapitalEval, error) {
	var ev CapitalEval
	for _, c := range caps {
		if c.Capital == "" {
			continue
		}
		want := " " + c.Capital
		got, err := greedyText(m, "The capital of "+c.Country+" is", len(want))
		if err != nil {
			return ev, fmt.Errorf("%s: %w", c.Country, err)
		}
		ok := strings.HasPrefix(got, want) && (len(got) == len(want) || !isLetter(got[len(want)]))
		if len(got) > len(want) {
			got = got[:len(want)]
		}
		ev.Countries = append(ev.Countries, CapitalResult{Country: c.Country, Capital: c.Capital, Got: got, OK: ok})
		ev.Total++
		if ok {
			ev.Right++
		}
		if c.Country == "France" {
			ev.France = got
		}
	}
	return ev, nil
}

// greedyText decodes greedily until the text is longer than n bytes (so the
// character after the answer is known) or the run stops.
func greedyText(m *engine.Model, prompt string, n int) (string, error) {
	s, err := session.New(m, session.Config{Prompt: prompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: n + 1})
	if err != nil {
		return "", err
	}
	var text strings.Builder
	_, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
		if e.Append != nil {
			text.WriteString(e.Append.Text)
		}
		return text.Len() <= n
	})
	return text.String(), err
}

func isLetter(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}
