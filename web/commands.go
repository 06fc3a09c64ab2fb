package web

// commands.go: what each client command does to the connection's run
// (start, step, rewind, force, resume, …) and the welcome message.

import (
	"context"
	"fmt"
	"time"

	"github.com/inferscope/inferscope/engine/session"
)

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
	case CmdResume:
		c.resume(cmd.ID, cmd.Resume)
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
			c.step(cmd)
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
	case CmdInspect:
		if c.needRunner(cmd.ID) {
			in, ok := c.runner.(inspector)
			if !ok {
				c.sendError(cmd.ID, "bad_request", "this run cannot be inspected")
				return
			}
			r, err := in.Inspect(*cmd.Inspect)
			if err != nil {
				c.sendError(cmd.ID, "bad_request", err.Error())
				return
			}
			c.reply(cmd.ID, MsgInspection, r)
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

// inspector is a Runner that can show the tensor behind one part of the
// model view (*session.Session is one).
type inspector interface {
	Inspect(session.InspectRequest) (*session.Inspection, error)
}

func (c *wsConn) needRunner(id int64) bool {
	if c.runner == nil {
		c.sendError(id, "no_session", "no run yet: send start with a prompt first")
		return false
	}
	return true
}

func (c *wsConn) startRun(id int64, p *StartPayload) {
	run, err := c.s.opts.Catalog.NewRun(p.Model, p.SessionConfig())
	if err != nil {
		c.sendError(id, "bad_request", err.Error())
		return
	}
	if c.install(id, p, run) {
		c.reply(id, MsgStarted, startedPayload(run, p))
	}
}

func startedPayload(run Run, p *StartPayload) map[string]any {
	return map[string]any{"model": run.Model, "config": p.SessionConfig(), "next": run.Runner.Next()}
}

// install makes run the connection's run if the server-wide KV-cache
// budget allows it; otherwise it answers server_full and keeps the old run.
func (c *wsConn) install(id int64, p *StartPayload, run Run) bool {
	kv := run.KVBytes
	if total := c.s.conns.kvBytes.Add(kv - c.kvBytes); total > c.lim.MaxKVBytes {
		c.s.conns.kvBytes.Add(c.kvBytes - kv)
		c.sendError(id, "server_full", fmt.Sprintf("server memory for KV caches is full (%d of %d bytes): lower max_new_tokens or try again later", total-kv+c.kvBytes, c.lim.MaxKVBytes))
		return false
	}
	c.kvBytes = kv
	c.runner, c.start = run.Runner, p
	return true
}

// untilFor maps a stepping command to how far it advances the run.
func untilFor(cmdType string) session.Until {
	switch cmdType {
	case CmdStepToken, CmdForce:
		return session.UntilToken
	case CmdRun:
		return session.UntilStop
	}
	return session.UntilStage
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
	start := time.Now()
	unencodable := false
	_, err := c.runner.Advance(ctx, untilFor(cmd.Type), func(ev *session.Event) bool {
		c.s.metrics.observeStep(ev, time.Since(start))
		if err := c.replyErr(cmd.ID, MsgEvent, ev); err != nil {
			unencodable = err == errEncode
			return false
		}
		select {
		case <-c.done:
			return false
		default:
		}
		start = time.Now()
		return true
	})
	if err != nil {
		c.sendError(cmd.ID, "engine", err.Error())
	}
	if unencodable && !c.runner.Done() {
		// the client was told why; end the run so it is not left waiting
		if ev, err := c.runner.Cancel(); err == nil {
			c.reply(cmd.ID, MsgEvent, ev)
		}
	}
}

// resume rebuilds a dropped connection's run: a new run with the client's
// start settings, then every logged command replayed in order. The engine
// is deterministic (each draw is a function of seed and step), so the
// result equals the run the client had. One resumed message answers with
// the events since the last reset, for the client to redraw from.
func (c *wsConn) resume(id int64, r *ResumePayload) {
	run, err := c.s.opts.Catalog.NewRun(r.Start.Model, r.Start.SessionConfig())
	if err != nil {
		c.sendError(id, "bad_request", "resume: "+err.Error())
		return
	}
	var events []*session.Event
	ctx := context.Background()
	for i, e := range r.Log {
		var evs []*session.Event
		var ev *session.Event
		switch e.Type {
		case CmdReset:
			if run, err = c.s.opts.Catalog.NewRun(r.Start.Model, r.Start.SessionConfig()); err == nil {
				events = events[:0]
			}
		case CmdStep, CmdStepToken, CmdRun:
			if run.Runner.Done() {
				err = fmt.Errorf("the run has stopped")
				break
			}
			evs, err = run.Runner.Advance(ctx, untilFor(e.Type), nil)
		case CmdForce:
			if err = run.Runner.Force(e.Arg); err == nil {
				evs, err = run.Runner.Advance(ctx, session.UntilToken, nil)
			}
		case CmdRewind:
			ev, err = run.Runner.Rewind(e.Arg)
		case CmdCancel:
			if run.Runner.Done() {
				err = fmt.Errorf("nothing to cancel: the run has stopped")
				break
			}
			ev, err = run.Runner.Cancel()
		}
		if err != nil {
			c.sendError(id, "bad_request", fmt.Sprintf("resume: log entry %d (%s) cannot be replayed: %v", i, e, err))
			return
		}
		if ev != nil {
			evs = append(evs, ev)
		}
		events = append(events, evs...)
	}
	if c.install(id, &r.Start, run) {
		p := startedPayload(run, &r.Start)
		p["log_len"], p["events"] = len(r.Log), events
		c.reply(id, MsgResumed, p)
	}
}

func (s *Server) welcome() map[string]any {
	return map[string]any{"protocol": ProtocolVersion, "models": s.opts.Catalog.Models(), "limits": map[string]any{
		"max_sessions": s.limits.MaxSessions, "max_sessions_per_visitor": s.limits.MaxSessionsPerVisitor, "idle_timeout_s": s.limits.IdleTimeout.Seconds(),
		"read_limit_bytes": s.limits.ReadLimit, "messages_per_second": s.limits.MsgsPerSecond,
		"max_prompt_bytes": session.MaxPromptBytes, "max_stop_strings": session.MaxStopStrings, "max_sample_n": session.MaxSampleMany, "max_resume_log": MaxResumeLog,
	}}
}
