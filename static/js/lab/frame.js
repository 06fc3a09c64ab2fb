// lab/frame.js: frame scheduling. Events only mark panels dirty (mark);
// the panels are drawn at most once per animation frame, with the latest
// state, never queued: a panel marked ten times before its frame is drawn
// once. The panels themselves are draw.js's, handed over by lab.js
// (usePanels). Also here: which panels are in view (only those are drawn
// at once; the rest catch up when the page is idle), and the page's
// data-busy, data-view-busy and data-stale markers.
import { $ } from "../core.js";
import { S, PANEL, PANEL_OF } from "./state.js";

// panels: name → the function drawing it (usePanels)
const panels = {};
const main = $("main");

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
export function mark(...names) {
  for (const n of names) S.dirty.add(n);
  if (S.frame || S.cancelAsked) return;
  if (S.pending === "run") {
    // while a run streams, frames come at most every RUN_FRAME_MS
    if (S.gapTimer) return;
    const gap = RUN_FRAME_MS - (performance.now() - S.lastFlush);
    if (gap > 1) { S.gapTimer = setTimeout(() => { S.gapTimer = 0; if (!S.frame && !S.cancelAsked) S.frame = requestAnimationFrame(flush); }, gap); return; }
  } else if (S.gapTimer) { clearTimeout(S.gapTimer); S.gapTimer = 0; }
  S.frame = requestAnimationFrame(flush);
}

// ---------- drawing only what can be seen ----------
// An IntersectionObserver says which panels are in or near the viewport
// (NEAR_PX above and below it). A panel's drawing waits while it is out of
// view: it is drawn in the frame after it scrolls near, or, when no command
// is running, in idle time one panel at a time (so the whole page catches
// up between clicks without delaying the next one). A panel holding state
// it has not drawn carries data-stale="1".
const PANEL_IDS = [...new Set(Object.values(PANEL_OF))];
const NEAR_PX = 300;
const near = new Map(); // panel id → in or near the viewport (unknown until the observer's first report: drawn)

