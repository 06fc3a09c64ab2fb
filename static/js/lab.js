// lab.js: the step-through lab. Every number drawn here arrives in an engine
// event over the websocket. Events only update the run's state; drawing
// happens at most once per animation frame, for the panels whose state
// changed, so the page keeps up with the engine however fast it runs.
import * as C from "./core.js";
import * as P from "./panels.js";
import { boxWidth, whenResized } from "./charts.js";
import { ModelView } from "./modelview.js";
import { initRoom } from "./room.js";

const $ = C.$;
const data = C.pageData();
let models = data.models || [];
const main = $("main");
const STAGES = ["tokenize", "embed", "prefill", "logits", "sample", "append", "stop"];
const PANEL = { tokenize: "panel-tokens", embed: "panel-embed", prefill: "panel-prefill", logits: "panel-logits", sample: "panel-sample", append: "panel-kv", stop: "panel-text" };

// ---------- state ----------
function freshRun() {
  return { model: null, next: null, last: null, tok: null, embed: null, selected: -1, prefill: null, layers: null, stepTrace: null, passPos: [],
    logits: null, sample: null, gen: [], cacheLen: 0, cacheCap: 0, memory: null, times: { tokenize: 0, embed: 0, prefill: 0 }, stepMs: 0, ttft: null, itl: [],
    timings: null, stop: null, stoppedShown: null };
}
let run = freshRun();
let pending = null;       // the command whose events are still arriving: step, token, run, paced, reset, rewind, start
let startID = -1, startP = null, pendingStart = null, log = [], cmdEvents = 0, resuming = false;
let paced = null;         // {rate, timer} while a run plays at a chosen speed
let flying = false;       // a stepping command is running at the server
let cancelAsked = false;  // Stop was clicked: "cancelled" is on screen, drawing waits for the stop event
let runState = "idle";
let following = false;    // a student following a class: events come from room.js, nothing is sent

function setRunState(s) { runState = s; main.dataset.runState = s; }
setRunState("idle");

// ---------- drawing, at most once per frame ----------
// Events only mark panels dirty; flush draws them in the next animation
// frame with the latest state. Three caps keep the page light however fast
// the engine runs: while "Run to end" streams, a new event's frame comes
// at most RUN_FRAME_MS after the last one, and the heavy panels (tables,
// charts, heatmaps, the model view) draw at most every STREAM_MS — the
// text, the inter-token chart and the stage strip draw in every frame;
// and a frame that has spent its budget on heavy panels (STREAM_FRAME_MS
// while a run streams, FRAME_MS otherwise, 16 ms in the frames that finish
// a streamed run) leaves the rest to the next frame, which follows at once
// (the most visible first). A panel out of view is not drawn in the frame:
// it waits until it scrolls near the viewport, or until the page is idle
// (see "drawing only what can be seen" below). data-view-busy is "0" once
// everything in view is drawn; data-busy stays "1" until all is drawn.
const dirty = new Set();
let frame = 0, later = 0, gapTimer = 0, lastFlush = -1e9;
function mark(...names) {
  for (const n of names) dirty.add(n);
  if (frame || cancelAsked) return;
  if (pending === "run") {
    // while a run streams, frames come at most every RUN_FRAME_MS
    if (gapTimer) return;
    const gap = RUN_FRAME_MS - (performance.now() - lastFlush);
    if (gap > 1) { gapTimer = setTimeout(() => { gapTimer = 0; if (!frame && !cancelAsked) frame = requestAnimationFrame(flush); }, gap); return; }
  } else if (gapTimer) { clearTimeout(gapTimer); gapTimer = 0; }
  frame = requestAnimationFrame(flush);
}

// ---------- drawing only what can be seen ----------
// An IntersectionObserver says which panels are in or near the viewport
// (NEAR_PX above and below it). A panel's drawing waits while it is out of
// view: it is drawn in the frame after it scrolls near, or, when no command
// is running, in idle time one panel at a time (so the whole page catches
// up between clicks without delaying the next one). A panel holding state
// it has not drawn carries data-stale="1".
const PANEL_OF = { model: "panel-model", logits: "panel-logits", sample: "panel-sample", tokens: "panel-tokens", embed: "panel-embed",
  prefill: "panel-prefill", attn: "panel-prefill", kv: "panel-kv", timing: "panel-timing" };
const PANEL_IDS = [...new Set(Object.values(PANEL_OF))];
const NEAR_PX = 300;
const near = new Map(); // panel id → in or near the viewport (unknown until the observer's first report: drawn)
const seen = new IntersectionObserver((entries) => {
  let came = false;
  for (const e of entries) {
    near.set(e.target.id, e.isIntersecting);
    if (e.isIntersecting && [...dirty].some((n) => PANEL_OF[n] === e.target.id)) came = true;
  }
  if (came) mark();
  else updateBusy();
}, { rootMargin: NEAR_PX + "px 0px" });
for (const id of PANEL_IDS) seen.observe($(id));
function inView(n) { const id = PANEL_OF[n]; return !id || near.get(id) !== false || (scrollTarget && PANEL[scrollTarget] === id); }
function viewDirty() { for (const n of dirty) if (inView(n)) return true; return false; }
// catch-up: the panels out of view are drawn when the browser is idle and
// no command is running, one per idle callback, the order of HEAVY
let idle = 0;
const idleCall = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ didTimeout: true, timeRemaining: () => 0 }), 50));
const idleCancel = window.cancelIdleCallback || clearTimeout;
// (between a paced run's tokens too: the server is waiting for the page)
function running() { return !!pending && !(pending === "paced" && !flying); }
function catchUp() {
  if (idle || frame || later || gapTimer || cancelAsked || running() || !dirty.size) return;
  idle = idleCall(() => {
    idle = 0;
    if (frame || later || gapTimer || cancelAsked || running()) return; // a command or a visible panel came first: it schedules again
    const n = HEAVY.concat(LIGHT).find((x) => dirty.has(x));
    if (n) drawOne(n, "idle");
    catchUp();
    markStale();
    updateBusy();
  }, { timeout: 1000 });
}
const LIGHT = ["reset", "gen", "timing", "stop", "pipeline", "buttons"];
const HEAVY = ["model", "logits", "sample", "tokens", "embed", "prefill", "attn", "kv"];
const STREAM_MS = 250, FRAME_MS = 40, STREAM_FRAME_MS = 6;
// While "Run to end" streams, an event is drawn RUN_FRAME_MS after the
// last frame at the soonest: ten updates a second, and the text still
// visibly streams. Every frame costs the browser style, layout, paint and
// canvas work that grows with the page, and on a small machine that work
// competes with receiving the stream (BenchmarkBrowserRun: 50 ms made the
// page 1.2× slower; 200 ms was 0.83× of 100 ms at five updates a second).
const RUN_FRAME_MS = 100;
let lastHeavy = -1e9, heavyLeft = false;
// stats: frames drawn and main-thread milliseconds spent drawing and
// applying events, per panel (read by the browser benchmark)
const stats = window.labStats = { frames: 0, drawMs: 0, maxDrawMs: 0, events: 0, applyMs: 0 };
// how each panel was last drawn: "frame" (in view) or "idle" (caught up out of view)
const drawnBy = window.labDrawn = {};
function drawOne(n, by = "frame") {
  dirty.delete(n);
  drawnBy[n] = by;
  const t1 = performance.now();
  draw[n]();
  const dt = performance.now() - t1;
  stats[n] = (stats[n] || 0) + dt;
  if (dt > (stats["max-" + n] || 0)) stats["max-" + n] = dt;
}
// lastSeq is the last event's number, written to body[data-seq] by the
// frame that draws it (not once per event)
let lastSeq = null;
function flush() {
  frame = 0;
  // no fades in the model view while a run streams (modelview.css)
  main.toggleAttribute("data-streaming", pending === "run");
  // this frame draws what a waiting gap timer was for; later marks wait
  // RUN_FRAME_MS from here
  clearTimeout(gapTimer);
  gapTimer = 0;
  lastFlush = performance.now();
  if (lastSeq !== null && document.body.dataset.seq !== String(lastSeq)) document.body.dataset.seq = lastSeq;
  const t0 = performance.now();
  for (const n of LIGHT) if (dirty.has(n) && inView(n)) drawOne(n);
  const streaming = pending === "run";
  let wait = 0;
  if (streaming && !heavyLeft && t0 - lastHeavy < STREAM_MS) wait = STREAM_MS - (t0 - lastHeavy);
  else {
    // while a run streams, a frame draws heavy panels for STREAM_FRAME_MS
    // of script and leaves the rest to the next frames: the style, layout
    // and canvas work that follows the script grows with what it changed
    // (measured with BenchmarkBrowserRunTrace); the frames that finish a
    // streamed run keep to one frame's time
    const budget = streaming ? STREAM_FRAME_MS : runState === "stopped" ? 16 : FRAME_MS, cont = heavyLeft;
    let drew = false;
    heavyLeft = false;
    for (const n of HEAVY) {
      if (!dirty.has(n) || !inView(n)) continue;
      if (drew && performance.now() - t0 > budget) { heavyLeft = true; break; }
      drawOne(n);
      drew = true;
    }
    if (drew && !cont) lastHeavy = t0;
  }
  if (scrollTarget) {
    const panel = $(PANEL[scrollTarget]);
    scrollTarget = null;
    if (panel) panel.scrollIntoView({ block: "nearest", behavior: "instant" });
  }
  if (!wait && later) { clearTimeout(later); later = 0; }
  if (viewDirty() && !cancelAsked) {
    if (!wait) frame = requestAnimationFrame(flush);
    else if (!later) later = setTimeout(() => { later = 0; if (!frame && !cancelAsked) frame = requestAnimationFrame(flush); }, wait);
  }
  catchUp();
  markStale();
  updateBusy();
  const dt = performance.now() - t0;
  stats.flushStart = t0;
  stats.flushEnd = t0 + dt;
  stats.frames++;
  stats.drawMs += dt;
  stats.maxDrawMs = Math.max(stats.maxDrawMs, dt);
}
// drop what is queued: used when Stop is clicked (the stop event redraws)
function dropDrawing() {
  if (frame) cancelAnimationFrame(frame);
  clearTimeout(later);
  clearTimeout(gapTimer);
  if (idle) idleCancel(idle);
  frame = later = gapTimer = idle = 0;
}

