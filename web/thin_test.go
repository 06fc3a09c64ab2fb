package web_test

// thin_test.go: a run's detail_ms over the websocket: thin events carry
// the light fields of the full ones, the detail message before the stop
// carries the last token's full events, bad values are refused.

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// runEvent is an event's fields this test compares.
type runEvent struct {
	Seq    int    `json:"seq"`
	Stage  string `json:"stage"`
	Thin   bool   `json:"thin"`
	Logits *struct {
		Pos       int               `json:"pos"`
		Top       []json.RawMessage `json:"top"`
		Kept      int               `json:"kept"`
		Entropy   float64           `json:"entropy"`
		Max       float32           `json:"max"`
		Histogram struct {
			Counts []int `json:"counts"`
		} `json:"histogram"`
		Lens json.RawMessage `json:"lens"`
	} `json:"logits"`
	Sample *struct {
		Chosen json.RawMessage   `json:"chosen"`
		Draw   float64           `json:"draw"`
		Kept   int               `json:"kept"`
		CDF    []json.RawMessage `json:"cdf"`
	} `json:"sample"`
	Append *struct {
		ID          int               `json:"id"`
		Text        string            `json:"text"`
		Pos         int               `json:"pos"`
		CacheLen    int               `json:"cache_len"`
		LayerTraces []json.RawMessage `json:"layer_traces"`
		Lens        json.RawMessage   `json:"lens"`
	} `json:"append"`
	Stop *struct {
		Reason string `json:"reason"`
		Text   string `json:"text"`
	} `json:"stop"`
}

// thinRun starts the lab's greedy run and runs it with payload; it returns
// the events by seq (events messages unpacked), the detail message's
// events (nil when none) and the bytes of event, events and detail
// messages.
func thinRun(t *testing.T, w *wsClient, n int, payload any) (evs []runEvent, detail []runEvent, bytes int) {
	groups := 0
	defer func() {
		thin := 0
		for _, e := range evs {
			if e.Thin {
				thin++
			}
		}
		t.Logf("%d events, %d of them thin in %d events messages", len(evs), thin, groups)
	}()
	t.Helper()
	w.send("start", map[string]any{"prompt": "The President said", "max_new_tokens": n, "stop_at_eos": false,
		"sampling": map[string]any{"temperature": 0, "top_p": 1}, "all_attention": true, "lens": true})
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("start: %s %s", m.Type, m.Payload)
	}
	w.send("run", payload)
	for {
		m := w.read()
		switch m.Type {
		case wire.MsgDetail:
			if detail != nil {
				t.Fatal("two detail messages in one run")
			}
			var d struct {
				Events []runEvent `json:"events"`
			}
			if err := json.Unmarshal(m.Payload, &d); err != nil {
				t.Fatal(err)
			}
			detail = d.Events
			bytes += m.size
		case wire.MsgEvents:
			var d struct {
				Events []runEvent `json:"events"`
			}
			if err := json.Unmarshal(m.Payload, &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Events) == 0 {
				t.Fatal("an empty events message")
			}
			for _, e := range d.Events {
				if !e.Thin {
					t.Fatalf("a full %s event in an events message", e.Stage)
				}
			}
			evs = append(evs, d.Events...)
			bytes += m.size
			groups++
		case wire.MsgEvent:
			var e runEvent
			if err := json.Unmarshal(m.Payload, &e); err != nil {
				t.Fatal(err)
			}
			if e.Thin {
				t.Fatalf("a thin %s event on its own", e.Stage)
			}
			evs = append(evs, e)
			bytes += m.size
			if e.Stage == "stop" {
				return evs, detail, bytes
			}
		default:
			t.Fatalf("during the run: %s %s", m.Type, m.Payload)
		}
	}
}

