// Package ws is one lab websocket: admission, the reader, writer and
// worker of a connection, what each command does, thinning, replays and
// resume. It knows the classroom only through the Rooms, Tap and
// ClassObserver interfaces (hub.go).
package ws

// conn.go: the websocket connection — upgrade and admission, the reader,
// writer and worker goroutines, queued replies, rate limiting and graceful
// shutdown. What a command does is in commands.go.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/sched"
	"github.com/inferscope/inferscope/web/wire"
)

// connSet is the server's live connections, counted for the session and
// KV-cache limits and listed for graceful shutdown.
type connSet struct {
	mu      sync.Mutex
	conns   map[*Conn]struct{}
	n       atomic.Int64
	kvBytes atomic.Int64
	closing atomic.Bool
	// visitors counts open sessions per visitor, addresses per client
	// address (visitors.go).
	visitors, addresses sched.VisitorCount
	nextID              atomic.Int64
}

// Handle upgrades /ws and serves one client's runs until it leaves.
func (s *Hub) Handle(c echo.Context) error {
	if s.Catalog == nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "no models are loaded")
	}
	if !s.Origin(c.Request()) {
		return echo.NewHTTPError(http.StatusForbidden, "websocket origin "+c.Request().Header.Get("Origin")+" is not allowed")
	}
	up := websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 16 << 10, CheckOrigin: s.Origin, EnableCompression: false}
	ws, err := up.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader already answered
	}
	lim := s.Limits
	id := fmt.Sprintf("ws-%d-%s", s.conns.nextID.Add(1), c.Response().Header().Get(echo.HeaderXRequestID))
	visitor := s.Visitor(c.Request())
	refuse := func(code, msg, reason string) error {
		p, _ := json.Marshal(wire.ErrorPayload{Code: code, Message: msg})
		ws.SetWriteDeadline(time.Now().Add(lim.WriteWait))
		ws.WriteMessage(websocket.TextMessage, OutMsg{Type: wire.MsgError, Payload: p}.Frame(1))
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, reason))
		ws.Close()
		s.Metrics.Rejected.Add(1)
		return nil
	}
	// open rooms whose presenter is away keep a session each for the
	// presenter's return (rooms.go presentersAway); only that presenter,
	// naming its room and key, may take it
	limit := lim.MaxSessions
	if s.Rooms != nil && !s.Rooms.Reclaiming(c.Request()) {
		limit -= s.Rooms.PresentersAway()
	}
	if s.conns.closing.Load() || s.conns.n.Add(1) > int64(limit) {
		if !s.conns.closing.Load() {
			s.conns.n.Add(-1)
		}
		msg := fmt.Sprintf("server full: %d sessions are running (the limit); try again in a minute", lim.MaxSessions)
		if limit < lim.MaxSessions {
			msg = fmt.Sprintf("server full: the server runs at most %d sessions and keeps %d of them free for presenters coming back to their classes; try again in a minute", lim.MaxSessions, lim.MaxSessions-limit)
		}
		return refuse(wire.CodeServerFull, msg, "server full")
	}
	// a refused session gives back what it took before the client hears
	// the refusal: a client that tries again at once must find it free
	addr := serve.AddressOf(visitor)
	if n, ok := s.conns.addresses.Acquire(addr, lim.MaxSessionsPerAddress); !ok {
		s.conns.n.Add(-1)
		return refuse(wire.CodeTooManySessions, fmt.Sprintf("your network address already has %d sessions open, the most one address may hold (shared by everyone behind it, e.g. a school's network): close tabs of this app you are not using, or ask whoever runs the server to raise --max-sessions-per-address", n), "too many sessions")
	}
	if n, ok := s.conns.visitors.Acquire(visitor, lim.MaxSessionsPerVisitor); !ok {
		s.conns.addresses.Release(addr)
		s.conns.n.Add(-1)
		return refuse(wire.CodeTooManySessions, fmt.Sprintf("this browser already has %d sessions of this app open (the limit is %d per browser): close another tab of this app, or a lesson page, and try again", n, lim.MaxSessionsPerVisitor), "too many sessions")
	}
	// the gauge drops last: a watcher that sees 0 finds every slot free
	s.Metrics.Sessions.Add(1)
	defer s.Metrics.Sessions.Add(-1)
	defer s.conns.n.Add(-1)
	defer s.conns.addresses.Release(addr)
	defer s.conns.visitors.Release(visitor)
	conn := &Conn{s: s, ws: ws, id: id, visitor: visitor, lim: lim, send: make(chan OutMsg, lim.SendBuffer), ctl: make(chan CtlFrame, 4), active: make(chan struct{}, 1),
		cmds: make(chan wire.Command, 8), done: make(chan struct{}), shutdown: make(chan closeReason, 1), tokens: float64(lim.Burst), last: time.Now()}
	conn.live = s.live.add()
	defer s.live.remove(conn.live)
	s.conns.mu.Lock()
	s.conns.conns[conn] = struct{}{}
	s.conns.mu.Unlock()
	defer func() {
		s.conns.mu.Lock()
		delete(s.conns.conns, conn)
		s.conns.mu.Unlock()
	}()
	conn.serve()
	return nil
}