// ---------- the model view: the Transformer drawn from the card, lit by events ----------
// an inspect is answered by the reply carrying its id; one asked while the
// connection is down, or lost with it, is simply not drawn
const mv = new ModelView($("modelview"), { label: posLabel, schedule: () => mark("model"), onInspect: (req) => {
  client.request("inspect", req).then((m) => mv.inspection(m.payload), (err) => { if (err.code !== "closed" && err.code !== "not_connected") mv.inspectError(err.message); });
} });

// ---------- connection ----------
const backoff = new C.Backoff(); // between reconnect tries
const client = new C.Client(onMessage, (e, refusal) => {
  if (following) return; // back to the class: the private run was closed on purpose
  pending = null;
  flying = false;
  cancelAsked = false;
  stopPaced();
  setButtons();
  // refused at the door (too many sessions, server full): say so and what to do, do not retry
  if (refusal) { setStatus(C.errorText(refusal) + " Then press Start.", true); return; }
  if (run.closing || !run.model) { setStatus("Disconnected from the server. Press Start to reconnect.", true); return; }
  setStatus("Connection lost; reconnecting…", true);
  backoff.retry(reconnect);
});
// A dropped connection loses nothing: the engine is deterministic, so one
// "resume" message with this run's start settings and its command log
// lets the server rebuild exactly the same run.
// resumeWhy: why the next resumed arrives (its status line says so):
// "reconnect" (the connection dropped), "back" (the back/forward cache),
// "branch" (Try it myself), "claim" (a presenter taking the room back)
let resumeWhy = null;
const resumedText = {
  reconnect: "Reconnected: your run was restored.",
  back: "Back on this page: your run is where you left it.",
  branch: "Your own copy of the presenter's run, at the same step: step on, force other tokens or change the settings.",
};
function reconnect() {
  client.connect().then(() => {
    backoff.reset();
    resuming = true;
    pending = "resume";
    resumeWhy = resumeWhy || "reconnect";
    if (room.claim()) { resumeWhy = "claim"; return; } // a presenter takes the room back; the room rebuilds the run
    client.send("resume", { start: startP, log: log.slice() });
  }).catch(() => { /* onClose schedules the next try */ });
}
// Back from the back/forward cache (core.js closed the socket on pagehide):
// resume the run where it was, or just reconnect when there is none.
client.onResume = () => {
  if (following) return;
  if (startP) { resumeWhy = "back"; reconnect(); return; }
  client.connect().then(() => setStatus("Connected. Press Start.")).catch((err) => setStatus(err.message, true));
};
function logEntry(type, payload) {
  if (type === "rewind") return "rewind " + payload.n;
  if (type === "force") return "force " + payload.id;
  if (type === "step" || type === "step_token" || type === "run") return type;
  return null;
}

