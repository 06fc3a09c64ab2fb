package web_test

// replay_bound_test.go: a replay (resume, a room's log) is priced in
// forward passes before anything runs, and refused by name past the
// limit: one 38 KB resume of ["run", "rewind 250"]×2048 used to take the
// server from 64 MB to 2.5 GB and keep running after its client left.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web"
)

func TestReplayIsPricedBeforeItRuns(t *testing.T) {
	cases := []struct {
		name    string
		start   map[string]any
		log     []string
		refused bool
	}{
		{"a lab session's log", startPayload("The", 50), []string{"step", "step", "step", "step_token", "run", "rewind 10", "run"}, false},
		{"runs and rewinds past the limit", startPayload("The", 254), repeat([]string{"run", "rewind 250"}, 2048), true},
		{"runs and resets past the limit", startPayload("The", 254), repeat([]string{"run", "reset"}, 2048), true},
		{"just under the limit", startPayload("The", 100), repeat([]string{"run", "reset"}, 20), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := newWSServer(t, web.Limits{})
			w := dial(t, ts)
			w.send("resume", map[string]any{"start": c.start, "log": c.log})
			m := w.read()
			var e web.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if c.refused {
				if m.Type != web.MsgError || e.Code != "replay_too_long" || !strings.Contains(e.Message, "2048") {
					t.Fatalf("%s: %s %s, want replay_too_long naming the limit", c.name, m.Type, m.Payload)
				}
				return
			}
			if m.Type != web.MsgResumed {
				t.Fatalf("%s: %s %s, want resumed", c.name, m.Type, m.Payload)
			}
		})
	}
	// a room's log goes through the same price
	ts := newWSServer(t, web.Limits{})
	w := dial(t, ts)
	w.send("room_open", map[string]any{"page": "/lab", "start": startPayload("The", 254), "log": repeat([]string{"run", "rewind 250"}, 2048)})
	for {
		m := w.read()
		if m.Type == web.MsgError {
			if !strings.Contains(string(m.Payload), "replay_too_long") {
				t.Fatalf("room_open with a long log: %s", m.Payload)
			}
			break
		}
	}
}

func repeat(s []string, n int) []string {
	var out []string
	for range n {
		out = append(out, s...)
	}
	return out
}
