package web_test

// rooms_test.go: classroom rooms over the websocket protocol: followers
// see the presenter's events (a late joiner too), can never command the
// presenter's session, wrong keys are refused, branch and rejoin, polls,
// counts, limits and bad codes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

func roomServer(t testing.TB, ro room.RoomOptions) *httptest.Server {
	t.Helper()
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat, Rooms: ro})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close() })
	return ts
}

func roomStart(prompt string, n int) map[string]any {
	return map[string]any{"prompt": prompt, "max_new_tokens": n, "sampling": map[string]any{"temperature": 0.9, "top_p": 0.95, "seed": 7}}
}

type opened struct {
	Code string `json:"code"`
	Key  string `json:"key"`
}

// openRoom makes w present a new room.
func openRoom(t testing.TB, w *wsClient, payload any) opened {
	t.Helper()
	w.send("room_open", payload)
	m := w.read()
	if m.Type != wire.MsgRoomOpened {
		t.Fatalf("room_open: %s %s", m.Type, m.Payload)
	}
	var o opened
	json.Unmarshal(m.Payload, &o)
	if len(o.Code) != 6 || len(o.Key) < 32 {
		t.Fatalf("room_opened %s: want a 6-character code and a long key", m.Payload)
	}
	return o
}

// dialRoom connects a follower; the first message is room_joined (or an error).
func dialRoom(t testing.TB, ts *httptest.Server, code string) (*wsClient, inMsg) {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/room?code="+code, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c, gaps: true}
	return w, w.read()
}

// nextOf reads until a message of type typ, returning it; events seen on
// the way are appended to evs.
func nextOf(w *wsClient, typ string, evs *[]string) inMsg {
	w.t.Helper()
	for {
		m := w.read()
		if m.Type == typ {
			return m
		}
		if m.Type == wire.MsgEvent && evs != nil {
			*evs = append(*evs, evKey(m.Payload))
		}
		if m.Type == wire.MsgError {
			w.t.Fatalf("waiting for %s: error %s", typ, m.Payload)
		}
	}
}

// readReply reads the next message that is not room_counts: the class's
// counts reach followers at any time, between a command and its reply.
func readReply(w *wsClient) inMsg {
	w.t.Helper()
	m := w.read()
	for m.Type == wire.MsgRoomCounts {
		m = w.read()
	}
	return m
}

// evKey identifies an event: its run seq, stage and appended token.
func evKey(p json.RawMessage) string {
	var e evPayload
	json.Unmarshal(p, &e)
	k := fmt.Sprintf("%d:%s", e.Seq, e.Stage)
	if e.Append != nil {
		k += fmt.Sprintf(":%d", e.Append.ID)
	}
	if e.Stop != nil {
		k += ":" + e.Stop.Reason
	}
	return k
}

// presenterEvents steps the presenter n tokens and returns the event keys.
func presenterTokens(t *testing.T, p *wsClient, n int) []string {
	t.Helper()
	var keys []string
	for range n {
		p.send("step_token", nil)
		for {
			m := p.read()
			if m.Type != wire.MsgEvent {
				continue // room_counts and the like
			}
			keys = append(keys, evKey(m.Payload))
			var e evPayload
			json.Unmarshal(m.Payload, &e)
			if e.Append != nil || e.Stop != nil {
				break
			}
		}
	}
	return keys
}

// followEvents reads a follower's events until it has n of them.
func followEvents(t *testing.T, f *wsClient, n int) []string {
	t.Helper()
	var keys []string
	for len(keys) < n {
		m := f.read()
		switch m.Type {
		case wire.MsgEvent:
			keys = append(keys, evKey(m.Payload))
		case wire.MsgResumed:
			var r struct {
				Events []json.RawMessage `json:"events"`
			}
			json.Unmarshal(m.Payload, &r)
			keys = keys[:0]
			for _, e := range r.Events {
				keys = append(keys, evKey(e))
			}
		case wire.MsgStarted:
			keys = keys[:0]
		case wire.MsgError:
			t.Fatalf("follower got error %s", m.Payload)
		}
	}
	return keys
}