// ---------- controls ----------
function fillForm() {
  const sel = $("model");
  for (const m of models) sel.appendChild(C.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") }));
  const d = C.samplingDefaults(data), u = C.readURL();
  sel.value = u.model || (models[0] && models[0].name) || "";
  const pick = (k) => u[k] !== undefined ? u[k] : d[k];
  $("prompt").value = pick("prompt");
  $("temperature").value = pick("temperature");
  $("top-k").value = pick("top_k");
  $("top-p").value = pick("top_p");
  $("min-p").value = pick("min_p");
  $("seed").value = pick("seed");
  $("max-new").value = pick("max_new_tokens");
  $("stops").value = u.stop || "";
  $("chat-mode").checked = u.chat === "1";
  $("system").value = u.system || "";
  if (u.speed) $("speed").value = u.speed;
  chatToggle();
  showModelCard();
}
function currentModel() { return models.find((m) => m.name === $("model").value) || models[0]; }
function showModelCard() {
  const m = currentModel();
  if (!m) return;
  const box = $("model-card");
  box.textContent = m.arch + " · " + C.count(m.params) + " parameters (" + C.bytes(m.weights_bytes) + " as " + (m.precision === "bf16" ? "bfloat16" : "float32") + ") · " + m.layers + " layers · width " + m.dim +
    " · " + m.heads + " query heads, " + m.kv_heads + " key/value heads of " + m.head_dim + " · vocabulary " + m.vocab + " · context " + m.context +
    " · " + m.position + (m.note && !m.card_url ? " · " + m.note : "");
  const t = m.trained;
  if (t) {
    box.append(document.createElement("br"), "Trained on " + t.corpus + ": " + C.count(t.tokens) + " tokens in " + Math.round(t.minutes) +
      " minutes on " + t.hardware + ". It names the right capital for " + t.capitals_right + " of " + t.capitals_total +
      " countries and knows little else. ");
  }
  if (m.card_url) {
    const a = document.createElement("a");
    a.href = m.card_url;
    a.textContent = "Read its model card";
    a.dataset.testid = "model-card-link";
    box.append(t ? "" : " · ", a);
  }
}
function chatToggle() {
  const on = $("chat-mode").checked;
  $("chat-fields").hidden = !on;
  $("prompt-label").textContent = on ? "User message" : "Prompt";
}
function settings() {
  return { model: $("model").value, prompt: $("prompt").value, chat: $("chat-mode").checked, system: $("system").value,
    temperature: $("temperature").value, top_k: $("top-k").value, top_p: $("top-p").value, min_p: $("min-p").value,
    seed: $("seed").value, max_new_tokens: $("max-new").value, stop: $("stops").value, speed: $("speed").value !== "0" ? $("speed").value : "" };
}
function startPayload(s) {
  const p = { model: s.model, max_new_tokens: parseInt(s.max_new_tokens, 10), sampling: C.samplingPayload(s), all_attention: true, lens: true };
  if (s.chat) {
    p.chat = [];
    if (s.system) p.chat.push({ role: "system", content: s.system });
    p.chat.push({ role: "user", content: s.prompt });
  } else p.prompt = s.prompt;
  if (s.stop) p.stop_strings = s.stop.split("|").filter((x) => x !== "");
  return p;
}

function start() {
  if (following) return;
  const s = settings();
  $("share").href = C.writeURL(s);
  stopPaced();
  setStatus("Connecting…");
  client.connect().then(() => {
    const p = startPayload(s);
    lastSampling = null;
    samplingWaits = false;
    formChanged(false);
    // until the server accepts it, there is no run to drive
    run = freshRun();
    pending = "start";
    cancelAsked = false;
    setRunState("idle");
    pendingStart = p;
    startID = client.send("start", p);
    setButtons();
    mark("reset", "pipeline");
  }).catch((err) => setStatus(C.connectText(err), true));
}

// send issues a stepping command; pending says which reply ends it.
function send(type, payload) {
  if (following || pending || runState === "idle") return;
  pausedRun = false; // any stepping command ends a pause (Resume is one too)
  if (type === "reset") {
    log = [];
    // the server's reset starts from the settings set last
    if (lastSampling) startP = Object.assign({}, startP, { sampling: lastSampling });
  }
  else if (logEntry(type, payload)) log.push(logEntry(type, payload));
  pending = { step: "step", rewind: "rewind", step_token: "token", force: "token", run: "run", reset: "reset" }[type];
  cmdEvents = 0;
  flying = true;
  if (type === "run" || type === "step_token" || type === "force") setRunState("running");
  client.send(type, payload);
  setButtons();
}

function runToEnd() {
  const rate = parseFloat($("speed").value) || 0;
  // the server sends the heavy detail (layer traces, lens, top lists, CDF)
  // at most as often as the page draws it during a run, and the last
  // token's in full before the stop (a "detail" message). The panels show
  // the state before the run until STREAM_MS into it: a run shorter than
  // that draws them once, at its end, and the browser spends its first
  // frames on the text and on receiving the stream
  if (!rate) { lastHeavy = performance.now(); send("run", { detail_ms: STREAM_MS }); return; }
  // playback for a class: one token at a time at the chosen rate
  paced = { rate, timer: 0 };
  pacedStep();
}
function pacedStep() {
  if (!paced || runState === "stopped") { paced = null; setButtons(); return; }
  paced.t0 = performance.now();
  pending = null;
  send("step_token");
  pending = "paced";
}
function pacedNext() {
  if (!paced) return;
  const wait = Math.max(0, 1000 / paced.rate - (performance.now() - paced.t0));
  paced.timer = setTimeout(pacedStep, wait);
}
function stopPaced() { if (paced) { clearTimeout(paced.timer); paced = null; } }

// ---------- settings edited mid-run ----------
// Sampling settings (temperature, top-k, top-p, min-p, seed) apply where
// the run is: the server redraws the current step with them (set_sampling)
// and every later step uses them; the change is logged, so a resume after a
// reconnect replays it. A changed prompt, model, chat or stop strings needs
// a new run: the form says "Changed: press Start to apply".
let lastSampling = null, samplingWaits = false;
const SAMPLING_IDS = ["temperature", "top-k", "top-p", "min-p", "seed"];
function applySampling() {
  if (following || runState === "idle" || !startP) return;
  if (runState === "stopped") { formChanged(true); return; }
  if (pending || paced) { samplingWaits = true; setStatus("The new settings apply as soon as this step finishes (pause a run to apply them in the middle)."); return; }
  samplingWaits = false;
  client.send("set_sampling", C.samplingPayload(settings()));
}
function formChanged(on) {
  $("form-changed").hidden = !on;
}
function onSamplingSet(p) {
  lastSampling = p.sampling;
  log.push("set_sampling " + JSON.stringify(p.sampling));
  $("share").href = C.writeURL(settings());
  if (p.logits) {
    run.logits = p.logits;
    run.alts = p.logits.top.slice(0, 8);
    if (p.next === "sample") { run.sample = null; run.cur = null; }
    mark("logits", "sample");
  }
  if (p.sample) { run.cur = p.sample; run.sample = p.sample; mark("sample", "logits"); }
  const tok = p.sample ? " The current token was drawn again with them: “" + C.tokenLabel(p.sample.chosen) + "”." : p.logits && p.next === "sample" ? " The probabilities shown are the current step's under them; the draw will use them." : "";
  setStatus("New settings (" + (p.sampling.temperature === 0 ? "greedy" : "T=" + p.sampling.temperature) + "): every later token uses them." + tok);
}

// Pause stops a run after its current stage without ending it; Resume
// (the same button, or p) runs it on at the same speed. At a chosen speed
// the page stops asking for tokens; at the engine's speed the server stops
// streaming (pause) and says where (paused).
let pauseAsked = false, pausedRun = false;
function pauseOrResume() {
  if (pausedRun && runState === "ready" && !pending) { pausedRun = false; runToEnd(); return; }
  if (pauseAsked || cancelAsked) return;
  if (paced) {
    stopPaced();
    pausedRun = true;
    if (!flying) { pending = null; setRunState("ready"); }
    setStatus("Paused. Resume (or p) plays on at the same speed; Next stage and Next token step on from here.");
    setButtons();
    return;
  }
  if (pending === "run") {
    pauseAsked = true;
    client.send("pause");
    setButtons();
  }
}
function onPaused(p) {
  // a paused run is logged as the stages it ran, so a resume after a
  // reconnect rebuilds the same run
  const i = log.lastIndexOf("run");
  if (i >= 0) log.splice(i, 1, ...Array(p.stages || cmdEvents).fill("step"));
  pauseAsked = false;
  pausedRun = true;
  flying = false;
  pending = null;
  setRunState("ready");
  setStatus("Paused after " + (p.stages || cmdEvents) + " stages. Resume (or p) runs on to the end; Next stage and Next token step on from here.");
  setButtons();
}

function cancel() {
  const inFlight = pending === "run" || pending === "paced" || pending === "token";
  if (!inFlight && !paced) return;
  stopPaced();
  cancelAsked = true;
  dropDrawing();
  client.send("cancel");
  if (!flying) log.push("cancel"); // between paced tokens: the cancel is a command of its own
  // show it at once; the server's stop event confirms it (or says the run
  // ended on its own first)
  setRunState("stopped");
  const st = $("stop-text");
  st.textContent = "Stopped: you stopped the run.";
  st.dataset.reason = "cancelled";
  setStatus("Stopped: you stopped the run. Rewind to continue from an earlier token, or Reset.");
  setButtons();
}

// ---------- messages ----------
function onMessage(msg) {
  const p = msg.payload || {};
  switch (msg.type) {
    case "welcome":
      if (p.models) models = p.models;
      break;
    case "started":
      onStarted(p);
      setStatus("Ready. Press “Next stage” (→ or space) to tokenize the prompt, “Next token” or “Run to end”.");
      break;
    case "resumed": {
      // a resume this page asked for says why; one it did not (a room
      // opening with this run) leaves the class bar's status
      const why = pending === "resume" ? resumeWhy || "reconnect" : null;
      resumeWhy = null;
      onStarted(p);
      for (const ev of p.events || []) apply(ev);
      resuming = false;
      pending = null;
      setRunState(run.stop ? "stopped" : "ready");
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
      if (room.onError(p)) break; // the class bar's own (a class request refused)
      onError(msg, p);
      break;
    case "closing":
      run.closing = true;
      setStatus("The server is shutting down: " + p.reason, true);
      break;
    default:
      room.onMessage(msg);
  }
}

function onStarted(p) {
  if (pendingStart) { startP = pendingStart; pendingStart = null; log = []; }
  run = freshRun();
  run.model = p.model;
  run.next = p.next;
  mv.setModel(p.model);
  pending = null;
  cancelAsked = false;
  setRunState("ready");
  setButtons();
  mark("reset", "pipeline");
}

function onError(msg, p) {
  if (/nothing to cancel/.test(p.message || "")) return; // the run had stopped on its own first
  flying = false;
  cancelAsked = false; // drawing waited for a stop event that an error replaces
  const wasStart = msg.id === startID && pending === "start";
  const wasResume = resuming;
  pending = null;
  stopPaced();
  if (wasStart) {
    // a rejected Start leaves no live run: the buttons stay off until a valid Start
    run = freshRun();
    pendingStart = null;
    setRunState("idle");
    setButtons();
    draw.reset();
    mark("pipeline");
    setStatus("Could not start: " + C.errorText(p), true);
    return;
  }
  if (wasResume) {
    resuming = false;
    run = freshRun();
    setRunState("idle");
    setButtons();
    mark("reset");
    setStatus("Could not restore your run: " + C.errorText(p) + " Press Start.", true);
    return;
  }
  if (runState === "running") setRunState(run.stop ? "stopped" : "ready");
  setButtons();
  setStatus(C.errorText(p), true);
}

function onEvent(ev) {
  const t0 = performance.now();
  apply(ev);
  stats.events++;
  stats.applyMs += performance.now() - t0;
  cmdEvents++;
  const p = pending, stage = ev.stage, wasFlying = flying;
  const ends = p === "step" || p === "rewind" || p === "reset" || stage === "stop" ||
    ((p === "token" || p === "paced") && stage === "append");
  if (stage === "stop") onStopped(ev.stop, wasFlying);
  if (ends) {
    flying = false;
    pending = null;
    if (!run.stop) setRunState("ready");
    if (p === "paced" && !run.stop && paced) { pending = "paced"; pacedNext(); }
    if (p === "step" && !resuming) scrollToStage(stage);
  }
  setButtons();
  lastSeq = ev.seq;
  mark("pipeline");
}

// apply folds one event into the run's state and marks what to redraw.
function apply(ev) {
  mv.event(ev);
  run.next = ev.next;
  run.last = ev.stage;
  if (ev.tokenize) {
    run.tok = ev.tokenize;
    run.selected = ev.tokenize.tokens.length - 1;
    run.times.tokenize = ev.tokenize.duration_ms || 0;
    mark("tokens");
  }
  if (ev.embed) { run.embed = ev.embed; run.times.embed = ev.embed.duration_ms || 0; mark("embed"); }
  if (ev.prefill) {
    run.prefill = ev.prefill;
    run.layers = ev.prefill.layers;
    run.stepTrace = null;
    run.passPos = [];
    for (let i = 0; i < ev.prefill.positions; i++) run.passPos.push(i);
    run.cacheLen = ev.prefill.positions;
    run.times.prefill = ev.prefill.duration_ms;
    run.times.queue = ev.prefill.queue_ms || 0;
    setAttnView("prefill");
    mark("prefill", "attn", "kv");
  }
  if (ev.logits) {
    const l = ev.logits;
    if (l.recomputed) {
      // a rewind: the generated tokens after this position are gone
      const keep = l.pos + 1 - run.tok.count;
      run.gen = run.gen.slice(0, keep);
      run.itl = run.itl.slice(0, Math.max(0, keep - 1));
      run.cacheLen = l.pos + 1;
      run.stop = null;
      run.timings = null;
      run.stepMs = 0;
      setRunState("ready");
      mark("gen", "kv", "timing", "stop");
    } else {
      run.stepMs += l.duration_ms;
    }
    // a thin event (a streamed run) carries the light fields only: the
    // panels keep the last full logits and sample, drawn together
    run.alts = l.top.slice(0, 8);
    run.cur = null;
    if (!ev.thin) {
      run.logits = l;
      run.sample = null;
      mark("logits", "sample");
    }
  }
  if (ev.sample) {
    const s = ev.sample;
    run.cur = s;
    if (!ev.thin) run.sample = s;
    run.stepMs += s.duration_ms;
    if (s.step === 0) {
      run.ttft = { queue: run.times.queue || 0, tokenize: run.times.tokenize, embed: run.times.embed, prefill: run.times.prefill, first: run.stepMs };
      run.ttft.total = run.ttft.queue + run.ttft.tokenize + run.ttft.embed + run.ttft.prefill + run.ttft.first;
    } else {
      run.itl = run.itl.slice(0, s.step - 1);
      run.itl.push(run.stepMs);
    }
    run.stepMs = 0;
    if (!ev.thin) mark("sample", "logits");
    mark("timing");
  }
  if (ev.append) {
    const a = ev.append, s = run.cur;
    run.gen.push({ id: a.id, piece: a.piece, text: a.text, pkept: s ? s.chosen.prob_kept : 0, pt: s ? s.chosen.prob_t : 0, p1: s ? s.chosen.prob : 0,
      rank: s ? s.chosen.rank : 0, forced: s ? s.forced : false, alts: run.alts || [] });
    run.cacheLen = a.cache_len;
    run.cacheCap = a.cache_cap;
    run.memory = a.memory;
    if (a.forwarded) {
      run.stepMs += a.duration_ms;
      if (a.layer_traces && a.layer_traces.length) {
        run.stepTrace = a;
        run.layers = a.layer_traces;
        run.passPos = [a.pos];
        setAttnView("step");
        mark("prefill", "attn");
      }
    }
    mark("gen", "kv");
  }
  if (ev.stop) {
    run.stop = ev.stop;
    run.timings = ev.stop.timings;
    mark("stop", "timing");
  }
}

function onStopped(s, wasFlying) {
  // A cancelled run is recorded as the stages it really ran plus the
  // cancel, so a resume after a reconnect stops at the same place.
  if (s.reason === "cancelled" && !resuming && wasFlying) {
    for (let i = log.length - 1; i >= 0; i--) {
      if (log[i] !== "run" && log[i] !== "step_token") continue;
      const steps = [];
      for (let k = 0; k < cmdEvents - 1; k++) steps.push("step");
      steps.push("cancel");
      log.splice(i, 1, ...steps);
      break;
    }
  }
  stopPaced();
  setRunState("stopped");
  // after a Stop the queued frame was dropped; its panels are still marked
  // dirty and draw in the next frame
  cancelAsked = false;
  mark("stop", "timing");
}

// applyDetail folds the full events a streamed run sent thin (the server's
// "detail" message before the stop) into the panels' state: the run ends on
// the last token's complete numbers.
function applyDetail(evs) {
  for (const ev of evs) {
    if (ev.logits) { run.logits = ev.logits; run.sample = null; mark("logits", "sample"); }
    if (ev.sample) { run.sample = ev.sample; mark("sample", "logits"); }
    const a = ev.append;
    if (a && a.forwarded && a.layer_traces && a.layer_traces.length) {
      run.stepTrace = a;
      run.layers = a.layer_traces;
      run.passPos = [a.pos];
      setAttnView("step");
      mark("prefill", "attn");
    }
    mv.detail(ev);
  }
}

// scrollToStage brings a stage's panel into view after the frame draws it.
let scrollTarget = null;
function scrollToStage(stage) { scrollTarget = stage; mark("pipeline"); }

// ---------- status and buttons ----------
function setStatus(text, isError) {
  if (following && !isError) text = "Following the presenter's run: it moves when they step.";
  const s = $("status");
  s.textContent = text;
  s.className = "status" + (isError ? " error" : "");
}
function setButtons() {
  const live = runState !== "idle" && !!run.model, busy = !!pending || paced !== null;
  const stopped = runState === "stopped", off = !live || busy || stopped || cancelAsked;
  // written only when they change: this runs for every event of a run
  const set = (id, v) => { const b = $(id); if (b.disabled !== v) b.disabled = v; };
  set("btn-step", off);
  set("btn-token", off);
  set("btn-run", off);
  set("btn-rewind", !live || busy || run.gen.length === 0 || cancelAsked);
  set("btn-reset", !live || busy || cancelAsked);
  set("btn-cancel", !(pending === "run" || pending === "paced" || pending === "token" || paced) || cancelAsked);
  const canResume = pausedRun && runState === "ready" && !pending && !following;
  set("btn-pause", !(canResume || (pending === "run" || paced) && !pauseAsked && !cancelAsked));
  const pl = canResume ? "Resume" : "Pause";
  if ($("btn-pause").textContent !== pl) $("btn-pause").textContent = pl;
  set("force-q", !live);
  set("btn-start", following); // enabled again after "Try it myself"
  if (following) for (const id of ["btn-step", "btn-token", "btn-run", "btn-rewind", "btn-reset", "btn-cancel", "btn-start", "force-q"]) set(id, true);
  keepFocus();
  if (samplingWaits && !pending && !paced && runState === "ready") { samplingWaits = false; queueMicrotask(applySampling); }
  updateBusy();
}
// keepFocus: a step button that was focused and is now disabled (Stop
// after the run stopped, Next stage at the end) hands the focus to the next
// useful one instead of dropping it to the page
let stepFocus = null;
// the skip link lands just before the step buttons (a target that is not
// a button, so the Enter that followed it presses nothing): Tab is then on
// Next stage
$("skip-steps").addEventListener("click", (e) => {
  e.preventDefault();
  $("steps").focus();
});
$("runbar").addEventListener("focusin", (e) => { if (e.target.tagName === "BUTTON") stepFocus = e.target; });
function keepFocus() {
  if (!stepFocus || !stepFocus.disabled || following) return;
  const a = document.activeElement;
  if (a && a !== document.body && a !== stepFocus) return;
  const next = ["btn-step", "btn-token", "btn-rewind", "btn-reset"].map($).find((b) => !b.disabled) || $("btn-start");
  if (next && !next.disabled) next.focus({ preventScroll: true });
}
// data-busy is "1" while a command runs or its results wait to be drawn,
// so "0" means the page shows everything it has received; data-view-busy
// is "0" as soon as everything in view (and near it) is drawn, the panels
// out of view may still wait (each marked data-stale="1").
function updateBusy() {
  // a command that ended without a frame (an error) still lets the panels out of view catch up
  if (dirty.size && !idle) catchUp();
  const cmd = !!(pending || paced !== null || cancelAsked || frame || later || gapTimer);
  let view = cmd, all = cmd || !!idle;
  if (!view) for (const n of dirty) { all = true; if (inView(n)) { view = true; break; } }
  const body = document.body.dataset, b = all ? "1" : "0", v = view ? "1" : "0";
  if (body.busy !== b) body.busy = b;
  if (body.viewBusy !== v) body.viewBusy = v;
}
// markStale sets data-stale="1" on the panels whose drawing waits (after
// each frame and each panel drawn in idle time)
const staleShown = new Map();
function markStale() {
  const stale = new Set();
  for (const n of dirty) if (PANEL_OF[n]) stale.add(PANEL_OF[n]);
  for (const id of PANEL_IDS) {
    const v = stale.has(id);
    if (staleShown.get(id) === v) continue;
    staleShown.set(id, v);
    if (v) $(id).dataset.stale = "1"; else delete $(id).dataset.stale;
  }
}
const narrow = window.matchMedia("(max-width: 900px)");
const NEXT_WORDS = { tokenize: "tokenize the prompt", embed: "look up the embeddings", prefill: "run prefill", logits: "compute the logits",
  sample: "choose a token", append: "append it and grow the KV cache", stop: "finish" };

// ---------- panels ----------
const draw = {
  reset() {
    for (const id of ["source-text", "chips", "embed-view", "positions", "layers", "logit-stats", "cands", "budget", "ttft", "attn", "chart-probs", "chart-hist", "chart-cdf", "chart-itl", "force-results"]) C.clear($(id));
    for (const id of ["sample-text", "kv-text", "rates", "stop-text", "ctx-text", "wi-out", "cut-text", "cut-chain", "probs-note", "attn-text"]) $(id).textContent = "";
    delete $("stop-text").dataset.reason;
    $("gen").replaceChildren();
    $("gen").dataset.count = "0";
    genDrawn = 0;
    const g = $("kv-grid").getContext("2d");
    g.clearRect(0, 0, $("kv-grid").width, $("kv-grid").height);
    $("kv-grid")._labels = null;
    $("checksum").textContent = run.model ? "before: " + run.model.checksum + " (after: shown when the run stops)" : "";
    $("pass-explain").textContent = "Prefill runs every prompt position through all layers in one pass; decode runs one new position per step.";
    setContext(0, 1);
    if (!$("piece-legend").firstChild) $("piece-legend").appendChild(P.pieceLegend());
  },
  tokens() {
    const t = run.tok;
    if (!t) return;
    P.sourceText($("source-text"), t);
    P.tokenChips($("chips"), t, { button: true, onHover: highlightTok, onPick: (i) => { run.selected = i; draw.embed(); } });
    drawContext();
  },
  embed() {
    const e = run.embed, view = C.clear($("embed-view"));
    if (!e) return;
    const i = Math.max(0, Math.min(run.selected, e.positions.length - 1)), p = e.positions[i], tok = run.tok.tokens[i];
    view.appendChild(C.el("p", { "data-testid": "embed-pos", text: "Position " + p.pos + ": token " + p.id + " “" + C.tokenLabel(tok) + "” · " + e.dim + " numbers per vector" }));
    view.appendChild(P.strip("token vector (row " + p.id + " of the embedding table)", p.token_vec, p.token_norm));
    if (p.pos_vec) view.appendChild(P.strip("position vector (row " + p.pos + " of the position table)", p.pos_vec, p.pos_norm));
    else view.appendChild(C.el("p", { class: "muted small", text: "Position: " + e.method }));
    view.appendChild(P.strip("sum: what enters layer 0", p.sum, p.sum_norm));
    view.appendChild(C.el("p", { class: "muted small", text: "Blue is negative, red positive, white zero." }));
  },
  prefill() {
    const layers = run.layers;
    if (!layers) return;
    const a = run.stepTrace;
    if (a && run.attnView === "step") {
      $("pass-explain").textContent = "Decode step " + (a.step + 1) + ": only the new position " + a.pos + " went through the " + a.layer_traces.length +
        " layers (" + C.ms(a.duration_ms) + " ms); earlier positions were read from the KV cache.";
    } else if (run.prefill) {
      const p = run.prefill;
      $("pass-explain").textContent = "Prefill: all " + p.positions + " prompt positions went through " + p.layers.length + " layers in one batched pass (" +
        C.ms(p.duration_ms) + " ms, " + C.fmt(p.tokens_per_s, 0) + " tokens/s).";
    }
    // one chip per position, reused from the last draw: a token step adds
    // one and moves the "pass" mark
    const total = a ? a.pos + 1 : run.prefill.positions, box = $("positions");
    while (box.childElementCount > total) box.lastChild.remove();
    for (let i = 0; i < total; i++) {
      const cls = "pos" + (run.passPos.includes(i) ? " pass" : "") + (i >= run.tok.count ? " gen" : ""), title = "position " + i + ": " + posLabel(i);
      let sp = box.children[i];
      if (!sp) sp = box.appendChild(C.el("span", { text: String(i) }));
      if (sp.className !== cls) sp.className = cls;
      if (sp.title !== title) sp.title = title;
    }
    const lb = C.clear($("layers"));
    let max = 0;
    for (const l of layers) max = Math.max(max, l.residual_norm[l.residual_norm.length - 1]);
    for (const l of layers) {
      const n = l.residual_norm[l.residual_norm.length - 1];
      const fill = C.el("span", { class: "layer-fill" });
      fill.style.width = (100 * n / (max || 1)) + "%";
      lb.appendChild(C.el("div", { class: "layer-row" }, [C.el("span", { class: "layer-name", text: "layer " + l.layer }),
        C.el("span", { class: "layer-bar" }, [fill]), C.el("span", { class: "layer-val", text: "‖x‖ " + C.fmt(n, 2) })]));
    }
    lb.dataset.kind = a && run.attnView === "step" ? "decode" : "prefill";
    fillLayerSelect(layers.length);
  },
  attn() {
    const view = attnView();
    const src = view === "step" && run.stepTrace ? run.stepTrace.layer_traces : run.prefill ? run.prefill.layers : null;
    if (!src) return;
    const li = Math.min(parseInt($("attn-layer").value, 10) || 0, src.length - 1), l = src[li];
    let rows, rowLabels, nk;
    if (view === "step" && run.stepTrace) {
      const pos = run.stepTrace.pos;
      nk = pos + 1;
      rowLabels = [posLabel(pos)];
      rows = l.attn.map((a) => [a]);
      $("attn-text").textContent = "Decode step " + (run.stepTrace.step + 1) + ", layer " + l.layer + ": the new token " + posLabel(pos) + " (position " + pos + ") is the only query; it attends to all " + nk + " positions in the cache.";
    } else if (l.attn_all) {
      nk = l.attn_all.length;
      rowLabels = [];
      for (let q = 0; q < nk; q++) rowLabels.push(posLabel(q));
      rows = l.attn.map((_, h) => l.attn_all.map((heads) => { const r = heads[h].slice(); while (r.length < nk) r.push(null); return r; }));
      $("attn-text").textContent = "Prefill, layer " + l.layer + ": every prompt token (rows, the queries) against every prompt token (columns, the keys); a token sees only itself and earlier ones, so the upper right is empty (grey).";
    } else {
      nk = l.attn[0].length;
      rowLabels = [posLabel(nk - 1)];
      rows = l.attn.map((a) => [a]);
      $("attn-text").textContent = "Prefill, layer " + l.layer + ": the prompt is longer than 64 tokens, so only the last position's row is shown (query " + posLabel(nk - 1) + ").";
    }
    const colLabels = [];
    for (let k = 0; k < nk; k++) colLabels.push(posLabel(k));
    P.attentionHeatmap($("attn"), { heads: rows, rowLabels, colLabels, title: (view === "step" ? "Decode step" : "Prefill") + " attention, layer " + l.layer });
    $("attn").dataset.view = view;
    $("attn").dataset.layer = l.layer;
  },
  logits() {
    const l = run.logits;
    if (!l) return;
    const stats = $("logit-stats");
    C.clear(stats);
    const items = [["position", l.pos], ["vocabulary", l.vocab], ["highest logit", C.fmt(l.max, 3)], ["lowest", C.fmt(l.min, 3)], ["mean", C.fmt(l.mean, 3)],
      ["entropy at T=1", C.fmt(l.entropy, 3) + " nats"], ["entropy after temperature", C.fmt(l.entropy_t, 3) + " nats"], ["kept", l.kept + " of " + l.vocab]];
    for (const s of items) stats.appendChild(C.el("span", { class: "stat", "data-stat": s[0] }, [C.el("b", { text: s[0] + " " }), String(s[1])]));
    if (run.sample) stats.appendChild(C.el("span", { class: "stat", "data-stat": "chosen", "data-testid": "chosen-rank", "data-rank": run.sample.chosen.rank + 1 },
      [C.el("b", { text: "chosen " }), "“" + C.tokenLabel(run.sample.chosen) + "” at rank " + (run.sample.chosen.rank + 1)]));
    $("cut-text").textContent = P.cutSentence(l);
    P.chainTable($("cut-chain"), l);
    const { note } = P.probChart($("chart-probs"), l);
    $("probs-note").textContent = note;
    P.logitsHistogram($("chart-hist"), l);
    P.candidatesTable($("cands"), l, { onForce: force, chosenId: run.sample ? run.sample.chosen.id : -1 });
  },
  sample() {
    const s = run.sample;
    if (!s) { C.clear($("chart-cdf")); $("sample-text").textContent = ""; return; }
    P.cdfChart($("chart-cdf"), s);
    $("sample-text").textContent = P.sampleSentence(s);
    $("sample-text").dataset.chosen = s.chosen.id;
  },
  gen() { drawGen(); drawContext(); },
  kv() { drawKV(); if (run.memory) drawBudget(run.memory); },
  timing() { drawTiming(); },
  stop() {
    const s = run.stop, st = $("stop-text");
    if (!s) { st.textContent = ""; delete st.dataset.reason; $("checksum").textContent = run.model ? "before: " + run.model.checksum + " (after: shown when the run stops)" : ""; return; }
    // the engine's detail adds what the reason alone does not say: which
    // stop string, which end token, how many positions
    const detail = s.reason === "eos" || s.reason === "stop_string" || s.reason === "context_full" ? " " + s.detail.charAt(0).toUpperCase() + s.detail.slice(1) + "." : "";
    st.textContent = "Stopped: " + C.stopReason(s.reason, s.generated) + "." + detail;
    st.dataset.reason = s.reason;
    const ck = C.clear($("checksum")), ok = s.weights_unchanged;
    ck.append(C.el("span", { text: "before: " + s.checksum_before }), C.el("br"), C.el("span", { text: "after:  " + s.checksum_after }), C.el("br"),
      C.el("strong", { class: ok ? "ok" : "error", "data-testid": "checksum-verdict", text: ok ? "unchanged ✓ — inference only reads the weights" : "CHANGED ✗" }),
      C.el("br"), C.el("span", { class: "muted", "data-testid": "checksum-when", text: "The after-hash is of every weight, begun " + C.ms(s.checksum_age_ms || 0) +
        " ms before this stop: a server hashes its weights at most every 5 s, and every run stopping meanwhile shares that hash. The weights also sit in read-only memory: a write would stop the server." }));
    setStatus("Stopped: " + C.stopReason(s.reason, s.generated) + ". Rewind to continue from an earlier token, or Reset.");
  },
  pipeline() {
    const done = run.last, next = runState === "stopped" ? null : run.next;
    for (const li of document.querySelectorAll("#timeline li")) {
      const s = li.dataset.stage;
      li.classList.toggle("done", s === done);
      li.classList.toggle("next", s === next && !!run.model);
      if (s === done) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
    }
    // on a phone the strip scrolls inside itself: keep the current stage in
    // it (only between commands: measuring forces a layout)
    const strip = $("timeline"), cur = strip.querySelector(".done");
    if (cur && !pending && narrow.matches) strip.scrollLeft = cur.offsetLeft - strip.clientWidth / 3;
    if (run.model && runState !== "stopped" && !pending && run.last) setStatus("Done: " + run.last + ". Next: " + (NEXT_WORDS[run.next] || run.next) + ".");
  },
  buttons() { setButtons(); },
  model() { mv.redraw(); },
};

function posLabel(i) {
  if (!run.tok) return String(i);
  if (i < run.tok.count) {
    const t = run.tok.tokens[i];
    const b = C.isPartial(t) && t.end > t.start ? Array.from(new TextEncoder().encode(run.tok.text).slice(t.start, t.end)) : null;
    return C.tokenLabel(t, b);
  }
  const g = run.gen[i - run.tok.count];
  return g ? C.tokenLabel({ piece: g.piece, text: g.text }) : String(i);
}
function highlightTok(i, on) {
  for (const e of document.querySelectorAll("#source-text [data-i], #chips [data-i]")) {
    if (e.dataset.i.split(" ").includes(String(i))) e.classList.toggle("hl", on);
  }
}
function fillLayerSelect(n) {
  const sel = $("attn-layer");
  if (sel.options.length === n) return;
  const cur = sel.value;
  C.clear(sel);
  for (let i = 0; i < n; i++) sel.appendChild(C.el("option", { value: String(i), text: "layer " + i }));
  sel.value = cur && +cur < n ? cur : String(n - 1);
}
// setAttnView shows the pass that just ran; the student can switch back.
function setAttnView(v) {
  run.attnView = v;
  const r = document.querySelector('input[name="attn-view"][value="' + v + '"]');
  if (r && !r.checked) r.checked = true;
}
function attnView() {
  const r = document.querySelector('input[name="attn-view"]:checked');
  return r ? r.value : "prefill";
}
function setContext(used, limit) {
  $("ctx-fill").style.width = Math.min(100, 100 * used / limit) + "%";
  $("ctx-fill").dataset.used = used;
  $("ctx-meter").setAttribute("aria-valuenow", String(used));
  $("ctx-meter").setAttribute("aria-valuemax", String(limit));
}
function drawContext() {
  const t = run.tok;
  if (!t) return;
  const used = t.count + run.gen.length;
  setContext(used, t.context_limit);
  $("ctx-text").textContent = t.count + " prompt tokens" + (t.added_by_app ? " (" + t.added_by_app + " added by the application" + (t.chat ? ", " + t.chat_style + " chat template" : "") + ")" : "") +
    (run.gen.length ? " + " + run.gen.length + " generated" : "") + " · context used " + used + " of " + t.context_limit;
}

// ---------- generated text: new tokens are appended, never redrawn ----------
let genDrawn = 0;
function drawGen() {
  const box = $("gen");
  if (genDrawn > run.gen.length || (genDrawn === 0 && box.firstChild)) { box.replaceChildren(); genDrawn = 0; }
  if (genDrawn === 0 && run.tok) box.appendChild(C.el("span", { class: "gen-prompt", text: run.tok.text }));
  const frag = document.createDocumentFragment();
  for (let i = genDrawn; i < run.gen.length; i++) {
    const g = run.gen[i], partial = g.text === "" && C.pieceBytes(g.piece);
    const span = C.el("span", { class: "gen-tok" + (partial ? " gen-byte" : "") + (g.forced ? " forced" : ""), "data-step": i, "data-id": g.id, "data-testid": "gen-tok", tabindex: "0",
      text: partial ? C.tokenLabel({ piece: g.piece, text: "" }) : g.text });
    span.style.setProperty("--p", (0.1 + 0.55 * g.pkept).toFixed(3));
    frag.appendChild(span);
  }
  box.appendChild(frag);
  genDrawn = run.gen.length;
  box.dataset.count = String(run.gen.length);
}
function showAlts(target) {
  const g = run.gen[+target.dataset.step];
  if (!g) return;
  const tip = C.clear($("tooltip"));
  tip.appendChild(C.el("div", { text: "chosen “" + C.tokenLabel({ piece: g.piece, text: g.text }) + "” · id " + g.id + " · rank " + (g.rank + 1) + (g.forced ? " · forced by you" : "") }));
  tip.appendChild(C.el("div", { text: P.PK + " " + C.fmt(g.pkept, 4) + " · " + P.PT + " " + C.fmt(g.pt, 4) + " · " + P.P1 + " " + C.fmt(g.p1, 4) }));
  const ul = C.el("ul");
  for (const t of g.alts) ul.appendChild(C.el("li", { text: (t.rank + 1) + ". “" + C.tokenLabel(t) + "”  " + (t.kept ? "p after the cut " + C.fmt(t.prob_kept, 4) : "cut") + (t.id === g.id ? "  ← chosen" : "") }));
  tip.appendChild(ul);
  const r = target.getBoundingClientRect();
  tip.style.left = Math.max(4, Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - 300)) + "px";
  tip.style.top = (window.scrollY + r.bottom + 4) + "px";
  tip.hidden = false;
}
function hideTip() { $("tooltip").hidden = true; }

// ---------- KV cache ----------
function drawKV() {
  const m = run.model, c = $("kv-grid");
  if (!m || !run.tok) return;
  const L = m.layers, cap = run.cacheCap || Math.min(m.context, run.tok.count + (parseInt($("max-new").value, 10) || 0));
  run.cacheCap = cap;
  const dpr = window.devicePixelRatio || 1, W = Math.max(200, boxWidth(c, 600)), H = Math.min(160, 12 + L * 16);
  if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) { c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); c.style.height = H + "px"; }
  const g = c.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const labelW = 52, cw = Math.max(0.5, Math.min(16, (W - labelW) / cap)), ch = Math.max(4, Math.min(16, (H - 4) / L));
  const col = { fg: C.cssVar("--fg"), prompt: C.cssVar("--accent"), gen: C.cssVar("--good"), newest: C.cssVar("--bad"), free: C.cssVar("--border") };
  // the layer labels are drawn only when the canvas is new, resized or
  // the theme changed: setting a canvas font on the page forces a style
  // recalculation of everything the frame changed before it
  const key = [c.width, c.height, L, col.fg, C.isDark()].join(" ");
  if (c._labels !== key) {
    c._labels = key;
    g.clearRect(0, 0, W, H);
    g.font = "11px system-ui";
    g.fillStyle = col.fg;
    for (let l = 0; l < L; l++) g.fillText("layer " + l, 0, 2 + l * ch + ch * 0.75);
  } else g.clearRect(labelW, 0, W - labelW, H);
  for (let l = 0; l < L; l++) {
    g.fillStyle = col.free;
    g.fillRect(labelW, 2 + l * ch, cw * cap, ch - 1);
    g.fillStyle = col.prompt;
    g.fillRect(labelW, 2 + l * ch, cw * Math.min(run.cacheLen, run.tok.count), ch - 1);
    if (run.cacheLen > run.tok.count) { g.fillStyle = col.gen; g.fillRect(labelW + cw * run.tok.count, 2 + l * ch, cw * (run.cacheLen - run.tok.count), ch - 1); }
    if (run.cacheLen > 0) { g.fillStyle = col.newest; g.fillRect(labelW + cw * (run.cacheLen - 1), 2 + l * ch, Math.max(1, cw), ch - 1); }
  }
  c.dataset.cacheLen = run.cacheLen;
  const bpt = m.kv_bytes_per_token;
  $("kv-text").textContent = "Cache: " + run.cacheLen + " of " + cap + " positions filled. Per position: 2 (K and V) × " + m.layers + " layers × " + m.kv_heads +
    " key/value heads × " + m.head_dim + " numbers × 4 bytes = " + C.bytes(bpt) + "; used " + C.bytes(bpt * run.cacheLen) + " of " + C.bytes(bpt * cap) + " allocated.";
}
function drawBudget(mem) {
  const box = C.clear($("budget"));
  const parts = [["weights", mem.weights, "s-accent"], ["KV cache used", mem.kv_used, "s-good"], ["KV cache allocated, empty", mem.kv_allocated - mem.kv_used, "s-free"], ["scratch buffers", mem.scratch, "s-warn"]];
  const total = mem.weights + mem.kv_allocated + mem.scratch;
  const bar = C.el("div", { class: "budget-bar", role: "img", "aria-label": "Memory of this run: " + parts.map((p) => p[0] + " " + C.bytes(p[1])).join(", ") });
  for (const p of parts) {
    const seg = C.el("span", { class: "budget-seg " + p[2], title: p[0] + ": " + C.bytes(p[1]) });
    seg.style.width = Math.max(0.5, 100 * p[1] / total) + "%";
    bar.appendChild(seg);
  }
  box.appendChild(bar);
  box.appendChild(C.el("p", { class: "small legend" }, parts.flatMap((p) => [C.el("span", { class: "key " + p[2] }), " " + p[0] + " " + C.bytes(p[1]) + "  "]).concat(["· total " + C.bytes(total)])));
  whatIf();
}
function whatIf() {
  const m = run.model, mem = run.memory;
  if (!m) return;
  const n = Math.max(1, parseInt($("wi-n").value, 10) || 1), ctxLen = Math.max(1, parseInt($("wi-ctx").value, 10) || 1);
  const kv = n * ctxLen * m.kv_bytes_per_token, scratch = mem ? n * mem.scratch : 0, total = m.weights_bytes + kv + scratch;
  const over = ctxLen > m.context ? " Note: " + ctxLen + " tokens is beyond this model's context of " + m.context + "." : "";
  $("wi-out").textContent = n + " requests × " + ctxLen + " tokens × " + C.bytes(m.kv_bytes_per_token) + " per token = " + C.bytes(kv) +
    " of KV cache, plus the weights once (" + C.bytes(m.weights_bytes) + ")" + (mem ? " and scratch buffers for " + n + " requests (" + C.bytes(mem.scratch) + " each, " + C.bytes(scratch) + " in all)" : "") +
    ": " + C.bytes(total) + ". The cache is " + C.pct(kv / total) + " of it." + over;
}

