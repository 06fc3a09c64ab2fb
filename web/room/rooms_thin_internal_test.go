package room

// rooms_thin_internal_test.go: the pieces of a thinned room stream: the
// stream message that carries an event's thin form along, and what a view
// keeps of a run for late joiners (each stage's latest detail in full,
// the rest thin), whichever way the events arrived.

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

func TestRoomMsgThinForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    wire.RoomMsg
	}{
		{"plain", wire.RoomMsg{Seq: 7, Type: wire.MsgEvent, Payload: []byte(`{"seq":3,"stage":"logits"}`)}},
		{"with thin form", wire.RoomMsg{Seq: 12345678, Type: wire.MsgEvent, Payload: []byte(`{"seq":3,"stage":"logits","logits":{"top":[1,2,3]}}`), Thin: []byte(`{"seq":3,"thin":true}`)}},
		{"one-byte thin form", wire.RoomMsg{Seq: 1, Type: wire.MsgEvent, Payload: []byte(`{}`), Thin: []byte(`0`)}},
		{"other message", wire.RoomMsg{Seq: 2, Type: wire.MsgRoomLog, Payload: []byte(`{"start":null,"log":[]}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := wire.DecodeRoomMsg(tc.m.Encode())
			if !ok || got.Seq != tc.m.Seq || got.Type != tc.m.Type || !bytes.Equal(got.Payload, tc.m.Payload) || !bytes.Equal(got.Thin, tc.m.Thin) || (got.Thin == nil) != (tc.m.Thin == nil) {
				t.Fatalf("decoded %v, want %v", got, tc.m)
			}
		})
	}
	for _, bad := range []string{"1\tevent\t~", "1\tevent\t~\t{}", "1\tevent\t~x\t{}", "1\tevent\t~5\t{}", "1\tevent\t~2\t{}", "1\tevent\t~0\t{}", "1\tevent\t~99999999999999\t{}"} {
		if m, ok := wire.DecodeRoomMsg([]byte(bad)); ok {
			t.Errorf("%q decoded as %v, want refused", bad, m)
		}
	}
}

func FuzzDecodeRoomMsg(f *testing.F) {
	for _, m := range []wire.RoomMsg{{Seq: 1, Type: wire.MsgEvent, Payload: []byte(`{}`)}, {Seq: 9, Type: wire.MsgEvent, Payload: []byte(`{"a":1}`), Thin: []byte(`{"thin":true}`)}} {
		f.Add(m.Encode())
	}
	f.Add([]byte("1\tevent\t~3\tabc{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := wire.DecodeRoomMsg(b)
		if !ok {
			return
		}
		if len(m.Payload) == 0 || m.Type == "" || m.Seq < 0 {
			t.Fatalf("accepted %q as %v", b, m)
		}
		// what decodes encodes back to a message that decodes the same
		again, ok := wire.DecodeRoomMsg(m.Encode())
		if !ok || again.Seq != m.Seq || again.Type != m.Type || !bytes.Equal(again.Payload, m.Payload) || !bytes.Equal(again.Thin, m.Thin) {
			t.Fatalf("%q: decoded %v, then %v", b, m, again)
		}
	})
}

// viewRun is a greedy run of the default model with the lab's options,
// its events in order, every one in full (as a stepping page gets them;
// a replay would keep the earlier ones thin).
func viewRun(t *testing.T, tokens int) []*session.Event {
	t.Helper()
	cat, err := catalog.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	start := &wire.StartPayload{Prompt: "Once upon a time", MaxNewTokens: tokens, Lens: true}
	run, err := cat.NewRun(start.Model, start.SessionConfig())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run.Runner.Advance(context.Background(), session.UntilStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// keptForm says, per event, whether a view keeps it in full ("F"), thin
// ("t") or as it is ("-": nothing heavy in it).
func keptForm(evs []viewEvent) string {
	var b []byte
	for _, e := range evs {
		switch {
		case e.thin == nil:
			b = append(b, '-')
		case e.full != nil:
			b = append(b, 'F')
		default:
			b = append(b, 't')
		}
	}
	return string(b)
}

// TestRoomViewKeepsLatestDetail: a view fed a run event by event in full
// (stepping), one fed it thinned (groups, then the detail before the
// stop) and one that rebuilt it whole (keepEvents) keep the same thing:
// every event, each stage's latest heavy event in full, the others thin.
func TestRoomViewKeepsLatestDetail(t *testing.T) {
	evs := viewRun(t, 12)
	enc := func(ev *session.Event) []byte { b, _ := json.Marshal(ev); return b }
	want, wantFull, err := keepEvents(evs, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := [3]int{-1, -1, -1}
	for i, ev := range evs {
		if k := ws.ThinSlot(ev.Stage); k >= 0 && ws.Heavy(ev) {
			last[k] = i
		}
	}
	for k, i := range last {
		if i < 0 || wantFull[k] != i+1 {
			t.Fatalf("stage slot %d: kept in full event %d, want the last heavy one %d", k, wantFull[k]-1, i)
		}
	}
	form := keptForm(want)
	if n := bytes.Count([]byte(form), []byte("t")); n < 3*10 {
		t.Fatalf("kept %s: %d events thin, want the 10 earlier tokens' logits, sample and append at least", form, n)
	}
	if n := bytes.Count([]byte(form), []byte("F")); n != 3 {
		t.Fatalf("kept %s: %d events in full, want 3 (logits, sample, the last forward pass's append)", form, n)
	}

	// stepped: every event published in full, with its thin form
	stepped := &roomView{h: &Hub{}}
	seq := int64(0)
	apply := func(v *roomView, typ string, payload, thin []byte) {
		seq++
		m, ok := wire.DecodeRoomMsg(wire.RoomMsg{Seq: seq, Type: typ, Payload: payload, Thin: thin}.Encode())
		if !ok {
			t.Fatalf("%s did not decode", typ)
		}
		v.applyLocked(m)
	}
	for _, ev := range evs {
		var thin []byte
		if ws.ThinSlot(ev.Stage) >= 0 && ws.Heavy(ev) {
			thin, _ = json.Marshal(ws.ThinEvent(ev))
		}
		apply(stepped, wire.MsgEvent, enc(ev), thin)
	}
	// thinned as a run with detail_ms: the first token in full, the rest thin
	thinned := &roomView{h: &Hub{}}
	th := ws.NewThinner(wire.MaxDetailMs)
	var group []*session.Event
	flush := func() {
		if len(group) > 0 {
			b, _ := json.Marshal(map[string]any{"events": group})
			apply(thinned, wire.MsgEvents, b, nil)
			group = nil
		}
	}
	for _, ev := range evs {
		out := th.Pass(ev, false)
		if out.Thin {
			group = append(group, out)
			continue
		}
		flush()
		if ev.Stage == session.StageStop {
			if d := th.Take(); len(d) > 0 {
				b, _ := json.Marshal(map[string]any{"events": d})
				apply(thinned, wire.MsgDetail, b, nil)
			}
		}
		var thin []byte
		if ws.ThinSlot(out.Stage) >= 0 && ws.Heavy(out) {
			thin, _ = json.Marshal(ws.ThinEvent(out))
		}
		apply(thinned, wire.MsgEvent, enc(out), thin)
	}
	for name, v := range map[string]*roomView{"stepped": stepped, "thinned": thinned} {
		if got := keptForm(v.events); got != form {
			t.Errorf("%s view keeps %s, want %s", name, got, form)
			continue
		}
		for i := range want {
			if !bytes.Equal(v.events[i].bytes(), want[i].bytes()) {
				t.Errorf("%s view, event %d (%s): kept %.120s, want %.120s", name, i, evs[i].Stage, v.events[i].bytes(), want[i].bytes())
			}
		}
	}
	// a resumed message's events (all in full), decoded by the view
	resumed := &roomView{h: &Hub{}}
	b, _ := json.Marshal(map[string]any{"model": "m", "next": "stop", "log_len": 1, "events": evs})
	apply(resumed, wire.MsgResumed, b, nil)
	if got := keptForm(resumed.events); got != form {
		t.Errorf("resumed view keeps %s, want %s", got, form)
	}
	for i := range want {
		if !bytes.Equal(resumed.events[i].bytes(), want[i].bytes()) {
			t.Errorf("resumed view, event %d (%s): kept %.120s, want %.120s", i, evs[i].Stage, resumed.events[i].bytes(), want[i].bytes())
		}
	}
}
