package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stage is one step of inference as the lab shows it.
type Stage string

const (
	StageTokenize Stage = "tokenize"
	StageEmbed    Stage = "embed"
	StagePrefill  Stage = "prefill"
	StageLogits   Stage = "logits"
	StageSample   Stage = "sample"
	StageAppend   Stage = "append"
	StageStop     Stage = "stop"
)

// Stop reasons.
const (
	StopEOS         = "eos"
	StopString      = "stop_string"
	StopMaxTokens   = "max_new_tokens"
	StopContextFull = "context_full"
	StopCancelled   = "cancelled"
)

// Limits a session enforces (documented in the README).
const (
	MaxPromptBytes   = 16 << 10 // prompt text, bytes
	MaxStopStrings   = 8
	MaxStopStringLen = 64
	DefaultTopN      = 20 // candidates listed per step
)

// SessionConfig is what a student sets up before pressing send.
type SessionConfig struct {
	Prompt string        `json:"prompt"`
	Chat   []ChatMessage `json:"chat,omitempty"` // if set, rendered with the model's chat template instead of Prompt
	// AddBOS prepends the model's BOS token (nil: yes when it has one).
	AddBOS       *bool          `json:"add_bos,omitempty"`
	Sampling     SamplingParams `json:"sampling"`
	MaxNewTokens int            `json:"max_new_tokens"`
	StopStrings  []string       `json:"stop_strings,omitempty"`
	// StopAtEOS ends the run when the model emits its EOS token (nil: yes).
	StopAtEOS *bool `json:"stop_at_eos,omitempty"`
	// TopN is how many candidates each logits event lists (default 20).
	TopN int `json:"top_n,omitempty"`
	// AllAttention records every prompt position's attention in prefill.
	AllAttention bool `json:"all_attention,omitempty"`
	// NoCache recomputes the whole sequence at every decode step instead of
	// reusing cached keys and values: same logits, more time (a lesson).
	NoCache bool `json:"no_cache,omitempty"`
}

// TokenizeInfo: the prompt as tokens.
type TokenizeInfo struct {
	Text         string  `json:"text"` // what was tokenized (the rendered chat, in chat mode)
	Tokens       []Token `json:"tokens"`
	Count        int     `json:"count"`
	AddedByApp   int     `json:"added_by_app"` // BOS and chat-template tokens
	ContextUsed  int     `json:"context_used"`
	ContextLimit int     `json:"context_limit"`
	Chat         bool    `json:"chat"`
	ChatStyle    string  `json:"chat_style,omitempty"`
}

// EmbedPosition is what enters layer 0 at one position.
type EmbedPosition struct {
	Pos       int       `json:"pos"`
	ID        int       `json:"id"`
	Piece     string    `json:"piece"`
	TokenVec  []float32 `json:"token_vec"`
	PosVec    []float32 `json:"pos_vec,omitempty"` // GPT-2 learned position vector
	Sum       []float32 `json:"sum"`
	TokenNorm float32   `json:"token_norm"`
	PosNorm   float32   `json:"pos_norm,omitempty"`
	SumNorm   float32   `json:"sum_norm"`
}

// EmbedInfoStage is the Embed stage's view of the prompt.
type EmbedInfoStage struct {
	Dim       int             `json:"dim"`
	Positions []EmbedPosition `json:"positions"`
	Method    string          `json:"method"` // how position enters: learned vector or RoPE
}

// LayerTrace is one block's output for the positions of one pass.
type LayerTrace struct {
	Layer        int         `json:"layer"`
	ResidualNorm []float32   `json:"residual_norm"` // per position in the pass
	Attn         []Compact   `json:"attn"`          // [head][key position] for the pass's last position
	AttnAll      [][]Compact `json:"attn_all,omitempty"`
}

// Compact is a float vector that marshals to JSON with 4 decimals (trailing
// zeros dropped): attention weights lie in [0,1] and are drawn as colors,
// and full precision would more than double the bytes of every decode
// event (measured: see the README's protocol section).
type Compact []float32

// MarshalJSON implements json.Marshaler.
func (c Compact) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+7*len(c))
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			b = append(b, "null"...)
			continue
		}
		n := len(b)
		b = strconv.AppendFloat(b, float64(v), 'f', 4, 32)
		for len(b) > n+1 && b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		if b[len(b)-1] == '.' {
			b = b[:len(b)-1]
		}
		if string(b[n:]) == "-0" {
			b = append(b[:n], '0')
		}
	}
	return append(b, ']'), nil
}