// wsConn is one browser connection: a reader (this goroutine), a writer,
// and a worker that runs engine steps, so that a "cancel" can be read while
// a long run is in progress.
type Conn struct {
	s       *Hub
	ws      *websocket.Conn
	id      string
	visitor string // browser at a client address, the key of per-visitor limits (visitors.go)
	lim     Limits
	// active tells the writer a command arrived (idle expiry).
	active chan struct{}
	send   chan OutMsg
	ctl    chan CtlFrame // pongs and close echoes the reader hands the writer (control.go)
	cmds   chan wire.Command
	done   chan struct{}
	once   sync.Once
	// shutdown asks the writer to flush, send the closing event and close.
	shutdown     chan closeReason
	shutdownOnce sync.Once
	seq          int64 // writer-owned: the last seq sent
	slow         atomic.Bool

	// writer-owned scratch for writeQueued
	wbatch []OutMsg
	wparts net.Buffers
	wheads []byte
	wends  []int

	mu         sync.Mutex
	cancelRun  context.CancelFunc
	pauseAsked bool // pause: the streaming command stops after its current stage
	streams    int  // stepping commands queued or running (the reader counts them in, step out)

	// tapped is set while something observes this connection's commands
	// and replies (a room it presents: hub.go Tap)
	tapped atomic.Pointer[tapRef]
	// class watches the run when it is a student's part of a class
	// request (hub.go ClassObserver); worker-owned
	class ClassObserver

	// worker-owned
	runner  catalog.Runner
	start   *wire.StartPayload
	batched bool                    // the run's decode steps go to a batcher (batching.go)
	batch   *serve.SessionScheduler // that batcher, for this run
	kvBytes int64
	live    *liveSession // this session on /server

	// rate limit (reader-owned token bucket)
	tokens float64
	last   time.Time
}

func (c *Conn) Close() {
	c.once.Do(func() {
		close(c.done)
		c.ws.Close()
	})
}

func (c *Conn) serve() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writer() }()
	go func() { defer wg.Done(); c.worker() }()
	c.ws.SetReadLimit(c.lim.ReadLimit)
	c.ws.SetReadDeadline(time.Now().Add(c.lim.PongWait))
	c.ws.SetPongHandler(func(string) error { c.ws.SetReadDeadline(time.Now().Add(c.lim.PongWait)); return nil })
	RelayControl(c.ws, c.ctl) // the reader never writes (control.go)
	c.Reply(0, wire.MsgWelcome, c.s.welcome())
	c.reader()
	c.Close()
	c.mu.Lock()
	if c.cancelRun != nil {
		c.cancelRun()
	}
	c.mu.Unlock()
	close(c.cmds)
	wg.Wait()
	c.runDone()
	if c.class != nil {
		c.class.End("the student's page closed before its request finished")
	}
	if t := c.Tap(); t != nil {
		t.Left(c)
	}
	c.s.conns.kvBytes.Add(-c.kvBytes)
}

