package session

// events.go: what a session tells its watcher — the stages, the stop
// reasons and the event each stage produces, field by field (the websocket
// protocol sends these as they are).

import (
	"math"
	"strconv"
	"sync"

	"github.com/inferscope/inferscope/engine/tokenizer"
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

// TokenizeInfo: the prompt as tokens.
type TokenizeInfo struct {
	Text         string            `json:"text"` // what was tokenized (the rendered chat, in chat mode)
	Tokens       []tokenizer.Token `json:"tokens"`
	Count        int               `json:"count"`
	AddedByApp   int               `json:"added_by_app"` // BOS and chat-template tokens
	ContextUsed  int               `json:"context_used"`
	ContextLimit int               `json:"context_limit"`
	Chat         bool              `json:"chat"`
	ChatStyle    string            `json:"chat_style,omitempty"`
	DurationMs   float64           `json:"duration_ms"`
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
	Dim        int             `json:"dim"`
	Positions  []EmbedPosition `json:"positions"`
	Method     string          `json:"method"` // how position enters: learned vector or RoPE
	DurationMs float64         `json:"duration_ms"`
}

// LayerTrace is one block's output for the positions of one pass.
type LayerTrace struct {
	Layer        int         `json:"layer"`
	ResidualNorm []float32   `json:"residual_norm"` // per position in the pass
	Attn         []Compact   `json:"attn"`          // [head][key position] for the pass's last position
	AttnAll      [][]Compact `json:"attn_all,omitempty"`
	// MLPNorm is the length of the MLP's inner activations per position in
	// the pass (how strongly the block's neurons fire).
	MLPNorm []float32 `json:"mlp_norm,omitempty"`
}

// Compact is a float vector that marshals to JSON with 4 decimals (trailing
// zeros dropped): attention weights lie in [0,1] and are drawn as colors,
// and full precision would more than double the bytes of every decode
// event (measured: see the README's protocol section).
type Compact []float32

// MarshalJSON implements json.Marshaler.
func (c Compact) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 2+7*len(c))), nil
}

// appendJSON appends c as MarshalJSON writes it.
func (c Compact) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFixed4(b, v)
	}
	return append(b, ']')
}

// appendFixed4 appends v with 4 decimals, trailing zeros (and a trailing
// point) dropped, −0 as 0, and a non-finite value as null: what
// strconv.AppendFloat(b, v, 'f', 4, 32) writes, trimmed. v·10⁴ is exact in
// float64 (24 significant bits times 10⁴ < 2¹⁴ need at most 38), so
// rounding it half to even is the decimal rounding strconv does; only
// values too large for that integer path go through strconv.
func appendFixed4(b []byte, v float32) []byte {
	y := float64(v) * 1e4
	if !(y > -1<<53 && y < 1<<53) { // also NaN and ±Inf
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return append(b, "null"...)
		}
		return appendFixed4Slow(b, v)
	}
	n := int64(math.RoundToEven(y))
	if n >= 0 && n <= 1e4 { // [0, 1]: attention weights, by table
		fixed4Once.Do(buildFixed4)
		e := &fixed4Table[n]
		return append(b, e.s[:e.n]...)
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	if ip := n / 1e4; ip < 10 {
		b = append(b, byte('0'+ip))
	} else {
		b = strconv.AppendInt(b, ip, 10)
	}
	fr := n % 1e4
	if fr == 0 {
		return b
	}
	d1, d2, d3, d4 := byte(fr/1000), byte(fr/100%10), byte(fr/10%10), byte(fr%10)
	switch {
	case d4 != 0:
		return append(b, '.', '0'+d1, '0'+d2, '0'+d3, '0'+d4)
	case d3 != 0:
		return append(b, '.', '0'+d1, '0'+d2, '0'+d3)
	case d2 != 0:
		return append(b, '.', '0'+d1, '0'+d2)
	default:
		return append(b, '.', '0'+d1)
	}
}

