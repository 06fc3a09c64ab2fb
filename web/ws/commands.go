package ws

// commands.go: what each client command does to the connection's run
// (start, step, rewind, force, resume, …) and the welcome message.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

// Handle runs one command; a panic becomes an error message and a log line
// with the connection id, and the connection stays usable.
func (c *Conn) Handle(cmd wire.Command) {
	defer func() {
		if r := recover(); r != nil {
			c.s.Log.Error("panic while handling a websocket command", "conn", c.id, "type", cmd.Type, "panic", r)
			c.SendError(cmd.ID, wire.CodeInternal, "internal error while handling "+cmd.Type+"; the session is still usable")
		}
	}()
	switch cmd.Type {
	case wire.CmdHello:
		c.Reply(cmd.ID, wire.MsgWelcome, c.s.welcome())
	case wire.CmdStart:
		c.startRun(cmd.ID, cmd.Start)
	case wire.CmdResume:
		c.resume(cmd.ID, cmd.Resume)
	case wire.CmdReset:
		if c.start == nil {
			c.SendError(cmd.ID, wire.CodeNoSession, "nothing to reset: send start first")
			return
		}
		c.startRun(cmd.ID, c.start)
	case wire.CmdStep, wire.CmdStepToken, wire.CmdRun:
		c.step(cmd)
	case wire.CmdRewind:
		if c.needRunner(cmd.ID) {
			var ev *session.Event
			var err error
			if c.withSlot(context.Background(), func() { ev, err = c.runner.Rewind(cmd.N) }) != nil {
				return
			}
			if err != nil {
				c.SendError(cmd.ID, wire.CodeBadRequest, err.Error())
				return
			}
			c.track(cmd.ID)
			c.Reply(cmd.ID, wire.MsgEvent, ev)
		}
	case wire.CmdSampling:
		if c.needRunner(cmd.ID) {
			c.setSampling(cmd.ID, cmd.Resample.Sampling())
		}
	case wire.CmdForce:
		if c.needRunner(cmd.ID) {
			if err := c.runner.Force(cmd.Token); err != nil {
				c.SendError(cmd.ID, wire.CodeBadRequest, err.Error())
				return
			}
			c.step(cmd)
		}
	case wire.CmdLogits:
		if c.needRunner(cmd.ID) && c.dataAllowed(cmd.ID, "get_logits") {
			var msg OutMsg
			var err error
			noLogits := false
			if c.withSlot(context.Background(), func() {
				l := c.runner.CurrentLogits()
				if noLogits = l == nil; !noLogits {
					msg, err = c.encodeOut(cmd.ID, wire.MsgLogits, map[string]any{"values": l}, nil)
				}
			}) != nil {
				return
			}
			if noLogits {
				c.SendError(cmd.ID, wire.CodeOutOfOrder, "no logits yet: step through prefill first")
				return
			}
			if err == nil {
				c.enqueue(msg)
			}
		}
	case wire.CmdSampleN:
		if c.needRunner(cmd.ID) && c.dataAllowed(cmd.ID, "sample_n") {
			var counts []session.TokenCount
			var err error
			if c.withSlot(context.Background(), func() { counts, err = c.runner.SampleMany(cmd.N) }) != nil {
				return
			}
			if err != nil {
				c.SendError(cmd.ID, wire.CodeBadRequest, err.Error())
				return
			}
			c.Reply(cmd.ID, wire.MsgSamples, map[string]any{"n": cmd.N, "counts": counts})
		}
	case wire.CmdResample:
		if c.needRunner(cmd.ID) && c.dataAllowed(cmd.ID, "resample") {
			c.resample(cmd.ID, cmd.Resample)
		}
	case wire.CmdInspect:
		if c.needRunner(cmd.ID) && c.dataAllowed(cmd.ID, "inspect") {
			in, ok := c.runner.(inspector)
			if !ok {
				c.SendError(cmd.ID, wire.CodeBadRequest, "this run cannot be inspected")
				return
			}
			r, err := in.Inspect(*cmd.Inspect)
			if err != nil {
				c.SendError(cmd.ID, wire.CodeBadRequest, err.Error())
				return
			}
			c.Reply(cmd.ID, wire.MsgInspection, r)
		}
	case wire.CmdWeightBlock:
		if c.dataAllowed(cmd.ID, "weight_block") {
			c.weightBlock(cmd.ID, cmd.WeightBlock)
		}
	case wire.CmdCancel:
		if c.needRunner(cmd.ID) {
			if c.runner.Done() {
				c.SendError(cmd.ID, wire.CodeOutOfOrder, "nothing to cancel: the run has stopped")
				return
			}
			ev, _ := c.runner.Cancel()
			c.Reply(cmd.ID, wire.MsgEvent, ev)
		}
	default:
		if wire.IsRoomCommand(cmd.Type) && c.s.Rooms != nil {
			c.s.Rooms.Command(c, cmd) // the classroom (hub.go Rooms)
		}
	}
}