// usePanels hands the scheduler the panels it draws (name → function) and
// starts watching which are in view.
export function usePanels(p) {
  Object.assign(panels, p);
  const seen = new IntersectionObserver((entries) => {
    let came = false;
    for (const e of entries) {
      near.set(e.target.id, e.isIntersecting);
      if (e.isIntersecting && [...S.dirty].some((n) => PANEL_OF[n] === e.target.id)) came = true;
    }
    if (came) mark();
    else updateBusy();
  }, { rootMargin: NEAR_PX + "px 0px" });
  for (const id of PANEL_IDS) seen.observe($(id));
}
function inView(n) { const id = PANEL_OF[n]; return !id || near.get(id) !== false || (S.scrollTarget && PANEL[S.scrollTarget] === id); }
function viewDirty() { for (const n of S.dirty) if (inView(n)) return true; return false; }
// catch-up: the panels out of view are drawn when the browser is idle and
// no command is running, one per idle callback, the order of HEAVY
const idleCall = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ didTimeout: true, timeRemaining: () => 0 }), 50));
const idleCancel = window.cancelIdleCallback || clearTimeout;
// (between a paced run's tokens too: the server is waiting for the page)
function running() { return !!S.pending && !(S.pending === "paced" && !S.flying); }
function catchUp() {
  if (S.idle || S.frame || S.later || S.gapTimer || S.cancelAsked || running() || !S.dirty.size) return;
  S.idle = idleCall(() => {
    S.idle = 0;
    if (S.frame || S.later || S.gapTimer || S.cancelAsked || running()) return; // a command or a visible panel came first: it schedules again
    const n = HEAVY.concat(LIGHT).find((x) => S.dirty.has(x));
    if (n) drawOne(n, "idle");
    catchUp();
    markStale();
    updateBusy();
  }, { timeout: 1000 });
}
const LIGHT = ["reset", "gen", "timing", "stop", "pipeline", "buttons"];
const HEAVY = ["model", "logits", "sample", "tokens", "embed", "prefill", "attn", "kv"];
export const STREAM_MS = 250;
const FRAME_MS = 40, STREAM_FRAME_MS = 6;
// While "Run to end" streams, an event is drawn RUN_FRAME_MS after the
// last frame at the soonest: ten updates a second, and the text still
// visibly streams. Every frame costs the browser style, layout, paint and
// canvas work that grows with the page, and on a small machine that work
// competes with receiving the stream (BenchmarkBrowserRun: 50 ms made the
// page 1.2× slower; 200 ms was 0.83× of 100 ms at five updates a second).
const RUN_FRAME_MS = 100;
// stats: frames drawn and main-thread milliseconds spent drawing and
// applying events, per panel (read by the browser benchmark)
export const stats = window.labStats = { frames: 0, drawMs: 0, maxDrawMs: 0, events: 0, applyMs: 0 };
// how each panel was last drawn: "frame" (in view) or "idle" (caught up out of view)
const drawnBy = window.labDrawn = {};
function drawOne(n, by = "frame") {
  S.dirty.delete(n);
  drawnBy[n] = by;
  const t1 = performance.now();
  panels[n]();
  const dt = performance.now() - t1;
  stats[n] = (stats[n] || 0) + dt;
  if (dt > (stats["max-" + n] || 0)) stats["max-" + n] = dt;
}
function flush() {
  S.frame = 0;
  // no fades in the model view while a run streams (modelview.css)
  main.toggleAttribute("data-streaming", S.pending === "run");
  // this frame draws what a waiting gap timer was for; later marks wait
  // RUN_FRAME_MS from here
  clearTimeout(S.gapTimer);
  S.gapTimer = 0;
  S.lastFlush = performance.now();
  if (S.lastSeq !== null && document.body.dataset.seq !== String(S.lastSeq)) document.body.dataset.seq = S.lastSeq;
  const t0 = performance.now();
  for (const n of LIGHT) if (S.dirty.has(n) && inView(n)) drawOne(n);
  const streaming = S.pending === "run";
  let wait = 0;
  if (streaming && !S.heavyLeft && t0 - S.lastHeavy < STREAM_MS) wait = STREAM_MS - (t0 - S.lastHeavy);
  else {
    // while a run streams, a frame draws heavy panels for STREAM_FRAME_MS
    // of script and leaves the rest to the next frames: the style, layout
    // and canvas work that follows the script grows with what it changed
    // (measured with BenchmarkBrowserRunTrace); the frames that finish a
    // streamed run keep to one frame's time
    const budget = streaming ? STREAM_FRAME_MS : S.runState === "stopped" ? 16 : FRAME_MS, cont = S.heavyLeft;
    let drew = false;
    S.heavyLeft = false;
    for (const n of HEAVY) {
      if (!S.dirty.has(n) || !inView(n)) continue;
      if (drew && performance.now() - t0 > budget) { S.heavyLeft = true; break; }
      drawOne(n);
      drew = true;
    }
    if (drew && !cont) S.lastHeavy = t0;
  }
  if (S.scrollTarget) {
    const panel = $(PANEL[S.scrollTarget]);
    S.scrollTarget = null;
    if (panel) panel.scrollIntoView({ block: "nearest", behavior: "instant" });
  }
  if (!wait && S.later) { clearTimeout(S.later); S.later = 0; }
  if (viewDirty() && !S.cancelAsked) {
    if (!wait) S.frame = requestAnimationFrame(flush);
    else if (!S.later) S.later = setTimeout(() => { S.later = 0; if (!S.frame && !S.cancelAsked) S.frame = requestAnimationFrame(flush); }, wait);
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
export function dropDrawing() {
  if (S.frame) cancelAnimationFrame(S.frame);
  clearTimeout(S.later);
  clearTimeout(S.gapTimer);
  if (S.idle) idleCancel(S.idle);
  S.frame = S.later = S.gapTimer = S.idle = 0;
}

// scrollToStage brings a stage's panel into view after the frame draws it.
export function scrollToStage(stage) { S.scrollTarget = stage; mark("pipeline"); }

// data-busy is "1" while a command runs or its results wait to be drawn,
// so "0" means the page shows everything it has received; data-view-busy
// is "0" as soon as everything in view (and near it) is drawn, the panels
// out of view may still wait (each marked data-stale="1").
export function updateBusy() {
  // a command that ended without a frame (an error) still lets the panels out of view catch up
  if (S.dirty.size && !S.idle) catchUp();
  const cmd = !!(S.pending || S.paced !== null || S.cancelAsked || S.frame || S.later || S.gapTimer);
  let view = cmd, all = cmd || !!S.idle;
  if (!view) for (const n of S.dirty) { all = true; if (inView(n)) { view = true; break; } }
  const body = document.body.dataset, b = all ? "1" : "0", v = view ? "1" : "0";
  if (body.busy !== b) body.busy = b;
  if (body.viewBusy !== v) body.viewBusy = v;
}
// markStale sets data-stale="1" on the panels whose drawing waits (after
// each frame and each panel drawn in idle time)
const staleShown = new Map();
function markStale() {
  const stale = new Set();
  for (const n of S.dirty) if (PANEL_OF[n]) stale.add(PANEL_OF[n]);
  for (const id of PANEL_IDS) {
    const v = stale.has(id);
    if (staleShown.get(id) === v) continue;
    staleShown.set(id, v);
    if (v) $(id).dataset.stale = "1"; else delete $(id).dataset.stale;
  }
}
