package room

// roomconn.go: a student's follower websocket (/ws/room?code=…): it gets
// the room's messages from this replica's view and may send only a vote,
// "Try it myself" (room_branch) and "Back to the class" (room_follow).
// Nothing it sends reaches the presenter's session. Followers do not count
// against the session limit; their own runs, after branching, do (they use
// /ws like anyone).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// followerWriteBufs lends gorilla write buffers to followers' plain writes.
var followerWriteBufs sync.Pool

type follower struct {
	v        *roomView
	ws       *websocket.Conn
	id       string           // anonymous: a random id of this socket
	voter    string           // anonymous: the student's browser in this room (voterID), one vote per poll
	student  string           // anonymous: who the counts count (studentID)
	visitor  string           // the visitor key (visitors.go), for MaxFollowersPerVisitor
	network  string           // the client address as this room names it (networkID), for the presenter's counts and room_remove
	ctl      chan ws.CtlFrame // pongs and close echoes the reader hands the writer (control.go)
	send     chan *fanMsg
	done     chan struct{}
	once     sync.Once
	branched bool // guarded by v.mu
	lim      ws.Limits
	h        *Hub
	deflate  bool        // negotiated permessage-deflate: large messages go compressed (fanout_deflate.go)
	deadline time.Time   // the write deadline last set (writer only)
	out      net.Buffers // the frames being written (writer only)
}

// queue hands m to the writer without waiting; a follower whose queue is
// full is dropped (its page reconnects and catches up from the snapshot).
func (f *follower) queue(m *fanMsg) {
	select {
	case f.send <- m:
	case <-f.done:
	default:
		f.h.ws.Log.Warn("dropping a follower too slow to read the class", "room", f.v.code)
		f.h.ws.Metrics.SlowClosed.Add(1)
		f.Close()
	}
}

func (f *follower) Close() {
	f.once.Do(func() {
		close(f.done)
		f.ws.Close()
	})
}

// Reply queues a message of the follower's own (not fanned out).
func (f *follower) Reply(typ string, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		return
	}
	f.v.send(f, typ, b)
}

func (f *follower) SendError(code, msg string) {
	f.h.ws.Metrics.Errors.Add(1)
	f.Reply(wire.MsgError, wire.ErrorPayload{Code: code, Message: msg})
}

// HandleWS serves /ws/room?code=CODE.
func (h *Hub) HandleWS(c echo.Context) error {
	s := h.ws
	if !s.Origin(c.Request()) {
		return echo.NewHTTPError(http.StatusForbidden, "websocket origin "+c.Request().Header.Get("Origin")+" is not allowed")
	}
	// a follower's writer sends prepared frames straight to the socket, so
	// gorilla's write buffer is needed only for plain writes (the
	// benchmark's baseline): borrowed from a pool, not held per follower
	// permessage-deflate when the browser offers it: large messages are
	// compressed once per replica for every follower (fanout_deflate.go)
	up := websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16 << 10, WriteBufferPool: &followerWriteBufs, CheckOrigin: s.Origin, EnableCompression: !h.plainWrites}
	deflate := up.EnableCompression && offersDeflate(c.Request().Header)
	sock, err := up.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil
	}
	refuse := func(code, msg string) error {
		p, _ := json.Marshal(wire.ErrorPayload{Code: code, Message: msg})
		sock.SetWriteDeadline(time.Now().Add(s.Limits.WriteWait))
		sock.WriteMessage(websocket.TextMessage, ws.OutMsg{Type: wire.MsgError, Payload: p}.Frame(1))
		sock.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, code))
		sock.Close()
		return nil
	}
	code := wire.NormalizeCode(c.QueryParam("code"))
	var f *follower
	for try := 0; ; try++ {
		v, err := h.join(c.Request().Context(), ClientIP(c.Request()), code)
		if err == nil {
			id := newSecret(8)
			visitor := s.Visitor(c.Request())
			f = &follower{v: v, ws: sock, id: id, voter: voterID(code, visitor), student: studentID(code, visitor, id), visitor: visitor, network: networkID(code, serve.AddressOf(visitor)), ctl: make(chan ws.CtlFrame, 4), send: make(chan *fanMsg, h.opts.FollowerBuffer), done: make(chan struct{}), lim: s.Limits, h: h, deflate: deflate}
			err = v.admit(f)
		}
		er := &wire.ProtocolError{Code: wire.CodeInternal, Msg: "the class cannot be joined right now"}
		if err != nil && !errors.As(err, &er) {
			s.Log.Warn("joining a room", "room", code, "err", err)
		}
		if err != nil && er.Code == wire.CodeRetry && try < 3 {
			continue // the view was torn down as we joined: start a new one
		}
		if err != nil {
			return refuse(er.Code, er.Msg)
		}
		break
	}
	v := f.v
	h.followers.Add(1)
	defer h.followers.Add(-1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.writer() }()
	f.reader()
	f.Close()
	v.leave(f)
	wg.Wait()
	return nil
}

