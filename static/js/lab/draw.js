// lab/draw.js: drawing. Each panel of the lab drawn from the state (S):
// the tokens, embeddings, layers and attention, logits, sampling, the
// generated text, the KV cache and memory, timing, the stop and the stage
// strip, and the model view; also the status line. A panel is drawn only
// when frame.js calls it (at most once per animation frame); nothing here
// changes the run or talks to the server, except the model view's inspect
// requests.
import * as C from "../core.js";
import * as P from "../panels.js";
import { boxWidth } from "../charts.js";
import { ModelView } from "../modelview.js";
import { S } from "./state.js";
import { mark } from "./frame.js";
import { client } from "./session.js";

const $ = C.$;

// actions the panels offer, which controls.js carries out (lab.js sets them)
export const actions = { force: () => {} };

// ---------- the model view: the Transformer drawn from the card, lit by events ----------
// an inspect is answered by the reply carrying its id; one asked while the
// connection is down, or lost with it, is simply not drawn
export const mv = new ModelView($("modelview"), { label: posLabel, schedule: () => mark("model"), onInspect: (req) => {
  client.request("inspect", req).then((m) => mv.inspection(m.payload), (err) => { if (err.code !== "closed" && err.code !== "not_connected") mv.inspectError(err.message); });
}, onWeightBlock: (req) => {
  client.request("weight_block", req).then((m) => mv.weightBlock(m.payload), (err) => { if (err.code !== "closed" && err.code !== "not_connected") mv.weightBlockError(err.message); });
} });

// ---------- the status line ----------
export function setStatus(text, isError) {
  if (S.following && !isError) text = "Following the presenter's run: it moves when they step.";
  const s = $("status");
  s.textContent = text;
  s.className = "status" + (isError ? " error" : "");
}

const narrow = window.matchMedia("(max-width: 900px)");
const NEXT_WORDS = { tokenize: "tokenize the prompt", embed: "look up the embeddings", prefill: "run prefill", logits: "compute the logits",
  sample: "choose a token", append: "append it and grow the KV cache", stop: "finish" };

