package session

// session.go: the state machine — which stage runs next, and the commands
// that move a run: Step, Advance, Force, Rewind, Cancel, SampleMany.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// Session is one student's run: the shared read-only model plus its own KV
// cache, RNG, scratch buffers and history. Not safe for concurrent use.
type Session struct {
	m        *engine.Model
	cfg      Config
	st       *engine.State
	kv       *engine.KVCache
	next     Stage
	seq      int
	prompt   []tokenizer.Token
	tokInfo  TokenizeInfo
	tokTime  time.Duration
	ids      []int // prompt ids then generated ids
	nPrompt  int
	gen      []int // generated ids
	logits   []float32
	logitPos int
	dist     *Distribution
	spare    []Candidate // a dropped distribution's Sorted, reused by the next
	forced   int         // -1: none
	chosen   int
	dec      *tokenizer.StreamDecoder
	text     strings.Builder // generated text
	timings  Timings
	stepMs   float64 // compute time of the current decode step so far
	// stepModelMs is the forward-pass part of stepMs; hookTime is time spent
	// inside trace hooks during the current forward pass (inspection).
	stepModelMs float64
	hookTime    time.Duration
	sched       Scheduler // nil: forward passes run here, unshared
	stopped     *StopInfo
	pending     pendingStop
	// sampledForced: the current step's token was forced (SetSampling keeps it)
	sampledForced bool
	before        string
	usedWeights   time.Time         // the end of the run's last forward pass (RecheckWeightsSince)
	view          passView          // the last pass's last position, for Inspect (lens.go)
	lens          *engine.LogitLens // the lens's scratch, with Config.Lens
	deferLens     bool              // stages make Partial events; decode steps capture the lens for FillLens (DeferLens)
	// the step before the current one's logits and distribution, for
	// FillLens (prevDist nil once its candidates' memory is reused)
	prevLogits []float32
	prevDist   *Distribution
	prevPos    int
}

type pendingStop struct{ reason, detail string }

// NewSession validates cfg and tokenizes the prompt (so a prompt that does
// not fit the context is an error now, not halfway through).
func New(m *engine.Model, cfg Config) (*Session, error) {
	if m.Tokenizer == nil {
		return nil, fmt.Errorf("model %s has no tokenizer", m.Name)
	}
	if err := cfg.Validate(m); err != nil {
		return nil, err
	}
	if cfg.TopN == 0 {
		cfg.TopN = DefaultTopN
	}
	addBOS := m.Tokenizer.BOS() >= 0
	if cfg.AddBOS != nil {
		addBOS = *cfg.AddBOS && addBOS
	}
	s := &Session{m: m, cfg: cfg, forced: -1, next: StageTokenize}
	start := time.Now()
	var toks []tokenizer.Token
	var err error
	text := cfg.Prompt
	if len(cfg.Chat) > 0 {
		style := tokenizer.ChatStyleFor(m.Tokenizer)
		text, toks, err = tokenizer.EncodeChat(m.Tokenizer, cfg.Chat, style, addBOS)
		s.tokInfo.Chat, s.tokInfo.ChatStyle = true, string(style)
	} else {
		toks, err = m.Tokenizer.Encode(cfg.Prompt, tokenizer.EncodeOptions{AddBOS: addBOS})
	}
	if err != nil {
		return nil, err
	}
	s.tokTime = time.Since(start)
	if len(toks) == 0 {
		return nil, fmt.Errorf("the prompt is empty and model %s has no BOS token to start from: type a prompt", m.Name)
	}
	if len(toks) >= m.Config.SeqLen {
		return nil, fmt.Errorf("prompt is %d tokens; the model's context is %d tokens, which leaves no room to generate: shorten the prompt",
			len(toks), m.Config.SeqLen)
	}
	s.prompt = toks
	for _, t := range toks {
		s.ids = append(s.ids, t.ID)
		if t.Added {
			s.tokInfo.AddedByApp++
		}
	}
	s.nPrompt = len(toks)
	s.tokInfo.Text, s.tokInfo.Tokens, s.tokInfo.Count = text, toks, len(toks)
	s.tokInfo.ContextUsed, s.tokInfo.ContextLimit = len(toks), m.Config.SeqLen
	// Room for the prompt and every new token, up to the context: a run whose
	// prompt + max_new_tokens exceeds the context stops with "context_full".
	capacity := min(m.Config.SeqLen, len(toks)+cfg.MaxNewTokens)
	if err := checkMemory(m, cfg, capacity, len(toks), runtime.GOMAXPROCS(0)); err != nil {
		return nil, err
	}
	// Scratch sized for this run's positions, not the model's whole context
	// (attention weights are heads × positions floats).
	sc := m.Config
	sc.SeqLen = capacity
	s.st = engine.NewState(sc)
	prec, err := engine.ParseKVPrec(cfg.KVCache)
	if err != nil {
		return nil, err
	}
	if s.kv, err = engine.NewKVCacheOf(m.Config, capacity, prec); err != nil {
		return nil, err
	}
	s.dec = tokenizer.NewStreamDecoder(m.Tokenizer, s.ids[len(s.ids)-1])
	if !cfg.TextOnly {
		s.before = m.WeightsChecksum()
	}
	return s, nil
}

