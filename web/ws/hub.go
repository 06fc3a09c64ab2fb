package ws

// hub.go: what every lab connection shares — the catalog, limits, fair
// queue, byte budget, metrics and log it uses, the live connections — and
// what it needs of the classroom, as interfaces (Rooms, Tap,
// ClassObserver) the room hub implements: the lab connection never knows
// rooms.

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/metrics"
	"github.com/inferscope/inferscope/web/sched"
	"github.com/inferscope/inferscope/web/wire"
)

// Rooms is what a lab connection needs of the classroom.
type Rooms interface {
	// Reclaiming reports whether r is a presenter coming back to its open
	// room (it may take the session kept for it).
	Reclaiming(r *http.Request) bool
	// PresentersAway is how many open rooms keep a session for their
	// presenter's return.
	PresentersAway() int
	// Command runs a room_* command on c (c's worker goroutine).
	Command(c *Conn, cmd wire.Command)
	// ClassRun watches a run that is a student's part of a class request
	// (tag names it); nil: nothing watches it.
	ClassRun(tag *wire.ClassTag) ClassObserver
}

// Tap observes one connection's commands and replies: a room's presenter
// (the room mirrors its run to the class). Its methods run on the
// connection's worker goroutine, Sent wherever a reply is queued.
type Tap interface {
	// Check runs before each command: false (and why) ends the tap, and
	// the connection goes on as a private session, telling the client why.
	Check(c *Conn) (ok bool, why string)
	// Begin and Done bracket each command the connection runs.
	Begin(cmd wire.Command)
	Done(c *Conn, cmd wire.Command)
	// Sent sees each reply the connection queues, once encoded.
	Sent(r Reply)
	// Thinning is the least detail_ms runs are thinned to, and full: every
	// event must go in full (thin.go).
	Thinning() (detailMs int, full bool)
	// Left is called when the connection ends.
	Left(c *Conn)
}

// Reply is a reply as a Tap sees it: its type, the run's events it
// carries (an event, events or detail message's, in order; nil for other
// messages), the value it was encoded from and its encoding.
type Reply struct {
	Type    string
	Events  []*session.Event
	Payload any
	Raw     []byte
}

// tapRef holds a connection's Tap for atomic swaps.
type tapRef struct{ t Tap }

// Tap is the connection's Tap, nil when nothing observes it.
func (c *Conn) Tap() Tap {
	if r := c.tapped.Load(); r != nil {
		return r.t
	}
	return nil
}

// SetTap sets (or, with nil, removes) the connection's Tap.
func (c *Conn) SetTap(t Tap) {
	if t == nil {
		c.tapped.Store(nil)
		return
	}
	c.tapped.Store(&tapRef{t})
}

// ClassObserver watches a class request's run on a student's connection.
type ClassObserver interface {
	// Observe takes each event of the run, with the run's memory then.
	Observe(ev *session.Event, memory int64)
	// End reports the run failed for why, if it had not finished.
	End(why string)
}

// HubConfig is what a wsHub is made of; nil or zero fields take defaults
// (a fresh fair queue, byte budget and metrics, the default limits, every
// origin refused, the visitor = the peer address).
type HubConfig struct {
	Log     *slog.Logger
	Catalog catalog.Catalog
	Limits  Limits
	Metrics *metrics.Metrics
	Queue   *sched.FairQueue
	Bytes   *sched.ByteBudget
	Origin  func(*http.Request) bool
	Visitor func(*http.Request) string
}

