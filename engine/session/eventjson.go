package session

// eventjson.go: an event's JSON, appended in one pass — the bytes
// json.Marshal writes for it, without reflection and without
// encoding/json's second pass over every value a Marshaler returns (it
// validates and compacts each Compact attention array and each lens
// probability again, and the decode events that carry layer traces are
// mostly such arrays). The stages a run passes once per token (logits,
// sample, append) and prefill are written here field by field; tokenize,
// embed and stop, once a run, are handed to json.Marshal whole (their
// bytes are the same wherever they sit). eventjson_test.go checks every
// field of every type against json.Marshal, with random values.

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends e's JSON encoding to b: byte for byte what
// json.Marshal(e) returns, and the same error when it fails (a non-finite
// number is a *json.UnsupportedValueError).
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	if e == nil {
		return append(b, "null"...), nil
	}
	w := jsonWriter{b: slices.Grow(b, e.sizeHint())}
	w.raw(`{"seq":`)
	w.int(e.Seq)
	w.raw(`,"stage":`)
	w.str(string(e.Stage))
	w.raw(`,"next":`)
	w.str(string(e.Next))
	if e.Tokenize != nil {
		w.raw(`,"tokenize":`)
		w.marshal(e.Tokenize)
	}
	if e.Embed != nil {
		w.raw(`,"embed":`)
		w.marshal(e.Embed)
	}
	if e.Prefill != nil {
		w.raw(`,"prefill":`)
		w.prefill(e.Prefill)
	}
	if e.Logits != nil {
		w.raw(`,"logits":`)
		w.logits(e.Logits)
	}
	if e.Sample != nil {
		w.raw(`,"sample":`)
		w.sample(e.Sample)
	}
	if e.Append != nil {
		w.raw(`,"append":`)
		w.append(e.Append)
	}
	if e.Stop != nil {
		w.raw(`,"stop":`)
		w.marshal(e.Stop)
	}
	if e.Thin {
		w.raw(`,"thin":true`)
	}
	w.raw(`}`)
	if w.err != nil {
		return b, w.err
	}
	return w.b, nil
}

// sizeHint is about how many bytes AppendJSON writes for e (a decode
// step's layer traces are most of it), so the buffer grows once.
func (e *Event) sizeHint() int {
	n := 1024
	var ls []LayerTrace
	switch {
	case e.Append != nil:
		ls = e.Append.LayerTraces
	case e.Prefill != nil:
		ls = e.Prefill.Layers
	case e.Sample != nil:
		n += 96*len(e.Sample.CDF) + 32*len(e.Sample.CDFTail)
	case e.Logits != nil:
		n += 160*len(e.Logits.Top) + 8*len(e.Logits.Histogram.Counts)
	}
	for i := range ls {
		l := &ls[i]
		n += 64 + 12*(len(l.ResidualNorm)+len(l.MLPNorm))
		for _, c := range l.Attn {
			n += 2 + 7*len(c)
		}
		for _, heads := range l.AttnAll {
			for _, c := range heads {
				n += 2 + 7*len(c)
			}
		}
	}
	return n
}

// jsonWriter appends JSON to b; the first error sticks (later writes are
// wasted, not wrong: AppendJSON then returns only the error).
type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) raw(s string)  { w.b = append(w.b, s...) }
func (w *jsonWriter) int(n int)     { w.b = strconv.AppendInt(w.b, int64(n), 10) }
func (w *jsonWriter) int64(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }
func (w *jsonWriter) str(s string)  { w.b = appendJSONString(w.b, s) }
func (w *jsonWriter) bool(v bool)   { w.b = strconv.AppendBool(w.b, v) }

func (w *jsonWriter) f64(f float64) { w.float(f, 64) }
func (w *jsonWriter) f32(f float32) { w.float(float64(f), 32) }