function drawTTFT(box, tt, key) {
  C.clear(box);
  box.dataset.key = key;
  if (!tt) { box.appendChild(C.el("p", { class: "muted small", text: "Time to first token appears when the first token is chosen." })); return; }
  const parts = [["queue (waiting for the server)", tt.queue || 0, "s-free"], ["tokenize", tt.tokenize, "s-muted"], ["embed", tt.embed, "s-warn"], ["prefill", tt.prefill, "s-accent"], ["first logits + sample", tt.first, "s-good"]];
  box.appendChild(C.el("p", { "data-testid": "ttft-text", "data-ms": tt.total, text: "Time to first token: " + C.ms(tt.total) + " ms = " + parts.map((p) => p[0] + " " + C.fmt(p[1] || 0, 3)).join(" + ") + " ms" }));
  const bar = C.el("div", { class: "budget-bar", role: "img", "aria-label": "Time to first token by stage" });
  for (const p of parts) {
    const seg = C.el("span", { class: "budget-seg " + p[2], title: p[0] + " " + C.fmt(p[1] || 0, 3) + " ms" });
    seg.style.width = (tt.total > 0 ? Math.max(0.5, 100 * (p[1] || 0) / tt.total) : 0) + "%";
    bar.appendChild(seg);
  }
  box.appendChild(bar);
  box.appendChild(C.el("p", { class: "small legend" }, parts.flatMap((p) => [C.el("span", { class: "key " + p[2] }), " " + p[0] + "  "])));
}

