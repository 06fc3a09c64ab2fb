package web

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

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
)

// Runner is one step-through run; *session.Session implements it.
type Runner interface {
	Step(ctx context.Context) (*session.Event, error)
	Rewind(n int) (*session.Event, error)
	Force(id int) error
	Cancel() (*session.Event, error)
	Done() bool
	Next() session.Stage
	CurrentLogits() []float32
	SampleMany(n int) ([]session.TokenCount, error)
}

// ModelCard describes a model the server offers.
type ModelCard struct {
	Name            string `json:"name"`
	Default         bool   `json:"default"`
	Arch            string `json:"arch"`
	Source          string `json:"source"`
	Params          int64  `json:"params"`
	WeightsBytes    int64  `json:"weights_bytes"`
	Layers          int    `json:"layers"`
	Dim             int    `json:"dim"`
	Heads           int    `json:"heads"`
	KVHeads         int    `json:"kv_heads"`
	HeadDim         int    `json:"head_dim"`
	HiddenDim       int    `json:"hidden_dim"`
	Vocab           int    `json:"vocab"`
	Context         int    `json:"context"`
	KVBytesPerToken int64  `json:"kv_bytes_per_token"`
	Tokenizer       string `json:"tokenizer"`
	Position        string `json:"position"`
	Checksum        string `json:"checksum"`
	Chat            string `json:"chat_style"`
	Note            string `json:"note,omitempty"`
}

// Catalog is the set of models runs can use.
type Catalog interface {
	Models() []ModelCard
	NewRun(model string, cfg session.Config) (Runner, error)
}

// Limits bound what one server and one connection may use. Zero fields
// take the defaults of DefaultLimits.
type Limits struct {
	MaxSessions   int           `json:"max_sessions"`     // concurrent websocket connections
	ReadLimit     int64         `json:"read_limit_bytes"` // largest client message
	MsgsPerSecond float64       `json:"messages_per_second"`
	Burst         int           `json:"burst"`
	SendBuffer    int           `json:"send_buffer"` // queued server messages per connection
	SendTimeout   time.Duration `json:"-"`           // how long an engine step may wait for a slow client
	WriteWait     time.Duration `json:"-"`
	PongWait      time.Duration `json:"-"`
	MaxKVBytes    int64         `json:"max_kv_bytes"` // total KV cache across sessions
}

// DefaultLimits are documented in the README.
func DefaultLimits() Limits {
	return Limits{MaxSessions: 64, ReadLimit: 64 << 10, MsgsPerSecond: 50, Burst: 100, SendBuffer: 256,
		SendTimeout: 10 * time.Second, WriteWait: 10 * time.Second, PongWait: 60 * time.Second, MaxKVBytes: 2 << 30}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSessions <= 0 {
		l.MaxSessions = d.MaxSessions
	}
	if l.ReadLimit <= 0 {
		l.ReadLimit = d.ReadLimit
	}
	if l.MsgsPerSecond <= 0 {
		l.MsgsPerSecond = d.MsgsPerSecond
	}
	if l.Burst <= 0 {
		l.Burst = d.Burst
	}
	if l.SendBuffer <= 0 {
		l.SendBuffer = d.SendBuffer
	}
	if l.SendTimeout <= 0 {
		l.SendTimeout = d.SendTimeout
	}
	if l.WriteWait <= 0 {
		l.WriteWait = d.WriteWait
	}
	if l.PongWait <= 0 {
		l.PongWait = d.PongWait
	}
	if l.MaxKVBytes <= 0 {
		l.MaxKVBytes = d.MaxKVBytes
	}
	return l
}

