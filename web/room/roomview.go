package room

// roomview.go: a replica's view of one room: it consumes the room's stream
// once, keeps what a late joiner needs (the presenter's start, log and the
// events since the run started: the latest heavy detail of each stage in
// full, every other token's in its thin form), and fans every message out
// to the follower websockets on this replica without waiting for any of
// them. A view starts, and resynchronises after a gap, by asking the
// room's owner for its start and log and replaying them with the
// deterministic resume: engine work once per replica, never per follower.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// roomErr is a room refusal shown to a student as it is (a ProtocolError).
func roomErr(code, msg string) error { return &wire.ProtocolError{Code: code, Msg: msg} }

// fanMsg is one message for followers, encoded once and shared by all of
// them: the whole message, seq included, is one websocket frame that every
// follower's writer sends as it is, several queued frames in one write. A
// follower's seq is this replica's message counter for the room (strictly
// increasing, with gaps where other followers got messages of their own).
// The frame is in parts for writev: the frame header and the envelope up
// to the payload, then a large payload itself (never copied: an event, or
// the snapshot a late joiner gets, is the same bytes for every follower),
// then the closing brace. A message of one follower's own (its snapshot)
// therefore costs that follower only its small envelope.
type fanMsg struct {
	frame [][]byte  // the frame's parts; nil: nothing to write (or plainWrites)
	data  []byte    // plainWrites only: the whole message, for gorilla to frame
	size  int       // the message's length (the frame less its header)
	close bool      // after writing (or instead, when there is nothing to write), close the connection
	tr    *FanTrace // nil unless the hub traces (benchmarks)
	parts [3][]byte // frame's backing array
	// zframe is the message compressed (fanout_deflate.go), for followers
	// that negotiated permessage-deflate; nil: they get frame too
	zframe [][]byte
	zsize  int // the compressed message's length
	zparts [3][]byte
}

// sharedPayloadMin is the payload size from which a message refers to its
// payload instead of copying it into the frame.
const sharedPayloadMin = 512

var closeBrace = []byte{'}'}

// msgLocked encodes one message with the view's next seq. v.mu is held,
// so every follower sees seqs in increasing order. A large payload is
// shared, not copied: it must not change after the call (the view's
// payloads are never modified once stored).
func (v *roomView) msgLocked(typ string, payload []byte) *fanMsg {
	v.out++
	if string(payload) == "null" {
		payload = nil
	}
	plain := v.h.plainWrites
	shared := len(payload) >= sharedPayloadMin && !plain
	const head = 10 // the largest frame header a server sends
	n := head + len(typ) + 48
	if !shared {
		n += len(payload) + 1
	}
	b := wire.AppendEnvelope(make([]byte, head, n), typ, v.out, 0)
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
	}
	m := &fanMsg{}
	if !shared {
		b = append(b, payload...)
		b = append(b, '}')
	}
	m.size = len(b) - head
	if plain {
		m.data = b[head:]
		return m
	}
	if shared {
		m.size += len(payload) + len(closeBrace)
	}
	m.parts[0] = b[head-textFrameHeader(b[:head], m.size):]
	m.frame = m.parts[:1]
	if shared {
		m.parts[1], m.parts[2] = payload, closeBrace
		m.frame = m.parts[:3]
		if v.deflaters > 0 {
			// the envelope as a stored block, the payload compressed once
			z := v.deflatedLocked(payload)
			zb := appendStored(make([]byte, head, head+5+len(b)-head), b[head:])
			m.zsize = len(zb) - head + len(z) + len(deflateEnd)
			m.zparts[0] = zb[head-textFrameHeader(zb[:head], m.zsize):]
			m.zparts[0][0] |= rsv1
			m.zparts[1], m.zparts[2] = z, deflateEnd
			m.zframe = m.zparts[:]
		}
	}
	return m
}

// rsv1 marks a compressed message's first frame (RFC 7692 §6).
const rsv1 = 0x40

// deflatedLocked is a shared payload compressed, from a small cache: a
// late joiner's snapshot and the page's state go to several followers.
func (v *roomView) deflatedLocked(p []byte) []byte {
	for _, c := range v.zcache {
		if c.n == len(p) && c.p == &p[0] {
			return c.z
		}
	}
	z := deflateShared(p)
	copy(v.zcache[1:], v.zcache[:])
	v.zcache[0] = zcached{p: &p[0], n: len(p), z: z}
	return z
}

