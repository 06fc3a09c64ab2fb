// lab/controls.js: the controls. The settings form (filled from the
// page's defaults and the address, shared as a link), the buttons and keys
// and the commands they send (start, step, run at the engine's speed or a
// chosen one, pause, stop, rewind, reset, force a token, new sampling
// settings mid-run), which buttons are enabled and where the focus goes,
// the vocabulary search and the model downloads. What the server answers
// is messages.js's.
import * as C from "../core.js";
import { whenResized } from "../charts.js";
import { S, data, freshRun, setRunState } from "./state.js";
import { mark, dropDrawing, updateBusy, STREAM_MS } from "./frame.js";
import { setStatus, showAlts, hideTip, whatIf } from "./draw.js";
import { client, logEntry } from "./session.js";

const $ = C.$;

// ---------- the settings form ----------
export function fillForm() {
  const sel = $("model");
  for (const m of S.models) sel.appendChild(C.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") }));
  const d = C.samplingDefaults(data), u = C.readURL();
  sel.value = u.model || (S.models[0] && S.models[0].name) || "";
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
function currentModel() { return S.models.find((m) => m.name === $("model").value) || S.models[0]; }
function showModelCard() {
  const m = currentModel();
  if (!m) return;
  const box = $("model-card");
  box.textContent = m.arch + " · " + C.count(m.params) + " parameters (" + C.bytes(m.weights_bytes) + " as " + ({ bf16: "bfloat16", f32: "float32" }[m.precision] || m.precision.toUpperCase()) + ") · " + m.layers + " layers · width " + m.dim +
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
export function settings() {
  return { model: $("model").value, prompt: $("prompt").value, chat: $("chat-mode").checked, system: $("system").value,
    temperature: $("temperature").value, top_k: $("top-k").value, top_p: $("top-p").value, min_p: $("min-p").value,
    seed: $("seed").value, max_new_tokens: $("max-new").value, stop: $("stops").value, speed: $("speed").value !== "0" ? $("speed").value : "" };
}
export function startPayload(s) {
  const p = { model: s.model, max_new_tokens: parseInt(s.max_new_tokens, 10), sampling: C.samplingPayload(s), all_attention: true, lens: true };
  if (s.chat) {
    p.chat = [];
    if (s.system) p.chat.push({ role: "system", content: s.system });
    p.chat.push({ role: "user", content: s.prompt });
  } else p.prompt = s.prompt;
  if (s.stop) p.stop_strings = s.stop.split("|").filter((x) => x !== "");
  return p;
}

// ---------- commands ----------
export function start() {
  if (S.following) return;
  const s = settings();
  $("share").href = C.writeURL(s);
  stopPaced();
  setStatus("Connecting…");
  client.connect().then(() => {
    const p = startPayload(s);
    S.lastSampling = null;
    S.samplingWaits = false;
    formChanged(false);
    // until the server accepts it, there is no run to drive
    S.run = freshRun();
    S.pending = "start";
    S.cancelAsked = false;
    setRunState("idle");
    S.pendingStart = p;
    S.startID = client.send("start", p);
    setButtons();
    mark("reset", "pipeline");
  }).catch((err) => setStatus(C.connectText(err), true));
}

// send issues a stepping command; pending says which reply ends it.
function send(type, payload) {
  if (S.following || S.pending || S.runState === "idle") return;
  S.pausedRun = false; // any stepping command ends a pause (Resume is one too)
  if (type === "reset") {
    S.log = [];
    // the server's reset starts from the settings set last
    if (S.lastSampling) S.startP = Object.assign({}, S.startP, { sampling: S.lastSampling });
  }
  else if (logEntry(type, payload)) S.log.push(logEntry(type, payload));
  S.pending = { step: "step", rewind: "rewind", step_token: "token", force: "token", run: "run", reset: "reset" }[type];
  S.cmdEvents = 0;
  S.flying = true;
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
  if (!rate) { S.lastHeavy = performance.now(); send("run", { detail_ms: STREAM_MS }); return; }
  // playback for a class: one token at a time at the chosen rate
  S.paced = { rate, timer: 0 };
  pacedStep();
}
function pacedStep() {
  if (!S.paced || S.runState === "stopped") { S.paced = null; setButtons(); return; }
  S.paced.t0 = performance.now();
  S.pending = null;
  send("step_token");
  S.pending = "paced";
}
export function pacedNext() {
  if (!S.paced) return;
  const wait = Math.max(0, 1000 / S.paced.rate - (performance.now() - S.paced.t0));
  S.paced.timer = setTimeout(pacedStep, wait);
}
export function stopPaced() { if (S.paced) { clearTimeout(S.paced.timer); S.paced = null; } }

// ---------- settings edited mid-run ----------
// Sampling settings (temperature, top-k, top-p, min-p, seed) apply where
// the run is: the server redraws the current step with them (set_sampling)
// and every later step uses them; the change is logged, so a resume after a
// reconnect replays it. A changed prompt, model, chat or stop strings needs
// a new run: the form says "Changed: press Start to apply".
const SAMPLING_IDS = ["temperature", "top-k", "top-p", "min-p", "seed"];
function applySampling() {
  if (S.following || S.runState === "idle" || !S.startP) return;
  if (S.runState === "stopped") { formChanged(true); return; }
  if (S.pending || S.paced) { S.samplingWaits = true; setStatus("The new settings apply as soon as this step finishes (pause a run to apply them in the middle)."); return; }
  S.samplingWaits = false;
  client.send("set_sampling", C.samplingPayload(settings()));
}
function formChanged(on) {
  $("form-changed").hidden = !on;
}

// Pause stops a run after its current stage without ending it; Resume
// (the same button, or p) runs it on at the same speed. At a chosen speed
// the page stops asking for tokens; at the engine's speed the server stops
// streaming (pause) and says where (paused).
function pauseOrResume() {
  if (S.pausedRun && S.runState === "ready" && !S.pending) { S.pausedRun = false; runToEnd(); return; }
  if (S.pauseAsked || S.cancelAsked) return;
  if (S.paced) {
    stopPaced();
    S.pausedRun = true;
    if (!S.flying) { S.pending = null; setRunState("ready"); }
    setStatus("Paused. Resume (or p) plays on at the same speed; Next stage and Next token step on from here.");
    setButtons();
    return;
  }
  if (S.pending === "run") {
    S.pauseAsked = true;
    client.send("pause");
    setButtons();
  }
}

function cancel() {
  const inFlight = S.pending === "run" || S.pending === "paced" || S.pending === "token";
  if (!inFlight && !S.paced) return;
  stopPaced();
  S.cancelAsked = true;
  dropDrawing();
  client.send("cancel");
  if (!S.flying) S.log.push("cancel"); // between paced tokens: the cancel is a command of its own
  // show it at once; the server's stop event confirms it (or says the run
  // ended on its own first)
  setRunState("stopped");
  const st = $("stop-text");
  st.textContent = "Stopped: you stopped the run.";
  st.dataset.reason = "cancelled";
  setStatus("Stopped: you stopped the run. Rewind to continue from an earlier token, or Reset.");
  setButtons();
}

// ---------- buttons and focus ----------
export function setButtons() {
  const live = S.runState !== "idle" && !!S.run.model, busy = !!S.pending || S.paced !== null;
  const stopped = S.runState === "stopped", off = !live || busy || stopped || S.cancelAsked;
  // written only when they change: this runs for every event of a run
  const set = (id, v) => { const b = $(id); if (b.disabled !== v) b.disabled = v; };
  set("btn-step", off);
  set("btn-token", off);
  set("btn-run", off);
  set("btn-rewind", !live || busy || S.run.gen.length === 0 || S.cancelAsked);
  set("btn-reset", !live || busy || S.cancelAsked);
  set("btn-cancel", !(S.pending === "run" || S.pending === "paced" || S.pending === "token" || S.paced) || S.cancelAsked);
  const canResume = S.pausedRun && S.runState === "ready" && !S.pending && !S.following;
  set("btn-pause", !(canResume || (S.pending === "run" || S.paced) && !S.pauseAsked && !S.cancelAsked));
  const pl = canResume ? "Resume" : "Pause";
  if ($("btn-pause").textContent !== pl) $("btn-pause").textContent = pl;
  set("force-q", !live);
  set("btn-start", S.following); // enabled again after "Try it myself"
  if (S.following) for (const id of ["btn-step", "btn-token", "btn-run", "btn-rewind", "btn-reset", "btn-cancel", "btn-start", "force-q"]) set(id, true);
  keepFocus();
  if (S.samplingWaits && !S.pending && !S.paced && S.runState === "ready") { S.samplingWaits = false; queueMicrotask(applySampling); }
  updateBusy();
}
// keepFocus: a step button that was focused and is now disabled (Stop
// after the run stopped, Next stage at the end) hands the focus to the next
// useful one instead of dropping it to the page
function keepFocus() {
  if (!S.stepFocus || !S.stepFocus.disabled || S.following) return;
  const a = document.activeElement;
  if (a && a !== document.body && a !== S.stepFocus) return;
  const next = ["btn-step", "btn-token", "btn-rewind", "btn-reset"].map($).find((b) => !b.disabled) || $("btn-start");
  if (next && !next.disabled) next.focus({ preventScroll: true });
}

// ---------- force: any vocabulary token ----------
export function force(id) {
  if (S.runState === "idle" || S.run.stop || (S.run.next !== "sample" && S.run.next !== "logits")) {
    setStatus(S.run.stop ? "The run has stopped: rewind one token, then force a different one." : "A token can be forced when the next stage is logits or sample.", true);
    return;
  }
  send("force", { id });
}
function searchVocab() {
  clearTimeout(S.searchTimer);
  S.searchTimer = setTimeout(() => {
    const q = $("force-q").value, mine = ++S.searchSeq, out = $("force-results");
    if (q === "") { C.clear(out); return; }
    fetch("/api/vocab?model=" + encodeURIComponent(S.run.model ? S.run.model.name : $("model").value) + "&q=" + encodeURIComponent(q.replace(/\u2423/g, " ")))
      .then((r) => r.json()).then((d) => {
        if (mine !== S.searchSeq) return;
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
function refreshModels() {
  return fetch("/api/models").then((r) => r.json()).then((d) => {
    S.models = d.models || [];
    const sel = $("model"), cur = sel.value;
    C.clear(sel);
    for (const m of S.models) sel.appendChild(C.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") }));
    sel.value = cur;
    showModelCard();
  });
}
function pollPull() {
  fetch("/api/pull").then((r) => r.ok ? r.json() : null).then((d) => {
    if (!d) { $("pull").hidden = true; return; }
    const st = d.status, list = C.clear($("presets"));
    for (const p of d.presets) {
      const loaded = S.models.some((m) => m.name === p.repo), cached = (st.cached || []).includes(p.repo);
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
function schedulePull() { clearTimeout(S.pullTimer); S.pullTimer = setTimeout(pollPull, 500); }

// ---------- wiring ----------
// wireControls connects the form, the buttons and the keys (once, from lab.js).
export function wireControls() {
  $("pull").addEventListener("toggle", () => { if ($("pull").open) pollPull(); });
  $("controls").addEventListener("submit", (e) => { e.preventDefault(); start(); });
  $("btn-step").addEventListener("click", () => send("step"));
  $("btn-token").addEventListener("click", () => send("step_token"));
  $("btn-run").addEventListener("click", () => { if (!S.pending && S.runState === "ready") runToEnd(); });
  $("btn-rewind").addEventListener("click", () => send("rewind", { n: 1 }));
  $("btn-reset").addEventListener("click", () => send("reset"));
  $("btn-cancel").addEventListener("click", cancel);
  $("btn-pause").addEventListener("click", pauseOrResume);
  for (const id of SAMPLING_IDS) $(id).addEventListener("change", applySampling);
  for (const id of ["prompt", "model", "chat-mode", "system", "stops", "max-new"]) $(id).addEventListener("input", () => { if (S.startP && !S.following) formChanged(true); });
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
  // the system's dark mode switched on the loaded page: the panels that
  // bake the scheme's colours into canvases and charts (heat maps, strips)
  // are drawn again in the new ones
  if (window.matchMedia) window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => mark("logits", "sample", "timing", "kv", "attn", "embed", "prefill", "tokens"));
  document.addEventListener("keydown", (e) => {
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key !== "Escape") S.resetArmed = 0;
    if (e.key === "Escape" && !$("btn-cancel").disabled) { cancel(); return; }
    if (e.key === "p" && !$("btn-pause").disabled) { pauseOrResume(); return; }
    if ($("btn-step").disabled && e.key !== "Escape" && e.key !== "Backspace") return;
    if (e.key === "ArrowRight" || e.key === " ") { e.preventDefault(); send("step"); }
    else if (e.key === "t") send("step_token");
    else if (e.key === "r") runToEnd();
    else if (e.key === "Backspace") { e.preventDefault(); if (!$("btn-rewind").disabled) send("rewind", { n: 1 }); }
    else if (e.key === "Escape" && !$("btn-reset").disabled) escapeReset();
  });
  // the skip link lands just before the step buttons (a target that is not
  // a button, so the Enter that followed it presses nothing): Tab is then on
  // Next stage
  $("skip-steps").addEventListener("click", (e) => {
    e.preventDefault();
    $("steps").focus();
  });
  $("runbar").addEventListener("focusin", (e) => { if (e.target.tagName === "BUTTON") S.stepFocus = e.target; });
}
// escapeReset: Escape resets a run with nothing generated at once; a run
// with tokens only on a second Escape within 5 s (a run just finished is
// one key away from lost)
function escapeReset() {
  const n = S.run.gen.length;
  if (n === 0 || Date.now() - S.resetArmed < 5000) { S.resetArmed = 0; send("reset"); return; }
  S.resetArmed = Date.now();
  setStatus("Press Escape again to reset this run and lose its " + n + (n === 1 ? " token" : " tokens") + "; any other key keeps it.");
}

// formFromStart shows a start payload in the form (a class's run, a branch).
export function formFromStart(p) {
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