// fixed4Table holds appendFixed4's text for n/10⁴, n = 0…10⁴.
var (
	fixed4Table [1e4 + 1]struct {
		s [6]byte
		n uint8
	}
	fixed4Once sync.Once
)

func buildFixed4() {
	for n := range fixed4Table {
		var b []byte
		if n == 0 {
			b = []byte{'0'}
		} else {
			b = strconv.AppendInt(nil, int64(n/1e4), 10)
			if fr := n % 1e4; fr != 0 {
				d := []byte{'.', byte('0' + fr/1000), byte('0' + fr/100%10), byte('0' + fr/10%10), byte('0' + fr%10)}
				for d[len(d)-1] == '0' {
					d = d[:len(d)-1]
				}
				b = append(b, d...)
			}
		}
		e := &fixed4Table[n]
		e.n = uint8(copy(e.s[:], b))
	}
}

// appendFixed4Slow is appendFixed4 by strconv (the reference it is tested
// against).
func appendFixed4Slow(b []byte, v float32) []byte {
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
	return b
}

// PrefillInfo: the whole prompt through every layer in one batched pass.
type PrefillInfo struct {
	Positions    int          `json:"positions"`
	Layers       []LayerTrace `json:"layers"`
	DurationMs   float64      `json:"duration_ms"`
	TokensPerSec float64      `json:"tokens_per_s"`
	// ModelMs is the forward pass alone; InspectMs the time spent copying
	// per-layer traces for the lab (DurationMs is both).
	ModelMs   float64 `json:"model_ms"`
	InspectMs float64 `json:"inspect_ms"`
	// QueueMs is how long the prefill waited for the server's prefill slot
	// (0 when it ran alone).
	QueueMs float64      `json:"queue_ms"`
	Lens    *LensReading `json:"lens,omitempty"` // with Config.Lens: the logit lens at the last prompt position
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
	Chain       []CutStep      `json:"chain,omitempty"` // the sampler chain as applied, in order
	Entropy1    float64        `json:"entropy"`
	EntropyT    float64        `json:"entropy_t"`
	Min         float32        `json:"min"`
	Max         float32        `json:"max"`
	Mean        float32        `json:"mean"`
	Histogram   Histogram      `json:"histogram"`
	Full        []float32      `json:"-"` // the raw logits, a view valid until the session's next forward pass (copy to keep; Session.CurrentLogits copies)
	DurationMs  float64        `json:"duration_ms"`
	Recomputed  bool           `json:"recomputed,omitempty"` // after a rewind
	FromPrefill bool           `json:"from_prefill"`
	Lens        *LensReading   `json:"lens,omitempty"` // after a rewind, with Config.Lens: the recomputed position's logit lens
}

// CutStep is one step of the sampler chain as the logits stage applied it:
// temperature, then top-k, top-p and min-p, each cutting the sorted
// candidates the step before left (greedy is one step: the top token).
type CutStep struct {
	Rule    string     `json:"rule"`              // "temperature", "top-k", "top-p", "min-p" or "greedy"
	On      bool       `json:"on"`                // the setting acts (temperature 1, top-k 0, top-p 1 and min-p 0 do not)
	Kept    int        `json:"kept"`              // candidates left after it
	Mass    float64    `json:"mass"`              // their probability after temperature
	Removed *TokenProb `json:"removed,omitempty"` // the likeliest candidate it removed
}

// Histogram counts values in equal-width bins from Lo to Hi.
type Histogram struct {
	Lo     float32 `json:"lo"`
	Hi     float32 `json:"hi"`
	Counts []int   `json:"counts"`
}

// NewHistogram bins every value of v into n bins over [min, max].
func NewHistogram(v []float32, n int) Histogram {
	if len(v) == 0 {
		return Histogram{Counts: make([]int, n)}
	}
	lo, hi := minMax(v)
	return newHistogramIn(v, n, lo, hi)
}

