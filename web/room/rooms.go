// Package room is the classroom: rooms a presenter opens, the views that
// follow them on every replica, follower websockets, class requests and
// the Fanout between replicas (local, or NATS with shared deflate). It
// observes a presenter's lab connection through ws.Tap.
package room

// rooms.go: classroom rooms, the owner's side. A presenter's connection
// opens a room; the room records the presenter's start settings and
// command log and publishes every message the presenter's run produces,
// once, on the room's stream through the Fanout. Replicas with followers
// consume that stream (roomview.go); follower websockets are in
// roomconn.go. The presenter key is checked on every presenter command.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// RoomOptions bound classroom rooms. Zero fields take the defaults of
// DefaultRoomOptions.
type RoomOptions struct {
	// Fanout carries room streams between replicas; nil is an in-process
	// LocalFanout (one replica).
	Fanout Fanout
	// MaxRooms is how many open rooms this server owns at once.
	MaxRooms int
	// MaxFollowers is how many students may follow one room.
	MaxFollowers int
	// MaxFollowersPerVisitor is how many follower sockets one visitor (a
	// browser, or a client address without the visitor cookie) may hold
	// in one room on one replica: a student's tabs, not a script's
	// hundreds that would fill the class.
	MaxFollowersPerVisitor int
	// Idle closes a room whose presenter has been gone this long.
	Idle time.Duration
	// MaxAge closes any room this long after it opened.
	MaxAge time.Duration
	// JoinFailures wrong join codes are allowed per client address in a
	// burst, refilled at one per JoinRefill.
	JoinFailures int
	JoinRefill   time.Duration
	// FollowerBuffer is the queue of messages per follower; a follower
	// whose queue is full is dropped (it catches up when it reconnects).
	FollowerBuffer int
	// DetailMs thins a presented run (thin.go): a run the presenter starts
	// goes to the class, and to the presenter, with at most one token's
	// heavy detail per DetailMs (or per the run's own detail_ms, when
	// larger), the rest thin, and the last token's in full before the stop.
	DetailMs int
}

// DefaultRoomOptions are documented in the README.
func DefaultRoomOptions() RoomOptions {
	return RoomOptions{MaxRooms: 16, MaxFollowers: 200, MaxFollowersPerVisitor: 4, Idle: 30 * time.Minute, MaxAge: 12 * time.Hour,
		JoinFailures: 10, JoinRefill: 6 * time.Second, FollowerBuffer: 256, DetailMs: 250}
}

func (o RoomOptions) WithDefaults() RoomOptions {
	d := DefaultRoomOptions()
	if o.MaxRooms <= 0 {
		o.MaxRooms = d.MaxRooms
	}
	if o.MaxFollowers <= 0 {
		o.MaxFollowers = d.MaxFollowers
	}
	if o.MaxFollowersPerVisitor <= 0 {
		o.MaxFollowersPerVisitor = d.MaxFollowersPerVisitor
	}
	if o.Idle <= 0 {
		o.Idle = d.Idle
	}
	if o.MaxAge <= 0 {
		o.MaxAge = d.MaxAge
	}
	if o.JoinFailures <= 0 {
		o.JoinFailures = d.JoinFailures
	}
	if o.JoinRefill <= 0 {
		o.JoinRefill = d.JoinRefill
	}
	if o.FollowerBuffer <= 0 {
		o.FollowerBuffer = d.FollowerBuffer
	}
	if o.DetailMs <= 0 {
		o.DetailMs = d.DetailMs
	}
	o.DetailMs = min(o.DetailMs, wire.MaxDetailMs)
	return o
}

const (
	roomSubject      = "inferscope.room."
	closedRoomMemory = time.Hour // a closed room still answers "ended" this long
	// unjoinedRoomIdle closes a room nobody joined this long after its
	// presenter left (rooms opened and abandoned cannot hold the server's
	// rooms for the whole Idle)
	unjoinedRoomIdle = 2 * time.Minute
	// maxRoomsPerAddress is how many open rooms one client address may own
	// (a school behind one NAT: a few teachers at once)
	maxRoomsPerAddress = 4
)

