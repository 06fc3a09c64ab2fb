package web_test

// rooms_answers_test.go: class-wide predict-then-reveal. Open questions
// (a number or text each student types) are tallied by answer; Reveal
// carries what the model says beside the class's answers; a student is a
// browser, so two tabs or a reconnect change one vote instead of adding one.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

type answersPoll struct {
	ID      int64    `json:"id"`
	Kind    string   `json:"kind"`
	Open    bool     `json:"open"`
	Counts  []int    `json:"counts"`
	Votes   int      `json:"votes"`
	Reveal  []string `json:"reveal"`
	Answers []struct {
		Text string `json:"text"`
		N    int    `json:"n"`
	} `json:"answers"`
}

// dialRoomAs joins as a browser with the given visitor cookie ("" none).
func dialRoomAs(t *testing.T, base, code, cookie string) *wsClient {
	t.Helper()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "inferscope_visitor="+cookie)
	}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/room?code="+code, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c, gaps: true}
	if m := w.read(); m.Type != wire.MsgRoomJoined {
		t.Fatalf("join: %s %s", m.Type, m.Payload)
	}
	return w
}

func TestRoomOpenQuestionsAndReveal(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lessons/sampling"})
	// three students: two tabs of one browser, another browser, a script without a cookie
	tab1 := dialRoomAs(t, ts.URL, room.Code, "AAAAAAAAAAAAAAAAAAAAAA")
	tab2 := dialRoomAs(t, ts.URL, room.Code, "AAAAAAAAAAAAAAAAAAAAAA")
	other := dialRoomAs(t, ts.URL, room.Code, "BBBBBBBBBBBBBBBBBBBBBB")
	bare := dialRoomAs(t, ts.URL, room.Code, "")

	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "How many candidates does top-k 5 keep?", "kind": "number"})
	var poll answersPoll
	poll = readPoll(tab1, 1, true)
	if poll.Kind != "number" || !poll.Open || len(poll.Answers) != 0 {
		t.Fatalf("open poll as students see it: %+v", poll)
	}
	for _, w := range []*wsClient{tab2, other, bare} {
		readPoll(w, 1, true)
	}
	tab1.send("room_vote", map[string]any{"poll": poll.ID, "answer": "4"})
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 1 })
	tab2.send("room_vote", map[string]any{"poll": poll.ID, "answer": "5.0"}) // the same browser: changes its vote
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 1 })
	other.send("room_vote", map[string]any{"poll": poll.ID, "answer": " 5 "})
	bare.send("room_vote", map[string]any{"poll": poll.ID, "answer": "five"})
	if m := nextType(bare, wire.MsgError); !strings.Contains(string(m.Payload), "not a number") {
		t.Fatalf("a non-number answer to a number question: %s %s", m.Type, m.Payload)
	}
	bare.send("room_vote", map[string]any{"poll": poll.ID, "answer": "1e1"})
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 3 })

	p.send("room_reveal", map[string]any{"code": room.Code, "key": room.Key, "reveal": []string{"5"}})
	poll = readPoll(other, 1, false)
	if poll.Open || poll.Votes != 3 || len(poll.Answers) != 2 || poll.Answers[0].Text != "5" || poll.Answers[0].N != 2 ||
		poll.Answers[1].Text != "10" || poll.Answers[1].N != 1 || len(poll.Reveal) != 1 || poll.Reveal[0] != "5" {
		t.Fatalf("revealed: %+v; want 5 ×2 (one browser's two tabs once), 10 ×1, reveal [5]", poll)
	}
	other.send("room_vote", map[string]any{"poll": poll.ID, "answer": "7"})
	if m := nextType(other, wire.MsgError); !strings.Contains(string(m.Payload), "closed") {
		t.Errorf("a vote after the reveal: %s %s", m.Type, m.Payload)
	}

	// a late joiner sees the revealed poll with its counts and the reveal
	late := dialRoomAs(t, ts.URL, room.Code, "CCCCCCCCCCCCCCCCCCCCCC")
	poll = readPoll(late, 1, false)
	if poll.Open || len(poll.Answers) != 2 || len(poll.Reveal) != 1 {
		t.Errorf("late joiner's poll: %+v", poll)
	}

	// a text question, and a choice with the model's probabilities revealed
	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "Which token?", "kind": "text"})
	poll = readPoll(tab1, 2, true)
	readPoll(other, 2, true)
	tab1.send("room_vote", map[string]any{"poll": poll.ID, "answer": "  The   Cat "})
	other.send("room_vote", map[string]any{"poll": poll.ID, "answer": "the cat"})
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 2 })
	p.send("room_reveal", map[string]any{"code": room.Code, "key": room.Key})
	poll = readPoll(tab1, 2, false)
	if len(poll.Answers) != 1 || poll.Answers[0].Text != "the cat" || poll.Answers[0].N != 2 {
		t.Errorf("text answers: %+v", poll.Answers)
	}
	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "Next token?", "options": []string{"a", "b"}})
	poll = readPoll(tab1, 3, true)
	readPoll(tab2, 3, true)
	tab1.send("room_vote", map[string]any{"poll": poll.ID, "option": 1})
	waitCounts(t, p, func(c counts) bool {
		return c.Poll != nil && c.Poll.Votes == 1 && len(c.Poll.Counts) == 2 && c.Poll.Counts[1] == 1
	})
	tab2.send("room_vote", map[string]any{"poll": poll.ID, "option": 0})
	waitCounts(t, p, func(c counts) bool {
		return c.Poll != nil && c.Poll.Votes == 1 && len(c.Poll.Counts) == 2 && c.Poll.Counts[0] == 1
	})
	p.send("room_reveal", map[string]any{"code": room.Code, "key": room.Key, "reveal": []string{"p 0.612", "p 0.101"}})
	poll = readPoll(tab1, 3, false)
	if len(poll.Reveal) != 2 || poll.Reveal[0] != "p 0.612" || poll.Counts[0] != 1 {
		t.Errorf("choice poll revealed: %+v", poll)
	}
}

