// util.js: what the lesson panels in lessonpanels/ share — Run, a panel's
// websocket session with promises for its commands' answers, a root box
// that a new Run of the panel detaches (so a stale run draws nowhere),
// medians, buttons and sliders, and loading a stylesheet once.
import * as IS from "../core.js";

// mount adds a fresh root to out; alive() is false once the panel re-ran
// (the lesson page clears out) or the page left the section.
export function mount(out) {
  const root = IS.el("div", { class: "lp-root" });
  out.appendChild(root);
  root.alive = () => root.isConnected;
  return root;
}

// Run is one websocket session of a panel (core.js's Client): each command
// is answered by the reply carrying its id. closed is true once the panel
// closed it or the connection dropped; what is still waiting then rejects.
export class Run {
  constructor() {
    this.closed = false;
    this.client = new IS.Client(null, () => { this.closed = true; });
  }
  // start connects and starts a run; it resolves with the started message.
  start(payload) { return this.client.connect().then(() => this.cmd("start", payload)); }
  // cmd sends a command: the reply message, or a streamed command's events
  // (each also to onEvent as it arrives).
  cmd(type, payload, onEvent) {
    if (this.closed) return Promise.reject(new Error("the panel's run was closed"));
    return this.client.request(type, payload, onEvent);
  }
  step() { return this.cmd("step").then((evs) => evs[0]); }
  // stepTo steps until the stage named has run; it returns the events.
  stepTo(stage) {
    const evs = [];
    const go = () => this.step().then((ev) => { evs.push(ev); return ev.stage === stage || ev.stage === "stop" ? evs : go(); });
    return go();
  }
  runAll() { return this.cmd("run"); }
  open() { return this.client.open(); }
  close() {
    this.closed = true;
    this.client.close("the panel's run was closed");
  }
}

export function median(a) {
  if (!a.length) return NaN;
  const s = a.slice().sort((x, y) => x - y), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
export function sum(a) { return a.reduce((x, y) => x + y, 0); }

export function button(text, testid, onClick, cls) {
  const b = IS.el("button", { type: "button", class: cls || "", "data-testid": testid, text });
  b.addEventListener("click", onClick);
  return b;
}

// slider is a labelled range input; onInput(value) on every move.
export function slider(label, testid, min, max, step, value, onInput) {
  const id = "lp-" + testid + "-" + Math.random().toString(36).slice(2, 8);
  const input = IS.el("input", { type: "range", id, min: String(min), max: String(max), step: String(step), value: String(value), "data-testid": testid });
  const out = IS.el("output", { for: id, class: "mono" });
  const wrap = IS.el("div", { class: "lp-slider" }, [IS.el("label", { for: id, text: label }), input, out]);
  const update = () => { out.textContent = onInput(parseFloat(input.value)) || input.value; };
  input.addEventListener("input", update);
  wrap.input = input;
  wrap.update = update;
  return wrap;
}

// wrapTable puts a table in a horizontally scrolling box (phones).
export function wrapTable(t) { return IS.el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "table" }, [t]); }

const loaded = new Set();
export function css(href) {
  if (loaded.has(href) || document.querySelector('link[href="' + href + '"]')) return;
  loaded.add(href);
  document.head.appendChild(IS.el("link", { rel: "stylesheet", href }));
}
css("/static/css/lessonpanels.css");

// tokText is a token as the page shows it (␣ for a space).
export function tokText(t) { return IS.tokenLabel(t); }

// hex writes bytes as "20 63 61".
export function hex(bytes) { return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" "); }

// keepOpen holds a panel's websocket while the student steps it: it is
// closed when the panel re-runs, when its section is hidden, and when the
// panel is scrolled far away (more than two screens from the viewport), so
// panels left behind never hold sessions another panel or visitor needs;
// coming back to the section, or scrolling back, re-runs the panel.
export function keepOpen(root, sec, run, onPause) {
  let away = false;
  const io = new IntersectionObserver((es) => { away = !es[es.length - 1].isIntersecting; }, { rootMargin: "200% 0px" });
  io.observe(root);
  const timer = setInterval(() => {
    if (!root.alive()) { clearInterval(timer); io.disconnect(); run.close(); return; }
    if (away && !sec.hidden && !root.dataset.paused) {
      root.dataset.paused = "1";
      run.close();
      if (onPause) onPause();
      const back = new IntersectionObserver((es) => {
        if (!es[es.length - 1].isIntersecting || !root.alive()) return;
        back.disconnect();
        clearInterval(timer);
        io.disconnect();
        const again = root.closest(".lesson-panel") && root.closest(".lesson-panel").querySelector(".panel-head button");
        if (again) again.click();
      }, { rootMargin: "200% 0px" });
      back.observe(root);
      return;
    }
    if (sec.hidden && !root.dataset.paused) {
      root.dataset.paused = "1";
      run.close();
      if (onPause) onPause();
      const mo = new MutationObserver(() => {
        if (sec.hidden || !root.alive()) return;
        mo.disconnect();
        clearInterval(timer);
        io.disconnect();
        const again = root.closest(".lesson-panel") && root.closest(".lesson-panel").querySelector(".panel-head button");
        if (again) again.click();
      });
      mo.observe(sec, { attributes: true, attributeFilter: ["hidden"] });
    }
  }, 500);
}

// pace keeps a session under the server's message rate (its welcome's
// messages_per_second; a burst of twice that, the server's default, unless
// the welcome says burst): call it before each command of a long series;
// once the series has used more than 60% of the burst, it waits whenever
// the series runs ahead of 80% of the rate.
export async function pace(run) {
  const lim = IS.serverLimits || {}, rate = lim.messages_per_second;
  if (!rate) return;
  const now = performance.now();
  if (!run.paceT0) { run.paceT0 = now; run.paceN = 0; }
  run.paceN++;
  const ahead = run.paceN / (0.8 * rate) * 1000 - (now - run.paceT0);
  if (ahead > 0 && run.paceN > 0.6 * (lim.burst || 2 * rate)) await new Promise((res) => setTimeout(res, ahead));
}
