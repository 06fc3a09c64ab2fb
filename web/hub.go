package web

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
	Command(c *wsConn, cmd Command)
	// ClassRun watches a run that is a student's part of a class request
	// (tag names it); nil: nothing watches it.
	ClassRun(tag *ClassTag) ClassObserver
}

// Tap observes one connection's commands and replies: a room's presenter
// (the room mirrors its run to the class). Its methods run on the
// connection's worker goroutine, Sent wherever a reply is queued.
type Tap interface {
	// Check runs before each command: false (and why) ends the tap, and
	// the connection goes on as a private session, telling the client why.
	Check(c *wsConn) (ok bool, why string)
	// Begin and Done bracket each command the connection runs.
	Begin(cmd Command)
	Done(c *wsConn, cmd Command)
	// Sent sees each reply queued: its type, the value and its encoding.
	Sent(typ string, payload any, raw []byte)
	// Thinning is the least detail_ms runs are thinned to, and full: every
	// event must go in full (thin.go).
	Thinning() (detailMs int, full bool)
	// Left is called when the connection ends.
	Left(c *wsConn)
}

// tapRef holds a connection's Tap for atomic swaps.
type tapRef struct{ t Tap }

// tap is the connection's Tap, nil when nothing observes it.
func (c *wsConn) tap() Tap {
	if r := c.tapped.Load(); r != nil {
		return r.t
	}
	return nil
}

// setTap sets (or, with nil, removes) the connection's Tap.
func (c *wsConn) setTap(t Tap) {
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

// hubConfig is what a wsHub is made of; nil or zero fields take defaults
// (a fresh fair queue, byte budget and metrics, the default limits, every
// origin refused, the visitor = the peer address).
type hubConfig struct {
	Log     *slog.Logger
	Catalog Catalog
	Limits  Limits
	Metrics *metrics
	Queue   *FairQueue
	Bytes   *byteBudget
	Origin  func(*http.Request) bool
	Visitor func(*http.Request) string
}

// newWSHub makes the hub of a server's lab connections.
func newWSHub(c hubConfig) *wsHub {
	s := &wsHub{log: c.Log, catalog: c.Catalog, limits: c.Limits.withDefaults(), metrics: c.Metrics, sched: c.Queue, bytes: c.Bytes,
		conns: &connSet{conns: map[*wsConn]struct{}{}}, live: &liveSet{}, origin: c.Origin, visitor: c.Visitor}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = newMetrics(func() float64 { return float64(s.kvBytes()) })
	}
	if s.sched == nil {
		s.sched = NewFairQueue(0)
	}
	if s.bytes == nil {
		s.bytes = newByteBudget(s.limits.VisitorBytesPerSecond, s.limits.VisitorByteBurst)
	}
	if s.origin == nil {
		s.origin = func(*http.Request) bool { return false }
	}
	if s.visitor == nil {
		s.visitor = func(r *http.Request) string { return r.RemoteAddr }
	}
	return s
}

// sessions is every open session's public figures at now (/server).
func (s *wsHub) sessions(now time.Time) []SessionView { return s.live.sessions(now) }

// kvBytes is the run memory the open sessions hold (KV caches and scratch).
func (s *wsHub) kvBytes() int64 { return s.conns.kvBytes.Load() }

// wsHub is what the lab connections share.
type wsHub struct {
	log     *slog.Logger
	catalog Catalog
	limits  Limits
	metrics *metrics
	sched   *FairQueue
	bytes   *byteBudget
	conns   *connSet
	live    *liveSet
	rooms   Rooms // nil: no classroom
	// origin reports whether a websocket's Origin is allowed; visitor is
	// the key per-visitor limits count under (visitors.go).
	origin  func(*http.Request) bool
	visitor func(*http.Request) string
}

// welcome is the first message of every connection: the protocol version,
// the models and the limits the client must keep to.
func (s *wsHub) welcome() map[string]any {
	return map[string]any{"protocol": ProtocolVersion, "models": s.catalog.Models(), "limits": map[string]any{
		"max_sessions": s.limits.MaxSessions, "max_sessions_per_visitor": s.limits.MaxSessionsPerVisitor, "max_sessions_per_address": s.limits.MaxSessionsPerAddress, "idle_timeout_s": s.limits.IdleTimeout.Seconds(),
		"read_limit_bytes": s.limits.ReadLimit, "messages_per_second": s.limits.MsgsPerSecond, "burst": s.limits.Burst,
		"max_prompt_bytes": session.MaxPromptBytes, "max_stop_strings": session.MaxStopStrings, "max_sample_n": session.MaxSampleMany, "max_resume_log": MaxResumeLog, "max_replay_passes": MaxReplayPasses,
	}}
}

// setClass starts (or ends) watching the connection's new run for a class
// request; a run it replaces that had not finished is reported failed.
func (c *wsConn) setClass(tag *ClassTag) {
	if c.class != nil {
		c.class.End("the student's page started another run")
	}
	c.class = nil
	if c.s.rooms != nil && tag.valid() {
		c.class = c.s.rooms.ClassRun(tag)
	}
}

// free is how many more sessions the server may open (less those kept for
// presenters coming back) and how many bytes of run memory are free.
func (s *wsHub) free() (sessions, bytes int64) {
	sessions = int64(s.limits.MaxSessions) - s.conns.n.Load()
	if s.rooms != nil {
		sessions -= int64(s.rooms.PresentersAway())
	}
	return sessions, s.limits.MaxKVBytes - s.conns.kvBytes.Load()
}

// started is the start settings of the connection's run (worker-owned:
// call it from the worker, as a Tap's methods are).
func (c *wsConn) started() *StartPayload { return c.start }

// visitorKey is the key the connection's per-visitor limits count under.
func (c *wsConn) visitorKey() string { return c.visitor }

// detachedConn is a connection with no socket standing for a visitor of
// hub s: for code that needs a connection to name who acts (tests).
func detachedConn(s *wsHub, visitor string) *wsConn { return &wsConn{s: s, visitor: visitor} }