// newWSHub makes the hub of a server's lab connections.
func NewHub(c HubConfig) *Hub {
	s := &Hub{Log: c.Log, Catalog: c.Catalog, Limits: c.Limits.WithDefaults(), Metrics: c.Metrics, sched: c.Queue, bytes: c.Bytes,
		conns: &connSet{conns: map[*Conn]struct{}{}}, live: &liveSet{}, Origin: c.Origin, Visitor: c.Visitor}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	if s.Metrics == nil {
		s.Metrics = metrics.New(func() float64 { return float64(s.KVBytes()) })
	}
	if s.sched == nil {
		s.sched = sched.NewFairQueue(0)
	}
	if s.bytes == nil {
		s.bytes = sched.NewByteBudget(s.Limits.VisitorBytesPerSecond, s.Limits.VisitorByteBurst)
	}
	if s.Origin == nil {
		s.Origin = func(*http.Request) bool { return false }
	}
	if s.Visitor == nil {
		s.Visitor = func(r *http.Request) string { return r.RemoteAddr }
	}
	return s
}

// Sessions is every open session's public figures at now (/server).
func (s *Hub) Sessions(now time.Time) []SessionView { return s.live.Sessions(now) }

// KVBytes is the run memory the open sessions hold (KV caches and scratch).
func (s *Hub) KVBytes() int64 { return s.conns.kvBytes.Load() }

// wsHub is what the lab connections share.
type Hub struct {
	Log     *slog.Logger
	Catalog catalog.Catalog
	Limits  Limits
	Metrics *metrics.Metrics
	sched   *sched.FairQueue
	bytes   *sched.ByteBudget
	conns   *connSet
	live    *liveSet
	Rooms   Rooms // nil: no classroom
	// Origin reports whether a websocket's Origin is allowed; visitor is
	// the key per-visitor limits count under (visitors.go).
	Origin  func(*http.Request) bool
	Visitor func(*http.Request) string
}

// welcome is the first message of every connection: the protocol version,
// the models and the limits the client must keep to.
func (s *Hub) welcome() map[string]any {
	return map[string]any{"protocol": wire.ProtocolVersion, "models": s.Catalog.Models(), "limits": map[string]any{
		"max_sessions": s.Limits.MaxSessions, "max_sessions_per_visitor": s.Limits.MaxSessionsPerVisitor, "max_sessions_per_address": s.Limits.MaxSessionsPerAddress, "idle_timeout_s": s.Limits.IdleTimeout.Seconds(),
		"read_limit_bytes": s.Limits.ReadLimit, "messages_per_second": s.Limits.MsgsPerSecond, "burst": s.Limits.Burst,
		"max_prompt_bytes": session.MaxPromptBytes, "max_stop_strings": session.MaxStopStrings, "max_sample_n": session.MaxSampleMany, "max_resume_log": wire.MaxResumeLog, "max_replay_passes": MaxReplayPasses,
	}}
}

// setClass starts (or ends) watching the connection's new run for a class
// request; a run it replaces that had not finished is reported failed.
func (c *Conn) setClass(tag *wire.ClassTag) {
	if c.class != nil {
		c.class.End("the student's page started another run")
	}
	c.class = nil
	if c.s.Rooms != nil && tag.Valid() {
		c.class = c.s.Rooms.ClassRun(tag)
	}
}

// Free is how many more sessions the server may open (less those kept for
// presenters coming back) and how many bytes of run memory are free.
func (s *Hub) Free() (sessions, bytes int64) {
	sessions = int64(s.Limits.MaxSessions) - s.conns.n.Load()
	if s.Rooms != nil {
		sessions -= int64(s.Rooms.PresentersAway())
	}
	return sessions, s.Limits.MaxKVBytes - s.conns.kvBytes.Load()
}

// Started is the start settings of the connection's run (worker-owned:
// call it from the worker, as a Tap's methods are).
func (c *Conn) Started() *wire.StartPayload { return c.start }

// VisitorKey is the key the connection's per-visitor limits count under.
func (c *Conn) VisitorKey() string { return c.visitor }

// DetachedConn is a connection with no socket standing for a visitor of
// hub s: for code that needs a connection to name who acts (tests).
func DetachedConn(s *Hub, visitor string) *Conn { return &Conn{s: s, visitor: visitor} }
