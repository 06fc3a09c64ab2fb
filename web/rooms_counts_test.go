package web_test

// rooms_counts_test.go: the presenter's "N students follow · M trying it
// themselves" counts each student once: a student who tries it themselves
// counts as trying, not also as following, and back in the class as
// following again; a student who leaves is no longer counted. A branched
// student still holds a place in the class (max_followers).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/wire"
)

func TestRoomCountsEachStudentOnce(t *testing.T) {
	ts := roomServer(t, room.RoomOptions{MaxFollowers: 3})
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	p.send("start", roomStart("The President said", 8))
	nextOf(p, wire.MsgStarted, nil)

	a, _ := dialRoom(t, ts, room.Code)
	b, _ := dialRoom(t, ts, room.Code)
	c, _ := dialRoom(t, ts, room.Code)
	waitCounts(t, p, func(n counts) bool { return n.Followers == 3 && n.Branched == 0 })

	b.send("room_branch", nil)
	nextOf(b, wire.MsgRoomBranch, nil)
	waitCounts(t, p, func(n counts) bool { return n.Followers == 2 && n.Branched == 1 })
	// the class (students' pages) gets the same counts
	for {
		var n counts
		m := nextOf(a, wire.MsgRoomCounts, nil)
		if json.Unmarshal(m.Payload, &n) == nil && n.Branched == 1 {
			if n.Followers != 2 {
				t.Errorf("a follower is told %+v: want 2 following and 1 trying", n)
			}
			break
		}
	}

	// a branched student still holds a place: a fourth of 3 is refused
	if _, m := dialRoom(t, ts, room.Code); m.Type != wire.MsgError || !strings.Contains(string(m.Payload), "room_full") {
		t.Errorf("a fourth student of 3 (one trying it themselves): %s %s", m.Type, m.Payload)
	}

	// branching twice (a reconnect while trying it) does not count twice
	b.send("room_branch", nil)
	nextOf(b, wire.MsgRoomBranch, nil)
	b.send("room_follow", nil)
	waitCounts(t, p, func(n counts) bool { return n.Followers == 3 && n.Branched == 0 })

	// a student who leaves while trying it themselves is counted nowhere
	c.send("room_branch", nil)
	nextOf(c, wire.MsgRoomBranch, nil)
	waitCounts(t, p, func(n counts) bool { return n.Followers == 2 && n.Branched == 1 })
	c.c.Close()
	waitCounts(t, p, func(n counts) bool { return n.Followers == 2 && n.Branched == 0 })
	a.c.Close()
	waitCounts(t, p, func(n counts) bool { return n.Followers == 1 && n.Branched == 0 })
}
