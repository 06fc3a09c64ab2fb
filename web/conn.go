package web

// conn.go: the websocket connection — upgrade and admission, the reader,
// writer and worker goroutines, queued replies, rate limiting and graceful
// shutdown. What a command does is in commands.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
)

// connSet is the server's live connections, counted for the session and
// KV-cache limits and listed for graceful shutdown.
type connSet struct {
	mu      sync.Mutex
	conns   map[*wsConn]struct{}
	n       atomic.Int64
	kvBytes atomic.Int64
	closing atomic.Bool
	nextID  atomic.Int64
}

func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, allowed := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(allowed, "/"), origin) {
			return true
		}
	}
	return false
}

// handleWS upgrades /ws and serves one client's runs until it leaves.
func (s *Server) handleWS(c echo.Context) error {
	if s.opts.Catalog == nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "no models are loaded")
	}
	if !s.checkOrigin(c.Request()) {
		return echo.NewHTTPError(http.StatusForbidden, "websocket origin "+c.Request().Header.Get("Origin")+" is not allowed")
	}
	up := websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 16 << 10, CheckOrigin: s.checkOrigin, EnableCompression: false}
	ws, err := up.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader already answered
	}
	lim := s.limits
	id := fmt.Sprintf("ws-%d-%s", s.conns.nextID.Add(1), c.Response().Header().Get(echo.HeaderXRequestID))
	if s.conns.closing.Load() || s.conns.n.Add(1) > int64(lim.MaxSessions) {
		if !s.conns.closing.Load() {
			s.conns.n.Add(-1)
		}
		b, _ := json.Marshal(ServerMsg{Type: MsgError, V: ProtocolVersion, Seq: 1, Payload: ErrorPayload{Code: "server_full",
			Message: fmt.Sprintf("server full: %d sessions are running (the limit); try again in a minute", lim.MaxSessions)}})
		ws.SetWriteDeadline(time.Now().Add(lim.WriteWait))
		ws.WriteMessage(websocket.TextMessage, b)
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "server full"))
		ws.Close()
		s.metrics.rejected.Add(1)
		return nil
	}
	defer s.conns.n.Add(-1)
	conn := &wsConn{s: s, ws: ws, id: id, lim: lim, send: make(chan []byte, lim.SendBuffer),
		cmds: make(chan Command, 8), done: make(chan struct{}), shutdown: make(chan string, 1), tokens: float64(lim.Burst), last: time.Now()}
	s.conns.mu.Lock()
	s.conns.conns[conn] = struct{}{}
	s.conns.mu.Unlock()
	defer func() {
		s.conns.mu.Lock()
		delete(s.conns.conns, conn)
		s.conns.mu.Unlock()
	}()
	s.metrics.sessions.Add(1)
	defer s.metrics.sessions.Add(-1)
	conn.serve()
	return nil
}

// wsConn is one browser connection: a reader (this goroutine), a writer,
// and a worker that runs engine steps, so that a "cancel" can be read while
// a long run is in progress.
type wsConn struct {
	s    *Server
	ws   *websocket.Conn
	id   string
	lim  Limits
	send chan []byte
	cmds chan Command
	done chan struct{}
	once sync.Once
	// shutdown asks the writer to flush, send the closing event and close.
	shutdown     chan string
	shutdownOnce sync.Once
	seq          atomic.Int64

	mu        sync.Mutex
	cancelRun context.CancelFunc

	// worker-owned
	runner  Runner
	start   *StartPayload
	kvBytes int64

	// rate limit (reader-owned token bucket)
	tokens float64
	last   time.Time
}

func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.ws.Close()
	})
}

func (c *wsConn) serve() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writer() }()
	go func() { defer wg.Done(); c.worker() }()
	c.ws.SetReadLimit(c.lim.ReadLimit)
	c.ws.SetReadDeadline(time.Now().Add(c.lim.PongWait))
	c.ws.SetPongHandler(func(string) error { c.ws.SetReadDeadline(time.Now().Add(c.lim.PongWait)); return nil })
	c.reply(0, MsgWelcome, c.s.welcome())
	c.reader()
	c.close()
	c.mu.Lock()
	if c.cancelRun != nil {
		c.cancelRun()
	}
	c.mu.Unlock()
	close(c.cmds)
	wg.Wait()
	c.s.conns.kvBytes.Add(-c.kvBytes)
}

