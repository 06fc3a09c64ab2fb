package session

// resample.go: other sampling settings at the current step. Resample shows
// the current step's logits under them without a forward pass (the
// distribution, the draw and the token the sample stage would pick: the
// lessons' sliders), leaving the run as it was; SetSampling applies them to
// the run from the current step on (the lab's settings, edited mid-run).

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

// SetSampling makes p the run's sampling settings from the current step
// on, as if the run had had them: the current step's distribution is
// rebuilt with p, and when the current step's token was already drawn
// (the next stage is append, or the stop its end-of-text token set) it is
// drawn again with p (a forced token stays forced). Every later step uses
// p; earlier tokens stay as they were. It returns the current step under p
// in the logits and sample stages' shapes (Sample: the new draw, or nil
// when the next stage is logits or sample and nothing was drawn yet), or
// nil before the first logits. The draw is a function of p.Seed and the
// step, so a resume that replays the change gets the same tokens.
func (s *Session) SetSampling(p SamplingParams) (*Resampled, error) {
	if err := p.Validate(s.m.Config.VocabSize); err != nil {
		return nil, err
	}
	if s.Done() {
		return nil, fmt.Errorf("the run has stopped: new settings apply to a new run (start)")
	}
	s.cfg.Sampling = p
	redraw := s.next == StageAppend || s.next == StageStop && s.pending.reason == StopEOS
	switch {
	case s.logits == nil:
		return nil, nil // before the first logits: the logits stage will use p
	case s.next == StageLogits:
		// the logits stage will build it with p; nothing is drawn yet
		r, err := s.Resample(p, 0)
		if r != nil {
			r.Sample = nil
		}
		return r, err
	case s.next != StageSample && !redraw:
		return nil, nil // the run is about to stop: no token is left to draw
	}
	if s.cfg.TextOnly {
		s.dist = newDistributionText(s.logits, p, nil)
	} else {
		s.dist = NewDistributionTop(s.logits, p, s.cfg.TopN)
	}
	out := &Resampled{Logits: s.logitsInfo(s.dist, s.cfg.TopN)}
	if redraw {
		forced := -1
		if s.sampledForced {
			forced = s.chosen
		}
		out.Sample = s.sampleInfo(s.dist, len(s.gen), forced)
		s.chosen = out.Sample.Chosen.ID
		s.next, s.pending = StageAppend, pendingStop{}
		if s.isEOS(s.chosen) && (s.cfg.StopAtEOS == nil || *s.cfg.StopAtEOS) {
			s.pending = pendingStop{StopEOS, eosDetail(s.m.Tokenizer.Piece(s.chosen))}
			s.next = StageStop
		}
	}
	return out, nil
}
