package web_test

// ws_test.go: the websocket protocol end to end: step, cancel, server full, origin check.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

type wsClient struct {
	t    testing.TB
	c    *websocket.Conn
	seq  int64
	sent int64
	gaps bool // /ws/room: seq increases, with gaps (the room's counter on this replica)
}

type inMsg struct {
	Type    string          `json:"type"`
	V       int             `json:"v"`
	Seq     int64           `json:"seq"`
	ID      int64           `json:"id"`
	Payload json.RawMessage `json:"payload"`
	size    int
}

func newWSServer(t testing.TB, lim ws.Limits) *httptest.Server {
	t.Helper()
	cat, _ := defaultCatalog(t)
	return serveCatalog(t, web.Options{Catalog: cat, Limits: lim})
}

// defaultCatalog is a catalog holding the embedded default model.
func defaultCatalog(t testing.TB) (*catalog.EngineCatalog, *engine.Model) {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	return cat, m
}

// batchingCatalog is defaultCatalog with the scheduler on (closed at cleanup).
func batchingCatalog(t testing.TB, on bool, o serve.Options) (*catalog.EngineCatalog, *engine.Model) {
	t.Helper()
	cat, m := defaultCatalog(t)
	cat.SetBatching(on, o)
	t.Cleanup(cat.CloseSchedulers)
	return cat, m
}

// serveCatalog starts an httptest server for the options (closed at cleanup).
func serveCatalog(t testing.TB, o web.Options) *httptest.Server {
	t.Helper()
	srv, err := web.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

func dial(t testing.TB, ts *httptest.Server) *wsClient {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c}
	if m := w.read(); m.Type != wire.MsgWelcome {
		t.Fatalf("first message %s, want welcome", m.Type)
	}
	return w
}

func (w *wsClient) send(typ string, payload any) int64 {
	w.t.Helper()
	w.sent++
	msg := map[string]any{"type": typ, "id": w.sent}
	if payload != nil {
		msg["payload"] = payload
	}
	if err := w.c.WriteJSON(msg); err != nil {
		w.t.Fatal(err)
	}
	return w.sent
}

func (w *wsClient) read() inMsg {
	w.t.Helper()
	w.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, b, err := w.c.ReadMessage()
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var m inMsg
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatal(err)
	}
	m.size = len(b)
	if m.V != wire.ProtocolVersion {
		w.t.Fatalf("message version %d", m.V)
	}
	if m.Seq != w.seq+1 && !(w.gaps && m.Seq > w.seq) {
		w.t.Fatalf("seq %d after %d: a message was lost or reordered", m.Seq, w.seq)
	}
	w.seq = m.Seq
	return m
}

type evPayload struct {
	Stage string `json:"stage"`
	Next  string `json:"next"`
	Seq   int    `json:"seq"`
	Stop  *struct {
		Reason string `json:"reason"`
	} `json:"stop"`
	Append *struct {
		ID       int `json:"id"`
		CacheLen int `json:"cache_len"`
	} `json:"append"`
}

func (w *wsClient) event() evPayload {
	w.t.Helper()
	m := w.read()
	if m.Type != wire.MsgEvent {
		w.t.Fatalf("got %s %s, want event", m.Type, m.Payload)
	}
	var e evPayload
	json.Unmarshal(m.Payload, &e)
	return e
}

func (w *wsClient) expectError(code string) {
	w.t.Helper()
	m := w.read()
	var e wire.ErrorPayload
	json.Unmarshal(m.Payload, &e)
	if m.Type != wire.MsgError || e.Code != code {
		w.t.Fatalf("got %s %s, want error %s", m.Type, m.Payload, code)
	}
}

