package web_test

// rooms_networks_test.go: the presenter sees how many students each
// network brings (opaque ids, never addresses; the class never sees them)
// and can remove one network: its students leave with a plain message and
// cannot join again, on every replica; the rest of the class stays.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

type networkCounts struct {
	Followers int `json:"followers"`
	Networks  []struct {
		ID       string `json:"id"`
		Students int    `json:"students"`
	} `json:"networks"`
}

// followFrom follows a room from a client address with a visitor cookie;
// it returns the client and the first message's type or error code.
func followFrom(t *testing.T, ts string, ip, code, cookie string) (*wsClient, string) {
	t.Helper()
	d := fromAddr(ip)
	c, _, err := d.Dial("ws"+strings.TrimPrefix(ts, "http")+"/ws/room?code="+code, http.Header{"Cookie": {"inferscope_visitor=" + cookie}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c, gaps: true}
	m := w.read()
	if m.Type == wire.MsgError {
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		return w, e.Code
	}
	return w, m.Type
}

func TestPresenterSeesNetworksAndRemovesOne(t *testing.T) {
	cases := []struct {
		name     string
		replicas func(t *testing.T) (presenter, students string)
	}{
		{"one server", func(t *testing.T) (string, string) {
			ts := roomServer(t, room.RoomOptions{})
			return ts.URL, ts.URL
		}},
		{"two replicas over NATS", func(t *testing.T) (string, string) {
			url := startNATS(t)
			return natsReplica(t, url).URL, natsReplica(t, url).URL
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pts, sts := tc.replicas(t)
			c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(pts, "http")+"/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			p := &wsClient{t: t, c: c}
			p.read() // welcome
			room := openRoom(t, p, map[string]any{"page": "/lab"})
			// a class of three behind one address, a stranger with two browsers at another
			class := []*wsClient{}
			for _, cookie := range []string{"AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCC"} {
				w, code := followFrom(t, sts, "127.0.0.1", room.Code, cookie)
				if code != wire.MsgRoomJoined {
					t.Fatalf("a student: %s", code)
				}
				class = append(class, w)
			}
			var strangers []*wsClient
			for _, cookie := range []string{"DDDDDDDDDDDDDDDDDDDDDD", "EEEEEEEEEEEEEEEEEEEEEE"} {
				w, code := followFrom(t, sts, "127.0.0.3", room.Code, cookie)
				if code != wire.MsgRoomJoined {
					t.Fatalf("the stranger: %s", code)
				}
				strangers = append(strangers, w)
			}
			var seen networkCounts
			for {
				m := nextType(p, wire.MsgRoomCounts)
				seen = networkCounts{}
				json.Unmarshal(m.Payload, &seen)
				if seen.Followers == 5 && len(seen.Networks) == 2 {
					break
				}
			}
			if seen.Networks[0].Students != 3 || seen.Networks[1].Students != 2 {
				t.Fatalf("networks %+v, want 3 students then 2", seen.Networks)
			}
			for _, n := range seen.Networks {
				if len(n.ID) != 8 || strings.Contains(n.ID, "127.") {
					t.Fatalf("network id %q: want 8 hex digits, never the address", n.ID)
				}
			}
			// the class's own counts carry no networks
			for {
				m := nextType(class[0], wire.MsgRoomCounts)
				if strings.Contains(string(m.Payload), "networks") {
					t.Fatalf("a student sees the networks: %s", m.Payload)
				}
				var n networkCounts
				json.Unmarshal(m.Payload, &n)
				if n.Followers == 5 {
					break
				}
			}

			// refused by name: a wrong key, a malformed network
			p.send("room_remove", map[string]any{"code": room.Code, "key": "wrong", "network": seen.Networks[1].ID})
			if m := readReply(p); !strings.Contains(string(m.Payload), "bad_key") {
				t.Errorf("room_remove with a wrong key: %s %s", m.Type, m.Payload)
			}
			p.send("room_remove", map[string]any{"code": room.Code, "key": room.Key, "network": "127.0.0.3"})
			if m := readReply(p); !strings.Contains(string(m.Payload), "bad_payload") || !strings.Contains(string(m.Payload), "hex") {
				t.Errorf("room_remove of an address: %s %s", m.Type, m.Payload)
			}

			p.send("room_remove", map[string]any{"code": room.Code, "key": room.Key, "network": seen.Networks[1].ID})
			for _, s := range strangers {
				m := nextType(s, wire.MsgError)
				var e wire.ErrorPayload
				json.Unmarshal(m.Payload, &e)
				if e.Code != "removed" || !strings.Contains(e.Message, "presenter removed your network") {
					t.Fatalf("a removed student: %+v", e)
				}
				s.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, _, err := s.c.ReadMessage(); err == nil {
					t.Fatal("a removed student's socket stays open")
				}
			}
			if _, code := followFrom(t, sts, "127.0.0.3", room.Code, "FFFFFFFFFFFFFFFFFFFFFF"); code != "removed" {
				t.Errorf("the removed network joining again: %s, want removed", code)
			}
			for {
				m := nextType(p, wire.MsgRoomCounts)
				var n networkCounts
				json.Unmarshal(m.Payload, &n)
				if n.Followers == 3 && len(n.Networks) == 1 && n.Networks[0].ID == seen.Networks[0].ID {
					break
				}
			}
			// the class carries on
			p.send("start", roomStart("The President said", 4))
			for _, w := range class {
				nextOf(w, wire.MsgStarted, nil)
			}
			if _, code := followFrom(t, sts, "127.0.0.1", room.Code, "GGGGGGGGGGGGGGGGGGGGGG"); code != wire.MsgRoomJoined {
				t.Errorf("a late student of the class: %s", code)
			}
		})
	}
}