// ---------- timing: filled live, replaced by the engine's summary at the stop ----------
function drawTiming() {
  const t = run.timings, box = $("ttft");
  const tt = t ? { queue: Math.max(0, t.ttft_ms - t.tokenize_ms - t.embed_ms - t.prefill_ms - t.first_decode_ms), tokenize: t.tokenize_ms, embed: t.embed_ms, prefill: t.prefill_ms, first: t.first_decode_ms, total: t.ttft_ms } : run.ttft;
  const itl = t ? t.itl_ms || [] : run.itl;
  // the time to first token is drawn once per value, not every frame of a run
  const key = tt ? JSON.stringify(tt) : "none";
  if (box.dataset.key !== key || !box.firstChild) drawTTFT(box, tt, key);
  P.itlChart($("chart-itl"), itl);
  if (t) {
    $("rates").textContent = "Prefill " + C.fmt(t.prefill_tokens_per_s, 0) + " tokens/s (all prompt positions in parallel) · output " + C.fmt(t.output_tokens_per_s, 0) +
      " tokens/s (one at a time) · median inter-token latency " + C.fmt(t.itl_p50_ms, 3) + " ms." +
      (t.model_ms !== undefined ? " Of this run's time, " + C.ms(t.model_ms) + " ms was the model's forward passes" + (t.model_tokens_per_s ? " (" + C.fmt(t.model_tokens_per_s, 0) + " tokens/s of forward time alone)" : "") +
        ", " + C.ms(t.inspect_ms) + " ms was this lab building what it shows (probabilities, top list, histogram, layer traces) and " + C.ms(t.queue_ms || 0) + " ms waiting for the server's queue." : "");
  } else if (itl.length) {
    const s = itl.slice().sort((a, b) => a - b);
    $("rates").textContent = itl.length + " inter-token latencies so far · median " + C.fmt(s[s.length >> 1], 3) + " ms · last " + C.fmt(itl[itl.length - 1], 3) + " ms.";
  } else $("rates").textContent = "";
}