// resample answers the current step's distribution and draw under the
// run's settings with the payload's fields replaced (no forward pass).
func (c *Conn) resample(id int64, p *wire.ResamplePayload) {
	sp := p.Sampling().Over(c.start.SessionConfig().Sampling)
	topN := 0
	if p != nil {
		topN = p.TopN
	}
	var r *session.Resampled
	var err error
	if c.withSlot(context.Background(), func() { r, err = c.runner.Resample(sp, topN) }) != nil {
		return
	}
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, err.Error())
		return
	}
	c.Reply(id, wire.MsgResampled, r)
}

// setSampling applies new sampling settings to the run from the current
// step on (absent fields keep the run's): the start settings a reset uses
// change with them, and the answer carries every setting (what the log
// records: "set_sampling {…}") and the current step under them.
func (c *Conn) setSampling(id int64, p *wire.SamplingPayload) {
	sp := p.Over(c.start.SessionConfig().Sampling)
	var r *session.Resampled
	var err error
	if c.withSlot(context.Background(), func() { r, err = c.runner.SetSampling(sp) }) != nil {
		return
	}
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, "set_sampling: "+err.Error())
		return
	}
	full := samplingPayloadOf(sp)
	st := *c.start
	st.Sampling = full
	c.start = &st
	out := map[string]any{"sampling": full, "next": c.runner.Next()}
	if r != nil {
		out["logits"], out["sample"] = r.Logits, r.Sample
	}
	c.Reply(id, wire.MsgSamplingSet, out)
}

// samplingPayloadOf gives every setting of p.
func samplingPayloadOf(p session.SamplingParams) *wire.SamplingPayload {
	return &wire.SamplingPayload{Temperature: &p.Temperature, TopK: &p.TopK, TopP: &p.TopP, MinP: &p.MinP, Seed: &p.Seed}
}

// inspector is a Runner that can show the tensor behind one part of the
// model view (*session.Session is one).
type inspector interface {
	Inspect(session.InspectRequest) (*session.Inspection, error)
}

func (c *Conn) needRunner(id int64) bool {
	if c.runner == nil {
		c.SendError(id, wire.CodeNoSession, "no run yet: send start with a prompt first")
		return false
	}
	return true
}

func (c *Conn) startRun(id int64, p *wire.StartPayload) {
	var run catalog.Run
	var err error
	cfg := c.runConfig(p.SessionConfig())
	if c.withSlot(context.Background(), func() { run, err = c.s.Catalog.NewRun(p.Model, cfg) }) != nil {
		return
	}
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, err.Error())
		return
	}
	if c.install(id, p, run) {
		c.Reply(id, wire.MsgStarted, StartedPayload(run, p))
	}
}

func StartedPayload(run catalog.Run, p *wire.StartPayload) map[string]any {
	return map[string]any{"model": run.Model, "config": p.SessionConfig(), "next": run.Runner.Next()}
}

// install makes run the connection's run if the server-wide memory budget
// for runs allows it; otherwise it answers server_full and keeps the old run.
func (c *Conn) install(id int64, p *wire.StartPayload, run catalog.Run) bool {
	kv := run.Runner.MemoryBytes()
	if total := c.s.conns.kvBytes.Add(kv - c.kvBytes); total > c.lim.MaxKVBytes {
		c.s.conns.kvBytes.Add(c.kvBytes - kv)
		c.SendError(id, wire.CodeServerFull, fmt.Sprintf("server memory for runs is full (%d of %d bytes): lower max_new_tokens or try again later", total-kv+c.kvBytes, c.lim.MaxKVBytes))
		return false
	}
	c.kvBytes = kv
	c.runner, c.start = run.Runner, p
	c.tagRun(run, p.NoBatch)
	c.live.setRun(run)
	c.setClass(p.Class)
	return true
}