func newRoomCode() string {
	var b [wire.RoomCodeLen]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = wire.RoomCodeAlphabet[int(b[i])%len(wire.RoomCodeAlphabet)]
	}
	return string(b[:])
}

func newSecret(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func subjStream(code string) string { return roomSubject + code + ".ev" }
func subjUp(code string) string     { return roomSubject + code + ".up" }
func subjState(code string) string  { return roomSubject + code + ".state" }

// roomHub is a server's rooms: those it owns and the views of rooms (its
// own or another replica's) its followers watch.
type Hub struct {
	ws      *ws.Hub // the lab connections: their limits, log, metrics and catalog
	bus     Fanout
	ownBus  bool
	opts    RoomOptions
	replica string
	QRCache qrCache // join QR codes drawn lately (roompages.go)
	Guard   *guessGuard

	mu    sync.Mutex
	owned map[string]*room
	views map[string]*roomView

	followers atomic.Int64 // follower connections on this server
	stop      chan struct{}
	stopOnce  sync.Once
	janitorOn sync.Once

	// published, when set, is called with each room message as it is
	// published (benchmarks measure fan-out latency from it).
	published func(code string, seq int64, typ string)
	// trace, when set, is called with each message a view fans out to its
	// followers; the writers fill in when the last of them wrote it
	// (benchmarks split the fan-out latency with it).
	trace func(*FanTrace)
	// plainWrites makes followers' writers frame each message themselves
	// instead of sharing one prepared frame (the benchmark's baseline).
	plainWrites bool
	// fullRuns publishes a presented run's every event in full, with no
	// thin forms, as rooms did before runs were thinned (the benchmark's
	// baseline).
	fullRuns bool
}

// SetProbes installs a benchmark's baselines (plainWrites, fullRuns) and
// probes (trace, published; nil: off); call it while the hub is idle.
func (h *Hub) SetProbes(plainWrites, fullRuns bool, trace func(*FanTrace), published func(code string, seq int64, typ string)) {
	h.plainWrites, h.fullRuns, h.trace, h.published = plainWrites, fullRuns, trace, published
}

// Idle reports whether the hub has no followers and no views left.
func (h *Hub) Idle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.followers.Load() == 0 && len(h.views) == 0
}

func NewHub(ws *ws.Hub, o RoomOptions) *Hub {
	o = o.WithDefaults()
	h := &Hub{ws: ws, bus: o.Fanout, opts: o, replica: newSecret(6), owned: map[string]*room{}, views: map[string]*roomView{},
		Guard: newGuessGuard(o.JoinFailures, o.JoinRefill), stop: make(chan struct{})}
	if h.bus == nil {
		h.bus, h.ownBus = NewLocalFanout(), true
	}
	return h
}

// Close ends this server's rooms (shutdown) and its views.
func (h *Hub) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.mu.Lock()
	rooms := make([]*room, 0, len(h.owned))
	for _, r := range h.owned {
		rooms = append(rooms, r)
	}
	views := make([]*roomView, 0, len(h.views))
	for _, v := range h.views {
		views = append(views, v)
	}
	h.mu.Unlock()
	for _, r := range rooms {
		r.Close("the server is shutting down; reload the page in a moment")
		r.unsubscribe()
	}
	for _, v := range views {
		v.Shutdown("the server is shutting down; reload the page in a moment")
	}
	if h.ownBus {
		h.bus.Close()
	}
}

// janitor closes rooms whose presenter left long ago or that are too old,
// and forgets closed rooms after closedRoomMemory.
func (h *Hub) janitor() {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.sweep(now)
		}
	}
}