// PrefillInfo: the whole prompt through every layer in one batched pass.
type PrefillInfo struct {
	Positions    int          `json:"positions"`
	Layers       []LayerTrace `json:"layers"`
	DurationMs   float64      `json:"duration_ms"`
	TokensPerSec float64      `json:"tokens_per_s"`
}

// TokenProb is one candidate token with its numbers.
type TokenProb struct {
	ID       int     `json:"id"`
	Piece    string  `json:"token"` // the vocabulary's spelling
	Text     string  `json:"text"`
	Logit    float32 `json:"logit"`
	Prob     float32 `json:"prob"`      // softmax at T=1
	ProbT    float32 `json:"prob_t"`    // after temperature
	ProbKept float32 `json:"prob_kept"` // renormalized over the kept set, 0 if cut
	Kept     bool    `json:"kept"`
	Rank     int     `json:"rank"`
}

// LogitsInfo: the scores at the last position and what sampling makes of them.
type LogitsInfo struct {
	Pos         int            `json:"pos"` // the position whose output these are
	Vocab       int            `json:"vocab"`
	Top         []TokenProb    `json:"top"`
	Params      SamplingParams `json:"params"`
	AfterTopK   int            `json:"after_top_k"`
	AfterTopP   int            `json:"after_top_p"`
	Kept        int            `json:"kept"`
	KeptMass    float64        `json:"kept_mass"`
	Entropy1    float64        `json:"entropy"`
	EntropyT    float64        `json:"entropy_t"`
	Min         float32        `json:"min"`
	Max         float32        `json:"max"`
	Mean        float32        `json:"mean"`
	Histogram   Histogram      `json:"histogram"`
	Full        []float32      `json:"-"` // the raw logits (sent only on request)
	DurationMs  float64        `json:"duration_ms"`
	Recomputed  bool           `json:"recomputed,omitempty"` // after a rewind
	FromPrefill bool           `json:"from_prefill"`
}

// Histogram counts values in equal-width bins from Lo to Hi.
type Histogram struct {
	Lo     float32 `json:"lo"`
	Hi     float32 `json:"hi"`
	Counts []int   `json:"counts"`
}

// NewHistogram bins every value of v into n bins over [min, max].
func NewHistogram(v []float32, n int) Histogram {
	h := Histogram{Counts: make([]int, n)}
	if len(v) == 0 {
		return h
	}
	h.Lo, h.Hi = v[0], v[0]
	for _, x := range v {
		h.Lo, h.Hi = min(h.Lo, x), max(h.Hi, x)
	}
	w := (h.Hi - h.Lo) / float32(n)
	for _, x := range v {
		b := n - 1
		if w > 0 {
			b = min(int((x-h.Lo)/w), n-1)
		}
		h.Counts[b]++
	}
	return h
}

// CDFPoint is one kept candidate on the cumulative distribution.
type CDFPoint struct {
	ID    int     `json:"id"`
	Piece string  `json:"token"`
	Text  string  `json:"text"`
	Cum   float32 `json:"cum"`
}

// SampleInfo: which token was chosen and why.
type SampleInfo struct {
	Rule     string     `json:"rule"`
	Draw     float64    `json:"draw"` // uniform random number in [0,1); -1 when none was drawn
	Forced   bool       `json:"forced"`
	Chosen   TokenProb  `json:"chosen"`
	CDF      []CDFPoint `json:"cdf"` // the first 64 kept candidates, or up to the chosen one
	Step     int        `json:"step"`
	Duration float64    `json:"duration_ms"`
}

// MemoryBudget is what the run holds in memory, in bytes.
type MemoryBudget struct {
	Weights     int64 `json:"weights"`
	KVAllocated int64 `json:"kv_allocated"`
	KVUsed      int64 `json:"kv_used"`
	Scratch     int64 `json:"scratch"`
	Total       int64 `json:"total"`
}