// light is an event without its heavy fields, to compare thin with full.
func light(e runEvent) runEvent {
	e.Thin = false
	if e.Logits != nil {
		l := *e.Logits
		l.Top = l.Top[:min(len(l.Top), ws.ThinTopN)]
		l.Histogram.Counts, l.Lens = nil, nil
		e.Logits = &l
	}
	if e.Sample != nil {
		s := *e.Sample
		s.CDF = nil
		e.Sample = &s
	}
	if e.Append != nil {
		a := *e.Append
		a.LayerTraces, a.Lens = nil, nil
		e.Append = &a
	}
	return e
}

func TestRunDetailMs(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	const n = 40
	full, none, fullBytes := thinRun(t, w, n, nil)
	if none != nil {
		t.Fatal("a run without detail_ms sent a detail message")
	}
	for _, e := range full {
		if e.Thin {
			t.Fatalf("a run without detail_ms sent a thin %s event", e.Stage)
		}
	}
	// an interval longer than the run: the first token in full, the rest thin
	thin, detail, thinBytes := thinRun(t, w, n, map[string]any{"detail_ms": wire.MaxDetailMs})
	if len(thin) != len(full) {
		t.Fatalf("%d events with detail_ms, %d without", len(thin), len(full))
	}
	thinCount := 0
	for i, e := range thin {
		f := full[i]
		if e.Seq != f.Seq || e.Stage != f.Stage {
			t.Fatalf("event %d: %s seq %d, want %s seq %d", i, e.Stage, e.Seq, f.Stage, f.Seq)
		}
		switch e.Stage {
		case "tokenize", "embed", "prefill", "stop":
			if e.Thin {
				t.Fatalf("%s event sent thin", e.Stage)
			}
		}
		if !e.Thin {
			if !reflect.DeepEqual(e, f) {
				t.Fatalf("full %s event %d differs from the run without detail_ms", e.Stage, e.Seq)
			}
			continue
		}
		thinCount++
		if e.Append != nil && (e.Append.LayerTraces != nil || e.Append.Lens != nil) || e.Sample != nil && e.Sample.CDF != nil ||
			e.Logits != nil && (len(e.Logits.Top) != ws.ThinTopN || e.Logits.Lens != nil || e.Logits.Histogram.Counts != nil) {
			t.Fatalf("thin %s event %d carries heavy fields", e.Stage, e.Seq)
		}
		// every light number is the engine's, as in the full run
		if !reflect.DeepEqual(light(e), light(f)) {
			t.Fatalf("thin %s event %d: light fields differ from the full run's:\n%+v\n%+v", e.Stage, e.Seq, e, light(f))
		}
	}
	if thinCount < 3*(n-2) {
		t.Fatalf("%d thin events of %d, want all but the first token's", thinCount, len(thin))
	}
	// the detail message: the last logits, the last sample and the last
	// append that ran a forward pass, in full, in order
	var want []runEvent
	for _, stage := range []string{"logits", "sample", "append"} {
		for i := len(full) - 1; i >= 0; i-- {
			if e := full[i]; e.Stage == stage && (stage != "append" || e.Append.LayerTraces != nil) {
				want = append(want, e)
				break
			}
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Seq < want[j].Seq })
	if len(detail) != len(want) {
		t.Fatalf("detail carries %d events, want %d (the last logits, sample and forward pass)", len(detail), len(want))
	}
	for i, d := range detail {
		if d.Thin || !reflect.DeepEqual(d, want[i]) {
			t.Fatalf("detail event %d (%s seq %d) is not the full run's %s seq %d", i, d.Stage, d.Seq, want[i].Stage, want[i].Seq)
		}
	}
	if thinBytes*2 > fullBytes {
		t.Errorf("detail_ms sent %d bytes, without %d: want at most half", thinBytes, fullBytes)
	}
	t.Logf("%d tokens: %d bytes in full, %d with detail_ms (%.1f%%)", n, fullBytes, thinBytes, 100*float64(thinBytes)/float64(fullBytes))

	// after a thinned run, rewind and next token are in full
	w.send("rewind", map[string]any{"n": 2})
	if e := w.event(); e.Stage != "logits" {
		t.Fatalf("rewind: %s", e.Stage)
	}
	w.send("step_token", nil)
	for _, want := range []string{"sample", "append"} {
		m := w.read()
		var e runEvent
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgEvent || e.Stage != want || e.Thin {
			t.Fatalf("step_token after a thinned run: %s %s thin=%v, want a full %s event", m.Type, e.Stage, e.Thin, want)
		}
		if want == "append" && len(e.Append.Lens) == 0 {
			t.Fatal("step_token after a thinned run: the append carries no logit lens")
		}
	}
}