type zcached struct {
	p *byte // the payload's first byte: payloads are never changed once stored
	n int
	z []byte
}

// textFrameHeader writes the header of a final, unmasked text frame of n
// bytes (RFC 6455 §5.2: what a server sends without compression) at the
// end of b, which has room for the largest header, and returns its length.
func textFrameHeader(b []byte, n int) int {
	var h []byte
	switch {
	case n < 126:
		h = []byte{0x81, byte(n)}
	case n <= 0xffff:
		h = []byte{0x81, 126, byte(n >> 8), byte(n)}
	default:
		h = []byte{0x81, 127, 0, 0, 0, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	}
	copy(b[len(b)-len(h):], h)
	return len(h)
}

// FanTrace times one message a view fanned out (roomHub.trace): when the
// view had queued it for every follower and when the last follower's
// writer had written it to the socket, in Unix nanoseconds.
type FanTrace struct {
	Replica string
	Seq     int64 // the room stream's seq
	Type    string
	Queued  int64
	Written atomic.Int64
}

// wrote records that one more follower's writer wrote the message at t.
func (t *FanTrace) wrote(now int64) {
	for {
		w := t.Written.Load()
		if w >= now || t.Written.CompareAndSwap(w, now) {
			return
		}
	}
}

type roomView struct {
	h     *Hub
	code  string
	ready chan struct{} // closed when the first sync is done
	err   error         // why the first sync failed

	mu        sync.Mutex
	sub       Subscription
	seq       int64 // the room stream's seq last applied
	out       int64 // the seq of the last message sent to followers
	syncing   bool
	pending   []wire.RoomMsg
	page      string
	pageMsg   []byte      // the last room_page payload
	started   []byte      // the started payload (model, config, next), nil before a run
	events    []viewEvent // every event since started, as a late joiner gets it
	fullAt    [3]int      // per thinned stage (thinSlot): 1 + the index of the event kept in full; 0: none
	start     *wire.StartPayload
	log       []wire.LogEntry
	pendSteps int  // events since the last room_log
	pendStop  bool // the last of them is a cancelled stop
	poll      []byte
	totals    int // room-wide follower sockets (following or branched), from the owner's counts
	reported  int // the follower count this replica last reported
	followers map[*follower]struct{}
	deflaters int        // followers that negotiated permessage-deflate
	zcache    [4]zcached // payloads compressed lately (deflatedLocked)
	branched  int
	removed   map[string]bool // networks the presenter removed (roomnetworks.go)
	snapshot  []byte          // cached resumed payload for late joiners
	gone      bool            // no longer fed: closed, or torn down when its last follower left
	closed    bool            // the room ended
	timer     *time.Timer
}

// view returns this replica's view of code, starting it if needed.
func (h *Hub) view(ctx context.Context, code string) (*roomView, error) {
	h.mu.Lock()
	v := h.views[code]
	if v == nil {
		v = &roomView{h: h, code: code, ready: make(chan struct{}), followers: map[*follower]struct{}{}, syncing: true}
		h.views[code] = v
		h.mu.Unlock()
		v.err = v.begin(ctx)
		if v.err != nil {
			h.mu.Lock()
			if h.views[code] == v {
				delete(h.views, code)
			}
			h.mu.Unlock()
		}
		close(v.ready)
	} else {
		h.mu.Unlock()
		select {
		case <-v.ready:
		case <-ctx.Done():
			return nil, roomErr(wire.CodeInternal, "the class is taking too long to load; try again")
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	return v, nil
}

func (v *roomView) begin(ctx context.Context) error {
	sub, err := v.h.bus.Subscribe(subjStream(v.code), v.onMsg)
	if err != nil {
		return roomErr(wire.CodeInternal, "rooms are unavailable: "+err.Error())
	}
	v.mu.Lock()
	v.sub = sub
	v.mu.Unlock()
	if err := v.sync(ctx); err != nil {
		sub.Unsubscribe()
		return err
	}
	return nil
}

// Lookup says whether a room exists and is open, without starting a view,
// and which page its presenter is on.
func (h *Hub) Lookup(ctx context.Context, code string) (string, error) {
	b, err := h.bus.Request(ctx, subjState(code), nil)
	if errors.Is(err, ErrNoResponder) {
		return "", roomErr(wire.CodeRoomNotFound, "there is no class with the code "+code+": check the code on the presenter's screen")
	}
	if err != nil {
		return "", roomErr(wire.CodeInternal, "rooms are unavailable right now: "+err.Error())
	}
	var st roomState
	if json.Unmarshal(b, &st) != nil {
		return "", roomErr(wire.CodeInternal, "the room's owner sent a bad answer")
	}
	if st.Closed {
		return "", roomErr(wire.CodeRoomClosed, "the class "+code+" has ended: "+st.Reason)
	}
	return st.Page, nil
}

// sync asks the owner for the room's state and rebuilds the view from it.
func (v *roomView) sync(ctx context.Context) error {
	b, err := v.h.bus.Request(ctx, subjState(v.code), nil)
	if errors.Is(err, ErrNoResponder) {
		return roomErr(wire.CodeRoomNotFound, "there is no class with the code "+v.code+": check the code on the presenter's screen")
	}
	if err != nil {
		return roomErr(wire.CodeInternal, "rooms are unavailable right now: "+err.Error())
	}
	var st roomState
	if err := json.Unmarshal(b, &st); err != nil {
		return roomErr(wire.CodeInternal, "the room's owner sent a bad answer")
	}
	if st.Closed {
		return roomErr(wire.CodeRoomClosed, "the class "+v.code+" has ended: "+st.Reason)
	}
	var started []byte
	var events []viewEvent
	var fullAt [3]int
	if st.Start != nil {
		run, evs, err := replayLog(ctx, v.h.ws.Catalog, st.Start, st.Log)
		if err != nil {
			return roomErr(wire.CodeInternal, "this server cannot rebuild the presenter's run: "+err.Error())
		}
		started, _ = json.Marshal(ws.StartedPayload(run, st.Start))
		if events, fullAt, err = keepEvents(evs, nil); err != nil {
			return roomErr(wire.CodeInternal, "the presenter's run cannot be encoded: "+err.Error())
		}
	}
	var poll []byte
	if st.Poll != nil {
		// while a poll is open students see the question, not the counts
		p := roomPoll{ID: st.Poll.ID, Kind: st.Poll.Kind, Question: st.Poll.Question, Options: st.Poll.Options, Open: st.Poll.Open, Votes: st.Poll.Votes}
		if !st.Poll.Open {
			p.Counts, p.Answers, p.Other, p.Reveal = st.Poll.Counts, st.Poll.Answers, st.Poll.Other, st.Poll.Reveal
		}
		poll, _ = json.Marshal(p)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq, v.page, v.started, v.events, v.fullAt, v.start, v.log, v.poll, v.totals = st.Seq, st.Page, started, events, fullAt, st.Start, st.Log, poll, st.Followers
	for _, id := range st.Removed {
		v.removeLocked(id)
	}
	v.pageMsg, _ = json.Marshal(roomPage{Page: st.Page, State: st.PageState})
	v.pendSteps, v.pendStop, v.snapshot = 0, false, nil
	v.syncing = false
	pend := v.pending
	v.pending = nil
	for _, m := range pend {
		if m.Seq > v.seq {
			v.applyLocked(m)
		}
	}
	// everyone following gets the rebuilt state
	for f := range v.followers {
		if !f.branched {
			v.sendSnapshotLocked(f)
		}
	}
	return nil
}

// viewEvent is one event of the run as a view keeps it for late joiners:
// in full while it holds the latest heavy detail of its stage (logits,
// sample, a forward pass's append), else its thin form (thin.go). The
// lab keeps only the latest of those details, so a late joiner's page
// draws what a follower who saw every event in full draws.
type viewEvent struct {
	seq  int64  // the event's own seq
	slot int    // thinSlot of its stage; -1: never thinned
	full []byte // nil once a later event holds its stage's detail
	thin []byte // nil: the event has no thin form (nothing heavy in it)
}

func (e *viewEvent) bytes() []byte {
	if e.full != nil {
		return e.full
	}
	return e.thin
}

// addEventLocked keeps one more event of the run.
func (v *roomView) addEventLocked(e viewEvent) {
	v.events = append(v.events, e)
	if e.full != nil && e.thin != nil {
		v.holdFullLocked(len(v.events) - 1)
	}
}

// holdFullLocked makes event i the one its stage keeps in full; the one
// before keeps only its thin form.
func (v *roomView) holdFullLocked(i int) {
	k := v.events[i].slot
	if k < 0 {
		return
	}
	if j := v.fullAt[k] - 1; j >= 0 && j != i && j < len(v.events) && v.events[j].thin != nil {
		v.events[j].full = nil
	}
	v.fullAt[k] = i + 1
}

// resetEventsLocked forgets the run's events (a new run).
func (v *roomView) resetEventsLocked() {
	v.events, v.fullAt = nil, [3]int{}
}

// keepEvents makes the events of a run, given whole (a replay, or a
// resumed message: raw, when given, is each event's encoding), into what
// a view keeps: the latest heavy event of each stage in full and with its
// thin form, the earlier heavy ones in their thin form only.
func keepEvents(evs []*session.Event, raw [][]byte) ([]viewEvent, [3]int, error) {
	last := [3]int{-1, -1, -1}
	for i, ev := range evs {
		if k := ws.ThinSlot(ev.Stage); k >= 0 && !ev.Thin && ws.Heavy(ev) {
			last[k] = i
		}
	}
	out := make([]viewEvent, len(evs))
	var fullAt [3]int
	for i, ev := range evs {
		e := viewEvent{seq: int64(ev.Seq), slot: ws.ThinSlot(ev.Stage)}
		var err error
		if e.slot >= 0 && !ev.Thin && ws.Heavy(ev) {
			if e.thin, err = json.Marshal(ws.ThinEvent(ev)); err != nil {
				return nil, fullAt, err
			}
		}
		if e.thin == nil || last[e.slot] == i {
			if raw != nil {
				e.full = raw[i]
			} else if e.full, err = json.Marshal(ev); err != nil {
				return nil, fullAt, err
			}
			if e.thin != nil {
				fullAt[e.slot] = i + 1
			}
		}
		out[i] = e
	}
	return out, fullAt, nil
}

// evHead reads an event's own seq and stage: from its first bytes, where
// the engine's encoding puts them, else from the whole event.
func evHead(b []byte) (int64, session.Stage, bool) {
	const pre, mid = `{"seq":`, `,"stage":"`
	if bytes.HasPrefix(b, []byte(pre)) {
		i, seq := len(pre), int64(0)
		for i < len(b) && i < 24 && b[i] >= '0' && b[i] <= '9' {
			seq = seq*10 + int64(b[i]-'0')
			i++
		}
		if i > len(pre) && bytes.HasPrefix(b[i:], []byte(mid)) {
			rest := b[i+len(mid):]
			if j := bytes.IndexByte(rest[:min(len(rest), 24)], '"'); j > 0 {
				return seq, session.Stage(rest[:j]), true
			}
		}
	}
	var h struct {
		Seq   int64         `json:"seq"`
		Stage session.Stage `json:"stage"`
	}
	if json.Unmarshal(b, &h) != nil {
		return 0, "", false
	}
	return h.Seq, h.Stage, true
}

// onMsg is the stream subscription's callback.
func (v *roomView) onMsg(b []byte) {
	m, ok := wire.DecodeRoomMsg(b)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gone {
		return
	}
	if v.syncing {
		v.pending = append(v.pending, wire.RoomMsg{Seq: m.Seq, Type: m.Type, Payload: bytes.Clone(m.Payload), Thin: bytes.Clone(m.Thin)})
		return
	}
	if m.Seq <= v.seq {
		return
	}
	if m.Seq != v.seq+1 {
		// a gap (a slow NATS subscriber loses messages): rebuild from the owner
		v.h.ws.Log.Warn("room stream gap: resynchronising", "room", v.code, "have", v.seq, "got", m.Seq)
		v.syncing = true
		v.pending = append(v.pending, wire.RoomMsg{Seq: m.Seq, Type: m.Type, Payload: bytes.Clone(m.Payload), Thin: bytes.Clone(m.Thin)})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := v.sync(ctx); err != nil {
				v.end(wire.MsgRoomClosed, "the class could not be reloaded: "+err.Error())
			}
		}()
		return
	}
	v.applyLocked(m)
}

// applyLocked folds one stream message into the view and fans it out. The
// bus's buffer is copied once (followers' frames share the copy: see
// msgLocked), as the Fanout does not promise to leave it alone.
func (v *roomView) applyLocked(m wire.RoomMsg) {
	v.seq = m.Seq
	switch m.Type {
	case wire.MsgStarted:
		v.started = bytes.Clone(m.Payload)
		v.resetEventsLocked()
		v.pendSteps, v.pendStop, v.snapshot = 0, false, nil
		v.fanLocked(m.Type, v.started, false, false)
	case wire.MsgResumed:
		var r map[string]json.RawMessage
		if json.Unmarshal(m.Payload, &r) != nil {
			return
		}
		var raw []json.RawMessage
		json.Unmarshal(r["events"], &raw)
		delete(r, "events")
		delete(r, "log_len")
		v.started, _ = json.Marshal(r)
		v.resetEventsLocked()
		// a resume's events are all in full: decoded once here (a rare
		// message: a presenter's reconnect, open or claim) to keep the
		// earlier tokens' detail in its thin form only
		evs := make([]*session.Event, len(raw))
		rb := make([][]byte, len(raw))
		ok := true
		for i, e := range raw {
			rb[i] = []byte(e)
			evs[i] = &session.Event{}
			ok = ok && json.Unmarshal(e, evs[i]) == nil
		}
		if kept, fullAt, err := keepEvents(evs, rb); ok && err == nil {
			v.events, v.fullAt = kept, fullAt
		} else {
			for i := range rb {
				v.events = append(v.events, viewEvent{seq: int64(evs[i].Seq), slot: -1, full: rb[i]})
			}
		}
		v.pendSteps, v.pendStop, v.snapshot = 0, false, nil
		v.fanLocked(m.Type, bytes.Clone(m.Payload), false, false)
	case wire.MsgEvent:
		p := bytes.Clone(m.Payload)
		e := viewEvent{slot: -1, full: p, thin: bytes.Clone(m.Thin)}
		if seq, st, ok := evHead(p); ok {
			e.seq, e.slot = seq, ws.ThinSlot(st)
		}
		v.addEventLocked(e)
		v.pendSteps++
		v.pendStop = isCancelledStop(p)
		v.snapshot = nil
		v.fanLocked(m.Type, p, false, false)
	case wire.MsgEvents:
		// a thinned run's thin events (thin.go): out first, then kept one by one
		p := bytes.Clone(m.Payload)
		v.fanLocked(m.Type, p, false, false)
		evs := groupEvents(p)
		for _, raw := range evs {
			e := viewEvent{slot: -1, thin: raw}
			if seq, st, ok := evHead(raw); ok {
				e.seq, e.slot = seq, ws.ThinSlot(st)
			}
			v.addEventLocked(e)
		}
		v.pendSteps += len(evs)
		v.snapshot = nil
	case wire.MsgDetail:
		// the full form of the latest thin events, before the stop: the
		// events they complete now hold their stages' detail
		p := bytes.Clone(m.Payload)
		v.fanLocked(m.Type, p, false, false)
		for _, raw := range groupEvents(p) {
			seq, st, ok := evHead(raw)
			if !ok || ws.ThinSlot(st) < 0 {
				continue
			}
			for i := len(v.events) - 1; i >= 0; i-- {
				if e := &v.events[i]; e.seq == seq && e.slot == ws.ThinSlot(st) {
					if e.full == nil {
						e.full = raw
						v.holdFullLocked(i)
					}
					break
				}
			}
		}
		v.snapshot = nil
	case wire.MsgRoomLog:
		var l struct {
			Start *wire.StartPayload `json:"start"`
			Log   []wire.LogEntry    `json:"log"`
		}
		if json.Unmarshal(m.Payload, &l) != nil {
			return
		}
		v.start, v.log, v.pendSteps, v.pendStop = l.Start, l.Log, 0, false
		v.fanLocked(m.Type, bytes.Clone(m.Payload), false, false)
	case wire.MsgRoomPage:
		var pg roomPage
		if json.Unmarshal(m.Payload, &pg) != nil {
			return
		}
		v.page, v.pageMsg = pg.Page, bytes.Clone(m.Payload)
		v.fanLocked(m.Type, v.pageMsg, false, false)
	case wire.MsgRoomPoll:
		v.poll = bytes.Clone(m.Payload)
		v.fanLocked(m.Type, v.poll, true, false)
	case wire.MsgRoomCounts:
		var t roomTotals
		if json.Unmarshal(m.Payload, &t) == nil {
			v.totals = t.Followers + t.Branched // every follower socket of the class
		}
		v.fanLocked(m.Type, bytes.Clone(m.Payload), true, false)
	case wire.MsgRoomRecall:
		v.fanLocked(m.Type, bytes.Clone(m.Payload), true, false)
	case wire.MsgSamplingSet:
		// the presenter changed the settings mid-run: the class sees the
		// current step under them (the room's log records the change)
		v.fanLocked(m.Type, bytes.Clone(m.Payload), false, false)
	case wire.MsgRoomClass:
		// the students following send it; those trying it themselves are busy
		v.fanLocked(m.Type, bytes.Clone(m.Payload), false, false)
	case wire.MsgRoomClassResult:
		v.fanLocked(m.Type, bytes.Clone(m.Payload), true, false)
	case wire.MsgRoomRemoved:
		var r struct {
			Network string `json:"network"`
		}
		if json.Unmarshal(m.Payload, &r) == nil && wire.ValidNetworkID(r.Network) {
			v.removeLocked(r.Network)
		}
	case wire.MsgRoomClosed:
		v.gone, v.closed = true, true
		v.fanLocked(m.Type, bytes.Clone(m.Payload), true, true)
		go v.teardown()
	}
}

// groupEvents is the events of an events or detail message ({events: [...]}).
func groupEvents(p []byte) []json.RawMessage {
	var g struct {
		Events []json.RawMessage `json:"events"`
	}
	json.Unmarshal(p, &g)
	return g.Events
}

// isCancelledStop reads only the start of an event: its stage comes first.
func isCancelledStop(ev []byte) bool {
	head := ev[:min(len(ev), 64)]
	if !bytes.Contains(head, []byte(`"stage":"stop"`)) {
		return false
	}
	var e struct {
		Stop *struct {
			Reason string `json:"reason"`
		} `json:"stop"`
	}
	return json.Unmarshal(ev, &e) == nil && e.Stop != nil && e.Stop.Reason == session.StopCancelled
}

// fanLocked encodes one message once and queues it for every follower
// (following ones only, unless all); a follower whose queue is full is
// dropped, never waited for. A large payload is shared, not copied
// (msgLocked).
func (v *roomView) fanLocked(typ string, payload []byte, all, close bool) {
	var m *fanMsg
	for f := range v.followers {
		if f.branched && !all {
			continue
		}
		if m == nil {
			m = v.msgLocked(typ, payload)
			m.close = close
			if v.h.trace != nil {
				m.tr = &FanTrace{Replica: v.h.replica, Seq: v.seq, Type: typ}
			}
		}
		f.queue(m)
	}
	if m != nil && m.tr != nil {
		m.tr.Queued = time.Now().UnixNano()
		v.h.trace(m.tr)
	}
}

// sendLocked queues a message of f's own.
func (v *roomView) sendLocked(f *follower, typ string, payload []byte) {
	f.queue(v.msgLocked(typ, payload))
}

// send queues a message of f's own from f's reader.
func (v *roomView) send(f *follower, typ string, payload []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sendLocked(f, typ, payload)
}

// liveLogLocked is the log that rebuilds the run as this view has it:
// the presenter's log plus the stages of the command in progress.
func (v *roomView) liveLogLocked() []wire.LogEntry { return liveLog(v.log, v.pendSteps, v.pendStop) }

// sendSnapshotLocked queues what a (re)joining follower needs to draw the
// presenter's run as it is now: the run and every event so far in one
// resumed message, then the settings and any open poll.
func (v *roomView) sendSnapshotLocked(f *follower) {
	if v.pageMsg != nil {
		v.sendLocked(f, wire.MsgRoomPage, v.pageMsg)
	}
	if v.started != nil {
		if v.snapshot == nil {
			n := len(v.started) + 64
			for i := range v.events {
				n += len(v.events[i].bytes()) + 1
			}
			b := make([]byte, 0, n)
			b = append(b, v.started[:len(v.started)-1]...)
			b = append(b, `,"log_len":`...)
			b = strconv.AppendInt(b, int64(len(v.log)), 10)
			b = append(b, `,"events":[`...)
			for i := range v.events {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, v.events[i].bytes()...)
			}
			b = append(b, "]}"...)
			v.snapshot = b
		}
		v.sendLocked(f, wire.MsgResumed, v.snapshot)
		lb, _ := json.Marshal(map[string]any{"start": v.start, "log": v.liveLogLocked()})
		v.sendLocked(f, wire.MsgRoomLog, lb)
	}
	if v.poll != nil {
		v.sendLocked(f, wire.MsgRoomPoll, v.poll)
	}
}

// admit adds f as a follower if the room has space.
func (v *roomView) admit(f *follower) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gone {
		if v.closed {
			return roomErr(wire.CodeRoomClosed, "the class has ended")
		}
		return roomErr(wire.CodeRetry, "this replica stopped watching the class a moment ago")
	}
	others := max(0, v.totals-v.reported)
	if max := v.h.opts.MaxFollowers; len(v.followers)+others >= max {
		return roomErr(wire.CodeRoomFull, fmt.Sprintf("the class is full: %d students follow it (the limit); ask the presenter", max))
	}
	if v.removed[f.network] {
		return roomErr(wire.CodeRemoved, removedMessage)
	}
	mine := 0
	for g := range v.followers {
		if g.visitor == f.visitor {
			mine++
		}
	}
	if max := v.h.opts.MaxFollowersPerVisitor; mine >= max {
		return roomErr(wire.CodeTooManyTabs, fmt.Sprintf("this browser already follows this class in %d tabs (the limit): close one of them and use it here", max))
	}
	v.followers[f] = struct{}{}
	if f.deflate {
		v.deflaters++
	}
	joined, _ := json.Marshal(map[string]any{"code": v.code, "page": v.page, "followers": len(v.followers) + others, "max_followers": v.h.opts.MaxFollowers, "voter": f.id})
	v.sendLocked(f, wire.MsgRoomJoined, joined)
	v.sendSnapshotLocked(f)
	v.presenceLocked()
	return nil
}

func (v *roomView) leave(f *follower) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.followers[f]; !ok {
		return
	}
	delete(v.followers, f)
	if f.deflate {
		v.deflaters--
	}
	if f.branched {
		v.branched--
	}
	v.presenceLocked()
}