// track counts the run's memory growth (its KV cache fills a position per
// token) against the server-wide budget; false means the budget is spent,
// and the client was told.
func (c *Conn) track(id int64) bool {
	now := c.runner.MemoryBytes()
	delta := now - c.kvBytes
	c.kvBytes = now
	if total := c.s.conns.kvBytes.Add(delta); delta > 0 && total > c.lim.MaxKVBytes {
		c.SendError(id, wire.CodeServerFull, fmt.Sprintf("server memory for runs is full (%d of %d bytes): this run is stopped here; rewind, or try again later", total, c.lim.MaxKVBytes))
		return false
	}
	return true
}

// budgetLeft is the memory a new run on this connection may use: the
// server's budget less what other runs hold (this connection's old run is
// replaced).
func (c *Conn) budgetLeft() int64 {
	return max(1, c.lim.MaxKVBytes-c.s.conns.kvBytes.Load()+c.kvBytes)
}

// runConfig adds the server's part to a run's settings: the memory left for
// runs and, where the start names none, the server's KV cache precision.
func (c *Conn) runConfig(cfg session.Config) session.Config {
	cfg.MaxBytes = c.budgetLeft()
	if cfg.KVCache == "" {
		cfg.KVCache = c.lim.KVCache
	}
	return cfg
}

// untilFor maps a stepping command to how far it advances the run.
func untilFor(cmdType string) session.Until {
	switch cmdType {
	case wire.CmdStepToken, wire.CmdForce:
		return session.UntilToken
	case wire.CmdRun:
		return session.UntilStop
	}
	return session.UntilStage
}

func (c *Conn) step(cmd wire.Command) {
	if !c.needRunner(cmd.ID) {
		return
	}
	if c.runner.Done() {
		c.SendError(cmd.ID, wire.CodeOutOfOrder, "the run has stopped: rewind, reset or start a new run")
		return
	}
	// ended by Stop or by the connection closing: once for the command,
	// not a goroutine per stage (engineWork)
	ctx, cancel := c.whileOpen(context.Background())
	c.mu.Lock()
	c.cancelRun = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancelRun = nil
		c.mu.Unlock()
		cancel()
	}()
	stages := 0 // the stages this command ran (a paused run is logged as that many steps)
	paused := false
	until := untilFor(cmd.Type)
	var th *thinner // a run's detail_ms (thin.go)
	var full bool   // every event in full (a room's baseline)
	if cmd.Type == wire.CmdRun {
		th, full = c.runThinner(cmd.DetailMs)
	}
	defer func() {
		if f := testAfterStages.Load(); f != nil {
			(*f)(c, cmd.ID)
		}
		if !c.closed() {
			if ctx.Err() != nil && !c.runner.Done() {
				// a cancel that came as the command's last stage finished:
				// readPump cancelled ctx and answers the cancel no other way,
				// and no stage was left to see it, so the run stops here and
				// its stop event answers (a Stop at class speed once left the
				// page waiting for it)
				c.cancelNow(cmd.ID, th)
				paused = false
			}
			c.sendDetail(cmd.ID, th) // a run that ended without its stop event (an error, a pause)
			if paused {
				c.Reply(cmd.ID, wire.MsgPaused, map[string]any{"next": c.runner.Next(), "stages": stages})
			}
		}
		c.runner.DeferLens(false) // steps after the run read every pass's lens
		if c.runner.Done() {
			c.runDone() // runlimits.go: no pass waits for a stopped run
		}
	}()
	// one stage per engine slot, so other visitors' steps interleave
	for !c.runner.Done() {
		if stages > 0 && c.takePause() {
			paused = true
			return
		}
		out, slotErr := c.runStage(ctx, cmd.ID, th, full)
		switch {
		case slotErr != nil:
			if !c.closed() {
				c.stopWithoutSlot(ctx, cmd.ID, th)
			}
			return
		case out.err != nil:
			c.SendError(cmd.ID, wire.CodeEngine, out.err.Error())
			return
		case out.encErr != nil:
			c.cancelNow(cmd.ID, th) // the client was told why; it is not left waiting
			return
		}
		if out.hasGroup && !c.enqueue(out.group) || out.hasDetail && !c.enqueue(out.detail) {
			return
		}
		if out.ev == nil || out.hasMsg && !c.enqueue(out.msg) || c.closed() {
			return
		}
		stages++
		if !c.track(cmd.ID) {
			c.cancelNow(cmd.ID, th)
			return
		}
		if reached(until, out.ev.Stage) {
			return
		}
	}
}

