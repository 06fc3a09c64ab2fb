package web_test

// rooms_capture_test.go: rooms one machine cannot capture — a cap on the
// rooms one address owns, presenter-key guesses charged like join-code
// guesses, and cross-site requests that never lock a student's network
// out of /join.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

func TestRoomsPerAddress(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	for range 4 {
		openRoom(t, dial(t, ts), map[string]any{"page": "/lab"})
	}
	w := dial(t, ts)
	w.send("room_open", map[string]any{"page": "/lab"})
	m := readReply(w)
	var e wire.ErrorPayload
	json.Unmarshal(m.Payload, &e)
	if m.Type != wire.MsgError || e.Code != "too_many_rooms" || !strings.Contains(e.Message, "the limit per address is 4") {
		t.Fatalf("a fifth room from one address: %s %s, want too_many_rooms naming the limit", m.Type, m.Payload)
	}
	// another address (another school, another teacher's laptop) still opens one
	other := dialWith(t, fromAddr("127.0.0.2"), wsURL(ts), nil)
	openRoom(t, other, map[string]any{"page": "/lab"})
}

func TestRoomClaimGuessesCharged(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{JoinFailures: 3, JoinRefill: time.Hour})
	w := dial(t, ts)
	codes := []string{}
	for range 3 {
		w.send("room_claim", map[string]any{"code": "QQQQQQ", "key": "nope"})
		var e wire.ErrorPayload
		json.Unmarshal(readReply(w).Payload, &e)
		codes = append(codes, e.Code)
	}
	w.send("room_claim", map[string]any{"code": "QQQQQQ", "key": "nope"})
	var e wire.ErrorPayload
	json.Unmarshal(readReply(w).Payload, &e)
	if strings.Join(codes, ",") != "room_not_found,room_not_found,room_not_found" || e.Code != "rate_limited" {
		t.Fatalf("claims with a random code: %v then %s, want room_not_found ×3 then rate_limited", codes, e.Code)
	}
	// the guard is the address's: /join is locked too, another address is not
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(ts.URL + "/join?code=QQQQQQ")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("/join after the claim guesses: %d, want 429", resp.StatusCode)
	}
	other := dialWith(t, fromAddr("127.0.0.2"), wsURL(ts), nil)
	other.send("room_claim", map[string]any{"code": "QQQQQQ", "key": "nope"})
	json.Unmarshal(readReply(other).Payload, &e)
	if e.Code != "room_not_found" {
		t.Errorf("another address's claim: %s, want room_not_found", e.Code)
	}
}

func TestJoinCrossSiteNotCharged(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{JoinFailures: 3, JoinRefill: time.Hour})
	room := openRoom(t, dial(t, ts), map[string]any{"page": "/lab"})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(code string, h map[string]string) int {
		req, _ := http.NewRequest("GET", ts.URL+"/join?code="+code, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := []struct {
		name string
		h    map[string]string
	}{
		{"an <img> on another site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"a fetch from another origin", map[string]string{"Origin": "https://evil.example"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 10 {
				if s := get("QQQQQQ", c.h); s != http.StatusNotFound {
					t.Fatalf("a cross-site wrong code: %d, want 404", s)
				}
			}
			if s := get(room.Code, nil); s != http.StatusSeeOther {
				t.Fatalf("the student's own join after 10 cross-site wrong codes: %d, want 303 (not locked out)", s)
			}
		})
	}
	// typed here, wrong codes still count
	for range 3 {
		get("QQQQQQ", map[string]string{"Sec-Fetch-Site": "same-origin"})
	}
	if s := get(room.Code, nil); s != http.StatusTooManyRequests {
		t.Errorf("after 3 wrong codes typed on /join: %d, want 429", s)
	}
}

// TestPresenterSessionReserved: while a presenter is away, the server
// keeps a session free for it: students filling the server cannot take
// it, and the presenter coming back with its room and key gets in and
// reclaims the room (it used to get server_full).
func TestPresenterSessionReserved(t *testing.T) {
	cat, _ := defaultCatalog(t)
	ts := serveCatalog(t, web.Options{Catalog: cat, Limits: ws.Limits{MaxSessions: 3}})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	// the presenter's session is released (the server saw the socket go)
	for !strings.Contains(metricsText(t, ts), "\ninferscope_sessions 0\n") {
		if time.Now().After(deadline) {
			t.Fatal("the presenter's closed session was never released")
		}
		time.Sleep(10 * time.Millisecond)
	}
	first := func(w *wsClient, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		m := w.read()
		if m.Type == wire.MsgError {
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			return e.Code
		}
		return m.Type
	}
	try := func(query string) (*wsClient, string) {
		c, _, err := websocket.DefaultDialer.Dial(wsURL(ts)+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		w := &wsClient{t: t, c: c}
		return w, first(w, nil)
	}
	// two students get in; a third is refused: the last session is the presenter's
	var got []string
	for range 3 {
		_, code := try("")
		got = append(got, code)
	}
	if strings.Join(got, ",") != "welcome,welcome,server_full" {
		t.Fatalf("students while the presenter is away: %v, want welcome ×2 then server_full", got)
	}
	// a wrong key does not get the reserve
	if _, code := try("?room=" + room.Code + "&key=wrong"); code != "server_full" {
		t.Errorf("a wrong key: %s, want server_full", code)
	}
	w, code := try("?room=" + room.Code + "&key=" + room.Key)
	if code != "welcome" {
		t.Fatalf("the presenter coming back: %s, want welcome", code)
	}
	w.send("room_claim", map[string]any{"code": room.Code, "key": room.Key})
	if m := readReply(w); m.Type != wire.MsgRoomOpened {
		t.Fatalf("reclaim: %s %s", m.Type, m.Payload)
	}
}

// TestFollowersPerVisitor: one machine cannot fill a class with follower
// sockets: a browser (or a client address without the visitor cookie)
// follows a room in at most 4 tabs; other students still join.
func TestFollowersPerVisitor(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	room := openRoom(t, dial(t, ts), map[string]any{"page": "/lab"})
	join := func(cookie string) string {
		h := http.Header{}
		if cookie != "" {
			h.Set("Cookie", "inferscope_visitor="+cookie)
		}
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/room?code="+room.Code, h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		w := &wsClient{t: t, c: c, gaps: true}
		m := w.read()
		if m.Type == wire.MsgError {
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			return e.Code
		}
		return m.Type
	}
	for _, who := range []string{"", "AAAAAAAAAAAAAAAAAAAAAA"} {
		var got []string
		for range 5 {
			got = append(got, join(who))
		}
		if strings.Join(got, ",") != "room_joined,room_joined,room_joined,room_joined,too_many_tabs" {
			t.Errorf("visitor %q: %v, want 4 joins then too_many_tabs", who, got)
		}
	}
	if got := join("BBBBBBBBBBBBBBBBBBBBBB"); got != "room_joined" {
		t.Errorf("another student: %s", got)
	}
}

// metricsText is the server's /metrics page.
func metricsText(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	res, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