// branch stops f following and returns the presenter's start and the log
// that rebuilds the run exactly as f's page shows it. On compare and
// lessons (page set), which have no run to copy, f only stops following.
func (v *roomView) branch(f *follower, page string) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if page != "" {
		if !f.branched {
			f.branched = true
			v.branched++
			v.presenceLocked()
		}
		return []byte(`{}`), nil
	}
	if v.start == nil {
		return nil, roomErr(wire.CodeOutOfOrder, "there is nothing to try yet: the presenter has not started a run")
	}
	if !f.branched {
		f.branched = true
		v.branched++
		v.presenceLocked()
	}
	return json.Marshal(map[string]any{"start": v.start, "log": v.liveLogLocked()})
}

// follow makes f follow again from the current state.
func (v *roomView) follow(f *follower) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f.branched {
		f.branched = false
		v.branched--
		v.presenceLocked()
	}
	v.sendSnapshotLocked(f)
}

// presenceLocked reports this replica's counts to the owner soon (changes
// within 50 ms are reported once); an empty view then goes away.
func (v *roomView) presenceLocked() {
	if v.timer != nil {
		return
	}
	v.timer = time.AfterFunc(50*time.Millisecond, func() {
		v.mu.Lock()
		v.timer = nil
		n, b, gone := len(v.followers), v.branched, v.gone
		// students: distinct browsers; one trying it in any tab counts as trying
		following, trying := map[string]bool{}, map[string]bool{}
		networks, counted := map[string]int{}, map[string]bool{}
		for f := range v.followers {
			if f.branched {
				trying[f.student] = true
			} else {
				following[f.student] = true
			}
			if !counted[f.student] {
				counted[f.student] = true
				networks[f.network]++
			}
		}
		for k := range trying {
			delete(following, k)
		}
		v.reported = n
		v.mu.Unlock()
		if gone {
			return
		}
		msg, _ := json.Marshal(map[string]any{"presence": roomPresence{Replica: v.h.replica, Followers: n, Branched: b, Students: len(following), Trying: len(trying), Networks: networks}})
		v.h.bus.Publish(subjUp(v.code), msg)
		if n == 0 {
			v.teardownIfEmpty()
		}
	})
}