// testAfterStages, when set (tests only), runs as a stepping command ends
// (given its id), before it checks whether it was cancelled (atomic: a
// test sets it while another test's connections may still be finishing).
var testAfterStages atomic.Pointer[func(*Conn, int64)]

// takePause reports whether a pause was asked since the last call (the
// streaming command stops after its current stage).
func (c *Conn) takePause() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pauseAsked
	c.pauseAsked = false
	return p
}

// stageOut is one stage a stepping command ran: its event and the
// messages it sends (the event, or the thin group it closed; the group
// before it; a thinned run's latest full events before its stop).
type stageOut struct {
	ev                          *session.Event
	msg, group, detail          OutMsg
	hasMsg, hasGroup, hasDetail bool
	encErr, err                 error
}

// runStage runs the run's next stage in an engine slot and encodes what
// it sends. A visitor past its byte budget waits for it to refill
// (runlimits.go); a batched decode step is admitted by the batcher, fairly
// by visitor, instead of holding an engine slot while it waits for its
// pass. A non-nil error: ctx ended or the connection closed before the
// stage ran.
func (c *Conn) runStage(ctx context.Context, id int64, th *thinner, full bool) (stageOut, error) {
	var o stageOut
	if err := c.awaitBytes(ctx); err != nil {
		return o, err
	}
	asked := time.Now()
	err := c.engineWork(ctx, c.batchedNext(), func() {
		start := time.Now()
		c.runner.AddQueue(start.Sub(asked))                     // waiting for a slot is queue time
		c.runner.DeferLens(th.deferLens(c.runner.Next(), full)) // a token that goes out thin makes only that (thin.go)
		var evs []*session.Event
		evs, o.err = c.runner.Advance(ctx, session.UntilStage, nil)
		if len(evs) == 0 {
			return
		}
		ev := evs[0]
		o.ev = ev
		c.s.Metrics.ObserveStep(ev, time.Since(start))
		c.live.observe(ev)
		if c.class != nil {
			c.class.Observe(ev, c.runner.MemoryBytes())
		}
		out := th.Pass(ev, full) // a presented run is thinned for its room too
		if out.Thin {
			if th.hold(out) { // thin events travel in groups (thin.go)
				o.msg, o.hasMsg, o.encErr = c.groupMsg(id, th)
			}
			return
		}
		if o.group, o.hasGroup, o.encErr = c.groupMsg(id, th); o.encErr != nil {
			return
		}
		if ev.Stage == session.StageStop {
			// a thinned run's latest full events go just before its stop
			o.detail, o.hasDetail = c.detailMsg(id, th)
		}
		o.msg, o.encErr = c.encodeOut(id, wire.MsgEvent, out, []*session.Event{out})
		o.hasMsg = o.encErr == nil
	})
	return o, err
}

// stopWithoutSlot ends a run cancelled while it waited for a slot: its
// stop event costs no engine work.
func (c *Conn) stopWithoutSlot(ctx context.Context, id int64, th *thinner) {
	evs, _ := c.runner.Advance(ctx, session.UntilStage, nil)
	if len(evs) > 0 && !c.sendDetail(id, th) {
		return
	}
	for _, ev := range evs {
		c.Reply(id, wire.MsgEvent, ev)
	}
}

// cancelNow stops the run at once and sends its stop event (after a
// thinned run's pending full events).
func (c *Conn) cancelNow(id int64, th *thinner) {
	if ev, err := c.runner.Cancel(); err == nil {
		c.sendDetail(id, th)
		c.Reply(id, wire.MsgEvent, ev)
	}
}

