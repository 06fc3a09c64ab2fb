package session_test

// eventjson_test.go: Event.AppendJSON writes byte for byte what
// json.Marshal writes — for the events of real runs on the default model
// (every stage, with and without traces, lens and all attention), and for
// events whose every field, at any depth, holds random values (so a field
// added to an event type and not to the encoder fails here) — and the
// same error for a non-finite number. Compact's fast 4-decimal formatting
// equals strconv's.

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
)

// checkSame fails unless AppendJSON and json.Marshal agree on e.
func checkSame(t *testing.T, label string, e *session.Event) {
	t.Helper()
	want, werr := json.Marshal(e)
	prefix := []byte(`prefix:`)
	got, gerr := e.AppendJSON(bytes.Clone(prefix))
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: error %v, json.Marshal %v", label, gerr, werr)
	}
	if werr != nil {
		var uv *json.UnsupportedValueError
		if !errorsAs(gerr, &uv) {
			t.Fatalf("%s: error %T, want *json.UnsupportedValueError", label, gerr)
		}
		return
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%s: the bytes before were changed", label)
	}
	if got = got[len(prefix):]; !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: differs at byte %d:\n got  …%s\n want …%s", label, i, clip(got, i), clip(want, i))
	}
}

func errorsAs(err error, target **json.UnsupportedValueError) bool {
	uv, ok := err.(*json.UnsupportedValueError)
	*target = uv
	return ok
}

func clip(b []byte, i int) string {
	lo, hi := max(i-60, 0), min(i+60, len(b))
	return string(b[lo:hi])
}

func TestEventJSONEqualsMarshalOnRealRuns(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	no := false
	for name, cfg := range map[string]session.Config{
		"default":       {Prompt: "Once upon a time, Lily <b>&</b> \"Tom\"", Sampling: session.DefaultSampling(), MaxNewTokens: 12},
		"lens":          {Prompt: "The dog ran", Sampling: session.DefaultSampling(), MaxNewTokens: 8, Lens: true},
		"all attention": {Prompt: "The cat sat on the mat", Sampling: session.SamplingParams{Temperature: 1.2, TopK: 30, TopP: 0.95, Seed: 7}, MaxNewTokens: 6, AllAttention: true, Lens: true},
		"greedy text":   {Prompt: "Hi", Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 10, TextOnly: true, StopAtEOS: &no},
		"no cache":      {Prompt: "Once", Sampling: session.DefaultSampling(), MaxNewTokens: 5, NoCache: true},
	} {
		s, err := session.New(m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		_, err = s.Advance(context.Background(), session.UntilStop, func(e *session.Event) bool {
			checkSame(t, name+" "+string(e.Stage), e)
			n++
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if n < 10 {
			t.Fatalf("%s: %d events", name, n)
		}
		// after a rewind the logits event carries the recomputed lens
		if cfg.Lens {
			e, err := s.Rewind(2)
			if err != nil {
				t.Fatal(err)
			}
			if e.Logits == nil || e.Logits.Lens == nil {
				t.Fatalf("%s: rewind event without the lens: %+v", name, e)
			}
			checkSame(t, name+" rewind", e)
		}
	}
}

// TestEventJSONEqualsMarshalOnRandomEvents fills every field of an event,
// at every depth, with random values (strings that need escaping, invalid
// UTF-8, floats at the format's cut-offs, nil and empty slices, now and
// then a NaN or an infinity) and compares.
func TestEventJSONEqualsMarshalOnRandomEvents(t *testing.T) {
	for seed := range uint64(3000) {
		checkRandomEvent(t, seed)
	}
}

func FuzzEventJSON(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(checkRandomEvent)
}

func checkRandomEvent(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 17))
	f := filler{r: r, nonFinite: seed%5 == 0}
	var e session.Event
	f.fill(reflect.ValueOf(&e).Elem(), 0)
	checkSame(t, "seed "+strconv.FormatUint(seed, 10), &e)
}

type filler struct {
	r         *rand.Rand
	nonFinite bool // now and then a NaN or an infinity
}

var strs = []string{"", "a", "the", "<b>&amp;</b>", "\"q\" \\ /", "\n\t\r\b\f\x00\x1f\x7f", "\xff\xfe", "é日本\u2028\u2029", "Ġthe", "▁", "<0x0A>", "\xe2\x82", "😀"}

func (f *filler) float(bits int) float64 {
	r := f.r
	if f.nonFinite && r.IntN(40) == 0 {
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
	}
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2: // around the exponent cut-offs
		return []float64{1e-6, 9.99999e-7, 1e-7, 1e21, 9.9999e20, 1.5e22, 1e-30, 5e-324}[r.IntN(8)] * float64(1-2*r.IntN(2))
	case 3:
		return float64(r.IntN(1000))
	case 4:
		if bits == 32 {
			return float64(math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(254)+1)<<23))
		}
		return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(2046)+1)<<52)
	default:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
	}
}