func (c *Conn) reader() {
	for {
		typ, b, err := c.ws.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				c.s.Log.Info("websocket message over the read limit", "conn", c.id, "limit", c.lim.ReadLimit)
			}
			return
		}
		if !c.Allow() { // every frame counts, binary ones too
			c.SendError(commandID(b), wire.CodeRateLimited, fmt.Sprintf("too many messages: the limit is %g per second (burst %d)", c.lim.MsgsPerSecond, c.lim.Burst))
			continue
		}
		if typ != websocket.TextMessage {
			c.SendError(0, wire.CodeBadFrame, "binary frames are not accepted: send JSON text messages")
			continue
		}
		cmd, err := wire.DecodeCommand(b)
		if err != nil {
			code, msg := wire.CodeOf(err)
			c.SendError(cmd.ID, code, msg)
			continue
		}
		if cmd.Type != wire.CmdPing {
			select {
			case c.active <- struct{}{}:
			default:
			}
		}
		switch cmd.Type {
		case wire.CmdCancel:
			c.mu.Lock()
			cancel := c.cancelRun
			c.mu.Unlock()
			if cancel != nil {
				cancel()
				continue
			}
		case wire.CmdPause:
			// the streaming command stops after its current stage; with
			// nothing streaming there is nothing to pause
			c.mu.Lock()
			streaming := c.streams > 0
			if streaming {
				c.pauseAsked = true
			}
			c.mu.Unlock()
			if !streaming {
				c.SendError(cmd.ID, wire.CodeOutOfOrder, "nothing to pause: no run is streaming (pause stops Run to end or Next token after the current stage)")
			}
			continue
		case wire.CmdPing:
			c.Reply(cmd.ID, wire.MsgPong, nil)
			continue
		}
		stepping := cmd.Type == wire.CmdRun || cmd.Type == wire.CmdStepToken || cmd.Type == wire.CmdForce || cmd.Type == wire.CmdStep
		if stepping {
			c.mu.Lock()
			c.streams++
			c.mu.Unlock()
		}
		select {
		case c.cmds <- cmd:
		default:
			if stepping {
				c.mu.Lock()
				c.streams--
				c.mu.Unlock()
			}
			c.SendError(cmd.ID, wire.CodeBusy, "too many commands are waiting: wait for the current one to finish")
		}
	}
}

func (c *Conn) Allow() bool {
	now := time.Now()
	c.tokens = min(float64(c.lim.Burst), c.tokens+now.Sub(c.last).Seconds()*c.lim.MsgsPerSecond)
	c.last = now
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// closeReason is why the server ends a session: the closing message's
// code and reason, and the websocket close frame's.
type closeReason struct {
	code, reason string
	frame        int
}

func (c *Conn) writer() {
	ping := time.NewTicker(c.lim.PongWait * 9 / 10)
	defer ping.Stop()
	idle := time.NewTimer(c.lim.IdleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-c.active:
			idle.Reset(c.lim.IdleTimeout)
		case <-idle.C:
			c.mu.Lock()
			busy := c.cancelRun != nil
			c.mu.Unlock()
			if busy { // a run in progress is not idle
				idle.Reset(c.lim.IdleTimeout)
				continue
			}
			c.s.Metrics.IdleClosed.Add(1)
			c.flushAndClose(closeReason{code: wire.CodeIdle, frame: websocket.CloseNormalClosure,
				reason: fmt.Sprintf("this session was closed after %v without a command; reconnect (resume) to continue where you were", c.lim.IdleTimeout)})
			return
		case m := <-c.send:
			if !c.writeQueued(m) {
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.lim.WriteWait)); err != nil {
				c.Close()
				return
			}
		case f := <-c.ctl:
			if err := WriteControl(c.ws, f, c.lim.WriteWait); err != nil || f.Type == websocket.CloseMessage {
				c.Close()
				return
			}
		case reason := <-c.shutdown:
			c.flushAndClose(reason)
			return
		case <-c.done:
			return
		}
	}
}

