package room

// classrequest.go: a class request — the class is the load test. The
// presenter picks one request (prompt, settings, output length, batching
// on or off); the room tells every following student's page to send it at
// once, each as its own /ws session through the same path as any lab run
// (fair queue, batcher). Each such session's events are watched on its own
// replica (classTap) and its timings reported to the room's owner, which
// merges them into the presenter's live chart and, when all are in, tells
// the class every result, so each student sees where they ranked. Before
// the class sends, the owner runs the request once alone (the baseline the
// class's aggregate is compared with) and checks that the class fits the
// server's sessions and memory, refusing by name with how many would.

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

const (
	// MaxClassNewTokens bounds a class request's output length.
	MaxClassNewTokens = 256
	// classWait is the longest a class request waits for its rows; one
	// that has not reported by then counts as failed.
	classWait = 90 * time.Second
	// classQuiet ends a request early once no row is running and none
	// has reported for this long (students who never sent it).
	classQuiet = 5 * time.Second
	// classReportEvery is how often a running row reports (and its first
	// token and its stop at once); the presenter's chart is redrawn at
	// most every classDrawEvery.
	classReportEvery = 200 * time.Millisecond
	classDrawEvery   = 100 * time.Millisecond
)

// classRow is one student's request as the server measured it. Times in
// ms; *_ms since epoch where named so. The stage times are the run's own
// (its stop event's timings): TTFTMs = QueueMs + TokenizeMs + EmbedMs +
// PrefillMs + FirstDecodeMs exactly, QueueMs being the waiting before the
// first token (for an engine slot and the batcher's prefill slot).
type classRow struct {
	Row           string    `json:"row"`
	State         string    `json:"state"` // "running", "done" or "failed"
	Error         string    `json:"error,omitempty"`
	StartMs       int64     `json:"start_ms"`           // the server got the request (unix ms)
	FirstMs       int64     `json:"first_ms,omitempty"` // the first token was chosen (unix ms)
	EndMs         int64     `json:"end_ms,omitempty"`   // the run stopped (unix ms)
	Tokens        int       `json:"tokens"`
	TokenAt       []float64 `json:"token_at"` // per token: ms after StartMs it was chosen
	Batches       []int     `json:"batches"`  // per decode pass: how many sessions' steps shared it
	QueueMs       float64   `json:"queue_ms"`
	TokenizeMs    float64   `json:"tokenize_ms"`
	EmbedMs       float64   `json:"embed_ms"`
	PrefillMs     float64   `json:"prefill_ms"`
	FirstDecodeMs float64   `json:"first_decode_ms"`
	TTFTMs        float64   `json:"ttft_ms"`
	ITLMs         []float64 `json:"itl_ms"`        // per later token: its compute (append + logits + sample)
	StepQueueMs   []float64 `json:"step_queue_ms"` // per decode pass: how long its step waited for the pass
	TokS          float64   `json:"tok_s"`         // Tokens ÷ (EndMs − StartMs): this request's output tokens per second
	MemoryBytes   int64     `json:"memory_bytes"`
}

// classTap watches a student's class run on the student's replica and
// reports its row to the room's owner.
type classTap struct {
	h     *Hub
	code  string
	id    int64
	start time.Time
	last  time.Time // the last report
	row   classRow
	ended bool
}

// ClassRun starts watching a student's run for the class request tag
// names (hub.go Rooms).
func (h *Hub) ClassRun(tag *wire.ClassTag) ws.ClassObserver {
	now := time.Now()
	t := &classTap{h: h, code: tag.Code, id: tag.ID, start: now,
		row: classRow{Row: tag.Row, State: "running", StartMs: now.UnixMilli(), TokenAt: []float64{}, Batches: []int{}, StepQueueMs: []float64{}}}
	t.report()
	return t
}

// Observe takes one event of the run.
func (t *classTap) Observe(ev *session.Event, memory int64) {
	if t.ended {
		return
	}
	now := time.Now()
	r := &t.row
	r.MemoryBytes = max(r.MemoryBytes, memory)
	first := false
	switch {
	case ev.Sample != nil:
		r.Tokens++
		r.TokenAt = append(r.TokenAt, ws.MsOf(now.Sub(t.start)))
		if r.FirstMs == 0 {
			r.FirstMs, first = now.UnixMilli(), true
		}
	case ev.Append != nil:
		if b := ev.Append.BatchSize; b > 0 {
			r.Batches = append(r.Batches, b)
			r.StepQueueMs = append(r.StepQueueMs, ev.Append.QueueMs)
		}
	case ev.Stop != nil:
		tm := ev.Stop.Timings
		r.Tokens = ev.Stop.Generated
		r.TokenizeMs, r.EmbedMs, r.PrefillMs, r.FirstDecodeMs, r.TTFTMs = tm.TokenizeMs, tm.EmbedMs, tm.PrefillMs, tm.FirstDecodeMs, tm.TTFTMs
		r.QueueMs = tm.TTFTMs - tm.TokenizeMs - tm.EmbedMs - tm.PrefillMs - tm.FirstDecodeMs
		r.ITLMs = append([]float64{}, tm.ITLMs...)
		r.EndMs = now.UnixMilli()
		if d := now.Sub(t.start).Seconds(); d > 0 {
			r.TokS = float64(r.Tokens) / d
		}
		r.State = "done"
		if ev.Stop.Reason == session.StopCancelled || r.Tokens == 0 {
			r.State, r.Error = "failed", "the run stopped before it finished: "+ev.Stop.Reason
		}
		t.ended = true
		t.report()
		return
	}
	if first || now.Sub(t.last) >= classReportEvery {
		t.report()
	}
}