func TestRunDetailMsBadValues(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	w.send("start", map[string]any{"prompt": "The", "max_new_tokens": 3})
	w.read()
	for _, p := range []any{map[string]any{"detail_ms": -1}, map[string]any{"detail_ms": 600000}, map[string]any{"detail_ms": "often"}, map[string]any{"detail_ms": 1.5}, map[string]any{"every": 5}} {
		w.send("run", p)
		m := w.read()
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgError || e.Code != "bad_payload" || !strings.Contains(e.Message, "detail_ms") {
			t.Fatalf("run %v: %s %s, want a bad_payload error naming detail_ms", p, m.Type, m.Payload)
		}
	}
	// the connection and the run are still usable
	w.send("run", map[string]any{"detail_ms": 100})
	var e evPayload
	for e.Stage != "stop" {
		m := w.read()
		if m.Type == wire.MsgDetail || m.Type == wire.MsgEvents {
			continue
		}
		if m.Type != wire.MsgEvent {
			t.Fatalf("run after bad values: %s %s", m.Type, m.Payload)
		}
		json.Unmarshal(m.Payload, &e)
	}
	if e.Stop.Reason != "max_new_tokens" {
		t.Fatalf("stopped: %s", e.Stop.Reason)
	}
}

// TestRunDetailMsCancel: a cancelled thinned run still ends on full detail:
// the detail message (when events were sent thin) comes before the stop.
func TestRunDetailMsCancel(t *testing.T) {
	// the visitor's byte budget holds the run to about fifty thin tokens a
	// second (bytebudget.go), so the cancel lands inside it: unthrottled,
	// the default model's 250 tokens end in about a tenth of a second
	ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 128 << 10, VisitorByteBurst: 64 << 10})
	w := dial(t, ts)
	w.send("start", map[string]any{"prompt": "The", "max_new_tokens": 250, "stop_at_eos": false, "lens": true})
	w.read()
	w.send("run", map[string]any{"detail_ms": wire.MaxDetailMs})
	thin := false
	for i := 0; i < 12; i++ {
		m := w.read()
		var e runEvent
		json.Unmarshal(m.Payload, &e)
		thin = thin || e.Thin || m.Type == wire.MsgEvents
	}
	w.send("cancel", nil)
	var detail []runEvent
	for {
		m := w.read()
		if m.Type == wire.MsgDetail {
			var d struct {
				Events []runEvent `json:"events"`
			}
			json.Unmarshal(m.Payload, &d)
			detail = d.Events
			continue
		}
		if m.Type == wire.MsgEvents {
			thin = true
			continue
		}
		var e runEvent
		json.Unmarshal(m.Payload, &e)
		thin = thin || e.Thin
		if e.Stage != "stop" {
			continue
		}
		if e.Stop.Reason != "cancelled" {
			t.Fatalf("stopped: %s", e.Stop.Reason)
		}
		break
	}
	if thin && len(detail) == 0 {
		t.Fatal("a cancelled thinned run sent no detail before its stop")
	}
	for _, d := range detail {
		if d.Thin || d.Append != nil && d.Append.LayerTraces == nil || d.Sample != nil && d.Sample.CDF == nil || d.Logits != nil && d.Logits.Lens == nil && d.Logits.Top == nil {
			t.Fatalf("detail %s event %d is not in full", d.Stage, d.Seq)
		}
	}
}