// AppendInfo: the chosen token joins the sequence; the KV cache grows.
type AppendInfo struct {
	ID            int          `json:"id"`
	Piece         string       `json:"piece"`
	Text          string       `json:"text"` // complete characters released by this token
	Step          int          `json:"step"` // 0-based index among generated tokens
	Pos           int          `json:"pos"`  // position of the new token
	Forwarded     bool         `json:"forwarded"`
	CacheLen      int          `json:"cache_len"`
	CacheCap      int          `json:"cache_cap"`
	Layers        int          `json:"layers"`
	KVHeads       int          `json:"kv_heads"`
	HeadDim       int          `json:"head_dim"`
	BytesPerToken int64        `json:"bytes_per_token"`
	BytesUsed     int64        `json:"bytes_used"`
	Memory        MemoryBudget `json:"memory"`
	LayerTraces   []LayerTrace `json:"layer_traces,omitempty"`
	DurationMs    float64      `json:"duration_ms"`
}

// Timings summarizes compute time per stage (time spent waiting for a
// student to press "next" is not counted).
type Timings struct {
	TokenizeMs     float64   `json:"tokenize_ms"`
	EmbedMs        float64   `json:"embed_ms"`
	PrefillMs      float64   `json:"prefill_ms"`
	FirstDecodeMs  float64   `json:"first_decode_ms"` // logits + sample of the first token
	TTFTMs         float64   `json:"ttft_ms"`
	ITLMs          []float64 `json:"itl_ms"` // per later token: append (forward) + logits + sample
	ITLp50Ms       float64   `json:"itl_p50_ms"`
	PrefillTokPerS float64   `json:"prefill_tokens_per_s"`
	OutputTokPerS  float64   `json:"output_tokens_per_s"`
}

// StopInfo: why the run ended, and proof the weights did not change.
type StopInfo struct {
	Reason           string  `json:"reason"`
	Detail           string  `json:"detail"`
	Generated        int     `json:"generated"`
	Text             string  `json:"text"` // the generated text
	Timings          Timings `json:"timings"`
	ChecksumBefore   string  `json:"checksum_before"`
	ChecksumAfter    string  `json:"checksum_after"`
	WeightsUnchanged bool    `json:"weights_unchanged"`
}

// Event is what one Step produced.
type Event struct {
	Seq      int             `json:"seq"`
	Stage    Stage           `json:"stage"`
	Next     Stage           `json:"next"`
	Tokenize *TokenizeInfo   `json:"tokenize,omitempty"`
	Embed    *EmbedInfoStage `json:"embed,omitempty"`
	Prefill  *PrefillInfo    `json:"prefill,omitempty"`
	Logits   *LogitsInfo     `json:"logits,omitempty"`
	Sample   *SampleInfo     `json:"sample,omitempty"`
	Append   *AppendInfo     `json:"append,omitempty"`
	Stop     *StopInfo       `json:"stop,omitempty"`
}

// Session is one student's run: the shared read-only model plus its own KV
// cache, RNG, scratch buffers and history. Not safe for concurrent use.
type Session struct {
	m        *Model
	cfg      SessionConfig
	st       *State
	kv       *KVCache
	next     Stage
	seq      int
	prompt   []Token
	tokInfo  TokenizeInfo
	tokTime  time.Duration
	ids      []int // prompt ids then generated ids
	nPrompt  int
	gen      []int // generated ids
	logits   []float32
	logitPos int
	dist     *Distribution
	forced   int // -1: none
	chosen   int
	dec      *StreamDecoder
	text     strings.Builder // generated text
	timings  Timings
	stepMs   float64 // compute time of the current decode step so far
	stopped  *StopInfo
	pending  pendingStop
	before   string
}

type pendingStop struct{ reason, detail string }

// ValidateConfig checks everything that can be checked before tokenizing.
func (m *Model) ValidateConfig(cfg SessionConfig) error {
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
	return cfg.Sampling.Validate(m.Config.VocabSize)
}

var checksums sync.Map // *Model → string

// WeightsChecksum is the model's weight checksum at load (computed once).
func (m *Model) WeightsChecksum() string {
	if v, ok := checksums.Load(m); ok {
		return v.(string)
	}
	sum := m.Weights.Checksum()
	s := hex.EncodeToString(sum[:])
	checksums.Store(m, s)
	return s
}

