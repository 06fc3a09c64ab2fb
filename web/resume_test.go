package web_test

// resume_test.go: server-side resume rebuilds a run from one message; bad logs get clear errors.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// appendedIDs runs step_token n times and returns the appended token ids.
func appendedIDs(t *testing.T, w *wsClient, n int) []int {
	t.Helper()
	var ids []int
	for len(ids) < n {
		w.send("step_token", nil)
		for {
			e := w.event()
			if e.Append != nil {
				ids = append(ids, e.Append.ID)
				break
			}
			if e.Stop != nil {
				t.Fatalf("run stopped (%s) after %d tokens", e.Stop.Reason, len(ids))
			}
		}
	}
	return ids
}

// TestWebsocketResume: one resume message on a new connection rebuilds the
// run a client had (start, forced token, rewind, steps), answers with the
// events to redraw from, and the run continues exactly as it would have.
func TestWebsocketResume(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	start := startPayload("The President said", 12)

	a := dial(t, ts)
	a.send("start", start)
	a.read()
	got := appendedIDs(t, a, 3)
	a.send("rewind", map[string]int{"n": 1})
	a.event()
	a.send("force", map[string]int{"id": got[1]})
	for e := a.event(); e.Append == nil; e = a.event() {
	}
	want := appendedIDs(t, a, 2) // what the run does next

	b := dial(t, ts)
	b.send("resume", map[string]any{"start": start, "log": []string{"step_token", "step_token", "step_token", "rewind 1", fmt.Sprintf("force %d", got[1])}})
	m := b.read()
	if m.Type != wire.MsgResumed {
		t.Fatalf("got %s %s, want resumed", m.Type, m.Payload)
	}
	var r struct {
		Next   string            `json:"next"`
		LogLen int               `json:"log_len"`
		Events []evPayload       `json:"events"`
		Model  catalog.ModelCard `json:"model"`
	}
	if err := json.Unmarshal(m.Payload, &r); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, e := range r.Events {
		if e.Append != nil {
			ids = append(ids, e.Append.ID)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(append(got, got[1])) || r.LogLen != 5 || r.Next != "logits" || r.Model.Name == "" {
		t.Errorf("resumed: appended %v next %s log_len %d model %q; want appended %v next logits", ids, r.Next, r.LogLen, r.Model.Name, append(got, got[1]))
	}
	if after := appendedIDs(t, b, 2); fmt.Sprint(after) != fmt.Sprint(want) {
		t.Errorf("resumed run continued with %v, the original with %v", after, want)
	}
}

// TestWebsocketResumeBadLogs: a malformed, oversized or unreplayable log is
// a clear error, and the connection stays usable.
func TestWebsocketResumeBadLogs(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	start := startPayload("The", 4)
	long := make([]string, wire.MaxResumeLog+1)
	for i := range long {
		long[i] = "step"
	}
	tests := []struct {
		payload    any
		code, want string
	}{
		{map[string]any{"log": []string{"step"}}, "bad_payload", "needs start"},
		{map[string]any{"start": start, "log": []string{"ping"}}, "bad_payload", `log entry 0: log entry "ping": "ping" cannot be resumed`},
		{map[string]any{"start": start, "log": []string{"rewind"}}, "bad_payload", "rewind needs an integer"},
		{map[string]any{"start": start, "log": []any{1}}, "bad_payload", "a log entry is a string"},
		{map[string]any{"start": start, "log": long}, "bad_payload", "the limit is 4096"},
		{map[string]any{"start": start, "log": []string{"step", "rewind 5"}}, "bad_request", "log entry 1 (rewind 5) cannot be replayed"},
		{map[string]any{"start": map[string]any{"prompt": "x", "max_new_tokens": 0}, "log": []string{}}, "bad_request", "max_new_tokens 0 out of range"},
	}
	for _, tt := range tests {
		w.send("resume", tt.payload)
		m := w.read()
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgError || e.Code != tt.code || !strings.Contains(e.Message, tt.want) {
			t.Errorf("got %s %s, want error %s containing %q", m.Type, m.Payload, tt.code, tt.want)
		}
	}
	runToEnd(t, w, "The", 3) // still usable
}