// End reports the run failed (its page closed, or it started another).
func (t *classTap) End(why string) {
	if t.ended {
		return
	}
	t.ended = true
	t.row.State, t.row.Error, t.row.EndMs = "failed", why, time.Now().UnixMilli()
	t.report()
}

func (t *classTap) report() {
	t.last = time.Now()
	b, err := json.Marshal(map[string]any{"class_row": map[string]any{"id": t.id, "row": t.row}})
	if err == nil {
		t.h.bus.Publish(subjUp(t.code), b)
	}
}

// classRun is a room's class request, on its owner.
type classRun struct {
	ID       int64              `json:"id"`
	Start    *wire.StartPayload `json:"start"`
	Batch    bool               `json:"batch"`          // the class's decode steps were batched
	Batching bool               `json:"server_batches"` // this server batches at all (serve --batch)
	Expected int                `json:"expected"`       // students following when it was sent
	SentMs   int64              `json:"sent_ms"`
	Alone    ws.ClassAlone      `json:"alone"`
	Weights  int64              `json:"weights_bytes"`
	Budget   int64              `json:"budget_bytes"` // --max-kv-bytes: memory for runs, per server
	Done     bool               `json:"done"`
	rows     map[string]*classRow
	draw     *time.Timer // the presenter's next redraw
	quiet    *time.Timer // ends the request once nothing has run for classQuiet
	wait     *time.Timer // ends it after classWait whatever runs
}

// classAggregate is the class's requests together.
type classAggregate struct {
	Rows      int     `json:"rows"`
	Finished  int     `json:"finished"`
	Failed    int     `json:"failed"`
	Tokens    int     `json:"tokens"`
	WallMs    float64 `json:"wall_ms"` // from the first request's arrival to the last one's stop (or now)
	TokS      float64 `json:"tok_s"`   // Tokens ÷ WallMs: the server's output for the whole class
	RunsBytes int64   `json:"runs_bytes"`
}

// classState is the presenter's view of a class request.
type classState struct {
	*classRun
	Rows      []classRow     `json:"rows"`
	Aggregate classAggregate `json:"aggregate"`
}

func (cr *classRun) stateLocked(now time.Time) classState {
	st := classState{classRun: cr, Rows: make([]classRow, 0, len(cr.rows))}
	var first, last int64
	a := &st.Aggregate
	for _, r := range cr.rows {
		st.Rows = append(st.Rows, *r)
		a.Rows++
		a.Tokens += r.Tokens
		a.RunsBytes += r.MemoryBytes
		switch r.State {
		case "done":
			a.Finished++
		case "failed":
			a.Failed++
		}
		end := r.EndMs
		if r.State == "running" {
			end = now.UnixMilli()
		}
		if first == 0 || r.StartMs < first {
			first = r.StartMs
		}
		last = max(last, end)
	}
	sort.Slice(st.Rows, func(i, j int) bool {
		return st.Rows[i].StartMs < st.Rows[j].StartMs || st.Rows[i].StartMs == st.Rows[j].StartMs && st.Rows[i].Row < st.Rows[j].Row
	})
	if a.Rows > 0 && last > first {
		a.WallMs = float64(last - first)
		a.TokS = float64(a.Tokens) / (a.WallMs / 1000)
	}
	return st
}