// NewSession validates cfg and tokenizes the prompt (so a prompt that does
// not fit the context is an error now, not halfway through).
func NewSession(m *Model, cfg SessionConfig) (*Session, error) {
	if m.Tokenizer == nil {
		return nil, fmt.Errorf("model %s has no tokenizer", m.Name)
	}
	if err := m.ValidateConfig(cfg); err != nil {
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
	var toks []Token
	var err error
	text := cfg.Prompt
	if len(cfg.Chat) > 0 {
		style := ChatStyleFor(m.Tokenizer)
		text, toks, err = EncodeChat(m.Tokenizer, cfg.Chat, style, addBOS)
		s.tokInfo.Chat, s.tokInfo.ChatStyle = true, string(style)
	} else {
		toks, err = m.Tokenizer.Encode(cfg.Prompt, EncodeOptions{AddBOS: addBOS})
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
	s.st = NewState(m.Config)
	// Room for the prompt and every new token, up to the context: a run whose
	// prompt + max_new_tokens exceeds the context stops with "context_full".
	if s.kv, err = NewKVCache(m.Config, min(m.Config.SeqLen, len(toks)+cfg.MaxNewTokens)); err != nil {
		return nil, err
	}
	s.dec = NewStreamDecoder(m.Tokenizer, s.ids[len(s.ids)-1])
	s.before = m.WeightsChecksum()
	return s, nil
}

// Model returns the session's model.
func (s *Session) Model() *Model { return s.m }

// Config returns the session's settings.
func (s *Session) Config() SessionConfig { return s.cfg }

// Next is the stage the next Step runs.
func (s *Session) Next() Stage { return s.next }

// Done reports whether the run has stopped.
func (s *Session) Done() bool { return s.stopped != nil }

// Generated returns the generated token ids so far.
func (s *Session) Generated() []int { return append([]int(nil), s.gen...) }

// PromptIDs returns the prompt's token ids.
func (s *Session) PromptIDs() []int { return append([]int(nil), s.ids[:s.nPrompt]...) }

// KV exposes the cache (read-only use: sizes for display and tests).
func (s *Session) KV() *KVCache { return s.kv }

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
		return s.stop(StopCancelled, "cancelled before "+string(s.next)), nil
	}
	ev := &Event{Stage: s.next}
	var err error
	switch s.next {
	case StageTokenize:
		info := s.tokInfo
		ev.Tokenize = &info
		s.timings.TokenizeMs = msf(s.tokTime)
		s.next = StageEmbed
	case StageEmbed:
		start := time.Now()
		ev.Embed = s.embedInfo()
		s.timings.EmbedMs = msf(time.Since(start))
		s.next = StagePrefill
	case StagePrefill:
		ev.Prefill, err = s.prefill()
		s.next = StageLogits
	case StageLogits:
		ev.Logits = s.logitsStage(false)
		s.next = StageSample
	case StageSample:
		ev.Sample = s.sample()
		s.next = StageAppend
		if s.isEOS(s.chosen) && (s.cfg.StopAtEOS == nil || *s.cfg.StopAtEOS) {
			s.pending = pendingStop{StopEOS, fmt.Sprintf("the model chose its end-of-sequence token %q", s.m.Tokenizer.Piece(s.chosen))}
			s.next = StageStop
		}
	case StageAppend:
		ev.Append, err = s.appendToken()
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

func msf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func (s *Session) isEOS(id int) bool {
	return id >= 0 && id == s.m.Tokenizer.EOS()
}

// embedInfo reads each prompt position's input vectors from the weights,
// exactly as the forward pass's embedding step forms them.
func (s *Session) embedInfo() *EmbedInfoStage {
	c := s.m.Config
	d := c.Dim
	w := &s.m.Weights
	info := &EmbedInfoStage{Dim: d, Method: "learned position vectors are added to the token vectors (GPT-2)"}
	if w.PosEmbed == nil {
		info.Method = "no position vector is added: RoPE rotates each head's queries and keys by an angle proportional to the position, inside attention"
	}
	for p, id := range s.ids[:s.nPrompt] {
		e := EmbedPosition{Pos: p, ID: id, Piece: s.m.Tokenizer.Piece(id)}
		e.TokenVec = append([]float32(nil), w.TokenEmbed[id*d:(id+1)*d]...)
		e.Sum = append([]float32(nil), e.TokenVec...)
		if w.PosEmbed != nil {
			e.PosVec = append([]float32(nil), w.PosEmbed[p*d:(p+1)*d]...)
			for i := range e.Sum {
				e.Sum[i] += e.PosVec[i]
			}
			e.PosNorm = l2(e.PosVec)
		}
		e.TokenNorm, e.SumNorm = l2(e.TokenVec), l2(e.Sum)
		info.Positions = append(info.Positions, e)
	}
	return info
}

// traceHooks records per-layer traces of one forward pass.
func (s *Session) traceHooks(all bool, out *[]LayerTrace) *Hooks {
	return &Hooks{AllAttention: all, LayerDone: func(l LayerInfo) {
		lt := LayerTrace{Layer: l.Layer, ResidualNorm: make([]float32, len(l.Hidden)), Attn: make([]Compact, len(l.Attn))}
		for i, h := range l.Hidden {
			lt.ResidualNorm[i] = l2(h)
		}
		for h, a := range l.Attn {
			lt.Attn[h] = append([]float32(nil), a...)
		}
		if l.AttnAll != nil {
			lt.AttnAll = make([][]Compact, len(l.AttnAll))
			for t, heads := range l.AttnAll {
				lt.AttnAll[t] = make([]Compact, len(heads))
				for h, a := range heads {
					lt.AttnAll[t][h] = append([]float32(nil), a...)
				}
			}
		}
		*out = append(*out, lt)
	}}
}

func (s *Session) prefill() (*PrefillInfo, error) {
	info := &PrefillInfo{Positions: s.nPrompt}
	start := time.Now()
	logits, err := s.m.Forward(s.st, s.kv, s.ids[:s.nPrompt], s.traceHooks(s.cfg.AllAttention, &info.Layers))
	if err != nil {
		return nil, err
	}
	el := time.Since(start)
	s.logits = append(s.logits[:0], logits...)
	s.logitPos = s.nPrompt - 1
	info.DurationMs = msf(el)
	info.TokensPerSec = float64(s.nPrompt) / el.Seconds()
	s.timings.PrefillMs = info.DurationMs
	s.timings.PrefillTokPerS = info.TokensPerSec
	return info, nil
}

func (s *Session) tokenProb(c Candidate, rank int) TokenProb {
	return TokenProb{ID: c.ID, Piece: s.m.Tokenizer.Piece(c.ID), Text: string(s.m.Tokenizer.TokenBytes(c.ID)),
		Logit: c.Logit, Prob: float32(c.Prob1), ProbT: float32(c.ProbT), ProbKept: float32(c.ProbKept), Kept: rank < s.dist.Kept, Rank: rank}
}

func (s *Session) logitsStage(recomputed bool) *LogitsInfo {
	start := time.Now()
	s.dist = NewDistribution(s.logits, s.cfg.Sampling)
	d := s.dist
	info := &LogitsInfo{Pos: s.logitPos, Vocab: len(s.logits), Params: s.cfg.Sampling, AfterTopK: d.AfterK, AfterTopP: d.AfterP,
		Kept: d.Kept, KeptMass: d.KeptMass, Entropy1: d.Entropy1, EntropyT: d.EntropyT, Full: append([]float32(nil), s.logits...),
		Recomputed: recomputed, FromPrefill: s.logitPos == s.nPrompt-1}
	info.Min, info.Max = s.logits[0], s.logits[0]
	var sum float64
	for _, v := range s.logits {
		info.Min, info.Max = min(info.Min, v), max(info.Max, v)
		sum += float64(v)
	}
	info.Mean = float32(sum / float64(len(s.logits)))
	info.Histogram = NewHistogram(s.logits, 40)
	n := min(s.cfg.TopN, len(d.Sorted))
	for r := 0; r < n; r++ {
		info.Top = append(info.Top, s.tokenProb(d.Sorted[r], r))
	}
	info.DurationMs = msf(time.Since(start))
	s.stepMs += info.DurationMs
	return info
}

// drawFor is the uniform number for generated token `step`: a pure function
// of the seed and the step, so the same seed, settings and prompt give the
// same tokens on every machine, and a rewound run repeats itself.
func drawFor(seed uint64, step int) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(step)+0x5eed))
	return r.Float64()
}