// writeQueued writes m and the messages queued behind it (up to 64) as
// websocket frames in one write (writev): a decode step's three events
// cost one system call when the writer wakes after them, and a payload is
// not copied into a frame (the frame is its header and envelope, the
// payload, and the closing brace). Only the writer goroutine writes to
// the connection: the reader's pongs and close echoes come to it
// (control.go), so nothing can land inside a frame; the room's follower
// writer does the same (roomconn.go). /ws negotiates no compression, so a
// frame is its bytes. False: the connection is closed.
func (c *Conn) writeQueued(m OutMsg) bool {
	const maxBatch = 64
	batch := append(c.wbatch[:0], m)
more:
	for len(batch) < maxBatch {
		select {
		case m := <-c.send:
			batch = append(batch, m)
		default:
			break more
		}
	}
	head, ends, n := c.wheads[:0], c.wends[:0], 0
	for i := range batch {
		c.seq++
		var size int
		head, size = batch[i].appendFrameHead(head, c.seq)
		ends = append(ends, len(head))
		n += size
	}
	parts, from := c.wparts[:0], 0
	for i, m := range batch {
		parts = append(parts, head[from:ends[i]:ends[i]])
		from = ends[i]
		if m.hasPayload() {
			parts = append(parts, m.Payload, frameEnd)
		}
	}
	c.wends, c.wheads = ends, head
	nc := RawConn(c.ws.NetConn())
	nc.SetWriteDeadline(time.Now().Add(c.lim.WriteWait))
	c.wparts = parts // a field, so WriteTo's receiver does not escape per call
	_, err := c.wparts.WriteTo(nc)
	clear(batch) // let the payloads go
	c.wbatch = batch[:0]
	clear(parts[:cap(parts)])
	c.wparts = parts[:0]
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			c.s.Log.Warn("closing a client too slow to read its events", "conn", c.id)
			c.closeSlow()
		}
		c.Close()
		return false
	}
	c.s.Metrics.BytesSent.Add(int64(n))
	return true
}

var frameEnd = []byte{'}'}

// flushAndClose writes what is queued, then the closing event and a close
// frame, so a client sees everything up to "closing" in order.
func (c *Conn) flushAndClose(why closeReason) {
	deadline := time.Now().Add(2 * time.Second)
	c.ws.SetWriteDeadline(deadline)
	for {
		select {
		case m := <-c.send:
			c.seq++
			if c.ws.WriteMessage(websocket.TextMessage, m.Frame(c.seq)) != nil {
				c.Close()
				return
			}
			continue
		default:
		}
		break
	}
	p, _ := json.Marshal(map[string]string{"code": why.code, "reason": why.reason})
	c.seq++
	c.ws.WriteMessage(websocket.TextMessage, OutMsg{Type: wire.MsgClosing, Payload: p}.Frame(c.seq))
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(why.frame, why.code), deadline)
	c.Close()
}

// OutMsg is a reply waiting for the writer, which numbers it: seq is
// assigned where messages leave, so seq is gapless and strictly increasing
// whichever goroutine queued them.
type OutMsg struct {
	Type    string
	id      int64
	Payload json.RawMessage // nil: no payload field
}

// hasPayload reports whether the message's wire form has a payload field.
func (m OutMsg) hasPayload() bool { return len(m.Payload) > 0 && string(m.Payload) != "null" }

// appendFrameHead appends the start of m's websocket text frame with seq:
// the frame header (FIN, text, unmasked, the whole message's length) and
// the envelope up to the payload; the payload and '}' follow (or, without
// a payload, the envelope is whole). size is the message's length (what
// frame returns).
func (m OutMsg) appendFrameHead(b []byte, seq int64) (_ []byte, size int) {
	var env [96]byte
	e := wire.AppendEnvelope(env[:0], m.Type, seq, m.id)
	if m.hasPayload() {
		e = append(e, `,"payload":`...)
		size = len(e) + len(m.Payload) + 1
	} else {
		e = append(e, '}')
		size = len(e)
	}
	b = append(b, 0x80|websocket.TextMessage)
	switch {
	case size < 126:
		b = append(b, byte(size))
	case size < 1<<16:
		b = append(b, 126, byte(size>>8), byte(size))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(size))
	}
	return append(b, e...), size
}

// Frame is the message's wire form with seq.
func (m OutMsg) Frame(seq int64) []byte {
	b := wire.AppendEnvelope(make([]byte, 0, len(m.Payload)+64), m.Type, seq, m.id)
	if m.hasPayload() {
		b = append(b, `,"payload":`...)
		b = append(b, m.Payload...)
	}
	return append(b, '}')
}