// join checks a code (wrong codes are rate-limited per client address)
// and returns this replica's view of the room.
func (h *Hub) join(ctx context.Context, ip, code string) (*roomView, error) {
	if wait := h.Guard.Blocked(ip); wait > 0 {
		return nil, roomErr(wire.CodeRateLimited, fmt.Sprintf("too many wrong class codes from your network: try again in %d seconds", int(wait.Seconds()+0.999)))
	}
	if !wire.ValidRoomCode(code) {
		h.Guard.Fail(ip)
		return nil, roomErr(wire.CodeRoomNotFound, wire.CodeProblem(code)+"; check the code on the presenter's screen")
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := h.view(ctx, code)
	if err != nil {
		var er *wire.ProtocolError
		if errors.As(err, &er) && er.Code == wire.CodeRoomNotFound {
			h.Guard.Fail(ip)
		}
		return nil, err
	}
	return v, nil
}

// voterID is a student's anonymous identity in one room's polls: a hash of
// the room code and the browser's visitor key (visitors.go), so two tabs or
// a reconnect of one browser are one vote. A client without a visitor
// cookie is its address alone, as everywhere else: every cookieless socket
// of an address shares one vote, so reconnecting never mints another.
func voterID(code, visitor string) string {
	h := sha256.Sum256([]byte("inferscope vote\x00" + code + "\x00" + visitor))
	return hex.EncodeToString(h[:8])
}

// studentID is who the class's counts count: the voter, except that a
// client without the visitor cookie counts as its socket (id), so scripts
// and old browsers following from one address are not counted as one.
func studentID(code, visitor, id string) string {
	if !strings.Contains(visitor, serve.VisitorSep) {
		return id
	}
	return voterID(code, visitor)
}

func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (f *follower) reader() {
	lim := f.lim
	f.ws.SetReadLimit(4096)
	f.ws.SetReadDeadline(time.Now().Add(lim.PongWait))
	f.ws.SetPongHandler(func(string) error { f.ws.SetReadDeadline(time.Now().Add(lim.PongWait)); return nil })
	ws.RelayControl(f.ws, f.ctl) // the reader never writes (control.go)
	tokens, last := float64(lim.Burst), time.Now()
	for {
		typ, b, err := f.ws.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		tokens = min(float64(lim.Burst), tokens+now.Sub(last).Seconds()*lim.MsgsPerSecond)
		last = now
		if tokens < 1 {
			f.SendError(wire.CodeRateLimited, fmt.Sprintf("too many messages: the limit is %g per second", lim.MsgsPerSecond))
			continue
		}
		tokens--
		if typ != websocket.TextMessage {
			f.SendError(wire.CodeBadFrame, "binary frames are not accepted: send JSON text messages")
			continue
		}
		cmd, err := wire.DecodeCommand(b)
		if err != nil {
			f.SendError(wire.CodeOf(err))
			continue
		}
		switch cmd.Type {
		case wire.CmdPing:
			f.Reply(wire.MsgPong, nil)
		case wire.CmdHello:
			f.Reply(wire.MsgWelcome, map[string]any{"protocol": wire.ProtocolVersion, "following": f.v.code})
		case wire.CmdRoomVote:
			if err := f.v.vote(f, cmd.Room.Poll, cmd.Room.Option, cmd.Room.Answer); err != nil {
				f.SendError(wire.CodeOf(err))
			}
		case wire.CmdRoomBranch:
			b, err := f.v.branch(f, cmd.Room.Page)
			if err != nil {
				f.SendError(wire.CodeOf(err))
				continue
			}
			f.v.send(f, wire.MsgRoomBranch, b)
		case wire.CmdRoomFollow:
			f.v.follow(f)
		default:
			f.SendError(wire.CodeFollowing, "you are following the class: this page shows the presenter's run and cannot drive it ("+cmd.Type+"); press “Try it myself” for a run of your own")
		}
	}
}

// writer sends the queued messages. Each is a frame encoded once for
// every follower (no encoding or copy per follower), and the frames queued
// by the time the writer wakes go out in one write (writev), so a burst of
// events costs a follower one system call, not one per event; the writer
// allocates nothing per message. Only this goroutine writes to the
// connection (pings, the reader's pongs and close echoes relayed through
// f.ctl, and the close frame too), so writing frames to the connection
// directly cannot interleave with gorilla's own writes, and no lock is
// held while writing.
func (f *follower) writer() {
	ping := time.NewTicker(f.lim.PongWait * 9 / 10)
	defer ping.Stop()
	const maxBatch = 64
	batch := make([]*fanMsg, 0, maxBatch)
	frames := make([][]byte, 0, 3*maxBatch) // up to 3 parts a message
	nc := ws.RawConn(f.ws.NetConn())
	for {
		select {
		case m := <-f.send:
			batch = append(batch[:0], m)
		more:
			for len(batch) < maxBatch && !m.close {
				select {
				case m = <-f.send:
					batch = append(batch, m)
				default:
					break more
				}
			}
			closing := false
			frames = frames[:0]
			var n int64
			for _, m := range batch {
				closing = closing || m.close
				switch {
				case f.deflate && m.zframe != nil:
					frames = append(frames, m.zframe...)
					n += int64(m.zsize - m.size)
				case m.frame != nil:
					frames = append(frames, m.frame...)
				case m.data != nil: // plain writes: gorilla frames and copies each message
					if len(frames) > 0 && !f.writeFrames(nc, frames) {
						return
					}
					frames = frames[:0]
					f.ws.SetWriteDeadline(time.Now().Add(f.lim.WriteWait))
					if err := f.ws.WriteMessage(websocket.TextMessage, m.data); err != nil {
						f.Close()
						return
					}
				}
				n += int64(m.size)
			}
			if len(frames) > 0 && !f.writeFrames(nc, frames) {
				return
			}
			f.h.ws.Metrics.BytesSent.Add(n)
			if f.h.trace != nil {
				now := time.Now().UnixNano()
				for _, m := range batch {
					if m.tr != nil {
						m.tr.wrote(now)
					}
				}
			}
			clear(batch) // let the frames go
			clear(frames[:cap(frames)])
			if closing {
				f.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "room ended"), time.Now().Add(time.Second))
				f.Close()
				return
			}
		case <-ping.C:
			if err := f.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(f.lim.WriteWait)); err != nil {
				f.Close()
				return
			}
		case c := <-f.ctl:
			if err := ws.WriteControl(f.ws, c, f.lim.WriteWait); err != nil || c.Type == websocket.CloseMessage {
				f.Close()
				return
			}
		case <-f.done:
			return
		}
	}
}