func (s *Session) sample() *SampleInfo {
	start := time.Now()
	if s.dist == nil {
		s.logitsStage(false)
	}
	d := s.dist
	step := len(s.gen)
	info := &SampleInfo{Draw: -1, Step: step}
	p := s.cfg.Sampling
	if p.Greedy() {
		info.Rule = "greedy: take the highest-scoring token"
	} else {
		info.Rule = fmt.Sprintf("sample at temperature %g", p.Temperature)
		if p.TopK > 0 {
			info.Rule += fmt.Sprintf(", top-k %d", p.TopK)
		}
		if p.TopP < 1 {
			info.Rule += fmt.Sprintf(", top-p %g", p.TopP)
		}
		if p.MinP > 0 {
			info.Rule += fmt.Sprintf(", min-p %g", p.MinP)
		}
		info.Rule += fmt.Sprintf(" (seed %d)", p.Seed)
	}
	var rank int
	if s.forced >= 0 {
		rank = d.Rank(s.forced)
		info.Forced = true
		info.Rule = "forced by the user: " + info.Rule
		s.forced = -1
	} else {
		if !p.Greedy() {
			info.Draw = drawFor(p.Seed, step)
		}
		rank = d.Pick(info.Draw)
	}
	s.chosen = d.Sorted[rank].ID
	info.Chosen = s.tokenProb(d.Sorted[rank], rank)
	var cum float64
	// the first 64 kept candidates, extended to include the chosen one
	for i := 0; i < d.Kept && i < max(64, rank+1); i++ {
		cum += d.Sorted[i].ProbKept
		id := d.Sorted[i].ID
		info.CDF = append(info.CDF, CDFPoint{ID: id, Piece: s.m.Tokenizer.Piece(id), Text: string(s.m.Tokenizer.TokenBytes(id)), Cum: float32(cum)})
	}
	info.Duration = msf(time.Since(start))
	s.stepMs += info.Duration
	if step == 0 {
		s.timings.FirstDecodeMs = s.stepMs
		s.timings.TTFTMs = s.timings.TokenizeMs + s.timings.EmbedMs + s.timings.PrefillMs + s.stepMs
	} else {
		s.timings.ITLMs = append(s.timings.ITLMs, s.stepMs)
	}
	s.stepMs = 0
	return info
}

