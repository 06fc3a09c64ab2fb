package room

// rooms_expiry_internal_test.go: a room nobody joined closes soon after its
// presenter leaves (it cannot hold one of the server's rooms for the whole
// Idle); a closed room keeps a tombstone, not what it showed.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

func TestRoomExpiryAndTombstone(t *testing.T) {
	h := NewHub(ws.NewHub(ws.HubConfig{}), RoomOptions{})
	open := func(joined bool) *room {
		c := ws.DetachedConn(h.ws, "192.0.2.9")
		r, err := h.open(c, "/lessons/sampling", json.RawMessage(`{"section": 3, "panels": ["`+string(make([]byte, 0))+`"]}`))
		if err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.start, r.log = &wire.StartPayload{Prompt: "The"}, []wire.LogEntry{{Type: wire.CmdStep}}
		r.joined = joined
		r.presenter, r.left = nil, time.Now()
		r.mu.Unlock()
		return r
	}
	lonely, class := open(false), open(true)
	now := time.Now()
	cases := []struct {
		at                    time.Duration
		lonelyOpen, classOpen bool
	}{
		{time.Minute, true, true},
		{unjoinedRoomIdle + time.Minute, false, true},
		{h.opts.Idle + time.Minute, false, false},
	}
	for _, c := range cases {
		h.sweep(now.Add(c.at))
		for _, x := range []struct {
			r    *room
			open bool
		}{{lonely, c.lonelyOpen}, {class, c.classOpen}} {
			x.r.mu.Lock()
			closed := x.r.closed
			x.r.mu.Unlock()
			if closed == x.open {
				t.Errorf("%v after the presenter left: closed %v, want open %v (joined %v)", c.at, closed, x.open, x.r.joined)
			}
		}
	}
	lonely.mu.Lock()
	defer lonely.mu.Unlock()
	if lonely.start != nil || lonely.log != nil || lonely.pageState != nil || lonely.poll != nil || lonely.reason == "" {
		t.Errorf("closed room keeps start %v, log %v, page state %s, poll %v (reason %q): want a tombstone", lonely.start, lonely.log, lonely.pageState, lonely.poll, lonely.reason)
	}
}
