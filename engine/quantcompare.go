package engine

// quantcompare.go: the same model in several weight precisions side by
// side — bytes per parameter, the bytes a decode step reads, the decode
// speed measured in interleaved rounds (wall clock of N greedy decode
// steps, median of the rounds) and what the precision costs: the largest
// change of a logit against the first precision's (F32) after the prompt,
// and whether the greedy next token and the greedy text change. The
// quantization lesson's panel shows it (web /api/quantization).

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// PrecisionRun is one precision's figures.
type PrecisionRun struct {
	Precision     string  `json:"precision"`       // "f32", "bf16", "q8_0", "q4_k"
	Layers        string  `json:"layers"`          // the layer matrices' storage type (Weights.DType)
	WeightsBytes  int64   `json:"weights_bytes"`   // every parameter as stored
	BytesPerParam float64 `json:"bytes_per_param"` // WeightsBytes / parameters
	// ReadBytes is what one decode step reads of the weights: every matrix
	// once (the embedding table's one row only, unless it is also the head)
	// and every vector.
	ReadBytes int64 `json:"read_bytes_per_token"`
	// TokensPerSec is the median over rounds of steps ÷ the wall-clock time
	// of the steps' greedy decode (prefill not counted); RoundsTPS each round's.
	TokensPerSec float64   `json:"tokens_per_s"`
	RoundsTPS    []float64 `json:"rounds_tokens_per_s"`
	// MaxAbsDelta is max |logit − reference logit| over the vocabulary at the
	// first generated position (after the prompt); 0 for the reference.
	MaxAbsDelta float64 `json:"max_abs_delta_logit"`
	LogitRange  float64 `json:"logit_range"` // max − min logit there, for scale
	NextToken   int     `json:"next_token"`  // the greedy next token
	SameNext    bool    `json:"same_next"`   // equal to the reference's
	Tokens      []int   `json:"tokens"`      // the greedy continuation, steps tokens
	SameText    bool    `json:"same_text"`   // every token equal to the reference's
	FirstDiff   int     `json:"first_diff"`  // index of the first token that differs, −1 if none
}

// PrecisionComparison is CompareWeights' answer.
type PrecisionComparison struct {
	Params int64          `json:"params"`
	Prompt int            `json:"prompt_tokens"`
	Steps  int            `json:"steps"`
	Rounds int            `json:"rounds"`
	Runs   []PrecisionRun `json:"runs"` // the first is the reference
	Timing string         `json:"timing"`
}

// ReadBytesPerToken is what one decode step reads of the weights as
// stored: each matrix once, of an untied embedding table one row.
func (w *Weights) ReadBytesPerToken() int64 {
	b := w.Bytes()
	if !w.Head.same(&w.TokenEmbed) && !w.TokenEmbed.Empty() {
		b -= w.TokenEmbed.Bytes() - w.TokenEmbed.Bytes()/int64(w.TokenEmbed.Rows)
	}
	return b
}

// CompareWeights runs models (the same weights in several precisions, the
// reference first) on prompt: the greedy continuation of steps tokens of
// each, timed in rounds that take the models in turn (so a change of the
// machine's load falls on every precision alike).
func CompareWeights(models []*Model, names []string, prompt []int, steps, rounds int) (*PrecisionComparison, error) {
	if len(models) == 0 || len(models) != len(names) || len(prompt) == 0 || steps < 1 || rounds < 1 {
		return nil, fmt.Errorf("compare weights: %d models, %d names, %d prompt tokens, %d steps, %d rounds", len(models), len(names), len(prompt), steps, rounds)
	}
	c := models[0].Config
	if len(prompt)+steps > c.SeqLen {
		return nil, fmt.Errorf("compare weights: %d prompt tokens + %d steps exceed the context of %d", len(prompt), steps, c.SeqLen)
	}
	out := &PrecisionComparison{Params: models[0].Weights.NumParams(), Prompt: len(prompt), Steps: steps, Rounds: rounds,
		Timing: "wall clock of the greedy decode steps after the prompt (prefill not counted), median of the rounds, the precisions taken in turn in every round"}
	type dec struct {
		st *State
		kv *KVCache
	}
	decs := make([]dec, len(models))
	var ref []float32
	for i, m := range models {
		st := NewState(m.Config)
		kv, err := NewKVCache(m.Config, len(prompt)+steps)
		if err != nil {
			return nil, err
		}
		decs[i] = dec{st, kv}
		logits, err := m.Forward(st, kv, prompt, nil)
		if err != nil {
			return nil, err
		}
		r := PrecisionRun{Precision: names[i], Layers: m.Weights.DType().String(), WeightsBytes: m.Weights.Bytes(), ReadBytes: m.Weights.ReadBytesPerToken(), FirstDiff: -1}
		r.BytesPerParam = float64(r.WeightsBytes) / float64(m.Weights.NumParams())
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range logits {
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
		r.LogitRange = hi - lo
		if i == 0 {
			ref = slices.Clone(logits)
		} else {
			for j, v := range logits {
				r.MaxAbsDelta = max(r.MaxAbsDelta, math.Abs(float64(v)-float64(ref[j])))
			}
		}
		r.NextToken = argmaxLogit(logits)
		out.Runs = append(out.Runs, r)
	}
	for round := range rounds {
		for i, m := range models {
			d := decs[i]
			if err := d.kv.Truncate(len(prompt)); err != nil {
				// a sliding-window layer's ring no longer holds the prompt's
				// last positions: prefill again (not timed)
				kv, kerr := NewKVCache(m.Config, len(prompt)+steps)
				if kerr != nil {
					return nil, kerr
				}
				if _, ferr := m.Forward(d.st, kv, prompt, nil); ferr != nil {
					return nil, ferr
				}
				decs[i].kv = kv
				d = decs[i]
			}
			tok := out.Runs[i].NextToken
			toks := make([]int, 0, steps)
			t0 := time.Now()
			for range steps {
				toks = append(toks, tok)
				logits, err := m.Forward(d.st, d.kv, []int{tok}, nil)
				if err != nil {
					return nil, err
				}
				tok = argmaxLogit(logits)
			}
			sec := time.Since(t0).Seconds()
			out.Runs[i].RoundsTPS = append(out.Runs[i].RoundsTPS, float64(steps)/sec)
			if round == 0 {
				out.Runs[i].Tokens = toks
			}
		}
	}
	for i := range out.Runs {
		r := &out.Runs[i]
		s := slices.Clone(r.RoundsTPS)
		slices.Sort(s)
		r.TokensPerSec = s[len(s)/2]
		if len(s)%2 == 0 {
			r.TokensPerSec = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		r.SameNext = r.NextToken == out.Runs[0].NextToken
		for j, t := range r.Tokens {
			if t != out.Runs[0].Tokens[j] {
				r.FirstDiff = j
				break
			}
		}
		r.SameText = r.FirstDiff < 0
	}
	return out, nil
}

// argmaxLogit is the greedy choice: the first largest logit.
func argmaxLogit(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
