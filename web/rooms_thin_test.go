package web_test

// rooms_thin_test.go: a run the presenter streams at engine speed reaches
// the class thinned as the lab thins a private run: followers get the
// presenter's own messages (thin events in groups, a token in full at most
// every DetailMs, the detail before the stop, the stop in full), a late
// joiner's snapshot keeps only each stage's latest detail in full, and
// "Try it myself" still rebuilds the run exactly. In process and with
// NATS and two replicas.

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

// streamMsg is one run message as a client got it.
type streamMsg struct {
	typ     string
	payload json.RawMessage
}

// runStream reads w's messages until the run's stop event and returns the
// run's messages (event, events, detail) in order.
func runStream(t *testing.T, w *wsClient) []streamMsg {
	t.Helper()
	var out []streamMsg
	for {
		m := w.read()
		switch m.Type {
		case wire.MsgEvent, wire.MsgEvents, wire.MsgDetail:
			out = append(out, streamMsg{m.Type, m.Payload})
			if m.Type == wire.MsgEvent && info(m.Payload).Stage == "stop" {
				return out
			}
		case wire.MsgError:
			t.Fatalf("error %s", m.Payload)
		}
	}
}

// groupEvents is an events or detail message's events.
func groupEvents(p json.RawMessage) []json.RawMessage {
	var g struct {
		Events []json.RawMessage `json:"events"`
	}
	json.Unmarshal(p, &g)
	return g.Events
}

// evInfo is what the test reads of an event.
type evInfo struct {
	Seq    int    `json:"seq"`
	Stage  string `json:"stage"`
	Thin   bool   `json:"thin"`
	Append *struct {
		LayerTraces json.RawMessage `json:"layer_traces"`
	} `json:"append"`
}

func info(b json.RawMessage) evInfo {
	var e evInfo
	json.Unmarshal(b, &e)
	return e
}

// heavyStage names the stage whose detail an event holds in full: logits,
// sample, or an append that ran a forward pass ("" for any other event,
// and for a thin one).
func heavyStage(b json.RawMessage) string {
	e := info(b)
	switch {
	case e.Thin:
		return ""
	case e.Stage == "logits" || e.Stage == "sample":
		return e.Stage
	case e.Stage == "append" && e.Append != nil && len(e.Append.LayerTraces) > 0 && string(e.Append.LayerTraces) != "null":
		return e.Stage
	}
	return ""
}

// untimed is an event without its timings (a rebuilt run's own), as JSON.
func untimed(t *testing.T, b json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, c := range x {
				if strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_s") || k == "timings" {
					delete(x, k)
					continue
				}
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// dialRoomDeflate is dialRoom from a client that negotiates
// permessage-deflate, as browsers do: its large messages come compressed.
func dialRoomDeflate(t testing.TB, ts *httptest.Server, code string) (*wsClient, inMsg) {
	t.Helper()
	d := websocket.Dialer{EnableCompression: true}
	c, resp, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/room?code="+code, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
		t.Fatalf("the follower socket did not negotiate permessage-deflate: %q", resp.Header.Get("Sec-WebSocket-Extensions"))
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c, gaps: true}
	return w, w.read()
}

