package ws_test

// cancel_late_test.go: a cancel that arrives as a stepping command's last
// stage finishes still stops the run, and the client hears it (readPump
// only cancels the command's context then; before the fix the command
// ended as if nothing had been asked and the page waited for a stop that
// never came).

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/ws"
)

func TestCancelAsTheLastStageEnds(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	// the cancel lands as command 3 ends: after its last stage, before it returns (by id: command
	// 2's end can come after the test has read its last event, and a flag armed then caught it)
	var fired atomic.Bool
	defer ws.SetAfterStages(func(c *ws.Conn, id int64) {
		if id == 3 && fired.CompareAndSwap(false, true) {
			ws.CancelAsReadPumpDoes(c)
		}
	})()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type msg struct {
		Type    string `json:"type"`
		ID      int64  `json:"id"`
		Payload struct {
			Stage string `json:"stage"`
			Code  string `json:"code"`
			Stop  *struct {
				Reason string `json:"reason"`
			} `json:"stop"`
		} `json:"payload"`
	}
	send := func(v string) {
		if err := c.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() msg {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v (the cancel was not answered)", err)
		}
		var m msg
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send(`{"type":"start","id":1,"payload":{"prompt":"Once upon a time","max_new_tokens":20,"sampling":{"temperature":0,"top_p":1}}}`)
	for m := read(); m.Type != "started"; m = read() {
		if m.Type == "error" {
			t.Fatalf("start: %+v", m)
		}
	}
	send(`{"type":"step_token","id":2}`) // to the first token: tokenize … append
	for m := read(); !(m.Type == "event" && m.Payload.Stage == "append"); m = read() {
	}
	send(`{"type":"step_token","id":3}`) // the next token; the cancel lands as its append ends
	for {
		m := read()
		if m.Type == "error" {
			t.Fatalf("step_token: %+v", m)
		}
		if m.Type == "event" && m.Payload.Stop != nil {
			if m.Payload.Stop.Reason != "cancelled" || m.ID != 3 {
				t.Fatalf("stop %q for command %d, want cancelled for 3", m.Payload.Stop.Reason, m.ID)
			}
			break
		}
	}
	send(`{"type":"step_token","id":4}`)
	if m := read(); m.Type != "error" || m.Payload.Code != "out_of_order" {
		t.Fatalf("a step after the cancel: %+v, want an out_of_order error (the run has stopped)", m)
	}
}