// ---------- force: any vocabulary token ----------
function force(id) {
  if (runState === "idle" || run.stop || (run.next !== "sample" && run.next !== "logits")) {
    setStatus(run.stop ? "The run has stopped: rewind one token, then force a different one." : "A token can be forced when the next stage is logits or sample.", true);
    return;
  }
  send("force", { id });
}
let searchTimer = 0, searchSeq = 0;
function searchVocab() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    const q = $("force-q").value, mine = ++searchSeq, out = $("force-results");
    if (q === "") { C.clear(out); return; }
    fetch("/api/vocab?model=" + encodeURIComponent(run.model ? run.model.name : $("model").value) + "&q=" + encodeURIComponent(q.replace(/\u2423/g, " ")))
      .then((r) => r.json()).then((d) => {
        if (mine !== searchSeq) return;
        C.clear(out);
        if (d.error) { out.appendChild(C.el("li", { class: "error", text: d.error })); return; }
        if (!d.tokens.length) { out.appendChild(C.el("li", { class: "muted", text: "No token matches “" + q + "”." })); return; }
        for (const t of d.tokens) {
          const b = C.el("button", { type: "button", class: "force-hit", "data-id": t.id, "data-testid": "force-hit", title: "force token " + t.id },
            [C.el("span", { class: "mono", text: C.tokenLabel(t) }), C.el("span", { class: "chip-id", text: " id " + t.id })]);
          b.addEventListener("click", () => force(t.id));
          out.appendChild(C.el("li", {}, [b]));
        }
      }).catch(() => {});
  }, 120);
}

