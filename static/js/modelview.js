// modelview.js: the model view — the loaded Transformer drawn as one SVG
// from its model card (not a fixed image): token ids → embedding table
// (+ learned positions or RoPE) → N blocks (norm → attention with its query
// and key/value heads and the KV cache beside it → add → norm → MLP → add)
// → final norm → unembedding → logits → sampler → chosen token, appended to
// the sequence and every layer's cache. Engine events light the stage and
// layer that ran and put their real values on the picture; clicking a part
// asks for its tensor (inspect) or shows the one the event carried; the
// logit lens is a table beside it. Clicking a head drills into its
// attention at the current position with the engine's numbers: the query,
// every key (cached or new), q·k, the 1/√d scaling, the causal mask, the
// softmax weights and the weighted sum of the values. A colour scale
// explains the heads' cells in either color scheme. A native ES module used
// by the lab and by lessons: new ModelView(box, {onInspect, label}); with
// onWeightBlock, a quantized model's weight blocks can be picked and shown
// (weightblock.js).
import { el, clear, fmt, count, pct, tokenLabel, seq, isDark } from "./core.js";
import { esc, hbars, boxWidth } from "./charts.js";
import { strip } from "./panels.js";
import { WeightBlockView } from "./weightblock.js";

const NS = "http://www.w3.org/2000/svg";
const STAGE_PARTS = { tokenize: ["tokens"], embed: ["embed"], prefill: ["tokens"], logits: ["final", "unembed", "logits"],
  sample: ["sampler", "chosen"], append: ["chosen", "append", "tokens", "kv"], stop: ["stop"] };
const MAX_FULL_BLOCKS = 6; // more blocks than this: first 2, "…", the last

// normLines labels a norm box: its kind, and with Gemma's four norms per
// block whether it comes before (pre) or after (post) its sub-block.
function normLines(sh, where, narrow) {
  const plus = sh.norm === "RMSNorm (1+w)";
  if (sh.post_norms) return [where, plus ? (narrow ? "1+w" : "RMS 1+w") : narrow ? "norm" : sh.norm];
  if (plus) return ["RMS", narrow ? "1+w" : "Norm 1+w"];
  return [sh.norm === "LayerNorm" ? "Layer" : "RMS", "Norm"];
}

// ropeDetail says which RoPE: the base, the scaling, Gemma 3's local base,
// a partial rotary width.
function ropeDetail(sh) {
  const parts = [];
  if (sh.rope_theta) parts.push("θ " + sh.rope_theta);
  if (sh.rope_scaling) parts.push("scaling " + sh.rope_scaling);
  if (sh.rope_local_theta) parts.push("local layers θ " + sh.rope_local_theta);
  if (sh.rotary_dims) parts.push("first " + sh.rotary_dims + " dims of each head");
  return parts.length ? " (" + parts.join(", ") + ")" : "";
}

// attnDetail adds the attention's family parts to its label: biases, a
// fused qkv_proj, soft-capping (the sliding window is in the block's
// header and its KV cache box).
function attnDetail(sh, narrow) {
  const parts = [];
  if (sh.bias) parts.push((narrow ? "+b " : "bias on ") + sh.bias.split(",").join(narrow ? "" : ", "));
  if (sh.fused && !narrow) parts.push("fused qkv_proj");
  if (sh.attn_softcap && !narrow) parts.push("soft-cap " + sh.attn_softcap);
  return parts.length ? " · " + parts.join(" · ") : "";
}

// kindCount says how many of the summarised blocks are local and global.
function kindCount(sh, layers) {
  if (!sh || !sh.local) return "";
  const n = layers.filter((l) => sh.local[l]).length;
  return ": " + n + " local, " + (layers.length - n) + " global";
}

function reducedMotion() { return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches); }

// drawnBlocks says which blocks the picture draws and which it summarises.
export function drawnBlocks(n) {
  if (n <= MAX_FULL_BLOCKS) return { shown: [...Array(n).keys()], hidden: [] };
  const hidden = [];
  for (let l = 2; l < n - 1; l++) hidden.push(l);
  return { shown: [0, 1, n - 1], hidden };
}

function fresh() {
  return { stage: null, pass: null, passLen: 0, pos: -1, layers: null, lens: null, top: null, chosen: null, rule: "", cacheLen: 0, lit: [], cursor: -1 };
}

// patch makes the node a the same as b (a parsed copy of what a should
// become), writing only the attributes and texts that differ; a node of
// another kind is replaced by b.
function patch(a, b) {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) { a.replaceWith(b); return; }
  if (a.nodeType !== 1) { if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue; return; }
  for (const at of b.attributes) if (a.getAttribute(at.name) !== at.value) a.setAttribute(at.name, at.value);
  if (a.attributes.length !== b.attributes.length) for (const at of [...a.attributes]) if (!b.hasAttribute(at.name)) a.removeAttribute(at.name);
  const ac = a.childNodes, bc = [...b.childNodes], n = Math.min(ac.length, bc.length);
  for (let i = 0; i < n; i++) patch(ac[i], bc[i]);
  while (ac.length > bc.length) a.lastChild.remove();
  for (let i = n; i < bc.length; i++) a.appendChild(bc[i]);
}

// vecFigure is a vector as a small chart (one signed bar per number) with
// its numbers beneath.
function vecFigure(title, v, testid) {
  const f = el("figure", { class: "mv-vec", "data-testid": testid });
  f.append(el("figcaption", { class: "small", text: title }));
  const m = Math.max(1e-12, ...v.map(Math.abs)), W = 320, H = 56, bw = W / v.length;
  let s = `<line x1="0" x2="${W}" y1="${H / 2}" y2="${H / 2}" class="ch-axis"/>`;
  v.forEach((x, i) => {
    const h = Math.abs(x) / m * (H / 2 - 2);
    s += `<rect x="${(i * bw + bw * 0.1).toFixed(1)}" y="${(x >= 0 ? H / 2 - h : H / 2).toFixed(1)}" width="${Math.max(0.5, bw * 0.8).toFixed(1)}" height="${Math.max(0.5, h).toFixed(1)}" class="${x >= 0 ? "mv-pos" : "mv-neg"}"><title>${esc("number " + i + ": " + fmt(x, 5))}</title></rect>`;
  });
  f.insertAdjacentHTML("beforeend", `<svg xmlns="${NS}" class="mv-vec-svg" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${esc(title + ": bars above the line positive, below negative; largest |value| " + fmt(m, 4))}">${s}</svg>`);
  f.append(el("p", { class: "mono small mv-nums", text: v.map((x) => fmt(x, 3)).join("  ") }));
  return f;
}

// vecCell is a table cell with a vector's numbers and a sparkline of them;
// empty when the server sent no vector (past its limit).
function vecCell(v, what) {
  const td = el("td", { class: "mv-veccell" });
  if (!v) { td.textContent = "(not sent)"; return td; }
  const m = Math.max(1e-12, ...v.map(Math.abs)), W = 64, H = 16, bw = W / v.length;
  let s = "";
  v.forEach((x, i) => { const h = Math.abs(x) / m * (H / 2); s += `<rect x="${(i * bw).toFixed(1)}" y="${(x >= 0 ? H / 2 - h : H / 2).toFixed(1)}" width="${Math.max(0.4, bw * 0.85).toFixed(1)}" height="${Math.max(0.4, h).toFixed(1)}" class="${x >= 0 ? "mv-pos" : "mv-neg"}"/>`; });
  td.insertAdjacentHTML("beforeend", `<svg xmlns="${NS}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" aria-hidden="true">${s}</svg>`);
  const nums = el("span", { class: "mono mv-nums", title: what, text: v.map((x) => fmt(x, 2)).join(" ") });
  // short vectors inline; long ones behind a disclosure, so the row stays one line
  td.append(v.length <= 8 ? nums : el("details", {}, [el("summary", { text: v.length + " numbers" }), nums]));
  return td;
}

