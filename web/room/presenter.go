package room

// presenter.go: the room_* commands a presenter sends on its /ws
// connection: open a room, reclaim it, and, naming its code and key, move
// the class to a page, ask, reveal and recall, send a class request,
// remove a network, close.

import (
	"encoding/json"
	"fmt"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// Command runs a room_* command on a /ws connection (its worker
// goroutine; ws.Rooms).
func (h *Hub) Command(c *ws.Conn, cmd wire.Command) {
	switch cmd.Type {
	case wire.CmdRoomVote, wire.CmdRoomBranch, wire.CmdRoomFollow:
		c.SendError(cmd.ID, wire.CodeBadRequest, cmd.Type+" is for students following a room (on /ws/room); this connection runs your own session")
		return
	case wire.CmdRoomOpen:
		h.openRoom(c, cmd)
		return
	}
	r := h.presented(c, cmd)
	if r == nil {
		return
	}
	p := cmd.Room
	switch cmd.Type {
	case wire.CmdRoomClaim:
		h.claim(c, cmd, r)
		return
	case wire.CmdRoomClose:
		r.Close("the presenter closed the room")
		return
	}
	if !r.holds(c, p.Key) {
		c.SendError(cmd.ID, wire.CodeNotPresenter, "this page is not presenting room "+p.Code+": reclaim it first")
		return
	}
	switch cmd.Type {
	case wire.CmdRoomPage:
		r.mu.Lock()
		if !r.closed {
			r.setPageLocked(p.Page, p.State)
		}
		r.mu.Unlock()
	case wire.CmdRoomPoll, wire.CmdRoomReveal, wire.CmdRoomRecall:
		r.pollCommand(c, cmd)
	case wire.CmdRoomClass:
		h.classCommand(c, cmd.ID, r, p)
	case wire.CmdRoomRemove:
		if !r.removeNetwork(p.Network) {
			c.SendError(cmd.ID, wire.CodeTooManyRemoved, fmt.Sprintf("this class has removed %d networks, the most one class may: end it and open a new one", maxRemoved))
		}
	}
}

// openRoom opens a room presenting c's run (room_open).
func (h *Hub) openRoom(c *ws.Conn, cmd wire.Command) {
	p := cmd.Room
	if old, ok := c.Tap().(*presenterHook); ok {
		c.SendError(cmd.ID, wire.CodeBadRequest, "this page already presents room "+old.room.code+": close it first")
		return
	}
	r, err := h.open(c, p.Page, p.State)
	if err != nil {
		code, msg := wire.CodeOf(err)
		c.SendError(cmd.ID, code, msg)
		return
	}
	hook := &presenterHook{room: r, key: r.key}
	c.SetTap(hook)
	c.Reply(cmd.ID, wire.MsgRoomOpened, r.opened())
	if p.Start != nil { // the room's log is then exact
		rebuild(c, hook, cmd.ID, *p.Start, p.Log)
	}
}

// presented is the open room a presenter command names, or nil when the
// client was told why not. A code and key that do not match are guesses,
// charged to the address's guard like wrong join codes.
func (h *Hub) presented(c *ws.Conn, cmd wire.Command) *room {
	p := cmd.Room
	addr := serve.AddressOf(c.VisitorKey())
	if wait := h.Guard.Blocked(addr); wait > 0 {
		c.SendError(cmd.ID, wire.CodeRateLimited, fmt.Sprintf("too many wrong class codes or presenter keys from your network: try again in %d seconds", int(wait.Seconds()+0.999)))
		return nil
	}
	r := h.owner(p.Code)
	if r == nil {
		h.Guard.Fail(addr)
		c.SendError(cmd.ID, wire.CodeRoomNotFound, "no room "+p.Code+" on this server: it has ended, or its presenter reconnected to another replica")
		return nil
	}
	if !r.keyOK(p.Key) {
		h.Guard.Fail(addr)
		c.SendError(cmd.ID, wire.CodeBadKey, "the presenter key does not match room "+p.Code+": only the browser that opened the room can present it")
		return nil
	}
	r.mu.Lock()
	closed, reason := r.closed, r.reason
	r.mu.Unlock()
	if closed {
		c.SendError(cmd.ID, wire.CodeRoomClosed, "room "+p.Code+" has ended: "+reason)
		return nil
	}
	return r
}

// claim makes c the room's presenter again after a reconnect (room_claim):
// the page that presented it before, if any, is told, and c's run is
// rebuilt from the room's log.
func (h *Hub) claim(c *ws.Conn, cmd wire.Command, r *room) {
	p := cmd.Room
	if old, ok := c.Tap().(*presenterHook); ok && old.room != r {
		c.SendError(cmd.ID, wire.CodeBadRequest, "this page already presents room "+old.room.code)
		return
	}
	r.mu.Lock()
	prev := r.presenter
	r.presenter = c
	start, log := r.start, append([]wire.LogEntry(nil), r.log...)
	if p.Page != "" && (p.Page != r.page || p.State != nil) {
		r.setPageLocked(p.Page, p.State)
	}
	lab := r.page == "/lab"
	r.mu.Unlock()
	if prev != nil && prev != c {
		prev.SetTap(nil)
		prev.Reply(0, wire.MsgError, wire.ErrorPayload{Code: wire.CodeNotPresenter, Message: "another browser reclaimed room " + r.code + " with its presenter key; this page now runs a private session"})
	}
	hook := &presenterHook{room: r, key: p.Key}
	c.SetTap(hook)
	c.Reply(cmd.ID, wire.MsgRoomOpened, r.opened())
	if start != nil && lab { // compare and lessons have no run to rebuild
		rebuild(c, hook, cmd.ID, *start, log)
	}
	r.mu.Lock()
	r.tellPresenterLocked(r.totalsLocked())
	r.mu.Unlock()
}

// rebuild replays a run from its start and log on the presenter's
// connection, through its hook, so the room records it as it goes.
func rebuild(c *ws.Conn, hook *presenterHook, id int64, start wire.StartPayload, log []wire.LogEntry) {
	rc := wire.Command{Type: wire.CmdResume, ID: id, Resume: &wire.ResumePayload{Start: start, Log: log}}
	hook.Begin(rc)
	c.Handle(rc)
	hook.Done(c, rc)
}

// pollCommand asks the class a question (room_poll), closes it and shows
// everyone the counts (room_reveal), or calls every branched student back
// (room_recall).
func (r *room) pollCommand(c *ws.Conn, cmd wire.Command) {
	p := cmd.Room
	r.mu.Lock()
	defer r.mu.Unlock()
	switch cmd.Type {
	case wire.CmdRoomPoll:
		id := int64(1)
		if r.poll != nil {
			id = r.poll.ID + 1
		}
		r.poll = &roomPoll{ID: id, Kind: p.Kind, Question: p.Question, Options: p.Options, Open: true, voters: map[string]int{}, answers: map[string]string{}}
		b, _ := json.Marshal(roomPoll{ID: id, Kind: p.Kind, Question: p.Question, Options: p.Options, Open: true})
		r.publishLocked(wire.MsgRoomPoll, b)
		r.tellPresenterLocked(r.totalsLocked())
	case wire.CmdRoomReveal:
		if r.poll == nil || !r.poll.Open {
			c.SendError(cmd.ID, wire.CodeOutOfOrder, "no poll is open: ask a question first")
			return
		}
		r.poll.Open = false
		r.poll.Reveal = p.Reveal
		r.tallyLocked()
		b, _ := json.Marshal(r.poll)
		r.publishLocked(wire.MsgRoomPoll, b)
		r.tellPresenterLocked(r.totalsLocked())
	case wire.CmdRoomRecall:
		r.publishLocked(wire.MsgRoomRecall, []byte("{}"))
	}
}