func TestRoomThinnedRun(t *testing.T) {
	for _, mode := range []string{"local", "nats-2-replicas"} {
		t.Run(mode, func(t *testing.T) {
			var a, b *httptest.Server // the presenter's replica, the followers'
			if mode == "local" {
				a = roomServer(t, room.RoomOptions{})
				b = a
			} else {
				url := startNATS(t)
				a, b = natsReplica(t, url), natsReplica(t, url)
			}
			p := dial(t, a)
			room := openRoom(t, p, map[string]any{"page": "/lab"})
			early, joined := dialRoom(t, b, room.Code)
			if joined.Type != wire.MsgRoomJoined {
				t.Fatalf("follower: %s %s", joined.Type, joined.Payload)
			}
			zearly, joined := dialRoomDeflate(t, b, room.Code)
			if joined.Type != wire.MsgRoomJoined {
				t.Fatalf("compressed follower: %s %s", joined.Type, joined.Payload)
			}
			const tokens = 40
			start := roomStart("Once upon a time", tokens)
			start["lens"] = true
			p.send("start", start)
			nextOf(p, wire.MsgStarted, nil)
			nextOf(early, wire.MsgStarted, nil)
			nextOf(zearly, wire.MsgStarted, nil)
			p.send("run", nil) // no detail_ms: the room's DetailMs (250 ms) thins it
			mine := runStream(t, p)

			// the followers got the presenter's own messages, byte for byte
			for name, f := range map[string]*wsClient{"follower": early, "compressed follower": zearly} {
				theirs := runStream(t, f)
				if len(theirs) != len(mine) {
					t.Fatalf("%s got %d run messages, the presenter %d", name, len(theirs), len(mine))
				}
				for i := range mine {
					if theirs[i].typ != mine[i].typ || !bytes.Equal(theirs[i].payload, mine[i].payload) {
						t.Fatalf("run message %d: %s got %s %.100s, presenter %s %.100s", i, name, theirs[i].typ, theirs[i].payload, mine[i].typ, mine[i].payload)
					}
				}
			}

			// every event once, in order; thin ones only in groups; the stop in full, last
			var all []json.RawMessage // the run's events as sent
			var keys []string
			final := map[string]json.RawMessage{} // per stage, the latest detail the page holds
			groups, fullTokens, thinTokens, details := 0, 0, 0, 0
			for i, m := range mine {
				switch m.typ {
				case wire.MsgEvent:
					if info(m.payload).Thin {
						t.Fatalf("message %d: a thin event outside a group", i)
					}
					all = append(all, m.payload)
					if info(m.payload).Stage == "logits" {
						fullTokens++
					}
				case wire.MsgEvents:
					groups++
					for _, e := range groupEvents(m.payload) {
						if !info(e).Thin {
							t.Fatalf("message %d: a group holds a full event %.100s", i, e)
						}
						var parts map[string]map[string]json.RawMessage
						json.Unmarshal(e, &parts)
						for _, part := range parts {
							for _, heavy := range []string{"layer_traces", "lens", "cdf", "cdf_tail"} {
								if v, ok := part[heavy]; ok && string(v) != "null" {
									t.Fatalf("thin event %.100s carries %s", e, heavy)
								}
							}
						}
						if info(e).Stage == "logits" {
							thinTokens++
						}
						all = append(all, e)
					}
				case wire.MsgDetail:
					details++
					if i != len(mine)-2 {
						t.Fatalf("detail is message %d of %d, want the one just before the stop", i, len(mine))
					}
					for _, e := range groupEvents(m.payload) {
						if info(e).Thin {
							t.Fatalf("detail holds a thin event %.100s", e)
						}
						sent := slices.IndexFunc(all, func(x json.RawMessage) bool { return info(x).Seq == info(e).Seq })
						if sent < 0 || !info(all[sent]).Thin {
							t.Fatalf("detail event %d was not sent thin before", info(e).Seq)
						}
					}
				}
				if m.typ == wire.MsgEvent || m.typ == wire.MsgDetail {
					evs := []json.RawMessage{m.payload}
					if m.typ == wire.MsgDetail {
						evs = groupEvents(m.payload)
					}
					for _, e := range evs {
						if s := heavyStage(e); s != "" {
							final[s] = e
						}
					}
				}
			}
			for i, e := range all {
				keys = append(keys, evKey(e))
				if info(e).Seq != i+1 {
					t.Fatalf("event %d has seq %d: the run's events are not each sent once, in order", i, info(e).Seq)
				}
			}
			if last := info(all[len(all)-1]); last.Stage != "stop" || mine[len(mine)-1].typ != wire.MsgEvent {
				t.Fatalf("the run ends on %s in %s, want the stop event in full", last.Stage, mine[len(mine)-1].typ)
			}
			if fullTokens+thinTokens != tokens || fullTokens < 1 || thinTokens < 1 || groups < 1 {
				t.Fatalf("%d tokens in full and %d thin in %d groups, want %d in all, the first in full, some thin", fullTokens, thinTokens, groups, tokens)
			}
			if info(all[3]).Stage != "logits" || info(all[3]).Thin {
				t.Fatalf("the first token's logits went %s thin=%v, want in full", info(all[3]).Stage, info(all[3]).Thin)
			}
			if details != 1 && info(all[len(all)-4]).Thin {
				t.Fatalf("%d detail messages, want 1: the last token went thin", details)
			}
			for _, s := range []string{"logits", "sample", "append"} {
				if final[s] == nil {
					t.Fatalf("no %s detail reached the page", s)
				}
			}
			t.Logf("%d tokens: %d in full, %d thin in %d groups, %d detail message", tokens, fullTokens, thinTokens, groups, details)

			// a late joiner's snapshot: every event, each stage's latest detail in full, the rest thin
			late, _ := dialRoom(t, b, room.Code)
			snap := nextOf(late, wire.MsgResumed, nil)
			zlate, _ := dialRoomDeflate(t, b, room.Code)
			if zsnap := nextOf(zlate, wire.MsgResumed, nil); !bytes.Equal(zsnap.Payload, snap.Payload) {
				t.Fatalf("a compressed late joiner's snapshot differs (%d bytes, plain %d)", len(zsnap.Payload), len(snap.Payload))
			}
			evs := groupEvents(snap.Payload)
			var snapKeys []string
			held := map[string]int{}
			for _, e := range evs {
				snapKeys = append(snapKeys, evKey(e))
				if s := heavyStage(e); s != "" {
					held[s]++
					if !bytes.Equal(e, final[s]) {
						t.Errorf("snapshot's %s in full is %.100s, want the presenter's latest %.100s", s, e, final[s])
					}
				}
			}
			if strings.Join(snapKeys, " ") != strings.Join(keys, " ") {
				t.Fatalf("late joiner's snapshot:\n got %v\nwant %v", snapKeys, keys)
			}
			if held["logits"] != 1 || held["sample"] != 1 || held["append"] != 1 {
				t.Fatalf("the snapshot holds %v events in full, want one logits, one sample, one append", held)
			}

			// "Try it myself": the branch's log rebuilds every event, each
			// stage's latest in full and the earlier ones thin, as the
			// snapshot holds them (a replay keeps only what its answer needs)
			late.send("room_branch", nil)
			br := nextOf(late, wire.MsgRoomBranch, nil)
			var bp struct {
				Start map[string]any `json:"start"`
				Log   []string       `json:"log"`
			}
			json.Unmarshal(br.Payload, &bp)
			priv := dial(t, b)
			priv.send("resume", map[string]any{"start": bp.Start, "log": bp.Log})
			r := nextOf(priv, wire.MsgResumed, nil)
			rebuilt := groupEvents(r.Payload)
			if len(rebuilt) != len(all) {
				t.Fatalf("the branch rebuilt %d events, the run had %d", len(rebuilt), len(all))
			}
			latest := map[string]json.RawMessage{}
			for i, e := range rebuilt {
				if evKey(e) != keys[i] || info(e).Thin != info(evs[i]).Thin {
					t.Fatalf("rebuilt event %d: %s thin=%v, want %s thin=%v as in the snapshot", i, evKey(e), info(e).Thin, keys[i], info(evs[i]).Thin)
				}
				if s := heavyStage(e); s != "" {
					if latest[s] != nil {
						t.Fatalf("rebuilt event %d: a second %s in full, want only the latest", i, s)
					}
					latest[s] = e
				}
			}
			for s, e := range final {
				if untimed(t, latest[s]) != untimed(t, e) {
					t.Errorf("the branch's latest %s differs from the class's (timings aside)", s)
				}
			}
			t.Logf("snapshot %d bytes, the branch's rebuilt run %d", len(snap.Payload), len(r.Payload))
		})
	}
}
