// lab/messages.js: what arrives on the lab's session. Each message and
// engine event is folded into the state (S) and marks the panels it
// changed (frame.js draws them); the command in flight ends when its last
// event arrives. Also the session's ups and downs: a closed connection
// retried with backoff and resumed, a page back from the back/forward
// cache. Panels are drawn by frame.js, not here (a rejected Start clears
// them at once).
import * as C from "../core.js";
import { S, freshRun, setRunState } from "./state.js";
import { mark, scrollToStage, stats } from "./frame.js";
import { draw, mv, setStatus, setAttnView } from "./draw.js";
import { setButtons, stopPaced, pacedNext, settings } from "./controls.js";
import { client, backoff, reconnect, resumedText } from "./session.js";

const $ = C.$;

// onMessage takes every message the client does not answer itself (lab.js
// hands it to the client, and room.js hands it the presenter's run while
// this page follows a class).
export function onMessage(msg) {
  const p = msg.payload || {};
  switch (msg.type) {
    case "welcome":
      if (p.models) S.models = p.models;
      break;
    case "started":
      onStarted(p);
      setStatus("Ready. Press “Next stage” (→ or space) to tokenize the prompt, “Next token” or “Run to end”.");
      break;
    case "resumed": {
      // a resume this page asked for says why; one it did not (a room
      // opening with this run) leaves the class bar's status
      const why = S.pending === "resume" ? S.resumeWhy || "reconnect" : null;
      S.resumeWhy = null;
      onStarted(p);
      for (const ev of p.events || []) apply(ev);
      S.resuming = false;
      S.pending = null;
      setRunState(S.run.stop ? "stopped" : "ready");
      setButtons();
      if (resumedText[why]) setStatus(resumedText[why]);
      document.body.dataset.restored = "1";
      break;
    }
    case "event":
      onEvent(p);
      break;
    case "events":
      // a streamed run's thin events, gathered by the server (one message
      // per ~16 ms instead of one per stage)
      for (const ev of p.events || []) onEvent(ev);
      break;
    case "paused":
      onPaused(p);
      break;
    case "sampling_set":
      onSamplingSet(p);
      break;
    case "detail":
      applyDetail(p.events || []);
      break;
    case "error":
      if (S.room.onError(p)) break; // the class bar's own (a class request refused)
      onError(msg, p);
      break;
    case "closing":
      S.run.closing = true;
      setStatus("The server is shutting down: " + p.reason, true);
      break;
    default:
      S.room.onMessage(msg);
  }
}

function onStarted(p) {
  if (S.pendingStart) { S.startP = S.pendingStart; S.pendingStart = null; S.log = []; }
  S.run = freshRun();
  S.run.model = p.model;
  S.run.next = p.next;
  mv.setModel(p.model);
  S.pending = null;
  S.cancelAsked = false;
  setRunState("ready");
  setButtons();
  mark("reset", "pipeline");
}

function onError(msg, p) {
  if (/nothing to cancel/.test(p.message || "")) return; // the run had stopped on its own first
  S.flying = false;
  S.cancelAsked = false; // drawing waited for a stop event that an error replaces
  const wasStart = msg.id === S.startID && S.pending === "start";
  const wasResume = S.resuming;
  S.pending = null;
  stopPaced();
  if (wasStart) {
    // a rejected Start leaves no live run: the buttons stay off until a valid Start
    S.run = freshRun();
    S.pendingStart = null;
    setRunState("idle");
    setButtons();
    draw.reset();
    mark("pipeline");
    setStatus("Could not start: " + C.errorText(p), true);
    return;
  }
  if (wasResume) {
    S.resuming = false;
    S.run = freshRun();
    setRunState("idle");
    setButtons();
    mark("reset");
    setStatus("Could not restore your run: " + C.errorText(p) + " Press Start.", true);
    return;
  }
  if (S.runState === "running") setRunState(S.run.stop ? "stopped" : "ready");
  setButtons();
  setStatus(C.errorText(p), true);
}