func (h *Hub) sweep(now time.Time) {
	h.mu.Lock()
	rooms := make([]*room, 0, len(h.owned))
	for _, r := range h.owned {
		rooms = append(rooms, r)
	}
	h.mu.Unlock()
	for _, r := range rooms {
		r.mu.Lock()
		closed, closedAt, left, presenter, joined := r.closed, r.closedAt, r.left, r.presenter, r.joined
		r.mu.Unlock()
		switch {
		case closed && now.Sub(closedAt) > closedRoomMemory:
			r.unsubscribe()
			h.mu.Lock()
			delete(h.owned, r.code)
			h.mu.Unlock()
		case closed:
		case now.Sub(r.created) > h.opts.MaxAge:
			r.Close(fmt.Sprintf("the class has ended: rooms close %s after they open", humanDuration(h.opts.MaxAge)))
		case presenter == nil && !joined && now.Sub(left) > unjoinedRoomIdle:
			r.Close(fmt.Sprintf("the class has ended: nobody joined, and the presenter has been away for %s", humanDuration(unjoinedRoomIdle)))
		case presenter == nil && now.Sub(left) > h.opts.Idle:
			r.Close(fmt.Sprintf("the class has ended: the presenter has been away for %s", humanDuration(h.opts.Idle)))
		}
	}
}

func humanDuration(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}

// room is a room this server owns.
type room struct {
	h       *Hub
	code    string
	key     string
	created time.Time
	addr    string // the presenter's client address when it opened (MaxRoomsPerAddress)

	mu        sync.Mutex
	page      string          // the page the presenter is on: /lab, /compare, /lessons/NAME
	pageState json.RawMessage // what a compare or lesson page shows (the presenter's page sends it)
	presenter *ws.Conn
	left      time.Time // when the presenter disconnected
	joined    bool      // a student has followed it (a room nobody joined closes soon after its presenter leaves)
	seq       int64
	start     *wire.StartPayload
	log       []wire.LogEntry
	pendSteps int  // events published since the log was last updated
	pendStop  bool // the last of them is a cancelled stop
	poll      *roomPoll
	presence  map[string]roomPresence
	removed   map[string]bool // networks the presenter removed (roomnetworks.go)
	class     *classRun       // the latest class request (classrequest.go)
	closed    bool
	closedAt  time.Time
	reason    string
	subs      []Subscription
}

// roomPresence is one replica's followers: sockets (Followers, Branched:
// what max_followers bounds) and students (Students following, Trying
// it themselves: distinct browsers, so two tabs of one student count once).
type roomPresence struct {
	Replica   string `json:"replica"`
	Followers int    `json:"followers"`
	Branched  int    `json:"branched"`
	Students  int    `json:"students"`
	Trying    int    `json:"trying"`
	// Networks is students (following or trying) per network (roomnetworks.go).
	Networks map[string]int `json:"networks,omitempty"`
}