// reached reports whether a command stepping until has run far enough
// once a stage of kind st has run.
func reached(until session.Until, st session.Stage) bool {
	return until == session.UntilStage || until == session.UntilToken && (st == session.StageAppend || st == session.StageStop)
}

// withSlot runs engine work f holding one of the fair queue's slots for
// this connection's visitor (sched.go). It returns an error, without
// running f, if ctx ends or the connection closes first.
func (c *Conn) withSlot(ctx context.Context, f func()) error {
	return c.engineWork(ctx, false, f)
}

// engineWork is withSlot, except that with batched set (the work is a
// decode step the model's batcher runs) no slot is taken: the batcher's
// own fair admission stands in for the queue, and holding a slot while
// waiting for a pass would let only as many sessions as there are slots
// into a batch.
func (c *Conn) engineWork(ctx context.Context, batched bool, f func()) error {
	if ctx.Value(openKey{}) != c { // a stepping command's ctx already is
		var cancel context.CancelFunc
		ctx, cancel = c.whileOpen(ctx)
		defer cancel()
	}
	if batched {
		if err := ctx.Err(); err != nil {
			return err
		}
		f()
		return nil
	}
	return c.s.sched.Run(ctx, c.visitor, f)
}

// openKey marks a context whileOpen made for a connection (its value).
type openKey struct{}

// whileOpen is ctx, also cancelled when the connection closes.
func (c *Conn) whileOpen(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithValue(ctx, openKey{}, c))
	if c.closed() { // at once, not when the goroutine below gets to run
		cancel()
		return ctx, cancel
	}
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (c *Conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// resume rebuilds a dropped connection's run: a new run with the client's
// start settings, then every logged command replayed in order. The engine
// is deterministic (each draw is a function of seed and step), so the
// result equals the run the client had. One resumed message answers with
// the events since the last reset, for the client to redraw from.
func (c *Conn) resume(id int64, r *wire.ResumePayload) {
	// priced before any work: a short log can ask for thousands of passes
	if n := replayPasses(&r.Start, r.Log); n > MaxReplayPasses {
		c.SendError(id, wire.CodeReplayTooLong, fmt.Sprintf("resume: this log would replay up to %d forward passes (each run up to max_new_tokens %d, each step or forced token one); the limit is %d: start the run again instead", n, r.Start.MaxNewTokens, MaxReplayPasses))
		return
	}
	newRun := func() (run catalog.Run, err error) {
		cfg := c.runConfig(r.Start.SessionConfig())
		if c.withSlot(context.Background(), func() { run, err = c.s.Catalog.NewRun(r.Start.Model, cfg) }) != nil {
			return run, errClosed
		}
		return run, err
	}
	run, err := newRun()
	if errors.Is(err, errClosed) {
		return
	}
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, "resume: "+err.Error())
		return
	}
	run, events, err := Replayer{NewRun: newRun, Advance: c.advanceFair, Do: func(f func()) error {
		if c.withSlot(context.Background(), f) != nil {
			return errClosed
		}
		return nil
	}}.Replay(run, r.Log)
	if errors.Is(err, errClosed) {
		return
	}
	if err != nil {
		c.SendError(id, wire.CodeBadRequest, "resume: "+err.Error())
		return
	}
	// the settings a reset starts from are the last ones the log set
	st := r.Start
	for _, e := range r.Log {
		if e.Type == wire.CmdSampling {
			st.Sampling = e.Sampling
		}
	}
	if c.install(id, &st, run) {
		p := StartedPayload(run, &r.Start)
		p["log_len"], p["events"] = len(r.Log), events
		c.Reply(id, wire.MsgResumed, p)
	}
}

// MaxReplayPasses bounds the work of one replay (resume, a room's log
// when it opens or a replica rebuilds it): forward passes, priced from the
// log before anything runs (replayPasses). At most about 1.5 s of engine
// time on the default model; its memory is bounded by the thinning of
// replayer.replay (a few hundred bytes a pass, plus three full events).
const MaxReplayPasses = 2048