// signedBars draws one labelled row per item with a bar from zero (left
// negative, right positive) and its value: scores that may be negative.
function signedBars(box, rows, aria) {
  const W = Math.max(260, boxWidth(box, 360)), rowH = 18, top = 6, labelW = Math.min(130, Math.max(70, W * 0.34)), valW = 58;
  const plotW = Math.max(60, W - labelW - valW - 8), lo = Math.min(0, ...rows.map((r) => r.value)), hi = Math.max(0, ...rows.map((r) => r.value));
  const span = hi - lo || 1, x = (v) => labelW + (v - lo) / span * plotW, z = x(0), H = top + rows.length * rowH + 22;
  let s = "";
  rows.forEach((r, i) => {
    const y0 = top + i * rowH, xv = x(r.value);
    s += `<g class="ch-row" data-rank="${i + 1}"><title>${esc(r.title)}</title><text x="${labelW - 6}" y="${y0 + rowH / 2 + 4}" text-anchor="end" class="ch-label">${esc(r.label)}</text>` +
      `<rect x="${Math.min(z, xv).toFixed(1)}" y="${y0 + 3}" width="${Math.max(0.5, Math.abs(xv - z)).toFixed(1)}" height="${rowH - 6}" class="${r.value >= 0 ? "mv-pos" : "mv-neg"}"/>` +
      `<text x="${labelW + plotW + 4}" y="${y0 + rowH / 2 + 4}" class="ch-val">${esc(fmt(r.value, 3))}</text></g>`;
  });
  const bottom = top + rows.length * rowH;
  s += `<line x1="${z}" x2="${z}" y1="${top - 2}" y2="${bottom}" class="ch-axis"/>`;
  s += `<text x="${labelW}" y="${bottom + 14}" class="ch-tick">${esc(fmt(lo, 2))}</text><text x="${labelW + plotW}" y="${bottom + 14}" text-anchor="end" class="ch-tick">${esc(fmt(hi, 2))}</text>`;
  box.innerHTML = `<svg xmlns="${NS}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(aria)}">${s}</svg>`;
  box.dataset.rows = rows.length;
}