// Model returns the session's model.
func (s *Session) Model() *engine.Model { return s.m }

// Config returns the session's settings.
func (s *Session) Config() Config { return s.cfg }

// Next is the stage the next Step runs.
func (s *Session) Next() Stage { return s.next }

// Done reports whether the run has stopped.
func (s *Session) Done() bool { return s.stopped != nil }

// Generated returns the generated token ids so far.
func (s *Session) Generated() []int { return append([]int(nil), s.gen...) }

// PromptIDs returns the prompt's token ids.
func (s *Session) PromptIDs() []int { return append([]int(nil), s.ids[:s.nPrompt]...) }

// KV exposes the cache (read-only use: sizes for display and tests).
func (s *Session) KV() *engine.KVCache { return s.kv }

// AddQueue counts d, time the run's next stage waited for the server's
// engine before it could start (a shared server's fair queue), as queue
// time: before the first token it is part of the time to first token.
func (s *Session) AddQueue(d time.Duration) {
	if d > 0 && s.stopped == nil {
		s.timings.QueueMs += msf(d)
	}
}

// CurrentLogits returns a copy of the raw logits the next Sample uses, or
// nil before prefill.
func (s *Session) CurrentLogits() []float32 {
	if s.logits == nil {
		return nil
	}
	return append([]float32(nil), s.logits...)
}

// Force makes the next Sample take token id instead of drawing one.
func (s *Session) Force(id int) error {
	if s.Done() {
		return fmt.Errorf("the run has stopped; rewind or reset first")
	}
	if s.next != StageLogits && s.next != StageSample {
		return fmt.Errorf("a token can be forced only when the next stage is logits or sample (it is %s)", s.next)
	}
	if id < 0 || id >= s.m.Config.VocabSize {
		return fmt.Errorf("token id %d out of range 0..%d", id, s.m.Config.VocabSize-1)
	}
	s.forced = id
	return nil
}

// Step runs the next stage and returns its event.
func (s *Session) Step(ctx context.Context) (*Event, error) {
	if s.Done() {
		return nil, fmt.Errorf("the run has stopped (%s); rewind or reset to continue", s.stopped.Reason)
	}
	if err := ctx.Err(); err != nil {
		return s.stop(StopCancelled, cancelledBeforeDetail(s.next)), nil
	}
	ev := &Event{Stage: s.next}
	var err error
	switch s.next {
	case StageTokenize:
		info := s.tokInfo
		info.DurationMs = msf(s.tokTime)
		ev.Tokenize = &info
		s.timings.TokenizeMs = info.DurationMs
		s.next = StageEmbed
	case StageEmbed:
		start := time.Now()
		ev.Embed, err = s.embedInfo()
		s.timings.EmbedMs = msf(time.Since(start))
		ev.Embed.DurationMs = s.timings.EmbedMs
		s.next = StagePrefill
	case StagePrefill:
		ev.Prefill, err = s.prefill()
		s.next = StageLogits
	case StageLogits:
		ev.Logits = s.logitsStage(false)
		ev.partial = s.deferLens && !s.cfg.TextOnly
		s.next = StageSample
	case StageSample:
		ev.Sample = s.sample()
		ev.partial = s.deferLens && !s.cfg.TextOnly
		s.next = StageAppend
		if s.isEOS(s.chosen) && (s.cfg.StopAtEOS == nil || *s.cfg.StopAtEOS) {
			s.pending = pendingStop{StopEOS, eosDetail(s.m.Tokenizer.Piece(s.chosen))}
			s.next = StageStop
		}
	case StageAppend:
		ev.Append, err = s.appendToken()
		ev.partial = err == nil && s.deferLens && !s.cfg.TextOnly && ev.Append.Forwarded
	case StageStop:
		return s.stop(s.pending.reason, s.pending.detail), nil
	}
	if err != nil {
		return nil, err
	}
	s.seq++
	ev.Seq, ev.Next = s.seq, s.next
	return ev, nil
}

// Until says how far Advance goes.
type Until int

const (
	UntilStage Until = iota // one stage
	UntilToken              // through the next append, or the stop
	UntilStop               // to the end of the run
)