// TestRoomPollPayloads: bad poll, vote and reveal payloads are refused by
// name.
func TestRoomPollPayloads(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	cases := []struct {
		typ     string
		payload map[string]any
		want    string
	}{
		{"room_poll", map[string]any{"question": "q?", "kind": "essay"}, "kind must be"},
		{"room_poll", map[string]any{"question": "q?", "kind": "number", "options": []string{"a", "b"}}, "takes no options"},
		{"room_poll", map[string]any{"question": "q?", "options": []string{"a"}}, "needs 2 to"},
		{"room_reveal", map[string]any{"reveal": []string{strings.Repeat("x", 200)}}, "at most 80 bytes"},
	}
	for _, c := range cases {
		c.payload["code"], c.payload["key"] = room.Code, room.Key
		p.send(c.typ, c.payload)
		m := readReply(p)
		if m.Type != wire.MsgError || !strings.Contains(string(m.Payload), c.want) {
			t.Errorf("%s %v: %s %s, want an error saying %q", c.typ, c.payload, m.Type, m.Payload, c.want)
		}
	}
	f := dialRoomAs(t, ts.URL, room.Code, "")
	f.send("room_vote", map[string]any{"poll": 1, "option": 0, "answer": "x"})
	if m := nextType(f, wire.MsgError); !strings.Contains(string(m.Payload), "either option") {
		t.Errorf("a vote with both an option and an answer: %s %s", m.Type, m.Payload)
	}
}

// nextType reads until a message of type typ (errors included).
func nextType(w *wsClient, typ string) inMsg {
	w.t.Helper()
	for {
		if m := w.read(); m.Type == typ {
			return m
		}
	}
}

// readPoll reads until the poll with this id in this state.
func readPoll(w *wsClient, id int64, open bool) answersPoll {
	w.t.Helper()
	for {
		m := w.read()
		if m.Type != wire.MsgRoomPoll {
			continue
		}
		var p answersPoll
		json.Unmarshal(m.Payload, &p)
		if p.ID == id && p.Open == open {
			return p
		}
	}
}

// TestRoomCountsStudentsNotTabs: "N students follow" counts browsers: two
// tabs of one student count once, and a student trying it themselves in
// one tab counts as trying, not also as following.
func TestRoomCountsStudentsNotTabs(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	tab1 := dialRoomAs(t, ts.URL, room.Code, "AAAAAAAAAAAAAAAAAAAAAA")
	dialRoomAs(t, ts.URL, room.Code, "AAAAAAAAAAAAAAAAAAAAAA")
	dialRoomAs(t, ts.URL, room.Code, "BBBBBBBBBBBBBBBBBBBBBB")
	waitCounts(t, p, func(c counts) bool { return c.Followers == 2 && c.Branched == 0 })
	tab1.send("room_branch", nil)
	waitCounts(t, p, func(c counts) bool { return c.Followers == 1 && c.Branched == 1 })
	tab1.send("room_follow", nil)
	waitCounts(t, p, func(c counts) bool { return c.Followers == 2 && c.Branched == 0 })
}

// TestPollOneVotePerStudent: a script cannot stuff a poll by reconnecting:
// every cookieless socket of an address is one voter (it used to be one
// per socket: one machine outvoted 5 students 601 to 5), and a browser's
// reconnects and tabs are one voter.
func TestPollOneVotePerStudent(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "Next token?", "options": []string{"a", "b"}})
	for _, cookie := range []string{"AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCC", "DDDDDDDDDDDDDDDDDDDDDD", "EEEEEEEEEEEEEEEEEEEEEE"} {
		w := dialRoomAs(t, ts.URL, room.Code, cookie)
		readPoll(w, 1, true)
		w.send("room_vote", map[string]any{"poll": 1, "option": 1})
	}
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 5 })
	var latest counts
	for _, cookie := range []string{"", "", "", "", "", "", "", "", "", "", "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA"} {
		w := dialRoomAs(t, ts.URL, room.Code, cookie)
		readPoll(w, 1, true)
		w.send("room_vote", map[string]any{"poll": 1, "option": 0})
		w.c.Close()
		// the server has seen the tab leave (the presenter's count is back
		// to the five students) before the script reconnects: a cookieless
		// script is one browser, at most MaxFollowersPerVisitor tabs at once
		// (a slow server, as under the race detector, still held the last
		// four when the fifth came)
		waitCounts(t, p, func(c counts) bool { latest = c; return c.Followers == 5 })
	}
	// the last vote is A's second change; then the counts settle (perhaps
	// in the count the last wait read)
	settled := func(c counts) bool { return c.Poll != nil && len(c.Poll.Counts) == 2 && c.Poll.Counts[0] == 2 }
	if !settled(latest) {
		waitCounts(t, p, settled)
	}
	p.send("room_reveal", map[string]any{"code": room.Code, "key": room.Key})
	var got counts
	waitCounts(t, p, func(c counts) bool { got = c; return c.Poll != nil && c.Poll.Votes == 6 })
	if got.Poll.Counts[0] != 2 || got.Poll.Counts[1] != 4 {
		t.Errorf("counts %v, want [2 4]: the script's ten reconnects one vote, browser A's change of mind one", got.Poll.Counts)
	}
}
