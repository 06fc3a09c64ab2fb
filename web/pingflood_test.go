package web_test

// pingflood_test.go: one writer per socket, through the real stack
// (Serve, so every connection is a countedConn). A client pings as fast as
// it can while the server streams a run; every message must still arrive
// whole (a pong written by the reader once landed inside an event's JSON).

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// flood pings c every 20 µs until stop closes; it reports how many pongs
// came back.
func flood(c *websocket.Conn, stop chan struct{}) (pongs *atomic.Int64, done *sync.WaitGroup) {
	pongs, done = &atomic.Int64{}, &sync.WaitGroup{}
	c.SetPongHandler(func(string) error { pongs.Add(1); return nil })
	done.Add(1)
	go func() {
		defer done.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if c.WriteControl(websocket.PingMessage, []byte(fmt.Sprint(i)), time.Now().Add(time.Second)) != nil {
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	return pongs, done
}

// readWhole reads messages until the run's stop event: each must be a
// whole JSON message of the protocol.
func readWhole(t *testing.T, c *websocket.Conn, what string) (msgs int) {
	t.Helper()
	for {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		typ, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("%s: after %d messages: %v", what, msgs, err)
		}
		msgs++
		var m struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if typ != websocket.TextMessage || json.Unmarshal(b, &m) != nil || m.Type == "" {
			t.Fatalf("%s: message %d is not a whole protocol message: %q", what, msgs, b[:min(len(b), 200)])
		}
		if m.Type == wire.MsgEvent && strings.Contains(string(m.Payload), `"stage":"stop"`) {
			return msgs
		}
	}
}

func TestPingFloodThroughServe(t *testing.T) {
	t.Parallel()
	base := serveReal(t, ws.Limits{MsgsPerSecond: 1000, Burst: 1000})
	ws := "ws" + strings.TrimPrefix(base, "http")
	const rounds = 20
	for r := range rounds {
		c, _, err := websocket.DefaultDialer.Dial(ws+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		pongs, done := flood(c, stop)
		c.WriteJSON(map[string]any{"type": "start", "id": 1, "payload": map[string]any{"prompt": "The", "max_new_tokens": 200, "stop_at_eos": false,
			"sampling": map[string]any{"temperature": 0.8, "seed": r}}})
		c.WriteJSON(map[string]any{"type": "run", "id": 2})
		n := readWhole(t, c, fmt.Sprintf("round %d", r+1))
		close(stop)
		done.Wait()
		c.Close()
		if r == 0 {
			t.Logf("round 1: %d whole messages with %d pongs among them", n, pongs.Load())
		}
		if pongs.Load() == 0 {
			t.Errorf("round %d: no pong came back", r+1)
		}
	}
}

// TestPingFloodFollower: the same for a room's follower socket while the
// presenter runs.
func TestPingFloodFollower(t *testing.T) {
	base := serveReal(t, ws.Limits{MsgsPerSecond: 1000, Burst: 1000})
	ws := "ws" + strings.TrimPrefix(base, "http")
	p, _, err := websocket.DefaultDialer.Dial(ws+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var m struct {
		Type    string
		Payload struct{ Code string }
	}
	p.ReadJSON(&m) // welcome
	p.WriteJSON(map[string]any{"type": "room_open", "id": 1, "payload": map[string]any{"page": "/lab"}})
	for m.Type != wire.MsgRoomOpened {
		p.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := p.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
	}
	f, _, err := websocket.DefaultDialer.Dial(ws+"/ws/room?code="+m.Payload.Code, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	pongs, done := flood(f, stop)
	go func() { // the presenter's own messages are read and dropped
		for {
			if _, _, err := p.ReadMessage(); err != nil {
				return
			}
		}
	}()
	for r := range 5 {
		p.WriteJSON(map[string]any{"type": "start", "id": 10 + 2*r, "payload": map[string]any{"prompt": "The", "max_new_tokens": 100, "stop_at_eos": false,
			"sampling": map[string]any{"temperature": 0.8, "seed": r}}})
		p.WriteJSON(map[string]any{"type": "run", "id": 11 + 2*r})
		readWhole(t, f, fmt.Sprintf("follower, run %d", r+1))
	}
	close(stop)
	done.Wait()
	if pongs.Load() == 0 {
		t.Error("the follower got no pong")
	}
}