// errEncode is a reply that could not be encoded; the client was told.
var errEncode = errors.New("reply could not be encoded")

// Reply queues a message; false means it was not sent (the connection is
// closing, or the payload could not be encoded, which the client is told
// with an error naming why).
func (c *Conn) Reply(id int64, typ string, payload any) bool {
	return c.replyErr(id, typ, payload) == nil
}

// replyErr is reply returning why a message was not sent: errEncode when
// the payload could not be encoded (the client got an error message in its
// place), errClosed when the connection is going away.
func (c *Conn) replyErr(id int64, typ string, payload any) error {
	var evs []*session.Event
	if ev, ok := payload.(*session.Event); ok && ev != nil {
		evs = []*session.Event{ev}
	}
	m, err := c.encodeOut(id, typ, payload, evs)
	if err != nil {
		return err
	}
	if !c.enqueue(m) {
		return errClosed
	}
	return nil
}

// encode makes a reply ready for the queue. A payload that cannot be JSON
// is errEncode, and the client gets an error message saying why.
func (c *Conn) encode(id int64, typ string, payload any) (OutMsg, error) {
	p, err := marshalPayload(payload)
	if err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) {
			c.SendError(id, wire.CodeNonFinite, fmt.Sprintf("the model produced a value that is not a finite number (%s) in this %s; its weights or settings make the arithmetic overflow, so the run is stopped: try another model", uv.Str, describeReply(typ, payload)))
		} else {
			c.s.Log.Error("marshal server message", "conn", c.id, "type", typ, "err", err)
			c.SendError(id, wire.CodeInternal, "internal error: the "+typ+" message could not be encoded")
		}
		return OutMsg{}, errEncode
	}
	return OutMsg{Type: typ, id: id, Payload: p}, nil
}

// encodeOut is encode for a reply about to be queued: a Tap observing the
// connection sees it (rooms: the presenter's output goes to the class,
// encoded once), with the run's events it carries.
func (c *Conn) encodeOut(id int64, typ string, payload any, evs []*session.Event) (OutMsg, error) {
	m, err := c.encode(id, typ, payload)
	if err != nil {
		return m, err
	}
	if t := c.Tap(); t != nil {
		t.Sent(Reply{Type: typ, Events: evs, Payload: payload, Raw: m.Payload})
	}
	return m, nil
}

// marshalPayload is json.Marshal(payload); a session event, most of what
// a connection sends, is appended by its own encoder (the same bytes,
// without reflection or encoding/json's second pass over its attention
// arrays: session/eventjson.go).
func marshalPayload(payload any) ([]byte, error) {
	if ev, ok := payload.(*session.Event); ok && ev != nil {
		return ev.AppendJSON(nil)
	}
	// an events or detail message ({"events": [...]}: a thinned run's
	// groups) the same way, event by event: 1.6 µs a thin event instead of
	// encoding/json's 2.4 (BenchmarkEventsMessage, 1000 messages, 3 runs,
	// load 13), three events a token on the run's serial path
	if m, ok := payload.(map[string]any); ok && len(m) == 1 {
		if evs, ok := m["events"].([]*session.Event); ok {
			return appendEvents(evs)
		}
	}
	return json.Marshal(payload)
}

// appendEvents is json.Marshal(map[string]any{"events": evs}), each event
// by its own encoder, written into a pooled buffer and copied out once
// (as encoding/json does: a growing buffer of its own allocated about
// twice the message).
func appendEvents(evs []*session.Event) ([]byte, error) {
	bp := eventsBufs.Get().(*[]byte)
	defer eventsBufs.Put(bp)
	b := append((*bp)[:0], `{"events":`...)
	if evs == nil {
		b = append(b, "null}"...)
	} else {
		b = append(b, '[')
		for i, ev := range evs {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = ev.AppendJSON(b); err != nil {
				*bp = b[:0]
				return nil, err
			}
		}
		b = append(b, "]}"...)
	}
	*bp = b[:0]
	if cap(b) > 1<<20 { // one huge detail message does not stay pooled
		*bp = nil
	}
	return bytes.Clone(b), nil
}