// roomPoll is a question to the class: a choice among Options, or an
// open question ("number", "text") each student answers by typing. One
// vote per student (a browser; see roomconn.go), changeable while open.
type roomPoll struct {
	ID       int64    `json:"id"`
	Kind     string   `json:"kind"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	Open     bool     `json:"open"`
	Counts   []int    `json:"counts,omitempty"`
	// Answers are an open question's distinct answers, most given first
	// (at most maxAnswerKinds; Other counts the rest).
	Answers []roomAnswer `json:"answers,omitempty"`
	Other   int          `json:"other,omitempty"`
	Votes   int          `json:"votes"`
	// Reveal is what the model says, set by room_reveal: one line per
	// option, or one for an open question.
	Reveal  []string          `json:"reveal,omitempty"`
	voters  map[string]int    // anonymous student id → option
	answers map[string]string // anonymous student id → normalized answer
}

type roomAnswer struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// normalizeAnswer is the form a typed answer is counted under: a number
// as its value (to 6 significant digits, so "0.50" and ".5" are one
// answer), text trimmed, lower-case, single-spaced. It names what is wrong
// with an answer that is not of the poll's kind.
func normalizeAnswer(kind, s string) (string, error) {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "", errors.New("type an answer first")
	}
	if kind == "number" {
		v, err := strconv.ParseFloat(strings.NewReplacer(" ", "", ",", "", "\u00a0", "").Replace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("%q is not a number: type a number such as 12 or 0.5", s)
		}
		return strconv.FormatFloat(v, 'g', 6, 64), nil
	}
	return strings.ToLower(s), nil
}

// roomState answers a replica that starts (or resynchronises) a view.
type roomState struct {
	Seq       int64              `json:"seq"`
	Page      string             `json:"page"`
	PageState json.RawMessage    `json:"page_state,omitempty"`
	Start     *wire.StartPayload `json:"start,omitempty"`
	Log       []wire.LogEntry    `json:"log"`
	Poll      *roomPoll          `json:"poll,omitempty"`
	Followers int                `json:"followers"`
	Removed   []string           `json:"removed,omitempty"` // networks the presenter removed
	Closed    bool               `json:"closed"`
	Reason    string             `json:"reason,omitempty"`
}

// open makes a room presented by c. start and log, when given, are the
// run c has; the room rebuilds it from them so its log is exact.
func (h *Hub) open(c *ws.Conn, page string, state json.RawMessage) (*room, error) {
	if page == "" {
		page = "/lab"
	}
	h.janitorOn.Do(func() { go h.janitor() })
	h.mu.Lock()
	n, mine, addr := 0, 0, serve.AddressOf(c.VisitorKey())
	for _, r := range h.owned {
		r.mu.Lock()
		if !r.closed {
			n++
			if r.addr == addr {
				mine++
			}
		}
		r.mu.Unlock()
	}
	if mine >= maxRoomsPerAddress {
		h.mu.Unlock()
		return nil, &wire.ProtocolError{Code: wire.CodeTooManyRooms, Msg: fmt.Sprintf("your network address already presents %d classes (the limit per address is %d): end one with “End the class”; a class nobody joined ends %s after its presenter leaves", mine, maxRoomsPerAddress, humanDuration(unjoinedRoomIdle))}
	}
	if n >= h.opts.MaxRooms {
		h.mu.Unlock()
		return nil, &wire.ProtocolError{Code: wire.CodeServerFull, Msg: fmt.Sprintf("this server already has %d open rooms (the limit); close one or try again later", h.opts.MaxRooms)}
	}
	var code string
	for range 20 {
		code = newRoomCode()
		if h.owned[code] == nil {
			break
		}
	}
	r := &room{h: h, code: code, key: newSecret(24), created: time.Now(), addr: addr, page: page, pageState: nonNull(state), presenter: c, presence: map[string]roomPresence{}}
	h.owned[code] = r
	h.mu.Unlock()
	// a code another replica uses answers on the bus: pick another
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := h.bus.Request(ctx, subjState(code), nil); !errors.Is(err, ErrNoResponder) {
		h.mu.Lock()
		delete(h.owned, code)
		h.mu.Unlock()
		if err == nil {
			return h.open(c, page, state)
		}
		return nil, &wire.ProtocolError{Code: wire.CodeInternal, Msg: "rooms are unavailable: " + err.Error()}
	}
	s1, err1 := h.bus.Handle(subjState(code), r.answerState)
	s2, err2 := h.bus.Subscribe(subjUp(code), r.onUp)
	if err := errors.Join(err1, err2); err != nil {
		for _, s := range []Subscription{s1, s2} {
			if s != nil {
				s.Unsubscribe()
			}
		}
		h.mu.Lock()
		delete(h.owned, code)
		h.mu.Unlock()
		return nil, &wire.ProtocolError{Code: wire.CodeInternal, Msg: "rooms are unavailable: " + err.Error()}
	}
	r.subs = []Subscription{s1, s2}
	return r, nil
}

func (h *Hub) owner(code string) *room {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owned[code]
}

func (r *room) unsubscribe() {
	r.mu.Lock()
	subs := r.subs
	r.subs = nil
	r.mu.Unlock()
	for _, s := range subs {
		s.Unsubscribe()
	}
}

// keyOK compares in constant time.
// PresentersAway is how many open rooms of this server have no presenter
// connected: each keeps a session free for its presenter's reclaim
// (conn.go), so students filling the server cannot lock the teacher out.
func (h *Hub) PresentersAway() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.owned {
		r.mu.Lock()
		if !r.closed && r.presenter == nil {
			n++
		}
		r.mu.Unlock()
	}
	return n
}

// Reclaiming reports whether req is a presenter coming back to its room:
// /ws?room=CODE&key=KEY naming an open room of this server, presenter
// away, with its key. Such a connection may take the session its room
// keeps free.
func (h *Hub) Reclaiming(req *http.Request) bool {
	q := req.URL.Query()
	r := h.owner(wire.NormalizeCode(q.Get("room")))
	if r == nil || !r.keyOK(q.Get("key")) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.closed && r.presenter == nil
}

func (r *room) keyOK(key string) bool {
	return subtle.ConstantTimeCompare([]byte(key), []byte(r.key)) == 1
}

// holds reports whether c is the room's presenter with the right key.
func (r *room) holds(c *ws.Conn, key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.closed && r.presenter == c && r.keyOK(key)
}

// publishLocked puts one message on the room's stream; r.mu is held, so
// the stream's order is the order of publishing.
func (r *room) publishLocked(typ string, payload []byte) { r.publishThinLocked(typ, payload, nil) }

// publishThinLocked is publishLocked for an event sent in full with its
// thin form (roomMsg).
func (r *room) publishThinLocked(typ string, payload, thin []byte) {
	r.seq++
	m := wire.RoomMsg{Seq: r.seq, Type: typ, Payload: payload, Thin: thin}
	if f := r.h.published; f != nil {
		f(r.code, r.seq, typ)
	}
	if err := r.h.bus.Publish(subjStream(r.code), m.Encode()); err != nil {
		r.h.ws.Log.Warn("room stream publish failed", "room", r.code, "type", typ, "err", err)
	}
}

func (r *room) answerState([]byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := roomState{Seq: r.seq, Page: r.page, PageState: r.pageState, Start: r.start, Log: r.liveLogLocked(), Poll: r.poll, Followers: r.socketsLocked(), Removed: r.removedListLocked(), Closed: r.closed, Reason: r.reason}
	b, _ := json.Marshal(st)
	return b
}

// onUp takes presence counts and votes from the replicas' views.
func (r *room) onUp(b []byte) {
	var m struct {
		Presence *roomPresence `json:"presence"`
		ClassRow *struct {
			ID  int64    `json:"id"`
			Row classRow `json:"row"`
		} `json:"class_row"`
		Vote *struct {
			Poll   int64  `json:"poll"`
			Voter  string `json:"voter"`
			Option int    `json:"option"`
			Answer string `json:"answer"`
		} `json:"vote"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	switch {
	case m.ClassRow != nil:
		r.classRowLocked(m.ClassRow.ID, m.ClassRow.Row)
	case m.Presence != nil:
		r.presence[m.Presence.Replica] = *m.Presence
		r.joined = r.joined || m.Presence.Followers > 0
		t := r.totalsLocked()
		b, _ := json.Marshal(t)
		r.publishLocked(wire.MsgRoomCounts, b)
		r.tellPresenterLocked(t)
	case m.Vote != nil && r.poll != nil && r.poll.Open && m.Vote.Poll == r.poll.ID && len(m.Vote.Voter) <= 64:
		p := r.poll
		_, had := p.voters[m.Vote.Voter]
		_, hadA := p.answers[m.Vote.Voter]
		if !had && !hadA && len(p.voters)+len(p.answers) >= 4*r.h.opts.MaxFollowers {
			return
		}
		if p.Kind == "choice" {
			if m.Vote.Option < 0 || m.Vote.Option >= len(p.Options) {
				return
			}
			p.voters[m.Vote.Voter] = m.Vote.Option
		} else {
			a, err := normalizeAnswer(p.Kind, m.Vote.Answer)
			if err != nil || len(a) > wire.MaxAnswer {
				return
			}
			p.answers[m.Vote.Voter] = a
		}
		r.tellPresenterLocked(r.totalsLocked())
	}
}