func (c *wsConn) reader() {
	for {
		typ, b, err := c.ws.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				c.s.log.Info("websocket message over the read limit", "conn", c.id, "limit", c.lim.ReadLimit)
			}
			return
		}
		if typ != websocket.TextMessage {
			c.sendError(0, "bad_frame", "binary frames are not accepted: send JSON text messages")
			continue
		}
		if !c.allow() {
			c.sendError(0, "rate_limited", fmt.Sprintf("too many messages: the limit is %g per second (burst %d)", c.lim.MsgsPerSecond, c.lim.Burst))
			continue
		}
		cmd, err := DecodeCommand(b)
		if err != nil {
			var pe *ProtocolError
			errors.As(err, &pe)
			c.sendError(cmd.ID, pe.Code, pe.Msg)
			continue
		}
		switch cmd.Type {
		case CmdCancel:
			c.mu.Lock()
			cancel := c.cancelRun
			c.mu.Unlock()
			if cancel != nil {
				cancel()
				continue
			}
		case CmdPing:
			c.reply(cmd.ID, MsgPong, nil)
			continue
		}
		select {
		case c.cmds <- cmd:
		default:
			c.sendError(cmd.ID, "busy", "too many commands are waiting: wait for the current one to finish")
		}
	}
}

func (c *wsConn) allow() bool {
	now := time.Now()
	c.tokens = min(float64(c.lim.Burst), c.tokens+now.Sub(c.last).Seconds()*c.lim.MsgsPerSecond)
	c.last = now
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

func (c *wsConn) writer() {
	ping := time.NewTicker(c.lim.PongWait * 9 / 10)
	defer ping.Stop()
	for {
		select {
		case b := <-c.send:
			c.ws.SetWriteDeadline(time.Now().Add(c.lim.WriteWait))
			if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
				c.close()
				return
			}
			c.s.metrics.bytesSent.Add(int64(len(b)))
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.lim.WriteWait)); err != nil {
				c.close()
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

// flushAndClose writes what is queued, then the closing event and a close
// frame, so a client sees everything up to "closing" in order.
func (c *wsConn) flushAndClose(reason string) {
	deadline := time.Now().Add(2 * time.Second)
	c.ws.SetWriteDeadline(deadline)
	for {
		select {
		case b := <-c.send:
			if c.ws.WriteMessage(websocket.TextMessage, b) != nil {
				c.close()
				return
			}
			continue
		default:
		}
		break
	}
	b, _ := json.Marshal(ServerMsg{Type: MsgClosing, V: ProtocolVersion, Seq: c.seq.Add(1), Payload: map[string]string{"reason": reason}})
	c.ws.WriteMessage(websocket.TextMessage, b)
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"), deadline)
	c.close()
}

// reply queues a message. If the client is so slow that the buffer stays
// full for SendTimeout, the connection is closed rather than letting an
// engine step wait without bound.
func (c *wsConn) reply(id int64, typ string, payload any) bool {
	b, err := json.Marshal(ServerMsg{Type: typ, V: ProtocolVersion, Seq: c.seq.Add(1), ID: id, Payload: payload})
	if err != nil {
		c.s.log.Error("marshal server message", "conn", c.id, "type", typ, "err", err)
		return false
	}
	select {
	case c.send <- b:
		return true
	case <-c.done:
		return false
	default:
	}
	t := time.NewTimer(c.lim.SendTimeout)
	defer t.Stop()
	select {
	case c.send <- b:
		return true
	case <-c.done:
		return false
	case <-t.C:
		c.s.log.Warn("closing a client too slow to read its events", "conn", c.id)
		c.s.metrics.slowClosed.Add(1)
		c.close()
		return false
	}
}

func (c *wsConn) sendError(id int64, code, msg string) {
	c.s.metrics.errors.Add(1)
	c.reply(id, MsgError, ErrorPayload{Code: code, Message: msg})
}

func (c *wsConn) worker() {
	for cmd := range c.cmds {
		c.handle(cmd)
	}
}

// shutdownSessions stops every run, sends each client a closing event after
// the events already queued, and closes the connections (≤ 2 s each, in
// parallel).
func (s *Server) shutdownSessions() {
	s.conns.closing.Store(true)
	s.conns.mu.Lock()
	conns := make([]*wsConn, 0, len(s.conns.conns))
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
		c.shutdownOnce.Do(func() { c.shutdown <- "the server is shutting down; reload the page in a moment" })
	}
	timeout := time.After(3 * time.Second)
	for _, c := range conns {
		select {
		case <-c.done:
		case <-timeout:
			c.close()
		}
	}
}
