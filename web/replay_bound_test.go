package web_test

// replay_bound_test.go: a replay (resume, a room's log) is priced in
// forward passes before anything runs, and refused by name past the
// limit: one 38 KB resume of ["run", "rewind 250"]×2048 used to take the
// server from 64 MB to 2.5 GB and keep running after its client left.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
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
			ts := newWSServer(t, ws.Limits{})
			w := dial(t, ts)
			w.send("resume", map[string]any{"start": c.start, "log": c.log})
			m := w.read()
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if c.refused {
				if m.Type != wire.MsgError || e.Code != "replay_too_long" || !strings.Contains(e.Message, "2048") {
					t.Fatalf("%s: %s %s, want replay_too_long naming the limit", c.name, m.Type, m.Payload)
				}
				return
			}
			if m.Type != wire.MsgResumed {
				t.Fatalf("%s: %s %s, want resumed", c.name, m.Type, m.Payload)
			}
		})
	}
	// a room's log goes through the same price
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	w.send("room_open", map[string]any{"page": "/lab", "start": startPayload("The", 254), "log": repeat([]string{"run", "rewind 250"}, 2048)})
	for {
		m := w.read()
		if m.Type == wire.MsgError {
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

// TestReplayKeepsOnlyWhatItsAnswerNeeds: a replay keeps the latest heavy
// event of each stage in full and the earlier ones thin, so its answer (and
// its memory while it runs) grows by a few hundred bytes a pass, not by
// the tens of KiB a full event with the lens and a 200-token list takes.
// It used to keep every event in full: ~9–12 MB a 254-token run.
func TestReplayKeepsOnlyWhatItsAnswerNeeds(t *testing.T) {
	start := startPayload("Once upon a time", 100)
	start["lens"], start["top_n"] = true, 200
	ts := newWSServer(t, ws.Limits{})
	size := func(log []string) (bytes, full, events int) {
		w := dial(t, ts)
		w.send("resume", map[string]any{"start": start, "log": log})
		m := w.read()
		if m.Type != wire.MsgResumed {
			t.Fatalf("resume %d entries: %s %.200s", len(log), m.Type, m.Payload)
		}
		var r struct {
			Events []json.RawMessage `json:"events"`
		}
		json.Unmarshal(m.Payload, &r)
		kinds := map[string]int{}
		for _, e := range r.Events {
			if k := heavyStage(e); k != "" {
				kinds[k]++
				full++
			}
		}
		for k, n := range kinds {
			if n != 1 {
				t.Errorf("resume %d entries: %d %s events in full, want the latest only", len(log), n, k)
			}
		}
		return len(m.Payload), full, len(r.Events)
	}
	one, full1, ev1 := size([]string{"run"})
	eight, full8, ev8 := size(repeat([]string{"run", "rewind 99"}, 8))
	if full1 > 3 || full8 > 3 {
		t.Errorf("events in full: %d (one run) and %d (eight), want at most 3 (logits, sample, append)", full1, full8)
	}
	perEvent := float64(eight-one) / float64(ev8-ev1)
	t.Logf("one run: %d events, %d B; eight runs: %d events, %d B (%.0f B per extra event)", ev1, one, ev8, eight, perEvent)
	if perEvent > 2048 {
		t.Errorf("each extra event of the replay adds %.0f B to its answer, want the thin form (< 2 KiB)", perEvent)
	}
}

// countingCatalog counts the stages every run advances.
type countingCatalog struct {
	catalog.Catalog
	stages *atomic.Int64
}

type countingRunner struct {
	catalog.Runner
	stages *atomic.Int64
}

func (r countingRunner) Advance(ctx context.Context, u session.Until, emit func(*session.Event) bool) ([]*session.Event, error) {
	evs, err := r.Runner.Advance(ctx, u, emit)
	r.stages.Add(int64(len(evs)))
	return evs, err
}

func (c countingCatalog) NewRun(model string, cfg session.Config) (catalog.Run, error) {
	r, err := c.Catalog.NewRun(model, cfg)
	r.Runner = countingRunner{r.Runner, c.stages}
	return r, err
}

// TestReplayStopsWhenItsClientLeaves: a replay whose client closes its
// socket stops at the next stage instead of running its whole log for
// nobody (it used to go on: 1.19 cores for a minute after the client left).
func TestReplayStopsWhenItsClientLeaves(t *testing.T) {
	m, _ := models.Default()
	cat := catalog.NewEngineCatalog()
	cat.Add(m, "", true)
	var stages atomic.Int64
	srv, _ := web.New(web.Options{Catalog: countingCatalog{cat, &stages}})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w := dial(t, ts)
	start := startPayload("The", 254)
	start["lens"], start["top_n"] = true, 200
	log := repeat([]string{"run", "rewind 250"}, 8) // 2040 passes, ~6,100 stages
	w.send("resume", map[string]any{"start": start, "log": log})
	for stages.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	w.c.Close()
	// the count settles: nothing advances for 300 ms
	last, since := stages.Load(), time.Now()
	for deadline := time.Now().Add(20 * time.Second); time.Since(since) < 300*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replay is still running 20 s after its client left (%d stages)", stages.Load())
		}
		if n := stages.Load(); n != last {
			last, since = n, time.Now()
		}
	}
	if last > 1000 {
		t.Errorf("the replay ran %d stages of its ~6,100 after its client left at 50: it should stop at the next stage", last)
	}
	t.Logf("the replay stopped after %d stages", last)
}
