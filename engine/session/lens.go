package session

// lens.go: the logit lens as the lab shows it — for the current position,
// the top tokens (with probabilities) that the final norm and the
// unembedding read out of the residual stream after every layer — and the
// per-pass values the model view can inspect (residual vectors, MLP
// activations).

import (
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/inferscope/inferscope/engine"
)

// LensTopK is how many tokens each layer's reading lists.
const LensTopK = 5

// LensNote says what a logit-lens reading is; the UI shows it beside the
// readings.
const LensNote = "a reading of the residual stream after each layer through the final norm and the unembedding, as if the model stopped there; " +
	"only the last layer's reading is the model's output"

// Prob is a probability that marshals with 4 significant digits.
type Prob float32

// MarshalJSON implements json.Marshaler.
func (p Prob) MarshalJSON() ([]byte, error) {
	return p.appendJSON(nil), nil
}

// appendJSON appends p as MarshalJSON writes it.
func (p Prob) appendJSON(b []byte) []byte {
	v := float64(p)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', 4, 32)
}

// LensToken is one token of a layer's reading.
type LensToken struct {
	ID    int    `json:"id"`
	Text  string `json:"text"`
	Piece string `json:"token,omitempty"` // the vocabulary piece, only when Text is not whole characters
	Prob  Prob   `json:"prob"`            // softmax of that layer's reading (T=1)
}

// LensLayer is one layer's reading.
type LensLayer struct {
	Layer int         `json:"layer"`
	Top   []LensToken `json:"top"`
}

// LensReading is the logit lens at one position, layer by layer (the last
// layer's reading equals the model's logits).
type LensReading struct {
	Pos    int         `json:"pos"`
	Layers []LensLayer `json:"layers"`
	Note   string      `json:"note"`
}

// passView keeps what the last forward pass computed at its last position,
// for Inspect: the vector that entered layer 0, the residual after every
// block and every block's MLP activations.
type passView struct {
	pos   int
	valid bool
	// deferred: the pass captured its lens without reading it (DeferLens);
	// FillLens reads it while it is still the last pass.
	deferred bool
	in       []float32 // [dim]
	resid    []float32 // [layers][dim]
	mlp      []float32 // [layers][hidden]
	att      attnView  // queries and attention weights (inspect_attention.go)
	lens     *LensReading
}

// viewHooks extends h (which may be nil) to keep the pass's last position
// for Inspect and, when the run asked for it, to read the logit lens (or,
// with deferLens, to capture it for FillLens).
func (s *Session) viewHooks(h *engine.Hooks, deferLens bool) *engine.Hooks {
	c := s.m.Config
	if h == nil {
		h = &engine.Hooks{}
	}
	v := &s.view
	if len(v.resid) != c.NLayers*c.Dim {
		v.in = make([]float32, c.Dim)
		v.resid = make([]float32, c.NLayers*c.Dim)
		v.mlp = make([]float32, c.NLayers*c.HiddenDim)
	}
	v.valid, v.lens, v.deferred = false, nil, false
	h.Embedded = func(e engine.EmbedInfo) {
		v.pos = e.Pos0 + len(e.Tokens) - 1
		copy(v.in, e.Sum[len(e.Sum)-1])
	}
	inner := h.LayerDone
	h.LayerDone = func(l engine.LayerInfo) {
		T := len(l.Hidden)
		copy(v.resid[l.Layer*c.Dim:(l.Layer+1)*c.Dim], l.Hidden[T-1])
		copy(v.mlp[l.Layer*c.HiddenDim:(l.Layer+1)*c.HiddenDim], l.MLP[T-1])
		v.att.keep(c, l)
		if l.Layer == c.NLayers-1 {
			v.valid = true
		}
		if inner != nil {
			inner(l)
		}
	}
	if s.cfg.Lens {
		if s.lens == nil {
			s.lens = &engine.LogitLens{}
		}
		s.lens.Done = func(li engine.LensInfo) { v.lens = s.lensReading(li) }
		s.lens.Defer, v.deferred = deferLens, deferLens
		h.Lens = s.lens
	}
	return h
}

// DeferLens, with on, has the stages that follow make their events as a
// stream that sends them thin (web's thin.go) needs them, paying only for
// what it shows: a decode step's forward pass captures the logit lens
// (Config.Lens) without reading it and keeps no layer traces beyond the
// Inspect view's; a logits event lists the first LightTopN candidates and
// the histogram's range without its counts; a sample event has no
// cumulative distribution. Such events are Partial, and FillLens completes
// one while its stage's state is still at hand (the run's last pass and
// the distribution of the last two positions), bit for bit as an eager
// session makes it. Off (the default) makes every event whole.
func (s *Session) DeferLens(on bool) { s.deferLens = on }

// LightTopN is how many candidates a Partial logits event lists.
const LightTopN = 8

