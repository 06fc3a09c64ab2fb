package main

// generate.go: the generate and trace commands: a run printed as text, or as one JSON object per
// stage event.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

func init() {
	register(&command{name: "generate", summary: "generate text from a prompt (prints prompt + continuation)", run: runGenerate, lean: true})
	register(&command{name: "trace", summary: "print every stage event of a run as JSON lines", run: runTrace, lean: true})
}

// sessionFlags are the flags generate and trace share.
type sessionFlags struct {
	model       modelFlags
	prompt      *string
	maxTokens   *int
	temperature *float64
	topK        *int
	topP        *float64
	minP        *float64
	seed        *uint64
	stops       *string
	noBOS       *bool
	system      *string
	chat        *bool
}

func addSessionFlags(fs *flag.FlagSet) sessionFlags {
	d := session.DefaultSampling()
	return sessionFlags{
		model:       addModelFlags(fs),
		prompt:      fs.String("prompt", "", "the prompt (the user message with --chat)"),
		maxTokens:   fs.Int("max-tokens", 64, "max new tokens"),
		temperature: fs.Float64("temperature", d.Temperature, "sampling temperature; 0 = greedy"),
		topK:        fs.Int("top-k", 0, "keep only the k most likely tokens; 0 = off"),
		topP:        fs.Float64("top-p", d.TopP, "nucleus: keep the smallest set with this much probability; 1 = off"),
		minP:        fs.Float64("min-p", 0, "drop tokens below min-p × the top probability; 0 = off"),
		seed:        fs.Uint64("seed", d.Seed, "random seed (same seed + settings + prompt = same tokens)"),
		stops:       fs.String("stop", "", "stop strings, separated by |"),
		noBOS:       fs.Bool("no-bos", false, "do not prepend the BOS token"),
		system:      fs.String("system", "", "system message (implies --chat)"),
		chat:        fs.Bool("chat", false, "wrap the prompt in the model's chat template"),
	}
}

// session starts the run the flags describe; textOnly skips the lab's
// inspection (generate prints only the text and the timings).
func (f sessionFlags) session(textOnly bool) (*session.Session, error) {
	m, err := f.model.load()
	if err != nil {
		return nil, err
	}
	cfg := session.Config{
		Prompt:       *f.prompt,
		MaxNewTokens: *f.maxTokens,
		Sampling:     session.SamplingParams{Temperature: *f.temperature, TopK: *f.topK, TopP: *f.topP, MinP: *f.minP, Seed: *f.seed},
		TextOnly:     textOnly,
	}
	if *f.stops != "" {
		cfg.StopStrings = strings.Split(*f.stops, "|")
	}
	if *f.noBOS {
		no := false
		cfg.AddBOS = &no
	}
	if *f.chat || *f.system != "" {
		if *f.system != "" {
			cfg.Chat = append(cfg.Chat, tokenizer.ChatMessage{Role: "system", Content: *f.system})
		}
		cfg.Chat = append(cfg.Chat, tokenizer.ChatMessage{Role: "user", Content: *f.prompt})
	}
	return session.New(m, cfg)
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("generate", "generate [--model M] --prompt P [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S]", stderr)
	sf := addSessionFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := sf.session(true)
	if err != nil {
		return err
	}
	var stop *session.StopInfo
	for !s.Done() {
		ev, err := s.Step(ctx)
		if err != nil {
			return err
		}
		switch {
		case ev.Tokenize != nil:
			fmt.Fprint(stdout, visiblePrompt(ev.Tokenize))
		case ev.Append != nil:
			fmt.Fprint(stdout, ev.Append.Text)
		case ev.Stop != nil:
			stop = ev.Stop
		}
	}
	fmt.Fprintln(stdout)
	t := stop.Timings
	fmt.Fprintf(stderr, "stop: %s (%s); %d tokens; prefill %.1f tok/s, output %.1f tok/s, time to first token %.1f ms\n",
		stop.Reason, stop.Detail, stop.Generated, t.PrefillTokPerS, t.OutputTokPerS, t.TTFTMs)
	return nil
}

// visiblePrompt is the prompt as the model saw it, without BOS/EOS markers.
func visiblePrompt(t *session.TokenizeInfo) string {
	return t.Text
}

func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace", "trace [--model M] --prompt P [sampling flags] [--format jsonl] [--full-logits]", stderr)
	sf := addSessionFlags(fs)
	format := fs.String("format", "jsonl", "output format: jsonl (one JSON object per stage event)")
	full := fs.Bool("full-logits", false, "include the full logit vector in logits events")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "jsonl" {
		return fmt.Errorf("unknown --format %q (allowed: jsonl)", *format)
	}
	s, err := sf.session(false)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for !s.Done() {
		ev, err := s.Step(ctx)
		if err != nil {
			return err
		}
		out := traceLine{Event: ev, Pos: eventPos(ev)}
		if *full && ev.Logits != nil {
			out.FullLogits = ev.Logits.Full
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	return nil
}

type traceLine struct {
	*session.Event
	Pos        int       `json:"pos"`
	FullLogits []float32 `json:"full_logits,omitempty"`
}

func eventPos(ev *session.Event) int {
	switch {
	case ev.Logits != nil:
		return ev.Logits.Pos
	case ev.Append != nil:
		return ev.Append.Pos
	case ev.Prefill != nil:
		return ev.Prefill.Positions - 1
	}
	return -1
}