func TestRoomFollowersSeePresenterEvents(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	early, joined := dialRoom(t, ts, strings.ToLower(room.Code)) // codes are typed in any case
	if joined.Type != wire.MsgRoomJoined {
		t.Fatalf("early follower: %s %s", joined.Type, joined.Payload)
	}
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	nextOf(early, wire.MsgStarted, nil)
	for range 3 { // tokenize, embed, prefill one stage at a time
		p.send("step", nil)
		nextOf(p, wire.MsgEvent, nil)
	}
	want := []string{"1:tokenize", "2:embed", "3:prefill"}
	want = append(want, presenterTokens(t, p, 3)...)

	late, joined := dialRoom(t, ts, room.Code)
	if joined.Type != wire.MsgRoomJoined {
		t.Fatalf("late follower: %s", joined.Type)
	}
	if got := followEvents(t, late, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("late joiner's snapshot:\n got %v\nwant %v", got, want)
	}
	if got := followEvents(t, early, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("early follower's stream:\n got %v\nwant %v", got, want)
	}
	more := presenterTokens(t, p, 2)
	for name, f := range map[string]*wsClient{"early": early, "late": late} {
		if got := followEvents(t, f, len(more)); strings.Join(got, " ") != strings.Join(more, " ") {
			t.Errorf("%s follower, live:\n got %v\nwant %v", name, got, more)
		}
	}
}

// TestRoomFollowerCannotCommand: whatever a follower sends, the
// presenter's session does not move; keys are checked on every presenter
// command; a reclaim moves the room to the new connection.
func TestRoomFollowerCannotCommand(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	f, _ := dialRoom(t, ts, room.Code)
	nextOf(f, wire.MsgRoomLog, nil)
	for _, cmd := range []struct {
		typ     string
		payload any
	}{
		{"step", nil}, {"run", nil}, {"step_token", nil}, {"reset", nil}, {"cancel", nil},
		{"start", roomStart("hijack", 4)}, {"force", map[string]int{"id": 5}}, {"rewind", map[string]int{"n": 1}},
		{"resume", map[string]any{"start": roomStart("x", 2), "log": []string{"run"}}},
		{"room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "q?", "options": []string{"a", "b"}}},
		{"room_close", map[string]any{"code": room.Code, "key": room.Key}},
		{"room_recall", map[string]any{"code": room.Code, "key": room.Key}},
	} {
		f.send(cmd.typ, cmd.payload)
		m := readReply(f)
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgError || e.Code != "following" {
			t.Errorf("follower %s: got %s %s, want error following", cmd.typ, m.Type, m.Payload)
		}
	}
	// the presenter's run has not moved: its first step is still tokenize
	p.send("step", nil)
	if m := nextOf(p, wire.MsgEvent, nil); evKey(m.Payload) != "1:tokenize" {
		t.Fatalf("presenter's first step after follower commands: %s", evKey(m.Payload))
	}
	if m := nextOf(f, wire.MsgEvent, nil); evKey(m.Payload) != "1:tokenize" {
		t.Fatalf("follower saw %s", evKey(m.Payload))
	}

	// wrong keys, from another browser
	o := dial(t, ts)
	for _, typ := range []string{"room_claim", "room_poll", "room_close", "room_recall", "room_reveal"} {
		o.send(typ, map[string]any{"code": room.Code, "key": strings.Repeat("0", 48), "question": "q?", "options": []string{"a", "b"}})
		o.expectError("bad_key")
	}
	o.send("room_claim", map[string]any{"code": "ZZZZZZ", "key": room.Key})
	o.expectError("room_not_found")
	o.send("room_claim", map[string]any{"code": room.Code})
	o.expectError("bad_payload")
	// the right key, from a connection that is not presenting: a poll is refused
	o.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "q?", "options": []string{"a", "b"}})
	o.expectError("not_presenter")

	// reclaim with the key (the presenter's reloaded page): the run is rebuilt from the room's log
	o.send("room_claim", map[string]any{"code": room.Code, "key": room.Key})
	nextOf(o, wire.MsgRoomOpened, nil)
	r := nextOf(o, wire.MsgResumed, nil)
	var rs struct {
		Events []json.RawMessage `json:"events"`
	}
	json.Unmarshal(r.Payload, &rs)
	if len(rs.Events) != 1 || evKey(rs.Events[0]) != "1:tokenize" {
		t.Fatalf("reclaimed run has %d events, want the tokenize step", len(rs.Events))
	}
	// the old presenter's next command is checked and refused as a presenter command
	p.send("step", nil)
	for {
		m := p.read()
		if m.Type == wire.MsgError {
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if e.Code != "not_presenter" {
				t.Fatalf("old presenter: error %s, want not_presenter", e.Code)
			}
			break
		}
	}
	// its step ran privately: the class sees only the new presenter
	o.send("step", nil)
	if m := nextOf(o, wire.MsgEvent, nil); evKey(m.Payload) != "2:embed" {
		t.Fatalf("new presenter step: %s", evKey(m.Payload))
	}
	var seen []string
	for len(seen) < 1 {
		m := f.read()
		if m.Type == wire.MsgEvent {
			seen = append(seen, evKey(m.Payload))
		}
	}
	if seen[0] != "2:embed" {
		t.Errorf("follower saw %v after the reclaim, want the new presenter's 2:embed", seen)
	}
}