function onEvent(ev) {
  const t0 = performance.now();
  apply(ev);
  stats.events++;
  stats.applyMs += performance.now() - t0;
  S.cmdEvents++;
  const p = S.pending, stage = ev.stage, wasFlying = S.flying;
  const ends = p === "step" || p === "rewind" || p === "reset" || stage === "stop" ||
    ((p === "token" || p === "paced") && stage === "append");
  if (stage === "stop") onStopped(ev.stop, wasFlying);
  if (ends) {
    S.flying = false;
    S.pending = null;
    if (!S.run.stop) setRunState("ready");
    if (p === "paced" && !S.run.stop && S.paced) { S.pending = "paced"; pacedNext(); }
    if (p === "step" && !S.resuming) scrollToStage(stage);
  }
  setButtons();
  S.lastSeq = ev.seq;
  mark("pipeline");
}

// apply folds one event into the run's state and marks what to redraw.
function apply(ev) {
  mv.event(ev);
  S.run.next = ev.next;
  S.run.last = ev.stage;
  if (ev.tokenize) {
    S.run.tok = ev.tokenize;
    S.run.selected = ev.tokenize.tokens.length - 1;
    S.run.times.tokenize = ev.tokenize.duration_ms || 0;
    mark("tokens");
  }
  if (ev.embed) { S.run.embed = ev.embed; S.run.times.embed = ev.embed.duration_ms || 0; mark("embed"); }
  if (ev.prefill) {
    S.run.prefill = ev.prefill;
    S.run.layers = ev.prefill.layers;
    S.run.stepTrace = null;
    S.run.passPos = [];
    for (let i = 0; i < ev.prefill.positions; i++) S.run.passPos.push(i);
    S.run.cacheLen = ev.prefill.positions;
    S.run.times.prefill = ev.prefill.duration_ms;
    S.run.times.queue = ev.prefill.queue_ms || 0;
    setAttnView("prefill");
    mark("prefill", "attn", "kv");
  }
  if (ev.logits) {
    const l = ev.logits;
    if (l.recomputed) {
      // a rewind: the generated tokens after this position are gone
      const keep = l.pos + 1 - S.run.tok.count;
      S.run.gen = S.run.gen.slice(0, keep);
      S.run.itl = S.run.itl.slice(0, Math.max(0, keep - 1));
      S.run.cacheLen = l.pos + 1;
      S.run.stop = null;
      S.run.timings = null;
      S.run.stepMs = 0;
      setRunState("ready");
      mark("gen", "kv", "timing", "stop");
    } else {
      S.run.stepMs += l.duration_ms;
    }
    // a thin event (a streamed run) carries the light fields only: the
    // panels keep the last full logits and sample, drawn together
    S.run.alts = l.top.slice(0, 8);
    S.run.cur = null;
    if (!ev.thin) {
      S.run.logits = l;
      S.run.sample = null;
      mark("logits", "sample");
    }
  }
  if (ev.sample) {
    const s = ev.sample;
    S.run.cur = s;
    if (!ev.thin) S.run.sample = s;
    S.run.stepMs += s.duration_ms;
    if (s.step === 0) {
      S.run.ttft = { queue: S.run.times.queue || 0, tokenize: S.run.times.tokenize, embed: S.run.times.embed, prefill: S.run.times.prefill, first: S.run.stepMs };
      S.run.ttft.total = S.run.ttft.queue + S.run.ttft.tokenize + S.run.ttft.embed + S.run.ttft.prefill + S.run.ttft.first;
    } else {
      S.run.itl = S.run.itl.slice(0, s.step - 1);
      S.run.itl.push(S.run.stepMs);
    }
    S.run.stepMs = 0;
    if (!ev.thin) mark("sample", "logits");
    mark("timing");
  }
  if (ev.append) {
    const a = ev.append, s = S.run.cur;
    S.run.gen.push({ id: a.id, piece: a.piece, text: a.text, pkept: s ? s.chosen.prob_kept : 0, pt: s ? s.chosen.prob_t : 0, p1: s ? s.chosen.prob : 0,
      rank: s ? s.chosen.rank : 0, forced: s ? s.forced : false, alts: S.run.alts || [] });
    S.run.cacheLen = a.cache_len;
    S.run.cacheCap = a.cache_cap;
    S.run.memory = a.memory;
    if (a.forwarded) {
      S.run.stepMs += a.duration_ms;
      if (a.layer_traces && a.layer_traces.length) {
        S.run.stepTrace = a;
        S.run.layers = a.layer_traces;
        S.run.passPos = [a.pos];
        setAttnView("step");
        mark("prefill", "attn");
      }
    }
    mark("gen", "kv");
  }
  if (ev.stop) {
    S.run.stop = ev.stop;
    S.run.timings = ev.stop.timings;
    mark("stop", "timing");
  }
}