// roomTotals are the counts the presenter (and the class) sees: Followers
// are the students following, Branched those trying it themselves; a
// student is one or the other, never both (a branched student's socket
// still holds a place in the class: Followers+Branched is what
// max_followers bounds).
type roomTotals struct {
	Followers int       `json:"followers"`
	Branched  int       `json:"branched"`
	Poll      *roomPoll `json:"poll,omitempty"`
	// Networks: the presenter's counts only (never the class's).
	Networks []roomNetwork `json:"networks,omitempty"`
}

func (r *room) totalsLocked() roomTotals {
	var t roomTotals
	for _, p := range r.presence {
		// students, not sockets: a browser's two tabs count once
		t.Followers += p.Students
		t.Branched += p.Trying
	}
	if r.poll != nil {
		r.tallyLocked()
		t.Poll = r.poll
	}
	return t
}

// socketsLocked is how many follower sockets the class has on all
// replicas, following or trying it themselves (what max_followers bounds).
func (r *room) socketsLocked() int {
	n := 0
	for _, p := range r.presence {
		n += p.Followers
	}
	return n
}

func (r *room) tallyLocked() {
	p := r.poll
	if p.Kind != "choice" {
		n := map[string]int{}
		for _, a := range p.answers {
			n[a]++
		}
		p.Answers = p.Answers[:0]
		for a, k := range n {
			p.Answers = append(p.Answers, roomAnswer{a, k})
		}
		sort.Slice(p.Answers, func(i, j int) bool {
			if p.Answers[i].N != p.Answers[j].N {
				return p.Answers[i].N > p.Answers[j].N
			}
			return p.Answers[i].Text < p.Answers[j].Text
		})
		p.Other = 0
		for _, a := range p.Answers[min(len(p.Answers), wire.MaxAnswerKinds):] {
			p.Other += a.N
		}
		p.Answers = p.Answers[:min(len(p.Answers), wire.MaxAnswerKinds)]
		p.Votes = len(p.answers)
		return
	}
	p.Counts = make([]int, len(p.Options))
	for _, o := range p.voters {
		p.Counts[o]++
	}
	p.Votes = len(p.voters)
}

