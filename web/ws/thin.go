package ws

// thin.go: a streamed run's heavy detail, thinned in time. With a run's
// detail_ms = N the server sends every event, but the heavy fields (every
// layer's attention and norms, the logit lens, the top list beyond
// ThinTopN, the histogram, the CDF) for at most one token per N ms; the
// other tokens' logits, sample and append events arrive without them and
// carry "thin": true, gathered into one events message per GroupEvery
// (at token ends). Before the run's stop event one detail message carries
// the latest full events that were sent thin, so the page ends on the
// exact, complete state. The server skips the lens it would drop: a token
// that goes out thin leaves its logit lens unread (session.DeferLens), and
// the detail message reads the last pass's (FillLens). Step, step_token
// and force always send every event in full. A run presented to a room is thinned at least at the
// room's DetailMs (rooms.go runThinner), and its followers get the same
// messages; a late joiner's snapshot keeps each stage's latest detail in
// full and the rest thin (roomview.go), and "Try it myself" resumes the
// room's log, which recomputes every event in full.

import (
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/wire"
)

// ThinTopN is how many candidates a thin logits event keeps (the
// generated text's tooltip lists the first 8).
const ThinTopN = session.LightTopN

// GroupEvery is how long a thinned run gathers consecutive thin events
// into one events message: a browser pays a task per websocket message,
// and the page draws at most once per frame anyway.
const GroupEvery = 16 * time.Millisecond

// thinner decides, token by token, which events of a run go out in full.
type thinner struct {
	// group gathers thin events since groupAt, for one events message
	group   []*session.Event
	groupAt time.Time
	every   time.Duration
	last    time.Time // when the last full token began
	full    bool      // the current token goes out in full
	decided bool      // full was decided for a logits event about to come (deferLens)
	// pend holds, per stage (logits, sample, append), the latest event
	// sent thin since that stage's last full one (for append: the last
	// that ran a forward pass).
	pend [3]*session.Event
}

func NewThinner(ms int) *thinner {
	if ms <= 0 {
		return nil
	}
	return &thinner{every: time.Duration(ms) * time.Millisecond, full: true}
}

func ThinSlot(st session.Stage) int {
	switch st {
	case session.StageLogits:
		return 0
	case session.StageSample:
		return 1
	case session.StageAppend:
		return 2
	}
	return -1
}

// Pass returns the event to send for ev: ev itself, or a thin copy. A
// token's logits event decides for the token: in full when at least the
// interval passed since the last full token began (and the run's first).
// With full set (the connection presents to a room) every event goes out
// in full.
func (t *thinner) Pass(ev *session.Event, full bool) *session.Event {
	if t == nil || ev == nil {
		return ev
	}
	k := ThinSlot(ev.Stage)
	if k < 0 || ev.Logits != nil && ev.Logits.Recomputed {
		return ev
	}
	if full {
		t.full, t.last = true, time.Time{}
	} else if k == 0 && !t.decided {
		t.decide()
	}
	t.decided = false
	if !Heavy(ev) {
		// nothing to leave out (an append that ran no forward pass): it
		// goes as it is and keeps the last pass pending
		return ev
	}
	if t.full {
		t.pend[k] = nil
		return ev
	}
	t.pend[k] = ev
	return ThinEvent(ev)
}

// decide says whether the token beginning now goes out in full.
func (t *thinner) decide() {
	now := time.Now()
	t.full = t.last.IsZero() || now.Sub(t.last) >= t.every
	if t.full {
		t.last = now
	}
}

// deferLens says whether the run's next stage (next; full: every event in
// full) belongs to a token that goes out thin, so that the session may
// make only what its thin events carry (session.DeferLens: no logit lens,
// top list, histogram counts, CDF or layer traces; a thinned run completes
// the last ones, in detailMsg). A token's detail is decided here, just
// before its logits stage runs, and Pass keeps that decision.
func (t *thinner) deferLens(next session.Stage, full bool) bool {
	if t == nil || full {
		return false
	}
	if next == session.StageLogits {
		t.decide()
		t.decided = true
	}
	return !t.full
}

