package web_test

// pause_test.go: pause stops a streaming run after its current stage
// without ending it; run again continues it to the same tokens an
// uninterrupted run makes, and a resume of the paused run's log (the
// stages it ran, as steps) rebuilds it exactly.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// runEvents reads a command's events until its stop or a paused message.
func runEvents(t *testing.T, w *wsClient, id int64) (stages []string, tokens []int, paused bool) {
	return eventsUntil(t, w, id, "stop")
}

// eventsUntil reads a command's events until one of stage until (or the
// stop, or paused); "" is the first event (a step).
func eventsUntil(t *testing.T, w *wsClient, id int64, until string) (stages []string, tokens []int, paused bool) {
	t.Helper()
	for {
		m := w.read()
		if m.ID != id && m.ID != 0 {
			continue
		}
		switch m.Type {
		case wire.MsgPaused:
			return stages, tokens, true
		case wire.MsgError:
			t.Fatalf("%s", m.Payload)
		case wire.MsgEvent, wire.MsgEvents:
			var evs []json.RawMessage
			if m.Type == wire.MsgEvent {
				evs = []json.RawMessage{m.Payload}
			} else {
				var g struct {
					Events []json.RawMessage `json:"events"`
				}
				json.Unmarshal(m.Payload, &g)
				evs = g.Events
			}
			for _, e := range evs {
				var ev struct {
					Stage  string `json:"stage"`
					Sample *struct {
						Chosen struct {
							ID int `json:"id"`
						} `json:"chosen"`
					} `json:"sample"`
				}
				json.Unmarshal(e, &ev)
				stages = append(stages, ev.Stage)
				if ev.Sample != nil {
					tokens = append(tokens, ev.Sample.Chosen.ID)
				}
				if ev.Stage == "stop" || until == "" || ev.Stage == until {
					return stages, tokens, false
				}
			}
		}
	}
}

func TestPauseAndResume(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	start := map[string]any{"prompt": "Once upon a time", "max_new_tokens": 40, "sampling": map[string]any{"temperature": 0.9, "seed": 7}}

	// the whole run, uninterrupted
	w := dial(t, ts)
	w.send("start", start)
	w.read()
	_, want, _ := runEvents(t, w, w.send("run", nil))

	// nothing streaming: nothing to pause
	p := dial(t, ts)
	p.send("pause", nil)
	if m := p.read(); m.Type != wire.MsgError || !strings.Contains(string(m.Payload), "nothing to pause") {
		t.Fatalf("pause with nothing streaming: %s %s", m.Type, m.Payload)
	}
	p.send("start", start)
	p.read()
	id := p.send("run", nil)
	p.send("pause", nil)
	first, got, paused := runEvents(t, p, id)
	if !paused || len(first) == 0 {
		t.Fatalf("pause during a run: paused %v after %d stages", paused, len(first))
	}
	// run again continues from there
	rest, more, paused := runEvents(t, p, p.send("run", nil))
	if paused || rest[len(rest)-1] != "stop" {
		t.Fatalf("run after the pause: paused %v, ends on %s", paused, rest[len(rest)-1])
	}
	got = append(got, more...)
	if len(got) != len(want) || strings.Trim(strings.Join(strings.Fields(fmtInts(got)), " "), " ") != fmtInts(want) {
		t.Errorf("paused and continued: %v\nuninterrupted:        %v", got, want)
	}
	// the paused run's log: the stages it ran as steps, then run
	log := []string{}
	for range first {
		log = append(log, "step")
	}
	log = append(log, "run")
	r := dial(t, ts)
	r.send("resume", map[string]any{"start": start, "log": log})
	m := r.read()
	var res struct {
		Events []json.RawMessage `json:"events"`
	}
	json.Unmarshal(m.Payload, &res)
	if m.Type != wire.MsgResumed || len(res.Events) != len(first)+len(rest) {
		t.Errorf("resume of the paused run's log: %s with %d events, want %d", m.Type, len(res.Events), len(first)+len(rest))
	}
}

func fmtInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}