func (f *filler) fill(v reflect.Value, depth int) {
	r := f.r
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(r.Int64N(1<<40) - 1<<39)
		if r.IntN(3) == 0 {
			v.SetInt(0)
		}
	case reflect.Uint64:
		v.SetUint(r.Uint64())
	case reflect.Float32:
		v.SetFloat(float64(float32(f.float(32))))
	case reflect.Float64:
		v.SetFloat(f.float(64))
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))] + strs[r.IntN(len(strs))])
	case reflect.Pointer:
		if depth > 6 || r.IntN(4) == 0 {
			return // nil
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch k := r.IntN(6); {
		case k == 0 || depth > 6:
			return // nil
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := r.IntN(5)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				f.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		if r.IntN(2) == 0 {
			return
		}
		mp := reflect.MakeMap(v.Type())
		for range r.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k, depth+1)
			f.fill(e, depth+1)
			mp.SetMapIndex(k, e)
		}
		v.Set(mp)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		// none in events; leave nil
	default:
		panic("filler: a field of kind " + v.Kind().String() + " in an event: teach the filler (and check AppendJSON handles it)")
	}
}

// fixed4Reference is Compact's formatting as it was written first:
// strconv's 4 decimals, trailing zeros and point trimmed, −0 as 0.
func fixed4Reference(v float32) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return "null"
	}
	b := strconv.AppendFloat(nil, float64(v), 'f', 4, 32)
	for len(b) > 1 && b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b) == "-0" {
		return "0"
	}
	return string(b)
}

func checkFixed4(t *testing.T, v float32) {
	t.Helper()
	got, _ := session.Compact{v}.MarshalJSON()
	if want := "[" + fixed4Reference(v) + "]"; string(got) != want {
		t.Fatalf("%v (bits %#x): %s, strconv %s", v, math.Float32bits(v), got, want)
	}
}

// TestCompactFormatEqualsStrconv: exact halves (odd multiples of 1/32
// round half to even at the 4th decimal), the neighbours of every
// 4-decimal value in [-3, 3], the integer path's upper limit, subnormals,
// non-finite values and random bit patterns.
func TestCompactFormatEqualsStrconv(t *testing.T) {
	for j := -4000; j <= 4000; j++ {
		checkFixed4(t, float32(j)/32)
	}
	for k := -30000; k <= 30000; k++ {
		x := float32(k) / 1e4
		for _, v := range []float32{x, math.Nextafter32(x, 10), math.Nextafter32(x, -10), float32((float64(k) + 0.5) / 1e4), math.Nextafter32(float32((float64(k)+0.5)/1e4), 10), math.Nextafter32(float32((float64(k)+0.5)/1e4), -10)} {
			checkFixed4(t, v)
		}
	}
	lim := float32(1<<53) / 1e4
	for _, v := range []float32{lim, math.Nextafter32(lim, 0), math.Nextafter32(lim, float32(math.Inf(1))), -lim, 1e30, -3.4e38, math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-38, 0.00005, -0.00005, 0.00004999, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		checkFixed4(t, v)
	}
	r := rand.New(rand.NewPCG(4, 4))
	for range 300000 {
		checkFixed4(t, math.Float32frombits(r.Uint32()))
		checkFixed4(t, r.Float32()) // attention weights lie in [0, 1)
	}
}

func FuzzCompactFormat(f *testing.F) {
	for _, v := range []float32{0, 0.03125, 1.5, -0.00005, 1e30} {
		f.Add(math.Float32bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint32) { checkFixed4(t, math.Float32frombits(bits)) })
}

// BenchmarkEventJSON: a decode step's append event with layer traces (the
// default model, lens on), by json.Marshal and by AppendJSON.
func BenchmarkEventJSON(b *testing.B) {
	m, err := models.Default()
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.New(m, session.Config{Prompt: "Once upon a time there was a", Sampling: session.DefaultSampling(), MaxNewTokens: 30, Lens: true})
	if err != nil {
		b.Fatal(err)
	}
	evs, err := s.Advance(context.Background(), session.UntilStop, nil)
	if err != nil {
		b.Fatal(err)
	}
	byStage := map[session.Stage]*session.Event{}
	for _, e := range evs[len(evs)/2:] {
		if byStage[e.Stage] == nil {
			byStage[e.Stage] = e // one from the middle of the run
		}
	}
	for _, st := range []session.Stage{session.StageLogits, session.StageSample, session.StageAppend} {
		e := byStage[st]
		b.Run(string(st)+"/marshal", func(b *testing.B) {
			for b.Loop() {
				json.Marshal(e)
			}
		})
		b.Run(string(st)+"/append", func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf, _ = e.AppendJSON(buf[:0])
			}
		})
	}
}