func (s *Session) memory() MemoryBudget {
	mb := MemoryBudget{Weights: s.m.Weights.Bytes(), KVAllocated: s.kv.BytesAllocated(), KVUsed: s.kv.BytesUsed(s.m.Config), Scratch: s.st.Bytes()}
	mb.Total = mb.Weights + mb.KVAllocated + mb.Scratch
	return mb
}

func (s *Session) appendToken() (*AppendInfo, error) {
	c := s.m.Config
	id := s.chosen
	s.gen = append(s.gen, id)
	s.ids = append(s.ids, id)
	piece := s.dec.Add(id)
	s.text.WriteString(piece)
	info := &AppendInfo{ID: id, Piece: s.m.Tokenizer.Piece(id), Text: piece, Step: len(s.gen) - 1, Pos: len(s.ids) - 1,
		CacheCap: s.kv.Cap, Layers: c.NLayers, KVHeads: c.NKVHeads, HeadDim: c.HeadDim, BytesPerToken: c.KVBytesPerToken()}
	// stop conditions that end the run before the new token is processed
	gen := s.text.String() + s.dec.pendingString()
	for _, stop := range s.cfg.StopStrings {
		// checked after every token, so the first match is always new; it may
		// span several tokens
		if strings.Contains(gen, stop) {
			s.pending = pendingStop{StopString, fmt.Sprintf("the generated text contains the stop string %q", stop)}
			break
		}
	}
	if s.pending.reason == "" && len(s.gen) >= s.cfg.MaxNewTokens {
		s.pending = pendingStop{StopMaxTokens, fmt.Sprintf("generated max_new_tokens = %d tokens", s.cfg.MaxNewTokens)}
	}
	if s.pending.reason == "" && s.kv.Len >= s.kv.Cap {
		s.pending = pendingStop{StopContextFull, fmt.Sprintf("the KV cache is full at %d positions", s.kv.Cap)}
	}
	if s.pending.reason != "" {
		s.next = StageStop
	} else {
		start := time.Now()
		feed := []int{id}
		if s.cfg.NoCache { // throw the cache away and recompute every position
			s.kv.Truncate(0)
			feed = s.ids
		}
		var traces []LayerTrace
		logits, err := s.m.Forward(s.st, s.kv, feed, s.traceHooks(false, &traces))
		if err != nil {
			return nil, err
		}
		for _, lt := range traces { // report the new position only
			lt.ResidualNorm = lt.ResidualNorm[len(lt.ResidualNorm)-1:]
			info.LayerTraces = append(info.LayerTraces, lt)
		}
		el := time.Since(start)
		s.logits = append(s.logits[:0], logits...)
		s.logitPos = len(s.ids) - 1
		s.dist = nil
		info.Forwarded = true
		info.DurationMs = msf(el)
		s.stepMs += info.DurationMs
		s.next = StageLogits
	}
	info.CacheLen = s.kv.Len
	info.BytesUsed = s.kv.BytesUsed(c)
	info.Memory = s.memory()
	return info, nil
}

