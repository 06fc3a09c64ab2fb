package ws

// conn_frames_test.go: the session writer's frames (writeQueued) are, read
// by a websocket client, exactly the messages frame() writes, in order,
// for payloads that need each length encoding, and without a payload.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/inferscope/inferscope/web/metrics"
	"github.com/inferscope/inferscope/web/wire"
)

func TestWriteQueuedFramesEqualMessages(t *testing.T) {
	msgs := []OutMsg{
		{Type: wire.MsgWelcome, Payload: json.RawMessage(`{"a":1}`)},
		{Type: wire.MsgEvent, id: 7, Payload: json.RawMessage(`{"seq":1,"stage":"logits","x":"` + strings.Repeat("y", 200) + `"}`)},
		{Type: wire.MsgEvent, Payload: json.RawMessage(`{"big":"` + strings.Repeat("z", 70000) + `"}`)},
		{Type: "pong", id: 3},
		{Type: "x", Payload: json.RawMessage(`null`)},
		{Type: wire.MsgEvent, Payload: json.RawMessage(`[` + strings.Repeat("1,", 60) + `1]`)},
	}
	done := make(chan error, 1)
	mt := &metrics.Metrics{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			done <- err
			return
		}
		c := &Conn{ws: ws, s: &Hub{Metrics: mt}, send: make(chan OutMsg, len(msgs)), lim: Limits{WriteWait: 5 * time.Second}}
		for _, m := range msgs[1:4] {
			c.send <- m // queued behind the first: one writev of four messages
		}
		ok := c.writeQueued(msgs[0])
		if ok {
			for _, m := range msgs[4:] {
				ok = ok && c.writeQueued(m)
			}
		}
		if !ok {
			done <- errClosed
		}
		close(done)
	}))
	defer srv.Close()
	cl, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var total int64
	for i, m := range msgs {
		total += int64(len(m.Frame(int64(i + 1))))
		cl.SetReadDeadline(time.Now().Add(5 * time.Second))
		typ, got, err := cl.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := m.Frame(int64(i + 1)); typ != websocket.TextMessage || !bytes.Equal(got, want) {
			t.Fatalf("message %d: %.120s, want %.120s", i, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("message %d is not JSON", i)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := mt.BytesSent.Load(); got != total {
		t.Fatalf("bytes sent %d, messages %d bytes", got, total)
	}
}