export class ModelView {
  constructor(root, opts = {}) {
    this.root = root;
    this.opts = opts;
    this.card = null;
    this.s = fresh();
    this.frame = 0;
    this.sweep = null;
    this.lastEvent = 0;
    this.selected = null; // the part whose tensor is shown
    root.classList.add("mv");
    this.pic = el("div", { class: "mv-pic", "data-testid": "mv-pic" });
    this.cellCanvases = []; // one per block's heads (drawCells)
    this.legendBox = el("div", { class: "mv-legend small", "data-testid": "mv-legend" });
    this.inspectBox = el("div", { class: "mv-inspect", "data-testid": "mv-inspect", "aria-live": "polite" });
    this.lensBox = el("div", { class: "mv-lens table-wrap", "data-testid": "mv-lens", tabindex: "0", role: "region", "aria-label": "Logit lens: the top tokens after each block" });
    root.append(this.legendBox, this.pic, this.inspectBox, this.lensBox);
    if (opts.onWeightBlock) {
      const box = el("section", { class: "mv-weights", "data-testid": "mv-weights", hidden: true });
      root.append(box);
      this.blocks = new WeightBlockView(box, { onAsk: opts.onWeightBlock });
    }
    this.pic.addEventListener("click", (e) => this.pick(e.target));
    this.pic.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.stopPropagation(); this.pick(e.target); } });
    // the width comes from the observer: reading clientWidth while drawing
    // would force a layout of the whole page after the frame's other writes
    this.width = 0;
    new ResizeObserver((entries) => {
      const w = Math.round(entries[entries.length - 1].contentRect.width);
      if (w !== this.width) { this.width = w; this.redraw(); }
    }).observe(root);
    // attention cells take their colors from the theme: redraw when it changes
    if (window.matchMedia) window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => this.schedule());
  }

  setModel(card) {
    if (this.blocks && (!this.card || !card || card.name !== this.card.name)) this.blocks.setModel(card);
    this.card = card;
    this.s = fresh();
    this.selected = null;
    clear(this.inspectBox);
    this.redraw();
  }
  reset() { this.s = fresh(); this.selected = null; clear(this.inspectBox); this.stopSweep(); this.redraw(); }

  // event folds one engine event into the picture's state.
  event(ev) {
    const s = this.s, now = performance.now(), fast = now - this.lastEvent < 250;
    this.lastEvent = now;
    s.stage = ev.stage;
    s.lit = [];
    if (ev.tokenize) { s.tokCount = ev.tokenize.count; s.pos = ev.tokenize.count - 1; s.passLen = ev.tokenize.count; s.pass = null; }
    if (ev.embed) { s.passLen = ev.embed.positions.length; }
    if (ev.prefill) {
      const p = ev.prefill;
      Object.assign(s, { pass: "prefill", passLen: p.positions, pos: p.positions - 1, layers: p.layers, cacheLen: p.positions, top: null, chosen: null });
      if (p.lens) s.lens = p.lens;
      this.outputOf({ pos: p.positions - 1, lens: p.lens });
      this.startSweep(p.layers.map((l) => l.layer), fast);
    }
    if (ev.logits) {
      s.top = ev.logits.top;
      s.topPos = ev.logits.pos;
      s.chosen = null;
      if (ev.logits.recomputed) { s.pos = ev.logits.pos; s.cacheLen = ev.logits.pos + 1; s.pass = "decode"; s.passLen = 1; if (ev.logits.lens) s.lens = ev.logits.lens; }
    }
    if (ev.sample) { s.chosen = ev.sample.chosen; s.rule = ev.sample.rule; }
    if (ev.append) {
      const a = ev.append;
      s.cacheLen = a.cache_len;
      s.appended = a;
      if (a.forwarded && a.layer_traces) {
        Object.assign(s, { pass: "decode", passLen: 1, pos: a.pos, layers: a.layer_traces });
        if (a.lens) s.lens = a.lens;
        this.outputOf(a);
        this.startSweep(a.layer_traces.map((l) => l.layer), fast);
      }
    }
    if (ev.stop) { s.stopReason = ev.stop.reason; this.stopSweep(); }
    this.headDirty = !!(this.selected && this.selected.kind === "head");
    this.schedule();
  }

  // outputOf makes the picture's output the decode pass's own position:
  // the pass of append a computed the logits at a.pos (the logits stage
  // that follows shows them), and the last block's lens row is exactly
  // those logits, so the logits box reads it: one position at a time,
  // never the pass's lens beside the previous position's logits.
  outputOf(a) {
    const s = this.s, last = a.lens && a.lens.layers[a.lens.layers.length - 1];
    s.topPos = a.pos;
    s.top = last && a.lens.pos === a.pos ? last.top : null;
  }

  // detail folds in the full version of an event that arrived thin (a
  // streamed run's heavy fields, sent before its stop): the layers, the
  // lens and the candidates, without moving the stage.
  detail(ev) {
    const s = this.s;
    if (ev.logits && ev.logits.pos === s.topPos) s.top = ev.logits.top;
    const a = ev.append;
    if (a && a.forwarded && a.layer_traces) {
      Object.assign(s, { pass: "decode", passLen: 1, pos: a.pos, layers: a.layer_traces });
      if (a.lens) s.lens = a.lens;
      this.outputOf(a);
      s.lit = a.layer_traces.map((l) => l.layer);
      s.cursor = s.lit[s.lit.length - 1];
    }
    this.headDirty = !!(this.selected && this.selected.kind === "head");
    this.schedule();
  }

  // inspection shows the engine's answer to an inspect request.
  inspection(p) {
    if (p.what === "attention") { this.showAttention(p); return; }
    const box = clear(this.inspectBox), lab = this.opts.label || String;
    box.dataset.what = p.what;
    box.dataset.layer = p.layer;
    delete box.dataset.detail;
    if (p.what === "residual") {
      box.append(el("h3", { class: "h3", text: "Residual stream at block " + p.layer + ", position " + p.pos + " (“" + lab(p.pos) + "”)" }),
        el("p", { class: "small muted", text: "What enters the block (" + (p.layer === 0 ? "the embedding" : "block " + (p.layer - 1) + "'s output") +
          ") and what leaves it after attention and the MLP added their outputs. " + p.in.length + " numbers each; blue negative, red positive." }),
        strip("entering block " + p.layer, p.in, p.in_norm), strip("leaving block " + p.layer, p.out, p.out_norm));
    } else if (p.what === "mlp") {
      box.append(el("h3", { class: "h3", text: "MLP activations of block " + p.layer + " at position " + p.pos + " (“" + lab(p.pos) + "”)" }),
        el("p", { class: "small muted", text: "The " + p.neurons.length + " of " + p.hidden + " hidden neurons with the largest magnitude (after " +
          (this.card && this.card.shape.mlp === "GELU" ? "GELU" : "SiLU(gate) × up") + "); length of all " + p.hidden + ": " + fmt(p.norm, 3) + "." }));
      const chart = el("div", { class: "chart", "data-testid": "mv-neurons" });
      box.append(chart);
      hbars(chart, { rows: p.neurons.map((n, i) => ({ label: "neuron " + n.index, rank: i + 1, values: [Math.abs(n.value)], title: "neuron " + n.index + ": " + fmt(n.value, 4) })),
        series: [{ name: "|activation|", cls: "s-accent" }], xTitle: "|activation| (sign in the label)", fmt: (v, r) => fmt(p.neurons[r.rank - 1].value, 3),
        tickFmt: (t) => fmt(t, 2), aria: "Largest MLP activations of block " + p.layer });
    } else if (p.what === "kv") {
      box.append(el("h3", { class: "h3", text: "KV cache of block " + p.layer + ", position " + p.pos + " (“" + lab(p.pos) + "”)" }),
        el("p", { class: "small muted", text: "The key and value this position left in the cache, per key/value head (" + p.keys.length + " × " + (p.keys[0] || []).length +
          " numbers each). Every later position's queries read them instead of recomputing." +
          (p.kv_type ? " The cache stores them in " + p.kv_type.toUpperCase() + ": these are the " + p.kv_type.toUpperCase() + "-rounded values attention reads." : "") }));
      p.keys.forEach((k, h) => box.append(strip("key, KV head " + h, k), strip("value, KV head " + h, p.values[h])));
      const n = this.s.cacheLen;
      const f = el("label", { class: "small" }, ["Position ", el("input", { type: "number", min: "0", max: String(n - 1), value: String(p.pos), "data-testid": "mv-kv-pos", class: "mv-num" })]);
      f.querySelector("input").addEventListener("change", (e) => this.ask({ what: "kv", layer: p.layer, pos: Math.max(0, Math.min(n - 1, +e.target.value | 0)) }));
      box.append(f);
    }
  }
  // weightBlock shows the engine's answer to a weight_block request.
  weightBlock(p) { if (this.blocks) this.blocks.show(p); }
  weightBlockError(msg) { if (this.blocks) this.blocks.error(msg); }
  inspectError(msg) { clear(this.inspectBox).append(el("p", { class: "error small", text: msg })); }

  ask(req) {
    this.selected = { kind: req.what, layer: req.layer };
    if (this.opts.onInspect) this.opts.onInspect(req);
  }

  pick(t) {
    const g = t.closest && t.closest("[data-inspect]");
    if (!g || !this.card) return;
    const what = g.dataset.inspect, layer = +g.dataset.layer;
    if (!this.s.layers) { this.inspectError("Step through prefill first: the parts hold numbers once the model has run."); return; }
    if (what === "head") { this.selected = { kind: "head", layer, head: +g.dataset.head }; this.showHead(layer, +g.dataset.head); this.askHead(); return; }
    this.ask({ what, layer, pos: what === "kv" ? Math.max(0, this.s.cacheLen - 1) : this.s.pos });
  }

  // askHead asks the engine for the selected head's attention in detail
  // (the quick row from the event shows meanwhile); after an event, once
  // the events pause, so a streamed run does not ask per token.
  askHead(later) {
    const sel = this.selected;
    clearTimeout(this.headTimer);
    if (!sel || sel.kind !== "head" || !this.opts.onInspect) return;
    const go = () => { if (this.selected === sel) this.opts.onInspect({ what: "attention", layer: sel.layer, head: sel.head }); };
    if (later) this.headTimer = setTimeout(go, 400); else go();
  }

  showHead(layer, head) {
    const lt = this.s.layers && this.s.layers.find((l) => l.layer === layer);
    if (!lt || !lt.attn[head]) return;
    const row = lt.attn[head], lab = this.opts.label || String, box = clear(this.inspectBox);
    box.dataset.what = "head";
    box.dataset.layer = layer;
    box.dataset.head = head;
    delete box.dataset.detail;
    const kv = this.card.heads / this.card.kv_heads;
    box.append(el("h3", { class: "h3", text: "Attention of head " + head + ", block " + layer + ", query position " + this.s.pos + " (“" + lab(this.s.pos) + "”)" }),
      el("p", { class: "small muted", text: "How much the current position's query takes from each cached position's value (the row adds up to 1). " +
        (kv > 1 ? "This head shares key/value head " + Math.floor(head / kv) + " with " + (kv - 1) + (kv - 1 === 1 ? " other query head." : " other query heads.") : "") +
        (row.length > 24 ? " The 24 largest of " + row.length + " positions." : "") }));
    const chart = el("div", { class: "chart", "data-testid": "mv-head" });
    box.append(chart);
    let rows = row.map((w, p) => ({ p, w }));
    if (rows.length > 24) rows = rows.slice().sort((a, b) => b.w - a.w).slice(0, 24).sort((a, b) => a.p - b.p);
    hbars(chart, { rows: rows.map((r) => ({ label: r.p + " " + lab(r.p), values: [r.w], title: "position " + r.p + " “" + lab(r.p) + "”: " + fmt(r.w, 4) })),
      series: [{ name: "attention weight", cls: "s-accent" }], xTitle: "attention weight", max: 1, fmt: (v) => fmt(v, 3), tickFmt: (t) => fmt(t, 1),
      aria: "Attention row of head " + head + " in block " + layer });
  }

  // showAttention shows the engine's attention inspection of one head at
  // the current position, step by step: query → q·k with every key →
  // × 1/√d → causal mask → softmax → Σ weight × value.
  showAttention(p) {
    const a = p.attention, box = clear(this.inspectBox), keys = a.keys, n = keys.length, d = a.head_dim;
    const sel = this.selected;
    if (sel && sel.kind === "head" && (sel.layer !== p.layer || sel.head !== a.head)) return; // an answer to an earlier click
    Object.assign(box.dataset, { what: "head", detail: "attention", layer: p.layer, head: a.head, pos: p.pos, keys: n });
    const label = (k) => tokenLabel(k), cur = keys[n - 1];
    const nCached = keys.filter((k) => k.cached).length, nNew = n - nCached;
    const shared = this.card && this.card.heads > this.card.kv_heads ? " It reads key/value head " + a.kv_head + ", which " + (this.card.heads / this.card.kv_heads - 1) + (this.card.heads / this.card.kv_heads > 2 ? " other query heads share." : " other query head shares.") : "";
    box.append(el("h3", { class: "h3", text: "Attention of head " + a.head + ", block " + p.layer + ", at position " + p.pos + " (“" + label(cur) + "”), the current position" }),
      el("p", { class: "small muted", text: "The engine's own numbers from the last forward pass. The query of this position is compared with the key of every position it may see; " +
        "the scores become weights, and the head's output is the weights' mix of the values." + shared }));
    // 1 query and 6 output: vectors as charts and numbers
    const vecs = el("div", { class: "mv-attn-vecs" });
    vecs.append(vecFigure("1 · query q (" + d + " numbers" + (a.rope ? ", after RoPE rotated it by position " + p.pos : "") + ")", a.query, "mv-attn-q"),
      vecFigure("6 · output: Σ weight × value (" + d + " numbers, before the output projection mixes the heads)", a.output, "mv-attn-out"));
    box.append(vecs);
    // 2-5 the steps in words and numbers
    const own = Math.abs(a.scale - 1 / Math.sqrt(d)) > 1e-6 * a.scale; // Gemma: query_pre_attn_scalar^−½
    const inv = own ? fmt(a.scale, 4) : "1/√" + d + " = " + fmt(a.scale, 4);
    box.append(el("ol", { class: "mv-attn-steps small", start: "2" }, [
      el("li", { text: "Scores: q·k, the dot product of the query with each of the " + n + " keys: " + nCached + " cached (computed at earlier steps and read from the KV cache), " + nNew + " new (computed by this pass, marked “(new)” below)." }),
      el("li", { text: "Scaling: each score × " + inv + (own ? " (this model's query_pre_attn_scalar^−½, in place of 1/√head_dim)" : " (1/√head_dim)") + ", so the scores do not grow with the head's width." +
        (a.softcap ? " Then soft-capping: each becomes " + a.softcap + "·tanh(scaled/" + a.softcap + "), which keeps it between −" + a.softcap + " and " + a.softcap + " (the softmax reads that; the chart shows the scaled score before it)." : "") }),
      el("li", { "data-testid": "mv-attn-mask", text: "Causal mask: positions after " + p.pos + " are masked (score −∞, weight 0). " + (a.masked > 0 ? "Here that is positions " + (p.pos + 1) + "–" + (a.context - 1) + ", which hold nothing yet: the query sees positions " + (a.evicted || 0) + "–" + p.pos + "." : "No position comes after this one.") +
        (a.window ? " Sliding window: in this block a query sees at most the last " + a.window + " positions, its own included" + (a.evicted ? "; positions 0–" + (a.evicted - 1) + " are masked too, and this block's KV cache no longer holds them (it keeps " + a.window + ")." : "; the sequence is not longer than that yet.") : "") }),
      el("li", { text: "Softmax: weight = e^(scaled score) / Σ e^(scaled scores) over the visible positions; the weights add up to " + fmt(a.weight_sum, 6) + "." })]));
    // charts: scaled scores and weights, every key labelled
    const charts = el("div", { class: "mv-attn-charts" });
    const scoreBox = el("div", { class: "chart", "data-testid": "mv-attn-scores" }), weightBox = el("div", { class: "chart", "data-testid": "mv-head" });
    const region = (title, chart) => el("div", { class: "mv-attn-scroll" + (n > 20 ? " tall" : ""), tabindex: "0", role: "region", "aria-label": title + " (" + n + " keys)" }, [chart]);
    charts.append(el("figure", {}, [el("figcaption", { class: "small", text: "3 · scaled scores q·k/√" + d }), region("Scaled scores of every key", scoreBox)]),
      el("figure", {}, [el("figcaption", { class: "small", text: "5 · softmax weights" }), region("Softmax weights of every key", weightBox)]));
    box.append(charts);
    const rowLabel = (k) => k.pos + " " + label(k) + (k.cached ? "" : " (new)");
    signedBars(scoreBox, keys.map((k) => ({ label: rowLabel(k), value: k.scaled, title: "position " + k.pos + " “" + label(k) + "” (" + (k.cached ? "cached" : "new") + "): q·k " + fmt(k.score, 5) + ", × " + fmt(a.scale, 4) + " = " + fmt(k.scaled, 5) })),
      "Scaled scores q·k/√" + d + " of head " + a.head + ", block " + p.layer);
    const wmax = Math.max(1e-9, ...keys.map((k) => k.weight));
    hbars(weightBox, { rows: keys.map((k) => ({ label: rowLabel(k), values: [k.weight], title: "position " + k.pos + " “" + label(k) + "” (" + (k.cached ? "cached" : "new") + "): weight " + fmt(k.weight, 5) })),
      series: [{ name: "attention weight", cls: "s-accent" }], xTitle: "attention weight (axis to the largest, " + fmt(wmax, 3) + ")", max: wmax, fmt: (v) => fmt(v, 3), tickFmt: (t) => fmt(t, 2),
      aria: "Softmax weights of head " + a.head + " in block " + p.layer + " over " + n + " positions" });
    // the table: every number, one row per key, and the masked rest
    const t = el("table", { class: "mv-attn-table", "data-testid": "mv-attn-table" });
    t.append(el("caption", { text: "Every key the query attends to (" + n + " positions: " + nCached + " cached, " + nNew + " new), with its value; “key” and “value” are the vectors the KV cache holds (keys after RoPE" + (a.rope ? "" : ": none in this model") + ")." }));
    t.append(el("thead", {}, [el("tr", {}, ["position", "token", "from", "q·k", "× " + fmt(a.scale, 4) + " = scaled", "weight", "key k", "value v"].map((h) => el("th", { scope: "col", text: h })))]));
    const body = el("tbody");
    if (a.evicted > 0) {
      body.append(el("tr", { class: "mv-masked", "data-testid": "mv-evicted-row" }, [el("th", { scope: "row", class: "mono", text: "0–" + (a.evicted - 1) }),
        el("td", { text: "—" }), el("td", { text: "outside the window" }), el("td", { class: "num", text: "—" }),
        el("td", { class: "num", text: "−∞ (window)" }), el("td", { class: "num", text: "0" }), el("td", { text: "no longer cached" }), el("td", { text: "—" })]));
    }
    for (const k of keys) {
      body.append(el("tr", { "data-pos": k.pos, "data-weight": String(k.weight), class: k.cached ? "mv-cached" : "mv-new" }, [
        el("th", { scope: "row", class: "mono", text: String(k.pos) }),
        el("td", { class: "mono", "data-testid": "mv-key-label", text: label(k) }),
        el("td", {}, [el("span", { class: "mv-src", text: k.cached ? "cached" : "new" })]),
        el("td", { class: "num", text: fmt(k.score, 4) }), el("td", { class: "num", text: fmt(k.scaled, 4) }), el("td", { class: "num", text: fmt(k.weight, 4) }),
        vecCell(k.key, "key of position " + k.pos), vecCell(k.value, "value of position " + k.pos)]));
    }
    if (a.masked > 0) {
      body.append(el("tr", { class: "mv-masked", "data-testid": "mv-masked-row" }, [el("th", { scope: "row", class: "mono", text: (p.pos + 1) + "–" + (a.context - 1) }),
        el("td", { text: "—" }), el("td", { text: "masked" }), el("td", { class: "num", text: "—" }),
        el("td", { class: "num", text: "−∞ (masked)" }), el("td", { class: "num", text: "0" }), el("td", { text: "not computed yet" }), el("td", { text: "—" })]));
    }
    t.append(body);
    box.append(el("div", { class: "table-wrap mv-attn-scroll" + (n > 12 ? " tall" : ""), tabindex: "0", role: "region", "aria-label": "Attention numbers of head " + a.head + ", block " + p.layer + ": every key" }, [t]));
  }

  // drawLegend explains the heads' cells: the colour scale of the current
  // scheme (light: white to dark blue; dark: the card's grey to light blue).
  drawLegend() {
    const dark = isDark(), box = this.legendBox;
    if (box.dataset.dark === String(dark) && box.firstChild) return;
    box.dataset.dark = String(dark);
    // a CSS gradient, not an SVG: "#modelview svg" stays the picture
    const stops = [0, 0.25, 0.5, 0.75, 1].map((v) => seq(v, dark));
    const bar = el("span", { class: "mv-scale-bar", "aria-hidden": "true", "data-from": stops[0], "data-to": stops[4] });
    bar.style.background = "linear-gradient(to right, " + stops.join(", ") + ")";
    clear(box).append(el("span", { class: "mv-scale" }, [bar, el("span", { class: "mv-scale-ticks", "aria-hidden": "true" }, [el("span", { text: "0" }), el("span", { text: "0.5" }), el("span", { text: "1" })])]));
    box.append(el("span", { "data-testid": "mv-legend-text", text: "Head cells: the current position's attention weight on each position, left to right from position 0; " +
      (dark ? "brighter blue = more attention, near the background = little." : "darker blue = more attention, white = little.") + " Click a head for its numbers." }));
  }

  // ---------- the layer sweep: the pass's layers light in order ----------
  startSweep(layers, fast) {
    this.stopSweep();
    const s = this.s;
    if (fast || reducedMotion() || layers.length < 2) { s.lit = layers; s.cursor = layers[layers.length - 1]; this.root.dataset.sweeping = "0"; return; }
    const t0 = performance.now(), dur = Math.min(700, 90 * layers.length);
    this.root.dataset.sweeping = "1";
    this.root.dataset.sweeps = String((+this.root.dataset.sweeps || 0) + 1);
    const tick = () => {
      const k = Math.min(layers.length, 1 + Math.floor((performance.now() - t0) / dur * layers.length));
      s.lit = layers.slice(0, k);
      s.cursor = layers[k - 1];
      this.redrawLit();
      if (k < layers.length) this.sweep = requestAnimationFrame(tick);
      else { this.sweep = null; this.root.dataset.sweeping = "0"; }
    };
    this.sweep = requestAnimationFrame(tick);
  }
  stopSweep() { if (this.sweep) cancelAnimationFrame(this.sweep); this.sweep = null; this.root.dataset.sweeping = "0"; }
  // schedule draws in the next frame: through the host page's frame loop when it has one (opts.schedule)
  schedule() {
    if (this.opts.schedule) { this.opts.schedule(); return; }
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.redraw(); });
  }

  // ---------- drawing ----------
  redraw() {
    const m = this.card;
    if (!m) { clear(this.pic); this.html = ""; return; }
    // nothing is drawn until the observer has given the width (it reports
    // before the first paint), so the picture never shows a guessed layout
    if (!this.width) return;
    const W = Math.max(300, this.width);
    const html = this.svg(m, W);
    // an unchanged picture (an event that lit nothing new) is not parsed
    // again; a changed one is parsed off the page and only what differs is
    // written into the picture on the page (a token changes a few texts and
    // classes: the rest keeps its layout, and focus stays where it was)
    if (html !== this.html || !this.pic.firstChild) {
      const old = this.pic.firstElementChild;
      if (old && old.tagName === "svg") {
        const tpl = this.tpl || (this.tpl = document.createElement("template"));
        tpl.innerHTML = html;
        patch(old, tpl.content.firstElementChild);
        tpl.innerHTML = "";
      } else {
        this.pic.innerHTML = html;
        this.cellsDrawn = null; // the cell canvases were taken off with the old picture
      }
      this.html = html;
    }
    this.drawCells(W, this.height);
    this.drawLens();
    this.drawLegend();
    if (this.headDirty) { this.headDirty = false; this.showHead(this.selected.layer, this.selected.head); this.askHead(true); }
  }

  // redrawLit moves the sweep: only the blocks' lit and cursor marks
  // change, so the picture is not rebuilt
  redrawLit() {
    const svg = this.pic.querySelector("svg"), s = this.s;
    if (!svg) { this.redraw(); return; }
    const lit = new Set(s.lit);
    for (const g of svg.querySelectorAll(".mv-block")) {
      const l = +g.dataset.layer, on = lit.has(l);
      g.classList.toggle("lit", on);
      g.classList.toggle("cursor", on && s.cursor === l);
    }
    for (const g of svg.querySelectorAll(".mv-more")) {
      const hidden = g.dataset.layers.split(",").map(Number), on = hidden.some((h) => lit.has(h)), cur = on && hidden.includes(s.cursor);
      g.classList.toggle("lit", on);
      g.classList.toggle("cursor", cur);
      g.querySelectorAll(".mv-bar").forEach((b, i) => b.classList.toggle("on", lit.has(hidden[i])));
      const t = g.querySelector(".mv-t");
      if (t) t.textContent = "… blocks " + hidden[0] + "–" + hidden[hidden.length - 1] + " (" + hidden.length + " more, the same shape" + kindCount(this.card.shape, hidden) + ")" + (cur ? ": now block " + s.cursor : "");
    }
    svg.dataset.litLayers = s.lit.join(",");
    svg.dataset.cursor = s.cursor;
    this.html = null; // the DOM no longer matches the cached markup
  }

  svg(m, W) {
    const s = this.s, sh = m.shape, P = sh.params, narrow = W < 620;
    // the heads' attention cells (x, y, w, h, weight) are painted on a
    // canvas over the picture: hundreds of SVG nodes fewer per token
    const cells = this.cells = [];
    const lit = new Set(STAGE_PARTS[s.stage] || []), litLayers = new Set(s.lit);
    const spine = 22, x0 = spine + 18, right = narrow ? 0 : Math.min(220, W * 0.22), inner = W - x0 - (narrow ? 18 : right + 6);
    let y = 6, out = "";
    const cls = (part, extra) => "mv-part" + (lit.has(part) ? " lit" : "") + (extra ? " " + extra : "");
    const box = (part, x, yy, w, h, lines, attrs = "") => {
      let t = `<g class="${cls(part)}" data-part="${part}"${attrs}><rect x="${x}" y="${yy}" width="${w}" height="${h}" rx="6"/>`;
      lines.forEach((ln, i) => { t += `<text x="${x + 8}" y="${yy + 16 + i * 15}" class="${i === 0 ? "mv-t" : "mv-s"}">${esc(ln)}</text>`; });
      return t + "</g>";
    };
    const arrow = (x1, y1, x2, y2) => `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" class="mv-flow" marker-end="url(#mv-arrow)"/>`;
    // 1 tokens
    const nPos = s.passLen || 0, pass = s.pass === "decode" ? "decode: 1 new position (" + s.pos + ")" : s.pass === "prefill" ? (narrow ? "prefill: " + nPos + " positions at once" : "prefill: all " + nPos + " prompt positions at once") : nPos ? nPos + " prompt tokens" : "the prompt's tokens";
    out += box("tokens", x0, y, inner, 40, [(narrow ? "" : "token ids → ") + pass], ` data-positions="${s.pass === "decode" ? 1 : nPos}"`);
    const dots = Math.min(nPos, Math.floor((inner - 20) / 9));
    for (let i = 0; i < dots; i++) out += `<circle cx="${x0 + 12 + i * 9}" cy="${y + 31}" r="3" class="mv-dot${s.pass ? " on" : ""}"/>`;
    y += 40;
    out += arrow(x0 + 30, y, x0 + 30, y + 14);
    y += 14;
    // 2 embedding
    const embLines = narrow ? ["embedding table: " + m.vocab + " × " + m.dim, count(P.embedding) + " params" + (sh.rope ? " · RoPE in attention" : ""), ...(sh.rope ? [] : ["+ learned positions: " + m.context + " × " + m.dim])] :
      ["embedding table: " + m.vocab + " × " + m.dim + " (" + count(P.embedding) + " params)",
        sh.rope ? "positions: RoPE, applied to queries and keys inside attention" + ropeDetail(sh) : "+ learned positions: " + m.context + " × " + m.dim + " (" + count(P.positions) + " params)"];
    if (sh.embed_scale) embLines.push((narrow ? "× √" + m.dim : "each row × √" + m.dim + " = " + fmt(sh.embed_scale, 4) + " (the embedding scale)"));
    const embH = 14 + 15 * embLines.length;
    out += box("embed", x0, y, inner, embH, embLines, ` data-vocab="${m.vocab}" data-dim="${m.dim}" data-context="${m.context}"`);
    y += embH;
    out += `<line x1="${x0}" y1="${y - 22}" x2="${spine}" y2="${y - 22}" class="mv-flow"/>`;
    const spineTop = y - 22;
    y += 12;
    // 3 blocks
    const { shown, hidden } = drawnBlocks(m.layers);
    const byLayer = {};
    for (const l of s.layers || []) byLayer[l.layer] = l;
    const lensBy = {};
    if (s.lens) for (const l of s.lens.layers) lensBy[l.layer] = l;
    const laneH = 40, kvW = narrow ? 74 : 110, normW = narrow ? 46 : 66;
    const groups = m.heads / m.kv_heads;
    const drawBlock = (l) => {
      const lt = byLayer[l], on = litLayers.has(l), cur = s.cursor === l && on;
      const local = !!(sh.local && sh.local[l]), kind = sh.local ? (local ? "local" : "global") : "";
      let t = `<g class="mv-block${on ? " lit" : ""}${cur ? " cursor" : ""}" data-layer="${l}"${kind ? ` data-attn-kind="${kind}"` : ""}>`;
      const hdr = narrow ? 14 : 0, top = y, h = 2 * laneH + 48 + hdr;
      t += `<rect x="${spine + 8}" y="${top}" width="${W - spine - 24}" height="${h}" rx="8" class="mv-blockframe"/>`;
      const rn = lt ? lt.residual_norm[lt.residual_norm.length - 1] : null;
      const kindText = !kind ? "" : local ? (narrow ? "local · window " : "local: sliding window of ") + sh.window + " · " : (narrow ? "global · " : "global: full attention · ");
      t += `<text x="${x0}" y="${top + 15}" class="mv-t">block ${l}</text><text x="${x0 + 8 + 7.5 * String("block " + l).length}" y="${top + 15}" class="mv-s${kind ? " mv-" + kind : ""}" data-testid="mv-block-kind">${esc(kindText + (narrow ? "attn " : "attention ") + count(P.attention) + " · MLP " + count(P.mlp) + (narrow ? "" : " · norms " + count(P.block_norms)) + " params")}</text>`;
      // lane A: norm → attention (heads) → KV cache
      let ly = top + 22 + hdr;
      const qkW = sh.qk_norm ? normW : 0, postW = sh.post_norms ? normW : 0;
      const attW = inner - normW - kvW - 16 - (qkW && qkW + 8) - (postW && postW + 8);
      t += box("norm", x0, ly, normW, laneH - 4, normLines(sh, "pre", narrow));
      t += arrow(x0 + normW, ly + 18, x0 + normW + 8, ly + 18);
      let ax = x0 + normW + 8;
      if (qkW) { // Qwen3Attention, Gemma3Attention: q_norm and k_norm on each head before RoPE
        t += box("qknorm", ax, ly, qkW, laneH - 4, narrow ? ["q, k", "norm"] : ["q, k norm", "per head"], ` data-layer="${l}" data-head-dim="${m.head_dim}"`);
        t += arrow(ax + qkW, ly + 18, ax + qkW + 8, ly + 18);
        ax += qkW + 8;
      }
      t += `<g class="${cls("attn")}" data-part="attn" data-layer="${l}" data-heads="${m.heads}" data-kv-heads="${m.kv_heads}" data-head-dim="${m.head_dim}"${sh.bias ? ` data-bias="${sh.bias}"` : ""}${local ? ` data-window="${sh.window}"` : ""}><rect x="${ax}" y="${ly}" width="${attW}" height="${laneH - 4}" rx="6"/>`;
      const label = (narrow ? m.heads + "q/" + m.kv_heads + "kv × " + m.head_dim : "attention: " + m.heads + " query heads, " + m.kv_heads + " KV heads × " + m.head_dim + (m.kv_heads === 1 && m.heads > 1 ? " (MQA)" : groups > 1 ? " (GQA)" : "")) + attnDetail(sh, narrow);
      // a label wider than the box is cut (the whole of it in a tooltip)
      const fits = Math.floor((attW - 12) / 6.2), shown = label.length > fits ? label.slice(0, Math.max(1, fits - 1)) + "…" : label;
      t += `<text x="${ax + 6}" y="${ly + 12}" class="mv-s">${esc(shown)}${shown !== label ? `<title>${esc(label)}</title>` : ""}</text>`;
      // heads: one strip per query head with its attention row, grouped by KV head
      const hx = ax + 6, hw = attW - 12, hy = ly + 16, hh = laneH - 24;
      const gap = m.kv_heads > 1 ? 3 : 0, sw = (hw - gap * (m.kv_heads - 1)) / m.heads;
      for (let h = 0; h < m.heads; h++) {
        const gx = hx + h * sw + Math.floor(h / groups) * gap, row = lt && lt.attn[h];
        t += `<g class="mv-head" data-inspect="head" data-layer="${l}" data-head="${h}" role="button" tabindex="0" aria-label="block ${l} head ${h}: attention row">`;
        t += `<rect x="${gx.toFixed(1)}" y="${hy}" width="${Math.max(1, sw - 1).toFixed(1)}" height="${hh}" class="mv-headbg"><title>head ${h} (KV head ${Math.floor(h / groups)}): click for its attention row</title></rect>`;
        if (row && sw >= 4) {
          // the current position's attention over the cached positions, left to right (binned by max when narrow)
          const n = row.length, bins = Math.min(n, Math.max(1, Math.floor((sw - 3) / 2))), bw = (sw - 3) / bins;
          for (let b = 0; b < bins; b++) {
            let w = 0;
            for (let p = Math.floor(b * n / bins); p < Math.max(Math.floor(b * n / bins) + 1, Math.floor((b + 1) * n / bins)); p++) w = Math.max(w, row[p] || 0);
            cells.push(gx + 1 + b * bw, hy + 1, Math.max(0.8, bw - (bw > 3 ? 0.5 : 0)), hh - 2, w);
          }
        }
        t += "</g>";
      }
      t += "</g>";
      const kx = ax + attW + 8;
      t += arrow(ax + attW, ly + 18, kx, ly + 18);
      // a local layer's cache keeps its window only (a ring: the oldest position is overwritten)
      const held = local ? Math.min(s.cacheLen, sh.window) + "/" + sh.window + (narrow ? " win" : " window") : s.cacheLen + "/" + m.context + (narrow ? "" : " positions");
      t += `<g class="${cls("kv", "mv-click")}" data-part="kv" data-inspect="kv" data-layer="${l}"${local ? ` data-window="${sh.window}"` : ""} role="button" tabindex="0" aria-label="${esc("KV cache " + held)}: block ${l}; show the cached key and value of a position${local ? " (it keeps the last " + sh.window + ")" : ""}">` +
        `<rect x="${kx}" y="${ly}" width="${kvW}" height="${laneH - 4}" rx="6"/><text x="${kx + 6}" y="${ly + 15}" class="mv-t">KV cache </text>` +
        `<text x="${kx + 6}" y="${ly + 30}" class="mv-s">${esc(held)}</text></g>`;
      let outX = kx + kvW / 2;
      if (postW) { // Gemma3DecoderLayer: post_attention_layernorm on the attention output, before the add
        const px = kx + kvW + 8;
        t += arrow(kx + kvW, ly + 18, px, ly + 18);
        t += box("postnorm", px, ly, postW, laneH - 4, normLines(sh, "post", narrow), ` data-layer="${l}" data-after="attn"`);
        outX = px + postW / 2;
      }
      t += `<path d="M${outX} ${ly + laneH - 4} V${ly + laneH + 2} H${spine}" class="mv-flow" marker-end="url(#mv-arrow)"/>`;
      t += `<g class="mv-add"><circle cx="${spine}" cy="${ly + laneH + 2}" r="8"/><text x="${spine}" y="${ly + laneH + 6}" text-anchor="middle">+</text></g>`;
      // lane B: norm → MLP
      ly += laneH + 10;
      t += box("norm", x0, ly, normW, laneH - 4, normLines(sh, "pre", narrow));
      t += arrow(x0 + normW, ly + 18, x0 + normW + 8, ly + 18);
      const mx = x0 + normW + 8, mw = inner - normW - 8 - (postW && postW + 8), an = lt && lt.mlp_norm ? lt.mlp_norm[lt.mlp_norm.length - 1] : null;
      // the accessible name starts with the text the box shows (WCAG 2.5.3: a
      // speech user says what they see); the first line's trailing space (not
      // drawn) keeps the two lines apart in that text, as the name has them
      const mlpTitle = "MLP " + sh.mlp + ": " + m.dim + " → " + m.hidden_dim + " → " + m.dim + (sh.fused && !narrow ? " (gate and up fused: gate_up_proj)" : ""),
        mlpVal = an !== null ? "activation length ‖a‖ " + fmt(an, 2) : "";
      t += `<g class="${cls("mlp", "mv-click")}" data-part="mlp" data-inspect="mlp" data-layer="${l}" data-hidden="${m.hidden_dim}" role="button" tabindex="0" aria-label="${esc(mlpTitle + (mlpVal && " " + mlpVal))}: block ${l}; show its largest activations">` +
        `<rect x="${mx}" y="${ly}" width="${mw}" height="${laneH - 4}" rx="6"/>` +
        `<text x="${mx + 6}" y="${ly + 15}" class="mv-t">${esc(mlpTitle)} </text>` +
        `<text x="${mx + 6}" y="${ly + 30}" class="mv-s mv-val">${esc(mlpVal)}</text></g>`;
      let mOut = mx + mw / 2;
      if (postW) { // post_feedforward_layernorm
        const px = mx + mw + 8;
        t += arrow(mx + mw, ly + 18, px, ly + 18);
        t += box("postnorm", px, ly, postW, laneH - 4, normLines(sh, "post", narrow), ` data-layer="${l}" data-after="mlp"`);
        mOut = px + postW / 2;
      }
      t += `<path d="M${mOut} ${ly + laneH - 4} V${ly + laneH + 2} H${spine}" class="mv-flow" marker-end="url(#mv-arrow)"/>`;
      t += `<g class="mv-add mv-click" data-inspect="residual" data-layer="${l}" role="button" tabindex="0" aria-label="block ${l} output: show the residual vector entering and leaving the block"><circle cx="${spine}" cy="${ly + laneH + 2}" r="8"/><text x="${spine}" y="${ly + laneH + 6}" text-anchor="middle">+</text></g>`;
      // values: residual norm and the lens' top token after this block
      const lens = lensBy[l] && lensBy[l].top[0];
      const val = (rn !== null ? "‖x‖ " + fmt(rn, 2) : "") + (lens ? (narrow ? " · lens " : "") : "");
      if (narrow) {
        t += `<text x="${x0}" y="${top + 30}" class="mv-s mv-val">${esc(val + (lens ? "“" + tokenLabel(lens) + "” " + pct(lens.prob, 0) : ""))}</text>`;
      } else {
        const rx = W - right + 4;
        t += `<text x="${rx}" y="${top + 40}" class="mv-s mv-val" data-testid="mv-norm">${esc(rn !== null ? "residual length ‖x‖ " + fmt(rn, 2) : "")}</text>`;
        if (lens) t += `<text x="${rx}" y="${top + 58}" class="mv-s mv-val">${esc("lens: “" + tokenLabel(lens) + "” " + pct(lens.prob, 1))}</text>`;
      }
      t += "</g>";
      y += h + 8;
      return t;
    };
    for (const l of shown) {
      if (hidden.length && l === m.layers - 1) {
        // the summarised blocks: one row with their residual lengths
        const on = hidden.some((h) => litLayers.has(h)), cur = hidden.includes(s.cursor) && on;
        out += `<g class="mv-more${on ? " lit" : ""}${cur ? " cursor" : ""}" data-count="${hidden.length}" data-layers="${hidden.join(",")}"><rect x="${spine + 8}" y="${y}" width="${W - spine - 24}" height="34" rx="8" class="mv-blockframe"/>`;
        out += `<text x="${x0}" y="${y + 21}" class="mv-t">${esc("… blocks " + hidden[0] + "–" + hidden[hidden.length - 1] + " (" + hidden.length + " more, the same shape" + kindCount(sh, hidden) + ")" + (cur ? ": now block " + s.cursor : ""))}</text>`;
        const bx = x0 + Math.min(420, inner * 0.6), bw = Math.max(2, Math.min(10, (W - bx - 12) / hidden.length - 1));
        let mx = 0;
        for (const h of hidden) if (byLayer[h]) mx = Math.max(mx, byLayer[h].residual_norm[byLayer[h].residual_norm.length - 1]);
        if (!narrow && mx > 0) hidden.forEach((h, i) => {
          const v = byLayer[h].residual_norm[byLayer[h].residual_norm.length - 1], bh = 22 * v / mx;
          out += `<rect x="${bx + i * (bw + 1)}" y="${y + 28 - bh}" width="${bw}" height="${bh}" class="mv-bar${litLayers.has(h) ? " on" : ""}"><title>block ${h}: ‖x‖ ${fmt(v, 2)}</title></rect>`;
        });
        out += "</g>";
        y += 42;
      }
      out += drawBlock(l);
    }
    const spineBottom = y - 8;
    out = `<line x1="${spine}" y1="${spineTop}" x2="${spine}" y2="${spineBottom}" class="mv-spine"/>` + out;
    out += `<text x="${spine - 14}" y="${spineTop + 14}" class="mv-s" transform="rotate(-90 ${spine - 10} ${spineTop + 14})" text-anchor="end">residual stream (${m.dim})</text>`;
    out += `<path d="M${spine} ${spineBottom} V${spineBottom + 26} H${x0}" class="mv-flow" marker-end="url(#mv-arrow)"/>`;
    y = spineBottom + 6;
    // 4 final norm → unembedding → logits
    const third = (inner - 16) / 3;
    out += box("final", x0, y, third, 40, [narrow ? "final norm" : "final " + sh.norm, count(P.final_norm) + " params"]);
    const cap = sh.final_softcap ? (narrow ? " · cap " : " · soft-cap ") + sh.final_softcap : "";
    out += arrow(x0 + third, y + 20, x0 + third + 8, y + 20);
    out += box("unembed", x0 + third + 8, y, third, 40, narrow ? ["unembed", (P.tied ? "tied" : count(P.unembedding)) + " → " + m.vocab + cap] : ["unembedding " + m.dim + " → " + m.vocab, (P.tied ? (cap ? "tied" : "tied to the embedding table") : count(P.unembedding) + " params") + cap], ` data-tied="${P.tied}"${sh.final_softcap ? ` data-softcap="${sh.final_softcap}"` : ""}`);
    out += arrow(x0 + 2 * third + 8, y + 20, x0 + 2 * third + 16, y + 20);
    const top3 = (s.top || []).slice(0, narrow ? 1 : 3).map((t) => "“" + tokenLabel(t) + "” " + pct(t.prob, 0)).join(" ");
    out += box("logits", x0 + 2 * third + 16, y, third, 40, [m.vocab + " logits" + (s.topPos >= 0 && !narrow ? " at position " + s.topPos : ""),
      s.top ? top3 : s.topPos >= 0 ? "computed; shown at the logits stage" : ""], ` data-pos="${s.topPos >= 0 ? s.topPos : ""}" data-top="${s.top && s.top[0] ? s.top[0].id : ""}"`);
    y += 40;
    out += arrow(x0 + inner - third / 2, y, x0 + inner - third / 2, y + 12);
    y += 12;
    // 5 sampler → chosen token → appended
    const half = (inner - 8) / 2;
    out += box("sampler", x0 + inner - half, y, half, 40, ["sampler", s.rule ? s.rule.slice(0, Math.floor(half / 6.5)) : "temperature, top-k, top-p, min-p"]);
    out += arrow(x0 + inner - half, y + 20, x0 + half, y + 20);
    out += box("chosen", x0, y, half - 8, 40, ["chosen token", s.chosen ? "“" + tokenLabel(s.chosen) + "” id " + s.chosen.id : ""]);
    y += 40;
    // the loop back: appended to the sequence and to every block's cache
    out += `<path d="M${x0 + 12} ${y} V${y + 14} H${W - 6} V${20} H${x0 + inner}" class="mv-loop${lit.has("append") ? " lit" : ""}" marker-end="url(#mv-arrow)"/>`;
    out += `<text x="${x0 + 18}" y="${y + 28}" class="mv-s${lit.has("append") ? " mv-val" : ""}">${narrow ? "appended: sequence and every KV cache" : "appended to the sequence (next position) and to every block's KV cache"}</text>`;
    y += 36;
    const H = this.height = y + 4;
    const aria = "The model " + m.name + ": " + m.layers + " blocks of width " + m.dim + ", " + m.heads + " query heads and " + m.kv_heads + " key/value heads of " + m.head_dim + ", MLP " + m.hidden_dim + ", vocabulary " + m.vocab + ", context " + m.context;
    return `<svg xmlns="${NS}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="group" aria-label="${esc(aria)}" data-stage="${s.stage || ""}" data-lit-layers="${s.lit.join(",")}" data-cursor="${s.cursor}" data-layers="${m.layers}">` +
      `<defs><marker id="mv-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L8 4 L0 8 z" class="mv-arrowhead"/></marker></defs>` + out + "</svg>";
  }

  drawCells(W, H) {
    const dpr = window.devicePixelRatio || 1, cells = this.cells, dark = isDark();
    // an unchanged picture is not painted again: a repainted canvas is
    // copied whole to the compositor (most events of a streamed run change
    // no cell)
    const last = this.cellsDrawn;
    if (last && last.W === W && last.H === H && last.dpr === dpr && last.dark === dark && last.cells.length === cells.length && last.cells.every((v, i) => v === cells[i])) return;
    this.cellsDrawn = { W, H, dpr, dark, cells: cells.slice() };
    // one small canvas per band of cells (a block's heads share a row),
    // not one the size of the picture: what is copied to the compositor
    // per token is the heads' strips, not the whole drawing
    const bands = [], byY = new Map();
    for (let i = 0; i < cells.length; i += 5) {
      let b = byY.get(cells[i + 1]);
      if (!b) { b = { y: cells[i + 1], x0: Infinity, x1: 0, h: 0, idx: [] }; byY.set(b.y, b); bands.push(b); }
      b.x0 = Math.min(b.x0, cells[i]);
      b.x1 = Math.max(b.x1, cells[i] + cells[i + 2]);
      b.h = Math.max(b.h, cells[i + 3]);
      b.idx.push(i);
    }
    const cs = this.cellCanvases;
    while (cs.length > bands.length) cs.pop().remove();
    bands.forEach((b, k) => {
      let c = cs[k];
      if (!c) cs.push(c = el("canvas", { class: "mv-cells", "aria-hidden": "true" }));
      if (c.parentNode !== this.pic) this.pic.appendChild(c);
      const x0 = Math.floor(b.x0), y0 = Math.floor(b.y), w = Math.ceil(b.x1) - x0, h = Math.ceil(b.y + b.h) - y0;
      const pw = Math.ceil(w * dpr), ph = Math.ceil(h * dpr);
      if (c.width !== pw || c.height !== ph) { c.width = pw; c.height = ph; c.style.width = w + "px"; c.style.height = h + "px"; }
      if (c.style.left !== x0 + "px") c.style.left = x0 + "px";
      if (c.style.top !== y0 + "px") c.style.top = y0 + "px";
      const g = c.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, -x0 * dpr, -y0 * dpr);
      g.clearRect(x0, y0, w, h);
      for (const i of b.idx) {
        g.fillStyle = seq(cells[i + 4], dark);
        g.fillRect(cells[i], cells[i + 1], cells[i + 2], cells[i + 3]);
      }
      c.dataset.cells = b.idx.length;
    });
  }

  drawLens() {
    const r = this.s.lens, box = this.lensBox;
    // the same reading is not drawn twice
    if (r === this.lensDrawn && (r ? box.firstChild : !box.firstChild)) return;
    this.lensDrawn = r;
    if (!r) { clear(box); return; }
    const lab = this.opts.label || String, t = el("table", { class: "mv-lens-table", "data-testid": "lens-table", "data-pos": r.pos });
    t.append(el("caption", { text: "Logit lens at position " + r.pos + " (“" + lab(r.pos) + "”): the top " + r.layers[0].top.length +
      " tokens read out after each block. Note: " + r.note + "." }));
    const head = el("tr", {}, [el("th", { scope: "col", text: "after block" })]);
    for (let k = 0; k < r.layers[0].top.length; k++) head.append(el("th", { scope: "col", text: "#" + (k + 1) + " (p)" }));
    t.append(el("thead", {}, [head]));
    const body = el("tbody");
    for (const l of r.layers) {
      const last = l.layer === r.layers.length - 1;
      const tr = el("tr", { "data-layer": l.layer, class: last ? "mv-out" : "" }, [el("th", { scope: "row", text: l.layer + (last ? " = the output" : "") })]);
      for (const tk of l.top) {
        const td = el("td", { "data-id": tk.id, title: "id " + tk.id + ": p " + fmt(tk.prob, 4) }, [el("span", { class: "mono", text: tokenLabel(tk) }), " " + pct(tk.prob, 1)]);
        td.style.setProperty("--p", Math.min(1, tk.prob).toFixed(3));
        tr.append(td);
      }
      body.append(tr);
    }
    t.append(body);
    clear(box).append(t);
  }
}