// replayPasses is the most forward passes log can take: a run up to
// max_new_tokens decode passes and a prefill, a step, step_token or forced
// token one, a reset one (a new run); rewind and cancel none.
func replayPasses(start *wire.StartPayload, log []wire.LogEntry) int {
	perRun := max(1, start.MaxNewTokens) + 1
	n := 0
	for _, e := range log {
		switch e.Type {
		case wire.CmdRun:
			n += perRun
		case wire.CmdStep, wire.CmdStepToken, wire.CmdForce, wire.CmdReset:
			n++
		}
	}
	return n
}

// Replayer replays a command log on a run: the one loop behind resume and a
// classroom replica rebuilding a room's run. newRun starts over (reset),
// advance steps the runner, do runs other engine work (in a fair-queue slot
// for a connection).
type Replayer struct {
	NewRun  func() (catalog.Run, error)
	Advance func(catalog.Runner, session.Until) ([]*session.Event, error)
	Do      func(func()) error
}

// Replay applies log to run and returns the run (a new one after a reset)
// and the events since the last reset. An error from do is returned as is
// (errClosed: the connection went away); others name the log entry.
//
// Only what the answer needs is kept while it runs: the latest heavy event
// of each stage (logits, sample, a forward pass's append) in full, every
// earlier one in its thin form (thin.go), as a page that saw the run live
// would hold them. A long log's memory is then a few hundred bytes a pass,
// not the tens of KiB a full event with the lens and a long top list takes.
func (p Replayer) Replay(run catalog.Run, log []wire.LogEntry) (catalog.Run, []*session.Event, error) {
	var events []*session.Event
	var full [3]int // per thinSlot: 1 + the index of the event kept in full
	keep := func(evs []*session.Event) {
		for _, ev := range evs {
			if k := ThinSlot(ev.Stage); k >= 0 && !ev.Thin && Heavy(ev) {
				if j := full[k] - 1; j >= 0 {
					events[j] = ThinEvent(events[j])
				}
				full[k] = len(events) + 1
			}
			events = append(events, ev)
		}
	}
	for i, e := range log {
		var evs []*session.Event
		var ev *session.Event
		var err error
		switch e.Type {
		case wire.CmdReset:
			if run, err = p.NewRun(); err == nil {
				events, full = nil, [3]int{}
			}
		case wire.CmdStep, wire.CmdStepToken, wire.CmdRun:
			if run.Runner.Done() {
				err = errors.New("the run has stopped")
				break
			}
			evs, err = p.Advance(run.Runner, untilFor(e.Type))
		case wire.CmdForce:
			if err = run.Runner.Force(e.Arg); err == nil {
				evs, err = p.Advance(run.Runner, session.UntilToken)
			}
		case wire.CmdRewind:
			if derr := p.Do(func() { ev, err = run.Runner.Rewind(e.Arg) }); derr != nil {
				return catalog.Run{}, nil, derr
			}
		case wire.CmdCancel:
			if run.Runner.Done() {
				err = errors.New("nothing to cancel: the run has stopped")
				break
			}
			ev, err = run.Runner.Cancel()
		case wire.CmdSampling:
			if derr := p.Do(func() { _, err = run.Runner.SetSampling(e.Sampling.Over(session.DefaultSampling())) }); derr != nil {
				return catalog.Run{}, nil, derr
			}
		}
		if errors.Is(err, errClosed) {
			return catalog.Run{}, nil, err
		}
		if err != nil {
			return catalog.Run{}, nil, fmt.Errorf("log entry %d (%s) cannot be replayed: %w", i, e, err)
		}
		if ev != nil {
			evs = append(evs, ev)
		}
		keep(evs)
	}
	return run, events, nil
}

// advanceFair is Advance one stage per fair-queue slot, for replays.
func (c *Conn) advanceFair(r catalog.Runner, until session.Until) ([]*session.Event, error) {
	var out []*session.Event
	for !r.Done() {
		var evs []*session.Event
		var err error
		if c.withSlot(context.Background(), func() { evs, err = r.Advance(context.Background(), session.UntilStage, nil) }) != nil {
			return out, errClosed
		}
		out = append(out, evs...)
		if err != nil || len(evs) == 0 {
			return out, err
		}
		st := evs[len(evs)-1].Stage
		if reached(until, st) {
			break
		}
	}
	return out, nil
}