func (r *room) tellPresenterLocked(t roomTotals) {
	if c := r.presenter; c != nil {
		t.Networks = r.networksLocked()
		c.TryReply(wire.MsgRoomCounts, t)
	}
}

// Close ends the room for everyone.
func (r *room) Close(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	b, _ := json.Marshal(map[string]string{"reason": reason})
	r.publishLocked(wire.MsgRoomClosed, b)
	r.closed, r.closedAt, r.reason = true, time.Now(), reason
	// a tombstone: a closed room answers "ended" for closedRoomMemory and
	// keeps nothing of what it showed
	r.start, r.log, r.pageState, r.poll = nil, nil, nil, nil
	if r.class != nil {
		r.class.stopTimersLocked()
		r.class = nil
	}
	if c := r.presenter; c != nil {
		c.SetTap(nil)
		c.TryReply(wire.MsgRoomClosed, map[string]string{"reason": reason})
	}
	r.presenter = nil
}

func (r *room) presenterLeft(c *ws.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.presenter == c {
		r.presenter = nil
		r.left = time.Now()
	}
}

// presenterHook is what a presenting connection carries: the room and the
// key it claimed it with, plus the current command's events (worker-owned).
type presenterHook struct {
	room   *room
	key    string
	events int
	last   *session.Event
	cmd    wire.Command // the command being run (set by begin)
	// samplingSet: the command's set_sampling was applied (its answer went out)
	samplingSet bool
}