function onStopped(s, wasFlying) {
  // A cancelled run is recorded as the stages it really ran plus the
  // cancel, so a resume after a reconnect stops at the same place.
  if (s.reason === "cancelled" && !S.resuming && wasFlying) {
    for (let i = S.log.length - 1; i >= 0; i--) {
      if (S.log[i] !== "run" && S.log[i] !== "step_token") continue;
      const steps = [];
      for (let k = 0; k < S.cmdEvents - 1; k++) steps.push("step");
      steps.push("cancel");
      S.log.splice(i, 1, ...steps);
      break;
    }
  }
  stopPaced();
  setRunState("stopped");
  // after a Stop the queued frame was dropped; its panels are still marked
  // dirty and draw in the next frame
  S.cancelAsked = false;
  mark("stop", "timing");
}

// applyDetail folds the full events a streamed run sent thin (the server's
// "detail" message before the stop) into the panels' state: the run ends on
// the last token's complete numbers.
function applyDetail(evs) {
  for (const ev of evs) {
    if (ev.logits) { S.run.logits = ev.logits; S.run.sample = null; mark("logits", "sample"); }
    if (ev.sample) { S.run.sample = ev.sample; mark("sample", "logits"); }
    const a = ev.append;
    if (a && a.forwarded && a.layer_traces && a.layer_traces.length) {
      S.run.stepTrace = a;
      S.run.layers = a.layer_traces;
      S.run.passPos = [a.pos];
      setAttnView("step");
      mark("prefill", "attn");
    }
    mv.detail(ev);
  }
}

// onSamplingSet: new sampling settings took effect where the run is.
function onSamplingSet(p) {
  S.lastSampling = p.sampling;
  S.log.push("set_sampling " + JSON.stringify(p.sampling));
  $("share").href = C.writeURL(settings());
  if (p.logits) {
    S.run.logits = p.logits;
    S.run.alts = p.logits.top.slice(0, 8);
    if (p.next === "sample") { S.run.sample = null; S.run.cur = null; }
    mark("logits", "sample");
  }
  if (p.sample) { S.run.cur = p.sample; S.run.sample = p.sample; mark("sample", "logits"); }
  const tok = p.sample ? " The current token was drawn again with them: “" + C.tokenLabel(p.sample.chosen) + "”." : p.logits && p.next === "sample" ? " The probabilities shown are the current step's under them; the draw will use them." : "";
  setStatus("New settings (" + (p.sampling.temperature === 0 ? "greedy" : "T=" + p.sampling.temperature) + "): every later token uses them." + tok);
}

// onPaused: a streaming run stopped after a stage, without ending.
function onPaused(p) {
  // a paused run is logged as the stages it ran, so a resume after a
  // reconnect rebuilds the same run
  const i = S.log.lastIndexOf("run");
  if (i >= 0) S.log.splice(i, 1, ...Array(p.stages || S.cmdEvents).fill("step"));
  S.pauseAsked = false;
  S.pausedRun = true;
  S.flying = false;
  S.pending = null;
  setRunState("ready");
  setStatus("Paused after " + (p.stages || S.cmdEvents) + " stages. Resume (or p) runs on to the end; Next stage and Next token step on from here.");
  setButtons();
}

// ---------- the connection ----------
// onClosed: the session's socket closed (not on purpose): say so, and
// reconnect and resume unless the server refused this page at the door.
export function onClosed(e, refusal) {
  if (S.following) return; // back to the class: the private run was closed on purpose
  S.pending = null;
  S.flying = false;
  S.cancelAsked = false;
  stopPaced();
  setButtons();
  // refused at the door (too many sessions, server full): say so and what to do, do not retry
  if (refusal) { setStatus(C.errorText(refusal) + " Then press Start.", true); return; }
  if (S.run.closing || !S.run.model) { setStatus("Disconnected from the server. Press Start to reconnect.", true); return; }
  setStatus("Connection lost; reconnecting…", true);
  backoff.retry(reconnect);
}
// onResumed: back from the back/forward cache (protocol.js closed the
// socket on pagehide): resume the run where it was, or just reconnect when
// there is none.
export function onResumed() {
  if (S.following) return;
  if (S.startP) { S.resumeWhy = "back"; reconnect(); return; }
  client.connect().then(() => setStatus("Connected. Press Start.")).catch((err) => setStatus(err.message, true));
}