func (s *Session) stop(reason, detail string) *Event {
	t := s.timings
	if len(t.ITLMs) > 0 {
		sorted := append([]float64(nil), t.ITLMs...)
		sort.Float64s(sorted)
		t.ITLp50Ms = sorted[len(sorted)/2]
		var sum float64
		for _, v := range t.ITLMs {
			sum += v
		}
		t.OutputTokPerS = float64(len(t.ITLMs)+1) / ((sum + t.FirstDecodeMs) / 1000)
	} else if t.FirstDecodeMs > 0 {
		t.OutputTokPerS = 1 / (t.FirstDecodeMs / 1000)
	}
	if math.IsInf(t.OutputTokPerS, 0) || math.IsNaN(t.OutputTokPerS) {
		t.OutputTokPerS = 0
	}
	after := s.m.Weights.Checksum()
	afterHex := hex.EncodeToString(after[:])
	s.stopped = &StopInfo{Reason: reason, Detail: detail, Generated: len(s.gen), Text: s.text.String() + s.dec.pendingString(),
		Timings: t, ChecksumBefore: s.before, ChecksumAfter: afterHex, WeightsUnchanged: afterHex == s.before}
	s.next = StageStop
	s.seq++
	return &Event{Seq: s.seq, Stage: StageStop, Next: StageStop, Stop: s.stopped}
}

// Cancel ends the run now (reason "cancelled") and returns the stop event.
func (s *Session) Cancel() (*Event, error) {
	if s.Done() {
		return nil, fmt.Errorf("the run has already stopped (%s)", s.stopped.Reason)
	}
	return s.stop(StopCancelled, "stopped by the user"), nil
}

// StepToken runs stages until a token has been appended (or the run stops).
func (s *Session) StepToken(ctx context.Context) ([]*Event, error) {
	var evs []*Event
	for !s.Done() {
		ev, err := s.Step(ctx)
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if ev.Stage == StageAppend || ev.Stage == StageStop {
			break
		}
	}
	return evs, nil
}

// Run steps until the run stops; a cancelled ctx stops it with reason "cancelled".
func (s *Session) Run(ctx context.Context) ([]*Event, error) {
	var evs []*Event
	for !s.Done() {
		ev, err := s.Step(ctx)
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
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
	// cache must hold positions 0..keep-2, then re-run position keep-1
	if err := s.kv.Truncate(min(s.kv.Len, keep-1)); err != nil {
		return nil, err
	}
	s.ids = s.ids[:keep]
	s.gen = s.gen[:len(s.gen)-n]
	start := time.Now()
	logits, err := s.m.Forward(s.st, s.kv, s.ids[keep-1:keep], nil)
	if err != nil {
		return nil, err
	}
	s.logits = append(s.logits[:0], logits...)
	s.logitPos = keep - 1
	// rebuild the generated text and timings
	s.dec = NewStreamDecoder(s.m.Tokenizer, s.ids[s.nPrompt-1])
	s.text.Reset()
	for _, id := range s.gen {
		s.text.WriteString(s.dec.Add(id))
	}
	if len(s.gen) == 0 {
		s.timings.ITLMs = nil
	} else if len(s.timings.ITLMs) >= len(s.gen) {
		s.timings.ITLMs = s.timings.ITLMs[:len(s.gen)-1]
	}
	s.stopped, s.pending, s.forced = nil, pendingStop{}, -1
	s.stepMs = msf(time.Since(start))
	s.next = StageLogits
	ev := &Event{Stage: StageLogits}
	ev.Logits = s.logitsStage(true)
	s.next = StageSample
	s.seq++
	ev.Seq, ev.Next = s.seq, s.next
	return ev, nil
}

// TokenCount is how often a token was drawn.
type TokenCount struct {
	ID    int     `json:"id"`
	Piece string  `json:"token"`
	Text  string  `json:"text"`
	Count int     `json:"count"`
	Prob  float32 `json:"prob_kept"` // its sampling probability, for comparison
}

// MaxSampleMany bounds SampleMany's n.
const MaxSampleMany = 10000

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
		s.dist = NewDistribution(s.logits, s.cfg.Sampling)
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