// classCommand runs room_class for the presenter (c, on the owner).
func (h *Hub) classCommand(c *ws.Conn, id int64, r *room, p *wire.RoomPayload) {
	start := p.Start
	if start == nil || start.Prompt == "" && len(start.Chat) == 0 {
		c.SendError(id, wire.CodeBadPayload, "room_class needs start, the request every student sends: a prompt and its settings")
		return
	}
	if start.MaxNewTokens < 1 || start.MaxNewTokens > MaxClassNewTokens {
		c.SendError(id, wire.CodeBadPayload, fmt.Sprintf("room_class: max_new_tokens must be 1 to %d for a class request, not %d", MaxClassNewTokens, start.MaxNewTokens))
		return
	}
	batching := false
	if cat, ok := h.ws.Catalog.(*catalog.EngineCatalog); ok {
		batching, _ = cat.Batching()
	}
	req := *start
	req.Class, req.Lens, req.AllAttention, req.NoCache, req.NoBatch = nil, false, false, false, !p.Batch
	req.TopN = min(max(req.TopN, 0), 10)
	r.mu.Lock()
	busy := r.class != nil && !r.class.Done
	students := r.totalsLocked().Followers
	r.mu.Unlock()
	if busy {
		c.SendError(id, wire.CodeOutOfOrder, "the class request is still running: wait for its results")
		return
	}
	if students == 0 {
		c.SendError(id, wire.CodeOutOfOrder, "nobody follows the class yet: a class request is sent by the students' devices")
		return
	}
	// the baseline: the same request alone, on this server, now
	alone, weights, err := c.RunAlone(&req)
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, "room_class: "+err.Error())
		return
	}
	// will the class fit? sessions and memory for runs, on this server
	freeSessions, freeMem := h.ws.Free()
	fit := freeSessions
	if alone.MemoryBytes > 0 {
		fit = min(fit, freeMem/alone.MemoryBytes)
	}
	if fit < int64(students) {
		c.SendError(id, wire.CodeClassTooBig, fmt.Sprintf("%d students follow, but this server can run %d such requests at once now: each run needs %.1f MiB of the %.1f MiB free for runs (--max-kv-bytes), and %d sessions are free (--max-sessions). Ask for fewer tokens, or ask some students to watch", students, max(0, fit), float64(alone.MemoryBytes)/(1<<20), float64(max(0, freeMem))/(1<<20), max(0, freeSessions)))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	n := int64(1)
	if r.class != nil {
		n = r.class.ID + 1
	}
	cr := &classRun{ID: n, Start: &req, Batch: p.Batch && batching, Batching: batching, Expected: students, SentMs: time.Now().UnixMilli(), Alone: alone, Weights: weights,
		Budget: h.ws.Limits.MaxKVBytes, rows: map[string]*classRow{}}
	if r.class != nil {
		r.class.stopTimersLocked()
	}
	r.class = cr
	b, _ := json.Marshal(map[string]any{"id": cr.ID, "start": cr.Start, "batch": cr.Batch})
	r.publishLocked(wire.MsgRoomClass, b)
	cr.wait = time.AfterFunc(classWait, func() { r.finishClass(cr, true) })
	r.tellClassLocked()
}

// classRowLocked takes a row a replica reported.
func (r *room) classRowLocked(id int64, row classRow) {
	cr := r.class
	if cr == nil || cr.ID != id || cr.Done || len(row.Row) != 8 {
		return
	}
	old := cr.rows[row.Row]
	if old == nil && len(cr.rows) >= 2*cr.Expected+8 {
		return // more rows than the class has students: a page sending it again and again
	}
	if old != nil && old.State != "running" {
		return // a finished row is final
	}
	cr.rows[row.Row] = &row
	st := cr.stateLocked(time.Now())
	if st.Aggregate.Finished+st.Aggregate.Failed >= cr.Expected {
		go r.finishClass(cr, false)
		return
	}
	// the students who never sent it: once no row runs and none has
	// reported for classQuiet, the request ends without them
	if cr.quiet != nil {
		cr.quiet.Stop()
	}
	cr.quiet = time.AfterFunc(classQuiet, func() { r.finishClass(cr, false) })
	if cr.draw == nil {
		cr.draw = time.AfterFunc(classDrawEvery, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			cr.draw = nil
			if r.class == cr && !cr.Done {
				r.tellClassLocked()
			}
		})
	}
}

// finishClass ends a class request: the presenter gets the final state,
// the class every row, for its rank.
func (r *room) finishClass(cr *classRun, timedOut bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.class != cr || cr.Done {
		return
	}
	if !timedOut {
		// a quiet end before every expected student reported: only when
		// no row is running (the timer above), or all are in
		st := cr.stateLocked(time.Now())
		if st.Aggregate.Finished+st.Aggregate.Failed < st.Aggregate.Rows {
			return
		}
	}
	for _, row := range cr.rows {
		if row.State == "running" {
			row.State, row.Error = "failed", "no result within the class request's time"
		}
	}
	cr.Done = true
	cr.stopTimersLocked()
	st := cr.stateLocked(time.Now())
	r.tellClassLocked()
	type result struct {
		Row    string  `json:"row"`
		State  string  `json:"state"`
		TTFTMs float64 `json:"ttft_ms"`
		TokS   float64 `json:"tok_s"`
		Tokens int     `json:"tokens"`
	}
	res := make([]result, len(st.Rows))
	for i, row := range st.Rows {
		res[i] = result{row.Row, row.State, row.TTFTMs, row.TokS, row.Tokens}
	}
	b, _ := json.Marshal(map[string]any{"id": cr.ID, "rows": res, "aggregate": st.Aggregate, "alone": cr.Alone, "batch": cr.Batch})
	r.publishLocked(wire.MsgRoomClassResult, b)
}

func (cr *classRun) stopTimersLocked() {
	for _, t := range []*time.Timer{cr.draw, cr.quiet, cr.wait} {
		if t != nil {
			t.Stop()
		}
	}
	cr.draw = nil
}

// tellClassLocked sends the presenter the class request's state.
func (r *room) tellClassLocked() {
	if c := r.presenter; c != nil && r.class != nil {
		c.TryReply(wire.MsgRoomClassState, r.class.stateLocked(time.Now()))
	}
}