// newHistogramIn is NewHistogram of a non-empty v whose smallest and
// largest values (minMax's) are lo and hi.
func newHistogramIn(v []float32, n int, lo, hi float32) Histogram {
	h := Histogram{Counts: make([]int, n), Lo: lo, Hi: hi}
	w := (h.Hi - h.Lo) / float32(n)
	if !(w > 0) {
		h.Counts[n-1] = len(v)
		return h
	}
	// four sets of counts, so that consecutive values do not wait on one
	// another (the same counts in the end)
	var cs [4][]int
	if n <= 64 {
		var buf [4 * 64]int
		for k := range cs {
			cs[k] = buf[k*n : (k+1)*n]
		}
	} else {
		cs = [4][]int{h.Counts, h.Counts, h.Counts, h.Counts}
	}
	lo0 := h.Lo
	bin := func(x float32) int { return min(int((x-lo0)/w), n-1) }
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		cs[0][bin(x[0])]++
		cs[1][bin(x[1])]++
		cs[2][bin(x[2])]++
		cs[3][bin(x[3])]++
	}
	for ; i < len(v); i++ {
		cs[0][bin(v[i])]++
	}
	if n <= 64 {
		for b := range h.Counts {
			h.Counts[b] = cs[0][b] + cs[1][b] + cs[2][b] + cs[3][b]
		}
	}
	return h
}

// minMax is the least and the greatest value of v (NaN when v has one),
// with four running extremes so that consecutive values do not wait on
// one another; v is not empty.
func minMax(v []float32) (float32, float32) {
	lo, hi := [4]float32{v[0], v[0], v[0], v[0]}, [4]float32{v[0], v[0], v[0], v[0]}
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		lo[0], hi[0] = min(lo[0], x[0]), max(hi[0], x[0])
		lo[1], hi[1] = min(lo[1], x[1]), max(hi[1], x[1])
		lo[2], hi[2] = min(lo[2], x[2]), max(hi[2], x[2])
		lo[3], hi[3] = min(lo[3], x[3]), max(hi[3], x[3])
	}
	for ; i < len(v); i++ {
		lo[0], hi[0] = min(lo[0], v[i]), max(hi[0], v[i])
	}
	return min(lo[0], lo[1], lo[2], lo[3]), max(hi[0], hi[1], hi[2], hi[3])
}

// CDFPoint is one kept candidate on the cumulative distribution.
type CDFPoint struct {
	ID    int     `json:"id"`
	Piece string  `json:"token"`
	Text  string  `json:"text"`
	Cum   float32 `json:"cum"`
}

// CDFRank is the cumulative probability after the cut at one rank (0-based).
type CDFRank struct {
	Rank int     `json:"rank"`
	Cum  float32 `json:"cum"`
}

// SampleInfo: which token was chosen and why.
type SampleInfo struct {
	Rule   string     `json:"rule"`
	Draw   float64    `json:"draw"` // uniform random number in [0,1); -1 when none was drawn
	Forced bool       `json:"forced"`
	Chosen TokenProb  `json:"chosen"`
	CDF    []CDFPoint `json:"cdf"` // the first 64 kept candidates, or up to the chosen one
	// CDFTail continues CDF over every kept candidate without naming them:
	// up to 64 ranks beyond CDF, spaced evenly on a log scale, the last one
	// the last kept rank (its Cum is the whole kept mass, 1).
	CDFTail  []CDFRank `json:"cdf_tail,omitempty"`
	Kept     int       `json:"kept"` // how many candidates the cut kept
	Step     int       `json:"step"`
	Duration float64   `json:"duration_ms"`
}