// ---------- get more models ----------
let pullTimer = 0;
function refreshModels() {
  return fetch("/api/models").then((r) => r.json()).then((d) => {
    models = d.models || [];
    const sel = $("model"), cur = sel.value;
    C.clear(sel);
    for (const m of models) sel.appendChild(C.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") }));
    sel.value = cur;
    showModelCard();
  });
}
function pollPull() {
  fetch("/api/pull").then((r) => r.ok ? r.json() : null).then((d) => {
    if (!d) { $("pull").hidden = true; return; }
    const st = d.status, list = C.clear($("presets"));
    for (const p of d.presets) {
      const loaded = models.some((m) => m.name === p.repo), cached = (st.cached || []).includes(p.repo);
      const btn = C.el("button", { type: "button", text: loaded ? "loaded" : cached ? "load from cache" : "download ~" + C.bytes(p.bytes) });
      btn.disabled = loaded || st.state === "running";
      btn.addEventListener("click", () => {
        fetch("/api/pull", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ repo: p.repo }) })
          .then((r) => r.json()).then((x) => { if (x.error) $("pull-status").textContent = x.error; schedulePull(); });
      });
      list.appendChild(C.el("li", {}, [C.el("b", { text: p.repo }), " — " + p.about + " ", btn]));
    }
    $("pull-fill").style.width = (100 * (st.total > 0 ? st.done / st.total : 0)) + "%";
    const msg = { idle: "", running: "Downloading " + st.repo + ": " + st.file + " " + C.bytes(st.done) + " / " + C.bytes(st.total) + " at " + C.bytes(st.bytes_per_s) + "/s, about " + Math.round(st.eta_s) + " s left",
      done: st.repo + " is ready: pick it above.", error: "Download of " + st.repo + " failed: " + st.error }[st.state];
    $("pull-status").textContent = msg || "";
    $("pull-status").className = "small" + (st.state === "error" ? " error" : "");
    if (st.state === "done") refreshModels();
    if (st.state === "running") schedulePull();
  }).catch(() => {});
}
function schedulePull() { clearTimeout(pullTimer); pullTimer = setTimeout(pollPull, 500); }

