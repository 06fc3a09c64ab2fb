package room

// rooms_frames_test.go: the frames a room view prepares for its followers
// (msgLocked) are valid websocket frames that a websocket library reads
// back as the exact message, for every header size, and a large payload is
// shared by the frames, not copied into each.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/inferscope/inferscope/web/wire"
)

func TestRoomFramesReadBack(t *testing.T) {
	payload := func(n int) []byte { // a JSON string of n bytes in all
		return []byte(`"` + strings.Repeat("x", max(0, n-2)) + `"`)
	}
	cases := []struct {
		name    string
		payload []byte
		shared  bool
	}{
		{"no payload", nil, false},
		{"null payload", []byte("null"), false},
		{"small, 7-bit length", []byte(`{"a":1}`), false},
		{"126 bytes in all: 16-bit length", payload(126 - len(`{"type":"event","v":1,"seq":1,"payload":}`)), false},
		{"just under shared", payload(sharedPayloadMin - 1), false},
		{"shared, 16-bit length", payload(sharedPayloadMin), true},
		{"shared, 64-bit length", payload(70000), true},
	}
	// the server side writes the prepared frames to the socket as the
	// follower's writer does; the client is gorilla's
	frames := make(chan []*fanMsg, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var bufs net.Buffers
		for _, m := range <-frames {
			bufs = append(bufs, m.frame...)
		}
		bufs.WriteTo(ws.NetConn())
		ws.ReadMessage() // until the client closes
	}))
	defer ts.Close()

	v := &roomView{h: &Hub{}}
	var msgs []*fanMsg
	var want []string
	for i, c := range cases {
		m := v.msgLocked(wire.MsgEvent, c.payload)
		msgs = append(msgs, m)
		w := fmt.Sprintf(`{"type":"event","v":1,"seq":%d}`, i+1)
		if len(c.payload) > 0 && string(c.payload) != "null" {
			w = fmt.Sprintf(`{"type":"event","v":1,"seq":%d,"payload":%s}`, i+1, c.payload)
		}
		want = append(want, w)
		if m.size != len(w) {
			t.Errorf("%s: size %d, want %d", c.name, m.size, len(w))
		}
		if shared := len(m.frame) == 3 && len(c.payload) > 0 && &m.frame[1][0] == &c.payload[0]; shared != c.shared {
			t.Errorf("%s: payload shared %v, want %v", c.name, shared, c.shared)
		}
	}
	frames <- msgs
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, cs := range cases {
		typ, got, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", cs.name, err)
		}
		if typ != websocket.TextMessage || !bytes.Equal(got, []byte(want[i])) || !json.Valid(got) {
			t.Errorf("%s: read %d %.80q (%d bytes), want text %.80q (%d bytes)", cs.name, typ, got, len(got), want[i], len(want[i]))
		}
	}

	// the baseline (plain writes) carries the same message for gorilla to frame
	v = &roomView{h: &Hub{plainWrites: true}}
	for i, cs := range cases {
		m := v.msgLocked(wire.MsgEvent, cs.payload)
		if m.frame != nil || string(m.data) != want[i] || m.size != len(want[i]) {
			t.Errorf("%s, plain: frame %v, data %.80q, want %.80q", cs.name, m.frame != nil, m.data, want[i])
		}
	}
}