// ---------- panels ----------
// draw: panel name → the function drawing it (frame.js calls them)
export const draw = {
  reset() {
    for (const id of ["source-text", "chips", "embed-view", "positions", "layers", "logit-stats", "cands", "budget", "ttft", "attn", "chart-probs", "chart-hist", "chart-cdf", "chart-itl", "force-results"]) C.clear($(id));
    for (const id of ["sample-text", "kv-text", "rates", "stop-text", "ctx-text", "wi-out", "cut-text", "cut-chain", "probs-note", "attn-text"]) $(id).textContent = "";
    delete $("stop-text").dataset.reason;
    $("gen").replaceChildren();
    $("gen").dataset.count = "0";
    S.genDrawn = 0;
    const g = $("kv-grid").getContext("2d");
    g.clearRect(0, 0, $("kv-grid").width, $("kv-grid").height);
    $("kv-grid")._labels = null;
    $("checksum").textContent = S.run.model ? "before: " + S.run.model.checksum + " (after: shown when the run stops)" : "";
    $("pass-explain").textContent = "Prefill runs every prompt position through all layers in one pass; decode runs one new position per step.";
    setContext(0, 1);
    if (!$("piece-legend").firstChild) $("piece-legend").appendChild(P.pieceLegend());
  },
  tokens() {
    const t = S.run.tok;
    if (!t) return;
    P.sourceText($("source-text"), t);
    P.tokenChips($("chips"), t, { button: true, onHover: highlightTok, onPick: (i) => { S.run.selected = i; draw.embed(); } });
    drawContext();
  },
  embed() {
    const e = S.run.embed, view = C.clear($("embed-view"));
    if (!e) return;
    const i = Math.max(0, Math.min(S.run.selected, e.positions.length - 1)), p = e.positions[i], tok = S.run.tok.tokens[i];
    view.appendChild(C.el("p", { "data-testid": "embed-pos", text: "Position " + p.pos + ": token " + p.id + " “" + C.tokenLabel(tok) + "” · " + e.dim + " numbers per vector" }));
    view.appendChild(P.strip("token vector (row " + p.id + " of the embedding table)", p.token_vec, p.token_norm));
    if (p.pos_vec) view.appendChild(P.strip("position vector (row " + p.pos + " of the position table)", p.pos_vec, p.pos_norm));
    else view.appendChild(C.el("p", { class: "muted small", text: "Position: " + e.method }));
    view.appendChild(P.strip("sum: what enters layer 0", p.sum, p.sum_norm));
    view.appendChild(C.el("p", { class: "muted small", text: "Blue is negative, red positive, white zero." }));
  },
  prefill() {
    const layers = S.run.layers;
    if (!layers) return;
    const a = S.run.stepTrace;
    if (a && S.run.attnView === "step") {
      $("pass-explain").textContent = "Decode step " + (a.step + 1) + ": only the new position " + a.pos + " went through the " + a.layer_traces.length +
        " layers (" + C.ms(a.duration_ms) + " ms); earlier positions were read from the KV cache.";
    } else if (S.run.prefill) {
      const p = S.run.prefill;
      $("pass-explain").textContent = "Prefill: all " + p.positions + " prompt positions went through " + p.layers.length + " layers in one batched pass (" +
        C.ms(p.duration_ms) + " ms, " + C.fmt(p.tokens_per_s, 0) + " tokens/s).";
    }
    // one chip per position, reused from the last draw: a token step adds
    // one and moves the "pass" mark
    const total = a ? a.pos + 1 : S.run.prefill.positions, box = $("positions");
    while (box.childElementCount > total) box.lastChild.remove();
    for (let i = 0; i < total; i++) {
      const cls = "pos" + (S.run.passPos.includes(i) ? " pass" : "") + (i >= S.run.tok.count ? " gen" : ""), title = "position " + i + ": " + posLabel(i);
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
    lb.dataset.kind = a && S.run.attnView === "step" ? "decode" : "prefill";
    fillLayerSelect(layers.length);
  },
  attn() {
    const view = attnView();
    const src = view === "step" && S.run.stepTrace ? S.run.stepTrace.layer_traces : S.run.prefill ? S.run.prefill.layers : null;
    if (!src) return;
    const li = Math.min(parseInt($("attn-layer").value, 10) || 0, src.length - 1), l = src[li];
    let rows, rowLabels, nk;
    if (view === "step" && S.run.stepTrace) {
      const pos = S.run.stepTrace.pos;
      nk = pos + 1;
      rowLabels = [posLabel(pos)];
      rows = l.attn.map((a) => [a]);
      $("attn-text").textContent = "Decode step " + (S.run.stepTrace.step + 1) + ", layer " + l.layer + ": the new token " + posLabel(pos) + " (position " + pos + ") is the only query; it attends to all " + nk + " positions in the cache.";
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
    const l = S.run.logits;
    if (!l) return;
    const stats = $("logit-stats");
    C.clear(stats);
    const items = [["position", l.pos], ["vocabulary", l.vocab], ["highest logit", C.fmt(l.max, 3)], ["lowest", C.fmt(l.min, 3)], ["mean", C.fmt(l.mean, 3)],
      ["entropy at T=1", C.fmt(l.entropy, 3) + " nats"], ["entropy after temperature", C.fmt(l.entropy_t, 3) + " nats"], ["kept", l.kept + " of " + l.vocab]];
    for (const s of items) stats.appendChild(C.el("span", { class: "stat", "data-stat": s[0] }, [C.el("b", { text: s[0] + " " }), String(s[1])]));
    if (S.run.sample) stats.appendChild(C.el("span", { class: "stat", "data-stat": "chosen", "data-testid": "chosen-rank", "data-rank": S.run.sample.chosen.rank + 1 },
      [C.el("b", { text: "chosen " }), "“" + C.tokenLabel(S.run.sample.chosen) + "” at rank " + (S.run.sample.chosen.rank + 1)]));
    $("cut-text").textContent = P.cutSentence(l);
    P.chainTable($("cut-chain"), l);
    const { note } = P.probChart($("chart-probs"), l);
    $("probs-note").textContent = note;
    P.logitsHistogram($("chart-hist"), l);
    P.candidatesTable($("cands"), l, { onForce: (id) => actions.force(id), chosenId: S.run.sample ? S.run.sample.chosen.id : -1 });
  },
  sample() {
    const s = S.run.sample;
    if (!s) { C.clear($("chart-cdf")); $("sample-text").textContent = ""; return; }
    P.cdfChart($("chart-cdf"), s);
    $("sample-text").textContent = P.sampleSentence(s);
    $("sample-text").dataset.chosen = s.chosen.id;
  },
  gen() { drawGen(); drawContext(); },
  kv() { drawKV(); if (S.run.memory) drawBudget(S.run.memory); },
  timing() { drawTiming(); },
  stop() {
    const s = S.run.stop, st = $("stop-text");
    if (!s) { st.textContent = ""; delete st.dataset.reason; $("checksum").textContent = S.run.model ? "before: " + S.run.model.checksum + " (after: shown when the run stops)" : ""; return; }
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
    const done = S.run.last, next = S.runState === "stopped" ? null : S.run.next;
    for (const li of document.querySelectorAll("#timeline li")) {
      const s = li.dataset.stage;
      li.classList.toggle("done", s === done);
      li.classList.toggle("next", s === next && !!S.run.model);
      if (s === done) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
    }
    // on a phone the strip scrolls inside itself: keep the current stage in
    // it (only between commands: measuring forces a layout)
    const strip = $("timeline"), cur = strip.querySelector(".done");
    if (cur && !S.pending && narrow.matches) strip.scrollLeft = cur.offsetLeft - strip.clientWidth / 3;
    if (S.run.model && S.runState !== "stopped" && !S.pending && S.run.last) setStatus("Done: " + S.run.last + ". Next: " + (NEXT_WORDS[S.run.next] || S.run.next) + ".");
  },
  model() { mv.redraw(); },
};

export function posLabel(i) {
  if (!S.run.tok) return String(i);
  if (i < S.run.tok.count) {
    const t = S.run.tok.tokens[i];
    const b = C.isPartial(t) && t.end > t.start ? Array.from(new TextEncoder().encode(S.run.tok.text).slice(t.start, t.end)) : null;
    return C.tokenLabel(t, b);
  }
  const g = S.run.gen[i - S.run.tok.count];
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
export function setAttnView(v) {
  S.run.attnView = v;
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
  const t = S.run.tok;
  if (!t) return;
  const used = t.count + S.run.gen.length;
  setContext(used, t.context_limit);
  $("ctx-text").textContent = t.count + " prompt tokens" + (t.added_by_app ? " (" + t.added_by_app + " added by the application" + (t.chat ? ", " + t.chat_style + " chat template" : "") + ")" : "") +
    (S.run.gen.length ? " + " + S.run.gen.length + " generated" : "") + " · context used " + used + " of " + t.context_limit;
}

// ---------- generated text: new tokens are appended, never redrawn ----------
function drawGen() {
  const box = $("gen");
  if (S.genDrawn > S.run.gen.length || (S.genDrawn === 0 && box.firstChild)) { box.replaceChildren(); S.genDrawn = 0; }
  if (S.genDrawn === 0 && S.run.tok) box.appendChild(C.el("span", { class: "gen-prompt", text: S.run.tok.text }));
  const frag = document.createDocumentFragment();
  for (let i = S.genDrawn; i < S.run.gen.length; i++) {
    const g = S.run.gen[i], partial = g.text === "" && C.pieceBytes(g.piece);
    const span = C.el("span", { class: "gen-tok" + (partial ? " gen-byte" : "") + (g.forced ? " forced" : ""), "data-step": i, "data-id": g.id, "data-testid": "gen-tok", tabindex: "0",
      text: partial ? C.tokenLabel({ piece: g.piece, text: "" }) : g.text });
    span.style.setProperty("--p", (0.1 + 0.55 * g.pkept).toFixed(3));
    frag.appendChild(span);
  }
  box.appendChild(frag);
  S.genDrawn = S.run.gen.length;
  box.dataset.count = String(S.run.gen.length);
}
export function showAlts(target) {
  const g = S.run.gen[+target.dataset.step];
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
export function hideTip() { $("tooltip").hidden = true; }

// ---------- KV cache ----------
function drawKV() {
  const m = S.run.model, c = $("kv-grid");
  if (!m || !S.run.tok) return;
  const L = m.layers, cap = S.run.cacheCap || Math.min(m.context, S.run.tok.count + (parseInt($("max-new").value, 10) || 0));
  S.run.cacheCap = cap;
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
  // a local (sliding-window) layer holds only its last window positions:
  // the ones before are drawn empty, as its ring no longer holds them
  const sh = m.shape || {}, win = sh.window || 0, len = S.run.cacheLen, nTok = S.run.tok.count;
  let held = 0, alloc = 0, nLocal = 0;
  for (let l = 0; l < L; l++) {
    const local = !!(win && sh.local && sh.local[l]), from = local ? Math.max(0, len - win) : 0;
    held += local ? Math.min(len, win) : len;
    alloc += local ? Math.min(cap, win) : cap;
    nLocal += local ? 1 : 0;
    g.fillStyle = col.free;
    g.fillRect(labelW, 2 + l * ch, cw * cap, ch - 1);
    if (Math.min(len, nTok) > from) { g.fillStyle = col.prompt; g.fillRect(labelW + cw * from, 2 + l * ch, cw * (Math.min(len, nTok) - from), ch - 1); }
    if (len > Math.max(nTok, from)) { const a = Math.max(nTok, from); g.fillStyle = col.gen; g.fillRect(labelW + cw * a, 2 + l * ch, cw * (len - a), ch - 1); }
    if (len > 0) { g.fillStyle = col.newest; g.fillRect(labelW + cw * (len - 1), 2 + l * ch, Math.max(1, cw), ch - 1); }
  }
  c.dataset.cacheLen = len;
  c.dataset.window = win;
  c.dataset.held = held;
  const nb = kvNumberBytes(S.run.memory), bpt = m.kv_bytes_per_token * nb / 4, perRow = bpt / L;
  $("kv-text").textContent = "Cache: " + len + " of " + cap + " positions filled. Per position: 2 (K and V) × " + m.layers + " layers × " + m.kv_heads +
    " key/value heads × " + m.head_dim + " numbers × " + nb + " bytes = " + C.bytes(bpt) + "; used " + C.bytes(perRow * held) + " of " + C.bytes(perRow * alloc) + " allocated." +
    (nLocal ? " " + nLocal + " of " + L + " layers are local (sliding window of " + win + "): each keeps only its last " + win + " positions, the oldest overwritten, so their part stops growing" +
      (len > win ? "; positions 0–" + (len - win - 1) + " are gone from them (drawn empty)." : ".") : "");
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
  box.appendChild(kvPrecisionNote(mem));
  box.appendChild(C.el("p", { class: "small muted", "data-testid": "scratch-note" }, "Scratch buffers hold one pass's activations. Their size depends on this run's settings: the prompt's length (prefill passes every prompt position at once), the engine's threads, and whether every position's attention is kept, so two runs of the same model can differ."));
  if (S.run.model && S.run.model.weight_types) box.appendChild(bytesPerParam(S.run.model));
  whatIf();
}
// bytesPerParam: the weights' bytes per parameter, overall and by storage
// type, from the loaded tensors (the model card's weight_types).
function bytesPerParam(m) {
  const types = m.weight_types, all = m.weights_bytes / m.params;
  const t = C.el("table", { class: "mv-lens-table", "data-testid": "bytes-per-param" });
  t.append(C.el("caption", { class: "small muted", text: "Bytes per parameter by storage type" }));
  t.append(C.el("tr", {}, ["stored as", "tensors", "parameters", "bytes", "bytes per parameter"].map((h) => C.el("th", { scope: "col", text: h }))));
  for (const x of types) {
    t.append(C.el("tr", { "data-type": x.type, "data-bpp": String(x.bytes_per_param), "data-params": String(x.params), "data-bytes": String(x.bytes) }, [
      C.el("th", { scope: "row", text: x.type.toUpperCase() }), C.el("td", { text: String(x.tensors) }), C.el("td", { text: x.params.toLocaleString("en-US") }),
      C.el("td", { text: C.bytes(x.bytes) }), C.el("td", { text: String(+x.bytes_per_param.toFixed(4)) })]));
  }
  // the summary outside the scrolling table, so a phone wraps it to the screen
  return C.el("div", {}, [
    C.el("p", { class: "small", text: "Weights: " + C.bytes(m.weights_bytes) + " for " + m.params.toLocaleString("en-US") + " parameters, " + C.fmt(all, 4) + " bytes per parameter overall." }),
    C.el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Bytes per parameter", "data-testid": "bytes-per-param-wrap", "data-overall": String(all) }, [t])]);
}
// the KV cache's precision (serve --kv-cache, a start's kv_cache): bytes per
// stored number, and what 16 bits save against float32
function kvNumberBytes(mem) { return mem && (mem.kv_type === "f16" || mem.kv_type === "bf16") ? 2 : 4; }
function kvPrecisionNote(mem) {
  const t = mem.kv_type || "f32", name = { f32: "F32", f16: "F16", bf16: "BF16" }[t] || t;
  const p = C.el("p", { class: "small", "data-testid": "kv-precision", "data-kv-type": t });
  if (t === "f32") {
    p.textContent = "KV cache stored as F32 (4 bytes a number): " + C.bytes(mem.kv_used) + " used. In F16 or BF16 (2 bytes, as llama.cpp keeps it) it would take " +
      C.bytes(mem.kv_used / 2) + ", saving " + C.bytes(mem.kv_used / 2) + ".";
  } else {
    p.textContent = "KV cache stored as " + name + " (2 bytes a number): " + C.bytes(mem.kv_used) + " used, where F32 would take " + C.bytes(mem.kv_used_f32) +
      ": it saves " + C.bytes(mem.kv_used_f32 - mem.kv_used) + " (" + C.pct(1 - mem.kv_used / Math.max(1, mem.kv_used_f32)) + "), and attention reads half the bytes. Each key and value is rounded to " +
      name + " once, when it is stored.";
  }
  return p;
}
export function whatIf() {
  const m = S.run.model, mem = S.run.memory;
  if (!m) return;
  const n = Math.max(1, parseInt($("wi-n").value, 10) || 1), ctxLen = Math.max(1, parseInt($("wi-ctx").value, 10) || 1);
  const bpt = m.kv_bytes_per_token * kvNumberBytes(mem) / 4, kv = n * ctxLen * bpt, scratch = mem ? n * mem.scratch : 0, total = m.weights_bytes + kv + scratch;
  const over = ctxLen > m.context ? " Note: " + ctxLen + " tokens is beyond this model's context of " + m.context + "." : "";
  $("wi-out").textContent = n + " requests × " + ctxLen + " tokens × " + C.bytes(bpt) + " per token = " + C.bytes(kv) +
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
  const t = S.run.timings, box = $("ttft");
  const tt = t ? { queue: Math.max(0, t.ttft_ms - t.tokenize_ms - t.embed_ms - t.prefill_ms - t.first_decode_ms), tokenize: t.tokenize_ms, embed: t.embed_ms, prefill: t.prefill_ms, first: t.first_decode_ms, total: t.ttft_ms } : S.run.ttft;
  const itl = t ? t.itl_ms || [] : S.run.itl;
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