// float is encoding/json's float encoder: ES6 number formatting, shortest
// digits, exponent form below 1e-6 and from 1e21 on (cut-offs compared in
// the value's own precision); a non-finite value is an error.
func (w *jsonWriter) float(f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if w.err == nil {
			v := reflect.ValueOf(f)
			if bits == 32 {
				v = reflect.ValueOf(float32(f))
			}
			w.err = &json.UnsupportedValueError{Value: v, Str: strconv.FormatFloat(f, 'g', -1, bits)}
		}
		w.raw("null")
		return
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fmt = 'e'
		}
	}
	b := strconv.AppendFloat(w.b, f, fmt, -1, bits)
	if fmt == 'e' { // e-09 → e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	w.b = b
}

// f32s is a []float32 (nil is null).
func (w *jsonWriter) f32s(v []float32) {
	if v == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, x := range v {
		if i > 0 {
			w.raw(",")
		}
		w.f32(x)
	}
	w.raw("]")
}

// marshal appends json.Marshal(v).
func (w *jsonWriter) marshal(v any) {
	p, err := json.Marshal(v)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.b = append(w.b, p...)
}

func (w *jsonWriter) prefill(p *PrefillInfo) {
	w.raw(`{"positions":`)
	w.int(p.Positions)
	w.raw(`,"layers":`)
	w.layers(p.Layers)
	w.raw(`,"duration_ms":`)
	w.f64(p.DurationMs)
	w.raw(`,"tokens_per_s":`)
	w.f64(p.TokensPerSec)
	w.raw(`,"model_ms":`)
	w.f64(p.ModelMs)
	w.raw(`,"inspect_ms":`)
	w.f64(p.InspectMs)
	w.raw(`,"queue_ms":`)
	w.f64(p.QueueMs)
	if p.Lens != nil {
		w.raw(`,"lens":`)
		w.lens(p.Lens)
	}
	w.raw(`}`)
}