// TestRoomLateJoinSharesSnapshot: a late joiner's snapshot (the run so far
// in one resumed message) is built once and shared; each joiner costs only
// its own small envelope, not a copy of the run.
func TestRoomLateJoinSharesSnapshot(t *testing.T) {
	v := &roomView{h: &Hub{}, started: []byte(`{"model":"m","next":"logits"}`)}
	ev := []byte(`{"seq":0,"stage":"append","text":"` + strings.Repeat("x", 8000) + `"}`)
	for range 100 {
		v.events = append(v.events, viewEvent{slot: -1, full: ev})
	}
	f := &follower{v: v, send: make(chan *fanMsg, 8), done: make(chan struct{})}
	drain := func() (n int) {
		for len(f.send) > 0 {
			m := <-f.send
			n += m.size
		}
		return n
	}
	v.sendSnapshotLocked(f) // builds the snapshot
	size := drain()
	if size < 100*len(ev) {
		t.Fatalf("the snapshot is %d bytes, want the 100 events (%d bytes)", size, 100*len(ev))
	}
	const joiners = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range joiners {
		v.sendSnapshotLocked(f)
		drain()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / joiners; per > 16<<10 {
		t.Errorf("each late joiner allocated %d bytes for a %d-byte snapshot: want its own envelope only (under 16 KiB)", per, size)
	}
}

// TestRoomDeflateFramesReadBack: for a follower that negotiated
// permessage-deflate, a large message goes as the frame the view
// compressed once (a stored block for the envelope, the shared payload
// deflated, the closing brace): gorilla, with compression on, reads back
// the exact message; small messages go as plain frames. The header offer
// is read strictly.
func TestRoomDeflateFramesReadBack(t *testing.T) {
	big := []byte(`{"events":[` + strings.Repeat(`{"seq":1,"stage":"logits","thin":true},`, 3000) + `{"seq":2}]}`)
	payloads := [][]byte{[]byte(`{"a":1}`), big[:sharedPayloadMin-2], append([]byte(`"`+strings.Repeat("x", sharedPayloadMin)), '"'), big}
	frames := make(chan [][]byte, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !offersDeflate(r.Header) {
			t.Errorf("gorilla's offer %q not read as permessage-deflate", r.Header.Get("Sec-WebSocket-Extensions"))
		}
		ws, err := (&websocket.Upgrader{EnableCompression: true}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		bufs := net.Buffers(<-frames)
		bufs.WriteTo(ws.NetConn())
		ws.ReadMessage()
	}))
	defer ts.Close()
	v := &roomView{h: &Hub{}, deflaters: 1}
	var parts [][]byte
	var want []string
	for i, p := range payloads {
		m := v.msgLocked(wire.MsgEvents, p)
		if (m.zframe != nil) != (len(p) >= sharedPayloadMin) {
			t.Fatalf("payload %d (%d bytes): compressed %v", i, len(p), m.zframe != nil)
		}
		if m.zframe != nil {
			parts = append(parts, m.zframe...)
			if len(p) > 10000 && m.zsize*4 > m.size {
				t.Errorf("payload %d: compressed to %d of %d bytes", i, m.zsize, m.size)
			}
		} else {
			parts = append(parts, m.frame...)
		}
		want = append(want, fmt.Sprintf(`{"type":"events","v":1,"seq":%d,"payload":%s}`, i+1, p))
	}
	if z := v.msgLocked(wire.MsgEvents, big); &z.zframe[1][0] != &parts[len(parts)-2][0] {
		t.Error("the same payload was compressed again, not taken from the cache")
	}
	frames <- parts
	d := websocket.Dialer{EnableCompression: true}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range payloads {
		_, got, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if string(got) != want[i] {
			t.Fatalf("message %d: read %.80q (%d bytes), want %.80q (%d bytes)", i, got, len(got), want[i], len(want[i]))
		}
	}

	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"permessage-deflate; client_max_window_bits", true},
		{"permessage-deflate", true},
		{"x-webkit-deflate-frame, permessage-deflate; server_no_context_takeover", true},
		{"", false},
		{"x-webkit-deflate-frame", false},
		{"permessage-deflate; client_max_window_bits=\"15\"", false}, // a quoted value: not read, plain frames
		{"foo bar, permessage-deflate", false},
		{"permessage-deflate;;", false},
		{"permessage-deflate; server_max_window_bits=10", false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Sec-WebSocket-Extensions", tc.header)
		}
		if got := offersDeflate(h); got != tc.want {
			t.Errorf("offersDeflate(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