// vote sends a student's answer to the room's owner: an option of a choice
// poll, or a typed answer to an open one, checked here against the poll
// the class sees (so a student hears at once what is wrong). The voter is
// the student's browser (follower.voter), so a reconnect or a second tab
// changes the vote instead of adding one.
func (v *roomView) vote(f *follower, poll int64, option *int, answer string) error {
	v.mu.Lock()
	var cur struct {
		ID      int64    `json:"id"`
		Kind    string   `json:"kind"`
		Open    bool     `json:"open"`
		Options []string `json:"options"`
	}
	if v.poll != nil {
		json.Unmarshal(v.poll, &cur)
	}
	v.mu.Unlock()
	if cur.ID != poll || !cur.Open {
		return roomErr(wire.CodeOutOfOrder, "that question is closed: the presenter has revealed the answers")
	}
	m := map[string]any{"poll": poll, "voter": f.voter}
	if cur.Kind == "" || cur.Kind == "choice" {
		if option == nil || *option < 0 || *option >= len(cur.Options) {
			return roomErr(wire.CodeBadPayload, fmt.Sprintf("pick one of the %d choices", len(cur.Options)))
		}
		m["option"] = *option
	} else {
		if _, err := normalizeAnswer(cur.Kind, answer); err != nil {
			return roomErr(wire.CodeBadPayload, err.Error())
		}
		m["answer"] = answer
	}
	msg, _ := json.Marshal(map[string]any{"vote": m})
	v.h.bus.Publish(subjUp(v.code), msg)
	return nil
}

