package web_test

// setsampling_test.go: settings changed mid-run apply where the run is:
// set_sampling answers with the current step under the new settings, the
// tokens from then on are a fresh run's with those settings along the same
// earlier tokens, and a resume that replays the change gets them again.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

func TestSetSampling(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	old := map[string]any{"temperature": 0.8, "top_p": 0.9, "seed": 42}
	next := map[string]any{"temperature": 1.5, "top_k": 20, "top_p": 1.0, "min_p": 0.02, "seed": 11}
	start := func(s map[string]any) map[string]any {
		return map[string]any{"prompt": "Once upon a time", "max_new_tokens": 24, "sampling": s}
	}
	w := dial(t, ts)
	w.send("start", start(old))
	w.read()
	var before []int
	for range 3 {
		_, toks, _ := eventsUntil(t, w, w.send("step_token", nil), "append")
		before = append(before, toks...)
	}
	eventsUntil(t, w, w.send("step", nil), "") // the logits stage: next is sample
	w.send("set_sampling", next)
	m := readReply(w)
	var set struct {
		Sampling map[string]any `json:"sampling"`
		Next     string         `json:"next"`
		Logits   *struct {
			Params struct {
				Temperature float64 `json:"temperature"`
			} `json:"params"`
		} `json:"logits"`
	}
	json.Unmarshal(m.Payload, &set)
	if m.Type != wire.MsgSamplingSet || set.Next != "sample" || set.Logits == nil || set.Logits.Params.Temperature != 1.5 || set.Sampling["top_k"] != 20.0 {
		t.Fatalf("set_sampling at the sample stage: %s %s", m.Type, m.Payload)
	}
	_, after, _ := runEvents(t, w, w.send("run", nil))
	got := append(append([]int{}, before...), after...)

	// a fresh run with the new settings, forced along the first 3 tokens
	f := dial(t, ts)
	f.send("start", start(next))
	f.read()
	for range 3 { // tokenize, embed, prefill: a token can be forced from the logits stage on
		eventsUntil(t, f, f.send("step", nil), "")
	}
	for _, id := range before {
		eventsUntil(t, f, f.send("force", map[string]any{"id": id}), "append")
	}
	_, rest, _ := runEvents(t, f, f.send("run", nil))
	want := append(append([]int{}, before...), rest...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changed at the sample stage: %v\nfresh with the new settings: %v", got, want)
	}

	// the change, logged with every setting, resumes to the same tokens
	b, _ := json.Marshal(set.Sampling)
	log := []string{"step_token", "step_token", "step_token", "step", "set_sampling " + string(b), "run"}
	r := dial(t, ts)
	r.send("resume", map[string]any{"start": start(old), "log": log})
	res := r.read()
	if res.Type != wire.MsgResumed {
		t.Fatalf("resume with set_sampling: %s %s", res.Type, res.Payload)
	}
	var rp struct {
		Events []struct {
			Sample *struct {
				Chosen struct {
					ID int `json:"id"`
				} `json:"chosen"`
			} `json:"sample"`
		} `json:"events"`
	}
	json.Unmarshal(res.Payload, &rp)
	var resumed []int
	for _, e := range rp.Events {
		if e.Sample != nil {
			resumed = append(resumed, e.Sample.Chosen.ID)
		}
	}
	if fmt.Sprint(resumed) != fmt.Sprint(got) {
		t.Errorf("resumed %v, the run had %v", resumed, got)
	}

	// refused by name
	for _, c := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"temperature": -1}, "temperature"},
		{map[string]any{"top_k": 1, "colour": 2}, "colour"},
	} {
		r.send("set_sampling", c.payload)
		if m := readReply(r); m.Type != wire.MsgError || !strings.Contains(string(m.Payload), c.want) {
			t.Errorf("set_sampling %v: %s %s", c.payload, m.Type, m.Payload)
		}
	}
	r.send("set_sampling", next) // the resumed run has stopped
	if m := readReply(r); m.Type != wire.MsgError || !strings.Contains(string(m.Payload), "stopped") {
		t.Errorf("set_sampling after the stop: %s %s", m.Type, m.Payload)
	}
}