// TestRoomBranchAndRejoin: "Try it myself" gives the start and log that
// rebuild the presenter's run exactly, in a private session; "Back to the
// class" sends the current state again.
func TestRoomBranchAndRejoin(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	want := presenterTokens(t, p, 2)
	f, _ := dialRoom(t, ts, room.Code)
	followEvents(t, f, len(want))
	f.send("room_branch", nil)
	b := nextOf(f, wire.MsgRoomBranch, nil)
	var br struct {
		Start map[string]any `json:"start"`
		Log   []string       `json:"log"`
	}
	if err := json.Unmarshal(b.Payload, &br); err != nil || br.Start == nil {
		t.Fatalf("room_branch %s: %v", b.Payload, err)
	}
	mine := dial(t, ts)
	mine.send("resume", map[string]any{"start": br.Start, "log": br.Log})
	r := nextOf(mine, wire.MsgResumed, nil)
	var rs struct {
		Events []json.RawMessage `json:"events"`
	}
	json.Unmarshal(r.Payload, &rs)
	var got []string
	for _, e := range rs.Events {
		got = append(got, evKey(e))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("branched run:\n got %v\nwant %v", got, want)
	}
	// the student forces a token of their own; the class does not see it
	mine.send("force", map[string]int{"id": 10})
	nextOf(mine, wire.MsgEvent, nil)
	more := presenterTokens(t, p, 1)
	f.send("room_follow", nil)
	back := followEvents(t, f, len(want)+len(more))
	if strings.Join(back, " ") != strings.Join(append(want, more...), " ") {
		t.Errorf("after Back to the class:\n got %v\nwant %v", back, append(want, more...))
	}
}