func (w *jsonWriter) logits(l *LogitsInfo) {
	w.raw(`{"pos":`)
	w.int(l.Pos)
	w.raw(`,"vocab":`)
	w.int(l.Vocab)
	w.raw(`,"top":`)
	if l.Top == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i := range l.Top {
			if i > 0 {
				w.raw(",")
			}
			w.tokenProb(&l.Top[i])
		}
		w.raw("]")
	}
	p := &l.Params
	w.raw(`,"params":{"temperature":`)
	w.f64(p.Temperature)
	w.raw(`,"top_k":`)
	w.int(p.TopK)
	w.raw(`,"top_p":`)
	w.f64(p.TopP)
	w.raw(`,"min_p":`)
	w.f64(p.MinP)
	w.raw(`,"seed":`)
	w.b = strconv.AppendUint(w.b, p.Seed, 10)
	w.raw(`},"after_top_k":`)
	w.int(l.AfterTopK)
	w.raw(`,"after_top_p":`)
	w.int(l.AfterTopP)
	w.raw(`,"kept":`)
	w.int(l.Kept)
	w.raw(`,"kept_mass":`)
	w.f64(l.KeptMass)
	if len(l.Chain) > 0 {
		w.raw(`,"chain":[`)
		for i := range l.Chain {
			c := &l.Chain[i]
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"rule":`)
			w.str(c.Rule)
			w.raw(`,"on":`)
			w.bool(c.On)
			w.raw(`,"kept":`)
			w.int(c.Kept)
			w.raw(`,"mass":`)
			w.f64(c.Mass)
			if c.Removed != nil {
				w.raw(`,"removed":`)
				w.tokenProb(c.Removed)
			}
			w.raw("}")
		}
		w.raw("]")
	}
	w.raw(`,"entropy":`)
	w.f64(l.Entropy1)
	w.raw(`,"entropy_t":`)
	w.f64(l.EntropyT)
	w.raw(`,"min":`)
	w.f32(l.Min)
	w.raw(`,"max":`)
	w.f32(l.Max)
	w.raw(`,"mean":`)
	w.f32(l.Mean)
	w.raw(`,"histogram":{"lo":`)
	w.f32(l.Histogram.Lo)
	w.raw(`,"hi":`)
	w.f32(l.Histogram.Hi)
	w.raw(`,"counts":`)
	if l.Histogram.Counts == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, c := range l.Histogram.Counts {
			if i > 0 {
				w.raw(",")
			}
			w.int(c)
		}
		w.raw("]")
	}
	w.raw(`},"duration_ms":`)
	w.f64(l.DurationMs)
	if l.Recomputed {
		w.raw(`,"recomputed":true`)
	}
	w.raw(`,"from_prefill":`)
	w.bool(l.FromPrefill)
	if l.Lens != nil {
		w.raw(`,"lens":`)
		w.lens(l.Lens)
	}
	w.raw("}")
}

func (w *jsonWriter) tokenProb(t *TokenProb) {
	w.raw(`{"id":`)
	w.int(t.ID)
	w.raw(`,"token":`)
	w.str(t.Piece)
	w.raw(`,"text":`)
	w.str(t.Text)
	w.raw(`,"logit":`)
	w.f32(t.Logit)
	w.raw(`,"prob":`)
	w.f32(t.Prob)
	w.raw(`,"prob_t":`)
	w.f32(t.ProbT)
	w.raw(`,"prob_kept":`)
	w.f32(t.ProbKept)
	w.raw(`,"kept":`)
	w.bool(t.Kept)
	w.raw(`,"rank":`)
	w.int(t.Rank)
	w.raw("}")
}

func (w *jsonWriter) sample(s *SampleInfo) {
	w.raw(`{"rule":`)
	w.str(s.Rule)
	w.raw(`,"draw":`)
	w.f64(s.Draw)
	w.raw(`,"forced":`)
	w.bool(s.Forced)
	w.raw(`,"chosen":`)
	w.tokenProb(&s.Chosen)
	w.raw(`,"cdf":`)
	if s.CDF == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, c := range s.CDF {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"id":`)
			w.int(c.ID)
			w.raw(`,"token":`)
			w.str(c.Piece)
			w.raw(`,"text":`)
			w.str(c.Text)
			w.raw(`,"cum":`)
			w.f32(c.Cum)
			w.raw("}")
		}
		w.raw("]")
	}
	if len(s.CDFTail) > 0 {
		w.raw(`,"cdf_tail":[`)
		for i, c := range s.CDFTail {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"rank":`)
			w.int(c.Rank)
			w.raw(`,"cum":`)
			w.f32(c.Cum)
			w.raw("}")
		}
		w.raw("]")
	}
	w.raw(`,"kept":`)
	w.int(s.Kept)
	w.raw(`,"step":`)
	w.int(s.Step)
	w.raw(`,"duration_ms":`)
	w.f64(s.Duration)
	w.raw("}")
}

func (w *jsonWriter) append(a *AppendInfo) {
	w.raw(`{"id":`)
	w.int(a.ID)
	w.raw(`,"piece":`)
	w.str(a.Piece)
	w.raw(`,"text":`)
	w.str(a.Text)
	w.raw(`,"step":`)
	w.int(a.Step)
	w.raw(`,"pos":`)
	w.int(a.Pos)
	w.raw(`,"forwarded":`)
	w.bool(a.Forwarded)
	w.raw(`,"cache_len":`)
	w.int(a.CacheLen)
	w.raw(`,"cache_cap":`)
	w.int(a.CacheCap)
	w.raw(`,"layers":`)
	w.int(a.Layers)
	w.raw(`,"kv_heads":`)
	w.int(a.KVHeads)
	w.raw(`,"head_dim":`)
	w.int(a.HeadDim)
	w.raw(`,"bytes_per_token":`)
	w.int64(a.BytesPerToken)
	w.raw(`,"bytes_used":`)
	w.int64(a.BytesUsed)
	m := &a.Memory
	w.raw(`,"memory":{"weights":`)
	w.int64(m.Weights)
	w.raw(`,"kv_allocated":`)
	w.int64(m.KVAllocated)
	w.raw(`,"kv_used":`)
	w.int64(m.KVUsed)
	w.raw(`,"scratch":`)
	w.int64(m.Scratch)
	w.raw(`,"total":`)
	w.int64(m.Total)
	w.raw(`,"kv_type":`)
	w.str(m.KVType)
	w.raw(`,"kv_used_f32":`)
	w.int64(m.KVUsedF32)
	w.raw(`}`)
	if len(a.LayerTraces) > 0 {
		w.raw(`,"layer_traces":`)
		w.layers(a.LayerTraces)
	}
	w.raw(`,"duration_ms":`)
	w.f64(a.DurationMs)
	w.raw(`,"model_ms":`)
	w.f64(a.ModelMs)
	w.raw(`,"inspect_ms":`)
	w.f64(a.InspectMs)
	w.raw(`,"queue_ms":`)
	w.f64(a.QueueMs)
	w.raw(`,"batch_size":`)
	w.int(a.BatchSize)
	if a.BatchModelMs != 0 {
		w.raw(`,"batch_model_ms":`)
		w.f64(a.BatchModelMs)
	}
	if a.Lens != nil {
		w.raw(`,"lens":`)
		w.lens(a.Lens)
	}
	w.raw(`}`)
}

// layers is a []LayerTrace (nil is null).
func (w *jsonWriter) layers(ls []LayerTrace) {
	if ls == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i := range ls {
		if i > 0 {
			w.raw(",")
		}
		l := &ls[i]
		w.raw(`{"layer":`)
		w.int(l.Layer)
		w.raw(`,"residual_norm":`)
		w.f32s(l.ResidualNorm)
		w.raw(`,"attn":`)
		w.compacts(l.Attn)
		if len(l.AttnAll) > 0 {
			w.raw(`,"attn_all":[`)
			for t, heads := range l.AttnAll {
				if t > 0 {
					w.raw(",")
				}
				w.compacts(heads)
			}
			w.raw("]")
		}
		if len(l.MLPNorm) > 0 {
			w.raw(`,"mlp_norm":`)
			w.f32s(l.MLPNorm)
		}
		w.raw("}")
	}
	w.raw("]")
}

// compacts is a []Compact (nil is null; a nil Compact is [], as its
// MarshalJSON writes).
func (w *jsonWriter) compacts(cs []Compact) {
	if cs == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, c := range cs {
		if i > 0 {
			w.raw(",")
		}
		w.b = c.appendJSON(w.b)
	}
	w.raw("]")
}

func (w *jsonWriter) lens(r *LensReading) {
	w.raw(`{"pos":`)
	w.int(r.Pos)
	w.raw(`,"layers":`)
	if r.Layers == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, l := range r.Layers {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"layer":`)
			w.int(l.Layer)
			w.raw(`,"top":`)
			if l.Top == nil {
				w.raw("null")
			} else {
				w.raw("[")
				for j, t := range l.Top {
					if j > 0 {
						w.raw(",")
					}
					w.raw(`{"id":`)
					w.int(t.ID)
					w.raw(`,"text":`)
					w.str(t.Text)
					if t.Piece != "" {
						w.raw(`,"token":`)
						w.str(t.Piece)
					}
					w.raw(`,"prob":`)
					w.b = t.Prob.appendJSON(w.b)
					w.raw("}")
				}
				w.raw("]")
			}
			w.raw("}")
		}
		w.raw("]")
	}
	w.raw(`,"note":`)
	w.str(r.Note)
	w.raw("}")
}

// appendJSONString is encoding/json's string encoding with HTML escaping
// (json.Marshal's): <, > and & as \u003c…, control bytes escaped, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