// writeFrames writes whole frames to the connection in one writev. The
// write deadline is moved on only when a quarter of WriteWait has passed
// since it was last set, not on every write.
func (f *follower) writeFrames(nc net.Conn, frames [][]byte) bool {
	if now := time.Now(); now.After(f.deadline.Add(-f.lim.WriteWait * 3 / 4)) {
		f.deadline = now.Add(f.lim.WriteWait)
		nc.SetWriteDeadline(f.deadline)
	}
	f.out = frames // a field, so that WriteTo's receiver does not escape to the heap on every call
	_, err := f.out.WriteTo(nc)
	f.out = nil
	if err != nil {
		f.Close()
		return false
	}
	return true
}

// guessGuard rate-limits wrong join codes per client address: a token
// bucket of burst failures refilled at one per refill.
type guessGuard struct {
	mu     sync.Mutex
	burst  float64
	refill time.Duration
	ips    map[string]*guessBucket
}

type guessBucket struct {
	tokens float64
	last   time.Time
}

func newGuessGuard(burst int, refill time.Duration) *guessGuard {
	return &guessGuard{burst: float64(burst), refill: refill, ips: map[string]*guessBucket{}}
}

func (g *guessGuard) bucket(ip string, now time.Time) *guessBucket {
	b := g.ips[ip]
	if b == nil {
		if len(g.ips) > 10000 { // forget full buckets
			for k, x := range g.ips {
				if x.tokens+now.Sub(x.last).Seconds()/g.refill.Seconds() >= g.burst {
					delete(g.ips, k)
				}
			}
		}
		b = &guessBucket{tokens: g.burst, last: now}
		g.ips[ip] = b
	}
	b.tokens = min(g.burst, b.tokens+now.Sub(b.last).Seconds()/g.refill.Seconds())
	b.last = now
	return b
}

// Blocked returns how long ip must wait before trying a code again.
func (g *guessGuard) Blocked(ip string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.bucket(ip, time.Now())
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(g.refill))
}

func (g *guessGuard) Fail(ip string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bucket(ip, time.Now()).tokens--
}