// TestRoomPollCountsAndRecall: a poll reaches followers, votes are counted
// anonymously for the presenter, the reveal shows everyone the counts, and
// "bring everyone back" reaches a branched student.
func TestRoomPollCountsAndRecall(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	// two browsers (a cookieless client is its address alone: one voter)
	a := dialRoomAs(t, ts.URL, room.Code, "AAAAAAAAAAAAAAAAAAAAAA")
	b := dialRoomAs(t, ts.URL, room.Code, "BBBBBBBBBBBBBBBBBBBBBB")
	b.send("room_branch", nil)
	nextOf(b, wire.MsgRoomBranch, nil)
	waitCounts(t, p, func(c counts) bool { return c.Followers == 1 && c.Branched == 1 }) // a branched student counts as trying, not also as following
	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "Which token comes next?", "options": []string{" the", " a", " and"}})
	var poll struct {
		ID     int64 `json:"id"`
		Open   bool  `json:"open"`
		Counts []int `json:"counts"`
	}
	json.Unmarshal(nextOf(a, wire.MsgRoomPoll, nil).Payload, &poll)
	nextOf(b, wire.MsgRoomPoll, nil) // branched students get polls too
	a.send("room_vote", map[string]any{"poll": poll.ID, "option": 1})
	b.send("room_vote", map[string]any{"poll": poll.ID, "option": 1})
	b.send("room_vote", map[string]any{"poll": poll.ID, "option": 2}) // a changed mind counts once
	waitCounts(t, p, func(c counts) bool {
		return c.Poll != nil && c.Poll.Votes == 2 && c.Poll.Counts[1] == 1 && c.Poll.Counts[2] == 1
	})
	p.send("room_reveal", map[string]any{"code": room.Code, "key": room.Key})
	json.Unmarshal(nextOf(a, wire.MsgRoomPoll, nil).Payload, &poll)
	if poll.Open || len(poll.Counts) != 3 || poll.Counts[1] != 1 || poll.Counts[2] != 1 {
		t.Errorf("revealed poll %+v", poll)
	}
	p.send("room_recall", map[string]any{"code": room.Code, "key": room.Key})
	nextOf(b, wire.MsgRoomRecall, nil)
	p.send("room_close", map[string]any{"code": room.Code, "key": room.Key})
	nextOf(a, wire.MsgRoomClosed, nil)
	_, m := dialRoom(t, ts, room.Code)
	var e wire.ErrorPayload
	json.Unmarshal(m.Payload, &e)
	if m.Type != wire.MsgError || e.Code != "room_closed" || !strings.Contains(e.Message, "ended") {
		t.Errorf("joining a closed room: %s %s", m.Type, m.Payload)
	}
}

type counts struct {
	Followers int `json:"followers"`
	Branched  int `json:"branched"`
	Poll      *struct {
		Votes  int   `json:"votes"`
		Counts []int `json:"counts"`
	} `json:"poll"`
}

func waitCounts(t testing.TB, p *wsClient, ok func(counts) bool) {
	t.Helper()
	for {
		m := p.read()
		if m.Type != wire.MsgRoomCounts {
			continue
		}
		var c counts
		json.Unmarshal(m.Payload, &c)
		if ok(c) {
			return
		}
	}
}