// MemoryBudget is what the run holds in memory, in bytes.
type MemoryBudget struct {
	Weights     int64 `json:"weights"`
	KVAllocated int64 `json:"kv_allocated"`
	KVUsed      int64 `json:"kv_used"`
	Scratch     int64 `json:"scratch"`
	Total       int64 `json:"total"`
	// KVType is the cache's precision ("f32", "f16", "bf16") and
	// KVUsedF32 what its filled positions would take in float32 (the
	// memory panel's "saves").
	KVType    string `json:"kv_type"`
	KVUsedF32 int64  `json:"kv_used_f32"`
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
	DurationMs    float64      `json:"duration_ms"` // the forward pass with its trace copies (ModelMs + InspectMs)
	ModelMs       float64      `json:"model_ms"`    // the forward pass alone (for a batched step: the whole batch's pass)
	InspectMs     float64      `json:"inspect_ms"`  // copying per-layer traces for the lab
	// QueueMs is how long this step waited for its batch to start, and
	// BatchSize how many sessions' steps shared its forward pass (1: alone).
	QueueMs      float64      `json:"queue_ms"`
	BatchSize    int          `json:"batch_size"`
	BatchModelMs float64      `json:"batch_model_ms,omitempty"` // the batch's forward pass, as the scheduler timed it
	Lens         *LensReading `json:"lens,omitempty"`           // with Config.Lens: the logit lens at the new position
}

// Timings summarizes compute time per stage (time spent waiting for a
// student to press "next" is not counted). Model time (forward passes) and
// inspection time (distribution, top list, histogram, layer traces: what
// the lab shows, not what a server would compute) are also totalled apart.
type Timings struct {
	TokenizeMs     float64   `json:"tokenize_ms"`
	EmbedMs        float64   `json:"embed_ms"`
	PrefillMs      float64   `json:"prefill_ms"`
	FirstDecodeMs  float64   `json:"first_decode_ms"`    // logits + sample of the first token
	TTFTMs         float64   `json:"ttft_ms"`            // queue + tokenize + embed + prefill + first decode
	QueueMs        float64   `json:"queue_ms"`           // waiting for the server's scheduler (prefill slot, decode batches)
	ModelMs        float64   `json:"model_ms"`           // forward passes: the model's compute
	InspectMs      float64   `json:"inspect_ms"`         // building the lab's views of each stage
	ITLModelMs     []float64 `json:"itl_model_ms"`       // per later token: its forward pass alone
	ModelTokPerS   float64   `json:"model_tokens_per_s"` // decode tokens per second of forward time alone
	ITLMs          []float64 `json:"itl_ms"`             // per later token: append (forward) + logits + sample
	ITLp50Ms       float64   `json:"itl_p50_ms"`
	PrefillTokPerS float64   `json:"prefill_tokens_per_s"`
	OutputTokPerS  float64   `json:"output_tokens_per_s"`
}

// StopInfo: why the run ended, and proof the weights did not change.
type StopInfo struct {
	Reason         string  `json:"reason"`
	Detail         string  `json:"detail"`
	Generated      int     `json:"generated"`
	Text           string  `json:"text"` // the generated text
	Timings        Timings `json:"timings"`
	ChecksumBefore string  `json:"checksum_before"`
	ChecksumAfter  string  `json:"checksum_after"`
	// ChecksumAgeMs is how long before this stop the after-hash began: a
	// hash of the weights begun within WeightsRecheckEvery (or after the
	// run's last forward pass) is shared by every run that stops meanwhile.
	ChecksumAgeMs    float64 `json:"checksum_age_ms"`
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
	// Thin is never set by the session: a watcher that forwards events may
	// send a copy without the heavy detail (layer traces, lens, most of the
	// top list, the CDF) and mark it so.
	Thin bool `json:"thin,omitempty"`
	// partial: made while DeferLens was on, the event has only what a thin
	// copy keeps (Partial); FillLens completes it.
	partial bool
}

// Partial reports whether ev was made with only what a thin copy of it
// keeps (DeferLens) and not completed since (FillLens): a watcher that
// forwards it must send it thin, or complete it first. A thin copy is
// never partial.
func (ev *Event) Partial() bool { return ev.partial && !ev.Thin }

// TokenCount is how often a token was drawn.
type TokenCount struct {
	ID    int     `json:"id"`
	Piece string  `json:"token"`
	Text  string  `json:"text"`
	Count int     `json:"count"`
	Prob  float32 `json:"prob_kept"` // its sampling probability, for comparison
}