// ---------- wiring ----------
$("pull").addEventListener("toggle", () => { if ($("pull").open) pollPull(); });
$("controls").addEventListener("submit", (e) => { e.preventDefault(); start(); });
$("btn-step").addEventListener("click", () => send("step"));
$("btn-token").addEventListener("click", () => send("step_token"));
$("btn-run").addEventListener("click", () => { if (!pending && runState === "ready") runToEnd(); });
$("btn-rewind").addEventListener("click", () => send("rewind", { n: 1 }));
$("btn-reset").addEventListener("click", () => send("reset"));
$("btn-cancel").addEventListener("click", cancel);
$("btn-pause").addEventListener("click", pauseOrResume);
for (const id of SAMPLING_IDS) $(id).addEventListener("change", applySampling);
for (const id of ["prompt", "model", "chat-mode", "system", "stops", "max-new"]) $(id).addEventListener("input", () => { if (startP && !following) formChanged(true); });
$("model").addEventListener("change", showModelCard);
$("chat-mode").addEventListener("change", chatToggle);
$("attn-layer").addEventListener("change", () => mark("attn"));
for (const r of document.querySelectorAll('input[name="attn-view"]')) r.addEventListener("change", () => mark("attn"));
$("wi-n").addEventListener("input", whatIf);
$("wi-ctx").addEventListener("input", whatIf);
$("force-q").addEventListener("input", searchVocab);
$("force-form").addEventListener("submit", (e) => { e.preventDefault(); const first = document.querySelector("#force-results .force-hit"); if (first) first.click(); });
$("gen").addEventListener("mouseover", (e) => { if (e.target.classList.contains("gen-tok")) showAlts(e.target); });
$("gen").addEventListener("focusin", (e) => { if (e.target.classList.contains("gen-tok")) showAlts(e.target); });
$("gen").addEventListener("mouseout", hideTip);
$("gen").addEventListener("focusout", hideTip);
$("share").addEventListener("click", (e) => {
  e.preventDefault();
  const l = C.writeURL(settings());
  $("share").href = l;
  if (navigator.clipboard) navigator.clipboard.writeText(l).catch(() => {});
  setStatus("Link copied: " + l);
});
whenResized(() => mark("logits", "sample", "timing", "kv", "attn"));
document.addEventListener("keydown", (e) => {
  const tag = (e.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "textarea" || tag === "select" || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key !== "Escape") resetArmed = 0;
  if (e.key === "Escape" && !$("btn-cancel").disabled) { cancel(); return; }
  if (e.key === "p" && !$("btn-pause").disabled) { pauseOrResume(); return; }
  if ($("btn-step").disabled && e.key !== "Escape" && e.key !== "Backspace") return;
  if (e.key === "ArrowRight" || e.key === " ") { e.preventDefault(); send("step"); }
  else if (e.key === "t") send("step_token");
  else if (e.key === "r") runToEnd();
  else if (e.key === "Backspace") { e.preventDefault(); if (!$("btn-rewind").disabled) send("rewind", { n: 1 }); }
  else if (e.key === "Escape" && !$("btn-reset").disabled) escapeReset();
});
// escapeReset: Escape resets a run with nothing generated at once; a run
// with tokens only on a second Escape within 5 s (a run just finished is
// one key away from lost)
let resetArmed = 0;
function escapeReset() {
  const n = run.gen.length;
  if (n === 0 || Date.now() - resetArmed < 5000) { resetArmed = 0; send("reset"); return; }
  resetArmed = Date.now();
  setStatus("Press Escape again to reset this run and lose its " + n + (n === 1 ? " token" : " tokens") + "; any other key keeps it.");
}

// ---------- classroom (room.js): present, follow, try it myself ----------
function formFromStart(p) {
  const sp = p.sampling || {}, user = (p.chat || []).find((m) => m.role === "user"), sys = (p.chat || []).find((m) => m.role === "system");
  if (p.model) $("model").value = p.model;
  $("prompt").value = user ? user.content : p.prompt || "";
  $("chat-mode").checked = !!p.chat;
  $("system").value = sys ? sys.content : "";
  for (const [id, v] of [["temperature", sp.temperature], ["top-k", sp.top_k], ["top-p", sp.top_p], ["min-p", sp.min_p], ["seed", sp.seed], ["max-new", p.max_new_tokens]]) if (v !== undefined) $(id).value = v;
  $("stops").value = (p.stop_strings || []).join("|");
  chatToggle();
  showModelCard();
}
const room = initRoom({
  client,
  deliver: onMessage,
  // the class request starts from what the form shows (a plain prompt)
  classDefaults: () => { const s = settings(), p = startPayload(s); return { prompt: s.prompt, max_new_tokens: p.max_new_tokens, sampling: p.sampling, model: p.model }; },
  current: () => ({ start: startP, log: log.slice() }),
  top: () => (run.logits ? run.logits.top : []),
  setStatus,
  settings,
  setForm: formFromStart,
  setFollowing(on) {
    following = on;
    if (on) { stopPaced(); pending = null; resuming = false; client.close(); }
    mark("buttons");
  },
  // adopt: the room's run becomes this page's (a presenter's reclaim)
  adopt(start, l) {
    if (start) { startP = start; log = l.slice(); formFromStart(start); return; }
    if (pending === "resume") { pending = null; resuming = false; mark("buttons"); }
  },
  // branch: a private copy of the presenter's run, rebuilt by resume
  branch(start, l) {
    following = false;
    startP = start;
    log = l.slice();
    pendingStart = null;
    pending = "resume"; // busy until the private copy is rebuilt
    resuming = true;
    resumeWhy = "branch";
    setButtons(); // busy at once (not at the next frame), so no click lands before the copy is rebuilt
    formFromStart(start);
    reconnect();
  },
});

fillForm();
setButtons();
mark("reset");
if (!room.following) client.connect().then(() => {
  setStatus("Connected. Press Start.");
  if (room.claim()) { resuming = true; pending = "resume"; resumeWhy = "claim"; return; }
  if (C.readURL().prompt !== undefined) start();
}).catch((err) => setStatus(C.connectText(err), true));