// TestRoomLimits: the follower limit, the rooms limit, wrong codes rate
// limited, /join's answers.
func TestRoomLimits(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{MaxFollowers: 2, MaxRooms: 1, JoinFailures: 3, JoinRefill: time.Hour})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	dialRoom(t, ts, room.Code)
	dialRoom(t, ts, room.Code)
	_, m := dialRoom(t, ts, room.Code)
	if m.Type != wire.MsgError || !strings.Contains(string(m.Payload), "room_full") {
		t.Errorf("third follower of 2: %s %s", m.Type, m.Payload)
	}
	q := dial(t, ts)
	q.send("room_open", map[string]any{})
	q.expectError("server_full")

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ts.URL + "/join?code=" + room.Code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/lab?room="+room.Code {
		t.Errorf("/join with the right code: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	for i, want := range []int{404, 404, 404, 429} {
		resp, err := noRedirect.Get(ts.URL + "/join?code=QQQQQ" + string(rune('A'+i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("wrong code %d: status %d, want %d", i, resp.StatusCode, want)
		}
	}
	// now even the right code waits: guessing is rate-limited per address
	_, m = dialRoom(t, ts, room.Code)
	if !strings.Contains(string(m.Payload), "rate_limited") {
		t.Errorf("after 3 wrong codes: %s", m.Payload)
	}
	resp, err = http.Get(ts.URL + "/join/qr.svg?code=" + room.Code)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	n, _ := resp.Body.Read(b)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(b[:n]), "<svg") {
		t.Errorf("qr: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b[:n])
	}
}

// TestRoomFollowsPages: a class follows its presenter to compare and to a
// lesson section (room_page); a late joiner gets the page and what it shows
// first; /join sends students to the presenter's page; a student can stop
// following a page that has no run (room_branch {page}); wrong keys, pages
// a class cannot follow and followers' room_page are refused.
func TestRoomFollowsPages(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/compare", "state": map[string]any{"sides": nil, "status": "ready"}})
	type pageMsg struct {
		Page  string          `json:"page"`
		State json.RawMessage `json:"state"`
	}
	readPage := func(w *wsClient) pageMsg {
		t.Helper()
		var pg pageMsg
		json.Unmarshal(nextOf(w, wire.MsgRoomPage, nil).Payload, &pg)
		return pg
	}
	early, joined := dialRoom(t, ts, room.Code)
	if !strings.Contains(string(joined.Payload), `"page":"/compare"`) {
		t.Fatalf("room_joined on compare: %s", joined.Payload)
	}
	if pg := readPage(early); pg.Page != "/compare" || string(pg.State) != `{"sides":null,"status":"ready"}` {
		t.Errorf("early follower's page: %+v %s", pg, pg.State)
	}
	lesson := map[string]any{"section": 3, "panels": []any{map[string]any{"tree": []any{"div", map[string]any{}, []any{"chips"}}}}}
	p.send("room_page", map[string]any{"code": room.Code, "key": room.Key, "page": "/lessons/after-send", "state": lesson})
	pg := readPage(early)
	if pg.Page != "/lessons/after-send" || !strings.Contains(string(pg.State), `"section":3`) {
		t.Errorf("live room_page: %+v %s", pg, pg.State)
	}
	late, _ := dialRoom(t, ts, room.Code)
	if pg := readPage(late); pg.Page != "/lessons/after-send" || !strings.Contains(string(pg.State), `"section":3`) {
		t.Errorf("late follower's page: %+v %s", pg, pg.State)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ts.URL + "/join?code=" + room.Code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/lessons/after-send?room="+room.Code {
		t.Errorf("/join while the class is on a lesson: %d %s", resp.StatusCode, loc)
	}

	refused := []struct {
		name, code string
		payload    map[string]any
	}{
		{"wrong key", "bad_key", map[string]any{"code": room.Code, "key": strings.Repeat("0", 48), "page": "/lab"}},
		{"another site", "bad_payload", map[string]any{"code": room.Code, "key": room.Key, "page": "//evil.example/lab"}},
		{"not a page", "bad_payload", map[string]any{"code": room.Code, "key": room.Key, "page": "/api/models"}},
		{"no page", "bad_payload", map[string]any{"code": room.Code, "key": room.Key}},
		{"state not an object", "bad_payload", map[string]any{"code": room.Code, "key": room.Key, "page": "/compare", "state": []int{1}}},
		{"state too big", "bad_payload", map[string]any{"code": room.Code, "key": room.Key, "page": "/compare", "state": map[string]string{"x": strings.Repeat("a", 57<<10)}}},
	}
	for _, c := range refused {
		p.send("room_page", c.payload)
		m := nextOf(p, wire.MsgError, nil)
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		if e.Code != c.code {
			t.Errorf("room_page with %s: %s %s, want %s", c.name, m.Type, m.Payload, c.code)
		}
	}
	early.send("room_page", map[string]any{"code": room.Code, "key": room.Key, "page": "/lab"})
	if m := readReply(early); m.Type != wire.MsgError || !strings.Contains(string(m.Payload), `"following"`) {
		t.Errorf("a follower's room_page: %s %s, want error following", m.Type, m.Payload)
	}

	// "Try it myself" on a page without a run: the student stops following
	early.send("room_branch", map[string]any{"page": "/lessons/after-send"})
	if m := nextOf(early, wire.MsgRoomBranch, nil); string(m.Payload) != "{}" {
		t.Errorf("room_branch on a lesson: %s", m.Payload)
	}
	for {
		m := nextOf(p, wire.MsgRoomCounts, nil)
		if strings.Contains(string(m.Payload), `"branched":1`) {
			break
		}
	}
	// the presenter comes back to the lab (a claim from the lab page): the class follows
	p.send("room_claim", map[string]any{"code": room.Code, "key": room.Key, "page": "/lab"})
	nextOf(p, wire.MsgRoomOpened, nil)
	if pg := readPage(late); pg.Page != "/lab" || string(pg.State) != "null" {
		t.Errorf("after the presenter's claim from the lab: %+v %s", pg, pg.State)
	}
}