// FillLens completes ev where it is Partial (DeferLens) and its state is
// still at hand: an append event's deferred lens and its layer traces
// (while its pass is still the session's last), a logits event's top list
// and histogram, a sample event's cumulative distribution (while the
// distribution of its position is one of the last two). It reports
// whether it added anything; any other event is left as it is.
func (s *Session) FillLens(ev *Event) bool {
	if ev == nil || ev.Thin {
		return false
	}
	filled := false
	if ev.partial {
		filled = s.complete(ev)
	}
	v := &s.view
	if ev.Append == nil || !ev.Append.Forwarded || ev.Append.Lens != nil ||
		!v.deferred || !v.valid || v.pos != ev.Append.Pos || s.logitPos != v.pos {
		return filled
	}
	if !s.lens.Read(s.m, v.pos, s.logits) {
		return filled
	}
	v.deferred = false
	ev.Append.Lens = v.lens
	return true
}

// complete gives a Partial event its heavy fields where their state is
// still at hand, and reports whether it did.
func (s *Session) complete(ev *Event) bool {
	done := false
	switch {
	case ev.Logits != nil:
		if d, logits := s.distAt(ev.Logits.Pos); d != nil {
			if len(d.Sorted) < min(s.cfg.TopN, len(logits)) {
				// a thin greedy step ranked only the first LightTopN
				// (logitsStage): rank the list again, the same bits
				d = newDistributionTop(logits, d.Params, s.cfg.TopN, nil)
			}
			ev.Logits.Top = s.topList(d, s.cfg.TopN)
			ev.Logits.Histogram = NewHistogram(logits, HistogramBins)
			done = true
		}
	case ev.Sample != nil:
		if d, _ := s.distAt(s.nPrompt - 1 + ev.Sample.Step); d != nil {
			ev.Sample.CDF, ev.Sample.CDFTail = s.cdf(d, ev.Sample.Chosen.Rank)
			done = true
		}
	case ev.Append != nil:
		if v := &s.view; v.valid && v.pos == ev.Append.Pos {
			ev.Append.LayerTraces = s.viewTraces()
			done = true
		}
	}
	if done {
		ev.partial = false
	}
	return done
}

// distAt is the distribution over the logits of position pos and those
// logits, while they are the current step's or the one before; nil after.
func (s *Session) distAt(pos int) (*Distribution, []float32) {
	switch {
	case s.dist != nil && s.logitPos == pos:
		return s.dist, s.logits
	case s.prevDist != nil && s.prevPos == pos:
		return s.prevDist, s.prevLogits
	}
	return nil, nil
}

// viewTraces are the layer traces of the last pass's last position, from
// the Inspect view: what traceHooks reports for a decode step.
func (s *Session) viewTraces() []LayerTrace {
	c, v := s.m.Config, &s.view
	out := make([]LayerTrace, c.NLayers)
	for l := range out {
		n := 2
		for h := range c.NHeads {
			n += len(v.att.w[l*c.NHeads+h])
		}
		buf := make([]float32, n)
		lt := LayerTrace{Layer: l, Attn: make([]Compact, c.NHeads)}
		lt.ResidualNorm, lt.MLPNorm, buf = buf[0:1:1], buf[1:2:2], buf[2:]
		lt.ResidualNorm[0] = norm(v.resid[l*c.Dim : (l+1)*c.Dim])
		lt.MLPNorm[0] = norm(v.mlp[l*c.HiddenDim : (l+1)*c.HiddenDim])
		for h := range lt.Attn {
			w := v.att.w[l*c.NHeads+h]
			lt.Attn[h], buf = Compact(buf[:len(w):len(w)]), buf[len(w):]
			copy(lt.Attn[h], w)
		}
		out[l] = lt
	}
	return out
}

// lensReading turns each layer's scores into its top tokens with softmax
// probabilities.
func (s *Session) lensReading(li engine.LensInfo) *LensReading {
	r := &LensReading{Pos: li.Pos, Note: LensNote, Layers: make([]LensLayer, len(li.Logits))}
	for l, logits := range li.Logits {
		top := topK(logits, LensTopK)
		mx := logits[top[0]]
		var sum float64
		for _, x := range logits {
			sum += math.Exp(float64(x - mx))
		}
		ll := LensLayer{Layer: l, Top: make([]LensToken, len(top))}
		for i, id := range top {
			text := string(s.m.Tokenizer.TokenBytes(id))
			t := LensToken{ID: id, Text: text, Prob: Prob(math.Exp(float64(logits[id]-mx)) / sum)}
			if text == "" || !utf8.ValidString(text) {
				t.Piece = s.m.Tokenizer.Piece(id)
			}
			ll.Top[i] = t
		}
		r.Layers[l] = ll
	}
	return r
}

// topK returns the indices of the k largest values, largest first (ties:
// lower index first).
func topK(v []float32, k int) []int {
	k = min(k, len(v))
	out := make([]int, 0, k+1)
	for i, x := range v {
		if len(out) == k && x <= v[out[k-1]] {
			continue
		}
		j := sort.Search(len(out), func(j int) bool { return v[out[j]] < x })
		out = append(out, 0)
		copy(out[j+1:], out[j:])
		out[j] = i
		if len(out) > k {
			out = out[:k]
		}
	}
	return out
}