// Begin is called before the presenter's connection runs cmd.
func (p *presenterHook) Begin(cmd wire.Command) { p.cmd, p.samplingSet = cmd, false }

// Sent is called for each reply the presenter's connection queues: run
// output goes on the room's stream, computed and encoded once. A thinned
// run (runThinner) sends its thin events in events messages and, before
// its stop, the latest full ones in a detail message: they go to the room
// as they are. An event in full that has a thin form also takes that
// form along, for the views' late-joiner snapshots (roomview.go).
func (p *presenterHook) Sent(m ws.Reply) {
	typ, raw := m.Type, m.Raw
	n := 0 // the run's events this message carries
	var thin []byte
	switch typ {
	case wire.MsgEvent:
		if len(m.Events) != 1 {
			return
		}
		n, p.last = 1, m.Events[0]
		if ev := p.last; !p.room.h.fullRuns && ws.ThinSlot(ev.Stage) >= 0 && !ev.Thin && ws.Heavy(ev) {
			thin, _ = json.Marshal(ws.ThinEvent(ev))
		}
	case wire.MsgEvents:
		if len(m.Events) == 0 {
			return
		}
		n, p.last = len(m.Events), m.Events[len(m.Events)-1]
	case wire.MsgSamplingSet:
		p.samplingSet = true
	case wire.MsgDetail, wire.MsgStarted, wire.MsgResumed:
	default:
		return
	}
	p.events += n
	r := p.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.presenter != nil && r.presenter.Tap() == ws.Tap(p) {
		if typ == wire.MsgStarted || typ == wire.MsgResumed {
			// the new start and log go first: a student who sees the run
			// start can "Try it myself" at once (r.presenter carries this
			// hook, and this is its worker: its start is set)
			r.pendSteps, r.pendStop = 0, false
			r.start, r.log = r.presenter.Started(), nil
			if typ == wire.MsgResumed && p.cmd.Resume != nil {
				r.log = append([]wire.LogEntry(nil), p.cmd.Resume.Log...)
			}
			r.publishLogLocked()
		} else if n > 0 {
			r.pendSteps += n
			r.pendStop = p.last != nil && p.last.Stop != nil && p.last.Stop.Reason == session.StopCancelled
		}
		r.publishThinLocked(typ, raw, thin)
	}
}

// Thinning is the least detail_ms the presenter's runs are thinned to
// (the room's DetailMs: its followers get the same stream as the
// presenter, which the lab draws the same way), and whether every event
// must go in full (the benchmark's baseline).
func (p *presenterHook) Thinning() (int, bool) {
	if h := p.room.h; !h.fullRuns {
		return h.opts.DetailMs, false
	}
	return 0, true
}

// Done records the command the presenter's connection finished in the
// room's log, the form resume replays, and publishes the new log.
func (p *presenterHook) Done(c *ws.Conn, cmd wire.Command) {
	n, last := p.events, p.last
	p.events, p.last = 0, nil
	r := p.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.presenter != c {
		return
	}
	r.pendSteps, r.pendStop = 0, false
	changed := true
	switch cmd.Type {
	case wire.CmdStart, wire.CmdReset, wire.CmdResume:
		return // recorded and published when its started/resumed reply was sent
	case wire.CmdStep, wire.CmdStepToken, wire.CmdRun:
		if n == 0 {
			return
		}
		if cmd.Type != wire.CmdStep && last != nil && last.Stop != nil && last.Stop.Reason == session.StopCancelled {
			for range n - 1 {
				r.log = append(r.log, wire.LogEntry{Type: wire.CmdStep})
			}
			r.log = append(r.log, wire.LogEntry{Type: wire.CmdCancel})
		} else if cmd.Type == wire.CmdRun && last != nil && last.Stop == nil {
			// paused: the stages it ran, the run goes on from there
			for range n {
				r.log = append(r.log, wire.LogEntry{Type: wire.CmdStep})
			}
		} else {
			r.log = append(r.log, wire.LogEntry{Type: cmd.Type})
		}
	case wire.CmdForce:
		if n > 0 {
			r.log = append(r.log, wire.LogEntry{Type: wire.CmdForce, Arg: cmd.Token})
		}
		changed = n > 0
	case wire.CmdRewind:
		changed = n > 0
		if changed {
			r.log = append(r.log, wire.LogEntry{Type: wire.CmdRewind, Arg: cmd.N})
		}
	case wire.CmdCancel:
		changed = n > 0
		if changed {
			r.log = append(r.log, wire.LogEntry{Type: wire.CmdCancel})
		}
	case wire.CmdSampling:
		// recorded with every setting, as the connection now has them
		if st := c.Started(); st != nil && st.Sampling != nil && p.samplingSet {
			r.log = append(r.log, wire.LogEntry{Type: wire.CmdSampling, Sampling: st.Sampling})
		} else {
			changed = false
		}
	default:
		changed = false
	}
	if changed {
		r.publishLogLocked()
	}
}