func TestWebsocketProtocol(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)

	// commands out of order: an error, the connection stays usable
	w.send("step", nil)
	w.expectError("no_session")
	w.send("explode", nil)
	w.expectError("unknown_type")
	w.c.WriteMessage(websocket.TextMessage, []byte(`{"type":"start","payload":{"prompt":5}}`))
	w.expectError("bad_payload")
	w.send("start", map[string]any{"prompt": "x", "max_new_tokens": 3, "sampling": map[string]any{"temperature": -1}})
	w.expectError("bad_request")

	w.send("start", map[string]any{"prompt": "The President said", "max_new_tokens": 4, "sampling": map[string]any{"temperature": 0}})
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("got %s", m.Type)
	}
	for _, want := range []string{"tokenize", "embed", "prefill", "logits", "sample", "append"} {
		w.send("step", nil)
		e := w.event()
		if e.Stage != want {
			t.Fatalf("stage %s, want %s", e.Stage, want)
		}
	}
	w.send("get_logits", nil)
	m := w.read()
	var lg struct {
		Values []float32 `json:"values"`
	}
	json.Unmarshal(m.Payload, &lg)
	if m.Type != wire.MsgLogits || len(lg.Values) != 4096 {
		t.Fatalf("get_logits: %s with %d values", m.Type, len(lg.Values))
	}
	w.send("sample_n", map[string]any{"n": 100})
	m = w.read()
	if m.Type != wire.MsgSamples {
		t.Fatalf("sample_n: %s %s", m.Type, m.Payload)
	}
	// next token: logits, sample, append
	w.send("step_token", nil)
	for _, want := range []string{"logits", "sample", "append"} {
		if e := w.event(); e.Stage != want {
			t.Fatalf("step_token stage %s, want %s", e.Stage, want)
		}
	}
	// run to the end
	w.send("run", nil)
	var last evPayload
	for last.Stage != "stop" {
		last = w.event()
	}
	if last.Stop == nil || last.Stop.Reason != "max_new_tokens" {
		t.Fatalf("stop %+v", last.Stop)
	}
	w.send("step", nil)
	w.expectError("out_of_order")
	// rewind one token, then force a token
	w.send("rewind", map[string]any{"n": 1})
	if e := w.event(); e.Stage != "logits" || e.Next != "sample" {
		t.Fatalf("rewind event %+v", e)
	}
	w.send("force", map[string]any{"id": 100})
	var forced evPayload
	for forced.Stage != "append" && forced.Stage != "stop" {
		forced = w.event()
	}
	if forced.Append == nil || forced.Append.ID != 100 {
		t.Fatalf("forced append %+v", forced)
	}
	// reset restarts the same run
	w.send("reset", nil)
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("reset: %s", m.Type)
	}
	w.send("ping", nil)
	if m := w.read(); m.Type != wire.MsgPong {
		t.Fatalf("ping: %s", m.Type)
	}
}

func TestWebsocketCancelRun(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	w := dial(t, ts)
	w.send("start", map[string]any{"prompt": "The", "max_new_tokens": 250, "stop_at_eos": false, "sampling": map[string]any{"temperature": 0.8}})
	w.read()
	w.send("run", nil)
	w.event()
	w.send("cancel", nil)
	var e evPayload
	n := 0
	for e.Stage != "stop" {
		e = w.event()
		n++
	}
	if e.Stop.Reason != "cancelled" || n > 600 {
		t.Fatalf("stopped with %q after %d more events, want cancelled well before the end", e.Stop.Reason, n)
	}
}

func TestWebsocketServerFull(t *testing.T) {
	ts := newWSServer(t, ws.Limits{MaxSessions: 2})
	dial(t, ts)
	dial(t, ts)
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, b, err := c.ReadMessage()
	if err != nil || !strings.Contains(string(b), "server_full") || !strings.Contains(string(b), "try again") {
		t.Fatalf("third session: %s %v", b, err)
	}
}

func TestWebsocketOriginCheck(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	h := http.Header{"Origin": {"https://evil.example"}}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", h)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: err %v resp %v", err, resp)
	}
	h = http.Header{"Origin": {ts.URL}}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", h)
	if err != nil {
		t.Fatalf("same origin refused: %v", err)
	}
	c.Close()
}

// BenchmarkWebsocketStep measures a decode step's round trip over the
// protocol (command sent → event received) and the bytes per event.
func BenchmarkWebsocketStep(b *testing.B) {
	ts := newWSServer(b, ws.Limits{MsgsPerSecond: 1e6, Burst: 1e6})
	w := dial(b, ts)
	var lat []float64
	var bytes, events int
	for i := 0; i < b.N; i++ {
		if i%200 == 0 {
			w.send("start", map[string]any{"prompt": "The President said", "max_new_tokens": 220, "sampling": map[string]any{"temperature": 0.8}})
			w.read()
			for j := 0; j < 3; j++ { // tokenize, embed, prefill
				w.send("step", nil)
				w.read()
			}
		}
		t0 := time.Now()
		w.send("step_token", nil)
		for {
			m := w.read()
			if m.Type == wire.MsgError {
				b.Fatalf("error: %s", m.Payload)
			}
			bytes += m.size
			events++
			var e evPayload
			json.Unmarshal(m.Payload, &e)
			if e.Stage == "append" || e.Stage == "stop" {
				break
			}
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/token")
	b.ReportMetric(float64(bytes)/float64(events), "bytes/event")
}