// hub tracks live connections for limits and graceful shutdown.
type hub struct {
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
	id := fmt.Sprintf("ws-%d-%s", s.hub.nextID.Add(1), c.Response().Header().Get(echo.HeaderXRequestID))
	if s.hub.closing.Load() || s.hub.n.Add(1) > int64(lim.MaxSessions) {
		if !s.hub.closing.Load() {
			s.hub.n.Add(-1)
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
	defer s.hub.n.Add(-1)
	conn := &wsConn{s: s, ws: ws, id: id, lim: lim, send: make(chan []byte, lim.SendBuffer),
		cmds: make(chan Command, 8), done: make(chan struct{}), shutdown: make(chan string, 1), tokens: float64(lim.Burst), last: time.Now()}
	s.hub.mu.Lock()
	s.hub.conns[conn] = struct{}{}
	s.hub.mu.Unlock()
	defer func() {
		s.hub.mu.Lock()
		delete(s.hub.conns, conn)
		s.hub.mu.Unlock()
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
	c.s.hub.kvBytes.Add(-c.kvBytes)
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

// handle runs one command; a panic becomes an error message and a log line
// with the connection id, and the connection stays usable.
func (c *wsConn) handle(cmd Command) {
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("panic while handling a websocket command", "conn", c.id, "type", cmd.Type, "panic", r)
			c.sendError(cmd.ID, "internal", "internal error while handling "+cmd.Type+"; the session is still usable")
		}
	}()
	switch cmd.Type {
	case CmdHello:
		c.reply(cmd.ID, MsgWelcome, c.s.welcome())
	case CmdStart:
		c.startRun(cmd.ID, cmd.Start)
	case CmdReset:
		if c.start == nil {
			c.sendError(cmd.ID, "no_session", "nothing to reset: send start first")
			return
		}
		c.startRun(cmd.ID, c.start)
	case CmdStep, CmdStepToken, CmdRun:
		c.step(cmd)
	case CmdRewind:
		if c.needRunner(cmd.ID) {
			ev, err := c.runner.Rewind(cmd.N)
			if err != nil {
				c.sendError(cmd.ID, "bad_request", err.Error())
				return
			}
			c.reply(cmd.ID, MsgEvent, ev)
		}
	case CmdForce:
		if c.needRunner(cmd.ID) {
			if err := c.runner.Force(cmd.Token); err != nil {
				c.sendError(cmd.ID, "bad_request", err.Error())
				return
			}
			c.step(Command{Type: CmdStepToken, ID: cmd.ID})
		}
	case CmdLogits:
		if c.needRunner(cmd.ID) {
			l := c.runner.CurrentLogits()
			if l == nil {
				c.sendError(cmd.ID, "out_of_order", "no logits yet: step through prefill first")
				return
			}
			c.reply(cmd.ID, MsgLogits, map[string]any{"values": l})
		}
	case CmdSampleN:
		if c.needRunner(cmd.ID) {
			counts, err := c.runner.SampleMany(cmd.N)
			if err != nil {
				c.sendError(cmd.ID, "bad_request", err.Error())
				return
			}
			c.reply(cmd.ID, MsgSamples, map[string]any{"n": cmd.N, "counts": counts})
		}
	case CmdCancel:
		if c.needRunner(cmd.ID) {
			if c.runner.Done() {
				c.sendError(cmd.ID, "out_of_order", "nothing to cancel: the run has stopped")
				return
			}
			ev, _ := c.runner.Cancel()
			c.reply(cmd.ID, MsgEvent, ev)
		}
	}
}

func (c *wsConn) needRunner(id int64) bool {
	if c.runner == nil {
		c.sendError(id, "no_session", "no run yet: send start with a prompt first")
		return false
	}
	return true
}

func (c *wsConn) startRun(id int64, p *StartPayload) {
	model := p.Model
	cfg := p.SessionConfig()
	r, err := c.s.opts.Catalog.NewRun(model, cfg)
	if err != nil {
		c.sendError(id, "bad_request", err.Error())
		return
	}
	var kv int64
	if sess, ok := r.(interface{ KV() *engine.KVCache }); ok {
		kv = sess.KV().BytesAllocated()
	}
	if total := c.s.hub.kvBytes.Add(kv - c.kvBytes); total > c.lim.MaxKVBytes {
		c.s.hub.kvBytes.Add(c.kvBytes - kv)
		c.sendError(id, "server_full", fmt.Sprintf("server memory for KV caches is full (%d of %d bytes): lower max_new_tokens or try again later", total-kv+c.kvBytes, c.lim.MaxKVBytes))
		return
	}
	c.kvBytes = kv
	c.runner, c.start = r, p
	var card ModelCard
	for _, m := range c.s.opts.Catalog.Models() {
		if m.Name == model || model == "" && m.Default {
			card = m
		}
	}
	c.reply(id, MsgStarted, map[string]any{"model": card, "config": cfg, "next": r.Next()})
}

func (c *wsConn) step(cmd Command) {
	if !c.needRunner(cmd.ID) {
		return
	}
	if c.runner.Done() {
		c.sendError(cmd.ID, "out_of_order", "the run has stopped: rewind, reset or start a new run")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.cancelRun = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancelRun = nil
		c.mu.Unlock()
		cancel()
	}()
	for {
		start := time.Now()
		ev, err := c.runner.Step(ctx)
		if err != nil {
			c.sendError(cmd.ID, "engine", err.Error())
			return
		}
		c.s.metrics.observeStep(ev, time.Since(start))
		if !c.reply(cmd.ID, MsgEvent, ev) {
			return
		}
		switch {
		case cmd.Type == CmdStep, c.runner.Done():
			return
		case cmd.Type == CmdStepToken && (ev.Stage == session.StageAppend || ev.Stage == session.StageStop):
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
	}
}

// shutdownSessions stops every run, sends each client a closing event after
// the events already queued, and closes the connections (≤ 2 s each, in
// parallel).
func (s *Server) shutdownSessions() {
	s.hub.closing.Store(true)
	s.hub.mu.Lock()
	conns := make([]*wsConn, 0, len(s.hub.conns))
	for c := range s.hub.conns {
		conns = append(conns, c)
	}
	s.hub.mu.Unlock()
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

func (s *Server) welcome() map[string]any {
	return map[string]any{"protocol": ProtocolVersion, "models": s.opts.Catalog.Models(), "limits": map[string]any{
		"max_sessions": s.limits.MaxSessions, "read_limit_bytes": s.limits.ReadLimit, "messages_per_second": s.limits.MsgsPerSecond,
		"max_prompt_bytes": session.MaxPromptBytes, "max_stop_strings": session.MaxStopStrings, "max_sample_n": session.MaxSampleMany,
	}}
}