func (v *roomView) teardownIfEmpty() {
	v.h.mu.Lock()
	v.mu.Lock()
	if len(v.followers) > 0 || v.timer != nil {
		v.mu.Unlock()
		v.h.mu.Unlock()
		return
	}
	v.gone = true
	if v.h.views[v.code] == v {
		delete(v.h.views, v.code)
	}
	sub := v.sub
	v.mu.Unlock()
	v.h.mu.Unlock()
	if sub != nil {
		sub.Unsubscribe()
	}
}

// teardown removes a closed room's view.
func (v *roomView) teardown() {
	v.h.mu.Lock()
	if v.h.views[v.code] == v {
		delete(v.h.views, v.code)
	}
	v.h.mu.Unlock()
	v.mu.Lock()
	sub := v.sub
	v.mu.Unlock()
	if sub != nil {
		sub.Unsubscribe()
	}
}

// end tells every follower why the view ends and closes them.
func (v *roomView) end(typ, reason string) {
	b, _ := json.Marshal(map[string]string{"reason": reason})
	v.mu.Lock()
	v.gone, v.closed = true, true
	v.fanLocked(typ, b, true, true)
	v.mu.Unlock()
	v.teardown()
}

func (v *roomView) Shutdown(reason string) { v.end(wire.MsgClosing, reason) }

