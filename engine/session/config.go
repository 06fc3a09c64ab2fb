package session

// config.go: what a student sets up before pressing send, the limits a
// session enforces, and the check of both.

import (
	"fmt"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// Limits a session enforces (documented in the README).
const (
	MaxPromptBytes   = 16 << 10 // prompt text, bytes
	MaxStopStrings   = 8
	MaxStopStringLen = 64
	DefaultTopN      = 20 // candidates listed per step
	// MaxAllAttention is the longest prompt whose every position's
	// attention prefill reports with AllAttention (the weights grow with
	// the square of the prompt: 64 positions of the default model are
	// about 0.5 MB of JSON).
	MaxAllAttention = 64
)

// MaxSampleMany bounds SampleMany's n.
const MaxSampleMany = 10000

// Config is what a student sets up before pressing send.
type Config struct {
	Prompt string                  `json:"prompt"`
	Chat   []tokenizer.ChatMessage `json:"chat,omitempty"` // if set, rendered with the model's chat template instead of Prompt
	// AddBOS prepends the model's BOS token (nil: yes when it has one).
	AddBOS       *bool          `json:"add_bos,omitempty"`
	Sampling     SamplingParams `json:"sampling"`
	MaxNewTokens int            `json:"max_new_tokens"`
	StopStrings  []string       `json:"stop_strings,omitempty"`
	// StopAtEOS ends the run when the model emits its EOS token (nil: yes).
	StopAtEOS *bool `json:"stop_at_eos,omitempty"`
	// TopN is how many candidates each logits event lists (default 20).
	TopN int `json:"top_n,omitempty"`
	// AllAttention records every prompt position's attention in prefill
	// (prompts of at most MaxAllAttention tokens; longer ones report the
	// last position's only).
	AllAttention bool `json:"all_attention,omitempty"`
	// NoCache recomputes the whole sequence at every decode step instead of
	// reusing cached keys and values: same logits, more time (a lesson).
	NoCache bool `json:"no_cache,omitempty"`
	// Lens adds the logit lens (the top tokens read out of the residual
	// after every layer, lens.go) to every forward pass's event.
	Lens bool `json:"lens,omitempty"`
	// TextOnly is for a caller that reads only the generated text, the
	// stop and the timings (the CLI's generate): the session skips what
	// only the lab shows. No layer traces, Inspect view or logit lens; the
	// logits event has no statistics, histogram or candidate list; the
	// sample event has no cumulative distribution; probabilities that were
	// not needed to pick the token are left 0 (greedy computes none: it
	// takes the largest logit; sampling computes the softmax after
	// temperature only, no T=1 probabilities and no entropies); and the
	// weights are not checksummed (empty checksums). The tokens are the
	// same as a full session's, bit for bit.
	TextOnly bool `json:"-"`
	// KVCache is the KV cache's precision: "f32" (or ""), "f16" or "bf16"
	// (engine.ParseKVPrec): 16 bits per value halve the cache's memory and
	// the bytes attention reads, each key and value rounded once.
	KVCache string `json:"kv_cache,omitempty"`
	// MaxBytes > 0 refuses a run whose scratch and prompt KV cache would
	// exceed it, before allocating (the server's memory left for runs).
	MaxBytes int64 `json:"-"`
}

// Validate checks everything that can be checked before tokenizing, for
// model m.
func (cfg Config) Validate(m *engine.Model) error {
	if len(cfg.Prompt) > MaxPromptBytes {
		return fmt.Errorf("prompt is %d bytes; the limit is %d", len(cfg.Prompt), MaxPromptBytes)
	}
	total := 0
	for _, c := range cfg.Chat {
		total += len(c.Content)
	}
	if total > MaxPromptBytes {
		return fmt.Errorf("chat messages are %d bytes; the limit is %d", total, MaxPromptBytes)
	}
	if cfg.MaxNewTokens < 1 || cfg.MaxNewTokens > m.Config.SeqLen {
		return fmt.Errorf("max_new_tokens %d out of range: allowed 1 to %d (the model's context)", cfg.MaxNewTokens, m.Config.SeqLen)
	}
	if len(cfg.StopStrings) > MaxStopStrings {
		return fmt.Errorf("%d stop strings; the limit is %d", len(cfg.StopStrings), MaxStopStrings)
	}
	for _, s := range cfg.StopStrings {
		if s == "" || len(s) > MaxStopStringLen {
			return fmt.Errorf("stop string %q must be 1 to %d bytes", s, MaxStopStringLen)
		}
	}
	if cfg.TopN < 0 || cfg.TopN > 200 {
		return fmt.Errorf("top_n %d out of range: allowed 0 (default %d) to 200", cfg.TopN, DefaultTopN)
	}
	if _, err := engine.ParseKVPrec(cfg.KVCache); err != nil {
		return err
	}
	if cfg.TextOnly && (cfg.Lens || cfg.AllAttention) {
		return fmt.Errorf("a text-only run records no traces: lens and all_attention are not allowed with it")
	}
	return cfg.Sampling.Validate(m.Config.VocabSize)
}
