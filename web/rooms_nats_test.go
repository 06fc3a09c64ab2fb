package web_test

// rooms_nats_test.go: two replicas serve one room through an embedded
// NATS server: the presenter on one, followers on both (one joins late),
// counts and votes from the other replica reach the presenter.

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

// startNATS runs an embedded NATS server on a free loopback port.
func startNATS(t testing.TB) string {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded NATS server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// natsReplica is one inferscope server on the NATS fan-out.
func natsReplica(t testing.TB, url string) *httptest.Server {
	t.Helper()
	f, err := room.NewNATSFanout(url)
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat, Rooms: room.RoomOptions{Fanout: f}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); f.Close() })
	return ts
}

func TestRoomTwoReplicasNATS(t *testing.T) {
	url := startNATS(t)
	a, b := natsReplica(t, url), natsReplica(t, url)
	p := dial(t, a)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	early, joined := dialRoom(t, b, room.Code)
	if joined.Type != wire.MsgRoomJoined {
		t.Fatalf("follower on replica B: %s %s", joined.Type, joined.Payload)
	}
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)
	nextOf(early, wire.MsgStarted, nil)
	want := presenterTokens(t, p, 3)

	lateB, _ := dialRoom(t, b, room.Code)
	lateA, _ := dialRoom(t, a, room.Code)
	for name, f := range map[string]*wsClient{"early on B": early, "late on B": lateB, "late on A": lateA} {
		if got := followEvents(t, f, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s:\n got %v\nwant %v", name, got, want)
		}
	}
	more := presenterTokens(t, p, 2)
	for name, f := range map[string]*wsClient{"early on B": early, "late on B": lateB, "late on A": lateA} {
		if got := followEvents(t, f, len(more)); strings.Join(got, " ") != strings.Join(more, " ") {
			t.Errorf("%s, live:\n got %v\nwant %v", name, got, more)
		}
	}
	// counts from both replicas, a vote from B, a branch on B
	lateB.send("room_branch", nil)
	nextOf(lateB, wire.MsgRoomBranch, nil)
	waitCounts(t, p, func(c counts) bool { return c.Followers == 2 && c.Branched == 1 }) // the branched student is not also following
	p.send("room_poll", map[string]any{"code": room.Code, "key": room.Key, "question": "Next token?", "options": []string{"x", "y"}})
	var poll struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(nextOf(early, wire.MsgRoomPoll, nil).Payload, &poll)
	early.send("room_vote", map[string]any{"poll": poll.ID, "option": 0})
	waitCounts(t, p, func(c counts) bool { return c.Poll != nil && c.Poll.Votes == 1 && c.Poll.Counts[0] == 1 })
	// a code nobody owns, asked on B
	_, m := dialRoom(t, b, "ZZZZZZ")
	if !strings.Contains(string(m.Payload), "room_not_found") {
		t.Errorf("unknown code on B: %s", m.Payload)
	}
	p.send("room_close", map[string]any{"code": room.Code, "key": room.Key})
	nextOf(early, wire.MsgRoomClosed, nil)
}
