// lab/state.js: the lab's state, in one object (S). Everything the page
// knows and every module reads or changes lives here: the run as the
// engine's events built it, the command in flight and the command log a
// resume replays, the class mode, and the drawing's own bookkeeping (which
// panels wait, which frame or timer is scheduled). No lab module keeps a
// variable of its own: besides S there are constants, the measurements a
// benchmark reads (window.labStats) and frame.js's record of what the page
// shows (which panels are in view, which carry data-stale).
import * as C from "../core.js";

const main = C.$("main");

// data is the page's data block (models, sampling defaults).
export const data = C.pageData();

// PANEL is the panel each stage's result is shown in (a step scrolls it
// into view); PANEL_OF the panel each drawing (frame.js, draw.js) fills.
export const PANEL = { tokenize: "panel-tokens", embed: "panel-embed", prefill: "panel-prefill", logits: "panel-logits", sample: "panel-sample", append: "panel-kv", stop: "panel-text" };
export const PANEL_OF = { model: "panel-model", logits: "panel-logits", sample: "panel-sample", tokens: "panel-tokens", embed: "panel-embed",
  prefill: "panel-prefill", attn: "panel-prefill", kv: "panel-kv", timing: "panel-timing" };

// freshRun is the state of a run before its first event.
export function freshRun() {
  return { model: null, next: null, last: null, tok: null, embed: null, selected: -1, prefill: null, layers: null, stepTrace: null, passPos: [],
    logits: null, sample: null, gen: [], cacheLen: 0, cacheCap: 0, memory: null, times: { tokenize: 0, embed: 0, prefill: 0 }, stepMs: 0, ttft: null, itl: [],
    timings: null, stop: null, stoppedShown: null };
}

export const S = {
  models: data.models || [],
  run: freshRun(),

  // ---- the session's commands ----
  pending: null,       // the command whose events are still arriving: step, token, run, paced, reset, rewind, start, resume
  flying: false,       // a stepping command is running at the server
  cancelAsked: false,  // Stop was clicked: "cancelled" is on screen, drawing waits for the stop event
  cmdEvents: 0,        // events the command in flight has brought so far
  runState: "idle",    // idle, ready, running or stopped (main[data-run-state])
  startID: -1,         // the start command's id, until it is answered
  pendingStart: null,  // the start payload sent, until the server accepts it
  startP: null,        // the accepted start payload: with the log, what a resume sends
  log: [],             // the run's commands since its start ("step", "rewind 1", "force 42"…)
  resuming: false,     // a resume is being answered
  resumeWhy: null,     // why the next resumed arrives: "reconnect", "back", "branch" or "claim"
  paced: null,         // {rate, timer, t0} while a run plays at a chosen speed
  pauseAsked: false,   // Pause was sent to a streaming run, paused not yet back
  pausedRun: false,    // the run is paused: the pause button reads Resume
  lastSampling: null,  // the sampling settings set mid-run (a reset starts from them)
  samplingWaits: false, // new settings wait for the command in flight to end
  following: false,    // a student following a class: events come from room.js, nothing is sent
  room: null,          // the class bar (room.js's hooks), set once by lab.js

  // ---- drawing (frame.js, draw.js) ----
  dirty: new Set(),    // the panels whose state changed since they were drawn
  frame: 0,            // the requested animation frame
  later: 0,            // a timer for the next frame while heavy panels wait (STREAM_MS)
  gapTimer: 0,         // a timer for the next frame while a run streams (RUN_FRAME_MS)
  idle: 0,             // the requested idle callback (catching up panels out of view)
  lastFlush: -1e9,     // when the last frame drew
  lastHeavy: -1e9,     // when heavy panels were last drawn
  heavyLeft: false,    // the last frame left heavy panels to the next one
  lastSeq: null,       // the last event's number, written to body[data-seq] by the frame that draws it
  scrollTarget: null,  // the stage whose panel the next frame scrolls into view
  genDrawn: 0,         // generated tokens already in the text panel

  // ---- controls (controls.js) ----
  stepFocus: null,     // the step button last focused
  resetArmed: 0,       // when Escape first asked to reset a run with tokens
  searchTimer: 0,      // the vocabulary search's debounce
  searchSeq: 0,        // the latest vocabulary search (older answers are dropped)
  pullTimer: 0,        // the next poll of a model download
};

// setRunState changes the run's state and main[data-run-state].
export function setRunState(s) { S.runState = s; main.dataset.runState = s; }