// Heavy says whether ev has fields a thin copy leaves out.
func Heavy(ev *session.Event) bool {
	switch {
	case ev.Partial(): // made for a thin copy (deferLens): FillLens completes it
		return true
	case ev.Logits != nil:
		return len(ev.Logits.Top) > ThinTopN || len(ev.Logits.Histogram.Counts) > 0 || ev.Logits.Lens != nil
	case ev.Sample != nil:
		return ev.Sample.CDF != nil || ev.Sample.CDFTail != nil
	case ev.Append != nil:
		return ev.Append.LayerTraces != nil || ev.Append.Lens != nil
	}
	return false
}

// Take returns the pending full events in the order they happened and
// forgets them.
func (t *thinner) Take() []*session.Event {
	if t == nil {
		return nil
	}
	var out []*session.Event
	for k, ev := range t.pend {
		if ev != nil {
			out = append(out, ev)
		}
		t.pend[k] = nil
	}
	for i := 1; i < len(out); i++ { // at most three: insertion sort by seq
		for j := i; j > 0 && out[j].Seq < out[j-1].Seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ThinEvent is a copy of ev without its heavy fields, marked thin. The
// light ones stay: stage, token, text, the chosen token's probabilities,
// positions, cache and memory, timings, the first ThinTopN candidates.
func ThinEvent(ev *session.Event) *session.Event {
	t := *ev
	t.Thin = true
	if ev.Logits != nil {
		l := *ev.Logits
		// copied, not resliced: a kept thin event must not hold the
		// full list's array (a replay keeps thousands of them)
		l.Top = append(l.Top[:0:0], l.Top[:min(len(l.Top), ThinTopN)]...)
		l.Histogram = session.Histogram{Lo: l.Histogram.Lo, Hi: l.Histogram.Hi}
		l.Lens = nil
		t.Logits = &l
	}
	if ev.Sample != nil {
		s := *ev.Sample
		s.CDF, s.CDFTail = nil, nil
		t.Sample = &s
	}
	if ev.Append != nil {
		a := *ev.Append
		a.LayerTraces, a.Lens = nil, nil
		t.Append = &a
	}
	return &t
}

// hold adds a thin event to the group and says whether the group should
// go now: at the end of a token (an append) once GroupEvery has passed
// since its first event.
func (t *thinner) hold(ev *session.Event) bool {
	if len(t.group) == 0 {
		t.groupAt = time.Now()
	}
	t.group = append(t.group, ev)
	return ev.Stage == session.StageAppend && time.Since(t.groupAt) >= GroupEvery
}

// groupMsg encodes the gathered thin events as one events message and
// empties the group; false when there are none. An error means they could
// not be encoded (the client was told why).
func (c *Conn) groupMsg(id int64, t *thinner) (OutMsg, bool, error) {
	if t == nil || len(t.group) == 0 {
		return OutMsg{}, false, nil
	}
	evs := t.group
	t.group = nil
	m, err := c.encodeOut(id, wire.MsgEvents, map[string]any{"events": evs}, evs)
	return m, err == nil, err
}

// detailMsg encodes the run's pending full events as one detail message;
// false when none are pending (or they could not be encoded: the client
// was told why).
func (c *Conn) detailMsg(id int64, t *thinner) (OutMsg, bool) {
	evs := t.Take()
	if len(evs) == 0 {
		return OutMsg{}, false
	}
	for _, ev := range evs {
		c.runner.FillLens(ev) // the pending events are the run's latest: their lens and detail, made now
	}
	m, err := c.encodeOut(id, wire.MsgDetail, map[string]any{"events": evs}, evs)
	return m, err == nil
}

// sendDetail sends the run's gathered thin events and then its pending
// full events (nothing when there are none); false when the connection is
// going away.
func (c *Conn) sendDetail(id int64, t *thinner) bool {
	if m, ok, _ := c.groupMsg(id, t); ok && !c.enqueue(m) {
		return false
	}
	m, ok := c.detailMsg(id, t)
	return !ok || c.enqueue(m)
}

// runThinner is the thinner of a run (thinner) asked with detail_ms asked,
// and whether its every event must go in full. A run a Tap observes (a
// room's presenter) is thinned at least to the Tap's Thinning.
func (c *Conn) runThinner(asked int) (*thinner, bool) {
	t := c.Tap()
	if t == nil {
		return NewThinner(asked), false
	}
	ms, full := t.Thinning()
	if full {
		return NewThinner(asked), true
	}
	return NewThinner(max(asked, ms)), false
}