// Advance runs stages until `until` is reached or the run stops, and
// returns their events. If emit is not nil it sees each event as soon as
// it exists; returning false stops Advance there (the watcher left). A
// cancelled ctx stops the run with reason "cancelled".
func (s *Session) Advance(ctx context.Context, until Until, emit func(*Event) bool) ([]*Event, error) {
	var evs []*Event
	for !s.Done() {
		ev, err := s.Step(ctx)
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if emit != nil && !emit(ev) {
			break
		}
		if until == UntilStage || until == UntilToken && (ev.Stage == StageAppend || ev.Stage == StageStop) {
			break
		}
	}
	return evs, nil
}

// Cancel ends the run now (reason "cancelled") and returns the stop event.
func (s *Session) Cancel() (*Event, error) {
	if s.Done() {
		return nil, fmt.Errorf("the run has already stopped (%s)", s.stopped.Reason)
	}
	return s.stop(StopCancelled, cancelledDetail), nil
}

// Rewind removes the last n generated tokens: the KV cache truncates and
// the logits for the new last position are recomputed (identical to the
// first time). The next stage is Logits.
func (s *Session) Rewind(n int) (*Event, error) {
	if s.next == StageTokenize || s.next == StageEmbed || s.next == StagePrefill {
		return nil, fmt.Errorf("nothing to rewind before prefill")
	}
	if n < 1 || n > len(s.gen) {
		return nil, fmt.Errorf("cannot rewind %d tokens: %d generated (allowed 1 to %d)", n, len(s.gen), len(s.gen))
	}
	keep := len(s.ids) - n
	// cache must hold positions 0..keep-2, then re-run position keep-1;
	// a sliding-window layer that has overwritten what that position looks
	// back on has every position recomputed instead (the same values)
	from := min(s.kv.Len, keep-1)
	if err := s.kv.Truncate(from); errors.Is(err, engine.ErrWindowEvicted) {
		from, s.kv.Len = 0, 0
	} else if err != nil {
		return nil, err
	}
	s.ids = s.ids[:keep]
	s.gen = s.gen[:len(s.gen)-n]
	start := time.Now()
	logits, err := s.m.Forward(s.st, s.kv, s.ids[from:keep], s.rewindHooks())
	s.usedWeights = time.Now()
	if err != nil {
		return nil, err
	}
	s.logits = append(s.logits[:0], logits...)
	s.logitPos = keep - 1
	s.prevDist = nil
	// rebuild the generated text and timings
	s.dec = tokenizer.NewStreamDecoder(s.m.Tokenizer, s.ids[s.nPrompt-1])
	s.text.Reset()
	for _, id := range s.gen {
		s.text.WriteString(s.dec.Add(id))
	}
	if len(s.gen) == 0 {
		s.timings.ITLMs, s.timings.ITLModelMs = nil, nil
	} else if len(s.timings.ITLMs) >= len(s.gen) {
		s.timings.ITLMs = s.timings.ITLMs[:len(s.gen)-1]
		s.timings.ITLModelMs = s.timings.ITLModelMs[:min(len(s.timings.ITLModelMs), len(s.gen)-1)]
	}
	s.stopped, s.pending, s.forced = nil, pendingStop{}, -1
	s.stepMs = msf(time.Since(start))
	s.stepModelMs = s.stepMs
	s.next = StageLogits
	ev := &Event{Stage: StageLogits}
	ev.Logits = s.logitsStage(true)
	ev.Logits.Lens = s.view.lens
	s.next = StageSample
	s.seq++
	ev.Seq, ev.Next = s.seq, s.next
	return ev, nil
}

// SampleMany draws n tokens from the current step's distribution without
// advancing the run (draws use their own RNG stream, seeded from the
// session's seed), to show how often each token would be picked.
func (s *Session) SampleMany(n int) ([]TokenCount, error) {
	if n < 1 || n > MaxSampleMany {
		return nil, fmt.Errorf("n %d out of range: allowed 1 to %d", n, MaxSampleMany)
	}
	if s.Done() || (s.next != StageLogits && s.next != StageSample) {
		return nil, fmt.Errorf("sampling many is possible when the next stage is logits or sample (it is %s)", s.next)
	}
	if s.dist == nil {
		s.dist = NewDistributionTop(s.logits, s.cfg.Sampling, s.cfg.TopN)
	}
	r := rand.New(rand.NewPCG(s.cfg.Sampling.Seed^0xa5a5a5a5, uint64(len(s.gen))))
	counts := map[int]int{}
	for i := 0; i < n; i++ {
		counts[s.dist.Pick(r.Float64())]++
	}
	var out []TokenCount
	for rank, c := range counts {
		cand := s.dist.Sorted[rank]
		out = append(out, TokenCount{ID: cand.ID, Piece: s.m.Tokenizer.Piece(cand.ID), Text: string(s.m.Tokenizer.TokenBytes(cand.ID)), Count: c, Prob: float32(cand.ProbKept)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