// replayLog rebuilds a run from its start settings and command log, as
// resume does, returning the run and the events since its last reset.
func replayLog(ctx context.Context, cat catalog.Catalog, start *wire.StartPayload, log []wire.LogEntry) (catalog.Run, []*session.Event, error) {
	if cat == nil {
		return catalog.Run{}, nil, errors.New("no models are loaded")
	}
	newRun := func() (catalog.Run, error) { return cat.NewRun(start.Model, start.SessionConfig()) }
	run, err := newRun()
	if err != nil {
		return catalog.Run{}, nil, err
	}
	return ws.Replayer{
		NewRun:  newRun,
		Advance: func(r catalog.Runner, u session.Until) ([]*session.Event, error) { return r.Advance(ctx, u, nil) },
		Do:      func(f func()) error { f(); return nil },
	}.Replay(run, log)
}

// removeLocked keeps network id out of the class: its followers here are
// told why and closed; it may not join again (admit).
func (v *roomView) removeLocked(id string) {
	if v.removed == nil {
		v.removed = map[string]bool{}
	}
	v.removed[id] = true
	b, _ := json.Marshal(wire.ErrorPayload{Code: wire.CodeRemoved, Message: removedMessage})
	for f := range v.followers {
		if f.network == id {
			m := v.msgLocked(wire.MsgError, b)
			m.close = true
			f.queue(m)
		}
	}
}