// eventsBufs are appendEvents' scratch buffers.
var eventsBufs = sync.Pool{New: func() any { return new([]byte) }}

var errClosed = errors.New("connection closed")

// describeReply names what a reply carried, for error messages.
func describeReply(typ string, payload any) string {
	if ev, ok := payload.(*session.Event); ok && ev != nil {
		return string(ev.Stage) + " event"
	}
	return typ + " message"
}

// enqueue hands m to the writer. If the client is so slow that the queue
// stays full for SendTimeout, the connection is closed rather than letting
// an engine step wait without bound.
func (c *Conn) enqueue(m OutMsg) bool {
	// every message counts against the visitor's byte budget (bytebudget.go)
	c.s.bytes.Charge(c.visitor, len(m.Payload)+64)
	select {
	case c.send <- m:
		return true
	case <-c.done:
		return false
	default:
	}
	t := time.NewTimer(c.lim.SendTimeout)
	defer t.Stop()
	select {
	case c.send <- m:
		return true
	case <-c.done:
		return false
	case <-t.C:
		c.s.Log.Warn("closing a client too slow to read its events", "conn", c.id)
		c.closeSlow()
		return false
	}
}

// closeSlow closes a connection whose client stopped reading, counting it
// once in inferscope_slow_clients_closed_total.
func (c *Conn) closeSlow() {
	if c.slow.CompareAndSwap(false, true) {
		c.s.Metrics.SlowClosed.Add(1)
	}
	c.Close()
}

// TryReply queues a message if the connection's queue has room, without
// waiting: a room's lock is held, and counts are sent again on the next change.
func (c *Conn) TryReply(typ string, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		return
	}
	select {
	case c.send <- OutMsg{Type: typ, Payload: b}:
	default:
	}
}

func (c *Conn) SendError(id int64, code, msg string) {
	c.sendError(id, wire.ErrorPayload{Code: code, Message: msg})
}

// sendError counts and sends an error reply with every field of p (a
// byte_budget refusal's retry_after_ms).
func (c *Conn) sendError(id int64, p wire.ErrorPayload) {
	c.s.Metrics.Errors.Add(1)
	c.Reply(id, wire.MsgError, p)
}

func (c *Conn) worker() {
	for cmd := range c.cmds {
		if t := c.Tap(); t != nil {
			if ok, why := t.Check(c); !ok { // rooms: the presenter key, on every command
				c.SetTap(nil)
				c.SendError(cmd.ID, wire.CodeNotPresenter, why)
			} else {
				t.Begin(cmd)
			}
		}
		c.Handle(cmd)
		if cmd.Type == wire.CmdRun || cmd.Type == wire.CmdStepToken || cmd.Type == wire.CmdForce || cmd.Type == wire.CmdStep {
			c.mu.Lock()
			if c.streams--; c.streams == 0 {
				c.pauseAsked = false // no stepping command left for a pause to stop
			}
			c.mu.Unlock()
		}
		if t := c.Tap(); t != nil {
			t.Done(c, cmd)
		}
	}
}

// Shutdown stops every run, sends each client a closing event after the
// events already queued, and closes the connections (≤ 2 s each, in
// parallel).
func (s *Hub) Shutdown() {
	s.conns.closing.Store(true)
	s.conns.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns.conns))
	for c := range s.conns.conns {
		conns = append(conns, c)
	}
	s.conns.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		if c.cancelRun != nil {
			c.cancelRun()
		}
		c.mu.Unlock()
		c.shutdownOnce.Do(func() {
			c.shutdown <- closeReason{code: "shutdown", frame: websocket.CloseGoingAway, reason: "the server is shutting down; reload the page in a moment"}
		})
	}
	timeout := time.After(3 * time.Second)
	for _, c := range conns {
		select {
		case <-c.done:
		case <-timeout:
			c.Close()
		}
	}
}

// commandID is a message's "id" when it has one, so a refusal (such as
// rate_limited) names the command it refuses; 0 otherwise.
func commandID(b []byte) int64 {
	var m struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(b, &m) != nil {
		return 0
	}
	return m.ID
}