// setPageLocked moves the class to the presenter's page and what it shows.
func (r *room) setPageLocked(page string, state json.RawMessage) {
	r.page, r.pageState = page, nonNull(state)
	b, _ := json.Marshal(roomPage{Page: r.page, State: r.pageState})
	r.publishLocked(wire.MsgRoomPage, b)
}

// roomPage is the room_page message.
type roomPage struct {
	Page  string          `json:"page"`
	State json.RawMessage `json:"state"`
}

func nonNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func (r *room) publishLogLocked() {
	b, _ := json.Marshal(map[string]any{"start": r.start, "log": r.logOrEmpty()})
	r.publishLocked(wire.MsgRoomLog, b)
}

// liveLogLocked is the log that rebuilds the run as published so far.
func (r *room) liveLogLocked() []wire.LogEntry { return liveLog(r.log, r.pendSteps, r.pendStop) }

// liveLog is the log that rebuilds a run as published so far: the log of
// finished commands plus the pending stages of the one in progress (the
// last of them a cancel when pendStop).
func liveLog(log []wire.LogEntry, pendSteps int, pendStop bool) []wire.LogEntry {
	l := append([]wire.LogEntry{}, log...)
	n := pendSteps
	if pendStop {
		n--
	}
	for range n {
		l = append(l, wire.LogEntry{Type: wire.CmdStep})
	}
	if pendStop {
		l = append(l, wire.LogEntry{Type: wire.CmdCancel})
	}
	return l
}

func (r *room) logOrEmpty() []wire.LogEntry {
	if r.log == nil {
		return []wire.LogEntry{}
	}
	return r.log
}

// roomOpened is the presenter's answer to room_open and room_claim.
func (r *room) opened() map[string]any {
	r.mu.Lock()
	start, log := r.start, r.logOrEmpty()
	r.mu.Unlock()
	r.mu.Lock()
	page := r.page
	r.mu.Unlock()
	return map[string]any{"start": start, "log": log, "code": r.code, "key": r.key, "page": page, "join_path": "/join?code=" + r.code, "qr_path": "/join/qr.svg?code=" + r.code,
		"expires_at": r.created.Add(r.h.opts.MaxAge).UTC().Format(time.RFC3339), "max_followers": r.h.opts.MaxFollowers, "idle_minutes": int(r.h.opts.Idle / time.Minute)}
}

// Check runs before every command of a presenting connection: the room
// must still be open and presented by this connection with its key. If
// not, the connection goes on as a private session and is told why.
func (p *presenterHook) Check(c *ws.Conn) (bool, string) {
	if p.room.holds(c, p.key) {
		return true, ""
	}
	return false, "this page no longer presents room " + p.room.code + " (it ended or was reclaimed); your commands now drive a private session"
}

// Left is called when the presenting connection ends.
func (p *presenterHook) Left(c *ws.Conn) { p.room.presenterLeft(c) }
