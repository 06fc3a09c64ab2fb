package session

// resample.go: Resample — the current step's logits under other sampling
// settings, without a forward pass: the distribution, the draw and the
// token the sample stage would pick with those settings (the lessons'
// sliders). The run itself is left as it was.

import "fmt"

// MaxResampleTopN bounds how many candidates a Resample lists (as
// Config.TopN).
const MaxResampleTopN = 200

// Resampled is the logits and sample stages' views of the current step
// under other settings, in the same shapes the stages' events use.
type Resampled struct {
	Logits *LogitsInfo `json:"logits"`
	Sample *SampleInfo `json:"sample"`
}

// Resample applies sampling settings p to the current step's logits and
// returns what the logits and sample stages would report with p instead of
// the run's own settings: the same numbers, bit for bit, and the same draw
// (a function of p.Seed and the step) landing on the same token. topN is
// how many candidates to list (0: the run's Config.TopN). A token forced
// for the next sample is not applied: Resample shows the draw.
//
// It needs the current step's logits (the next stage is logits or sample)
// and costs no forward pass. The run is unchanged: its next stage and its
// settings stay as they were.
func (s *Session) Resample(p SamplingParams, topN int) (*Resampled, error) {
	if err := p.Validate(s.m.Config.VocabSize); err != nil {
		return nil, err
	}
	if topN < 0 || topN > MaxResampleTopN {
		return nil, fmt.Errorf("top_n %d out of range: allowed 0 (the run's, %d) to %d", topN, s.cfg.TopN, MaxResampleTopN)
	}
	if s.Done() || s.logits == nil || (s.next != StageLogits && s.next != StageSample) {
		return nil, fmt.Errorf("resample needs the current step's logits: possible when the next stage is logits or sample (it is %s)", s.next)
	}
	if topN == 0 {
		topN = s.cfg.TopN
	}
	d := NewDistributionTop(s.logits, p, topN)
	return &Resampled{Logits: s.logitsInfo(d, topN), Sample: s.sampleInfo(d, len(s.gen), -1)}, nil
}
