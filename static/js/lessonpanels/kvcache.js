// kvcache.js: the live panels of the lesson "Context and KV cache" — the
// keys and values the cache holds, per layer and key/value head (read from
// the engine's cache with inspect), the cache growing by one position per
// token, the memory budget at full context × many requests (sliders), and
// the cache on against off in model time per token.
import * as IS from "../core.js";
import { line } from "../charts.js";
import { register } from "./registry.js";
import { mount, gather, untilToken, untilStop, median, button, slider, wrapTable } from "./util.js";

const el = IS.el;

// ---------- keys and values, per layer and head ----------

register("kvgrid", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  try {
    const m = (await r.start(api.payload(o))).payload.model;
    const evs = await r.stepTo("prefill"), t = evs[0].tokenize, P = evs[2].prefill.positions;
    const labels = t.tokens.map((k) => IS.tokenLabel(k));
    // kv[layer][pos] = {keys: [head][d], values: [head][d]}, read from the cache
    const kv = [];
    for (let l = 0; l < m.layers && root.alive(); l++) {
      kv.push([]);
      for (let p = 0; p < P; p++) kv[l].push((await r.cmd("inspect", { what: "kv", layer: l, pos: p })).payload);
    }
    if (!root.alive()) return;
    const detail = el("p", { class: "lp-detail mono small", "data-testid": "kv-detail", "aria-live": "polite" });
    const grid = el("div", { class: "lp-kvgrid", "data-testid": "kv-grid" });
    let L = 0, H = 0;
    const draw = () => {
      IS.clear(grid);
      const cell = Math.max(3, Math.min(10, Math.floor((Math.min(grid.clientWidth || 340, 900) - 90) / (2 * m.head_dim + 2))));
      const lw = 70, W = lw + (2 * m.head_dim + 2) * cell, Hh = 18 + P * cell + 4, dpr = window.devicePixelRatio || 1;
      const c = el("canvas", { width: String(Math.ceil(W * dpr)), height: String(Math.ceil(Hh * dpr)), role: "img", "data-testid": "kv-canvas", "data-layer": L, "data-head": H,
        "aria-label": "Layer " + L + ", key/value head " + H + ": keys (left) and values (right), " + m.head_dim + " numbers each, one row per position" });
      c.style.width = W + "px";
      c.style.height = Hh + "px";
      const g = c.getContext("2d"), dark = IS.isDark();
      g.scale(dpr, dpr);
      g.font = "11px system-ui, sans-serif";
      g.fillStyle = IS.cssVar("--fg");
      g.fillText("keys", lw, 12);
      g.fillText("values", lw + (m.head_dim + 2) * cell, 12);
      let mk = 0, mv = 0;
      for (let p = 0; p < P; p++) { for (const x of kv[L][p].keys[H]) mk = Math.max(mk, Math.abs(x)); for (const x of kv[L][p].values[H]) mv = Math.max(mv, Math.abs(x)); }
      for (let p = 0; p < P; p++) {
        const y = 18 + p * cell;
        g.fillStyle = IS.cssVar("--fg");
        if (cell >= 8) { g.textAlign = "right"; g.fillText(labels[p].slice(0, 9), lw - 4, y + cell - 1); g.textAlign = "left"; }
        kv[L][p].keys[H].forEach((x, i) => { g.fillStyle = IS.heat(x, mk, dark); g.fillRect(lw + i * cell, y, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0)); });
        kv[L][p].values[H].forEach((x, i) => { g.fillStyle = IS.heat(x, mv, dark); g.fillRect(lw + (m.head_dim + 2 + i) * cell, y, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0)); });
      }
      const pick = (e) => {
        const b = c.getBoundingClientRect(), x = (e.clientX - b.left - lw) / cell, p = Math.floor((e.clientY - b.top - 18) / cell);
        if (p < 0 || p >= P || x < 0) return;
        const isV = x >= m.head_dim + 2, i = Math.floor(isV ? x - m.head_dim - 2 : x);
        if (i < 0 || i >= m.head_dim) return;
        show(p, isV ? "value" : "key", i);
      };
      c.addEventListener("mousemove", pick);
      c.addEventListener("click", pick);
      grid.append(c);
      show(P - 1, "key", 0);
    };
    const show = (p, what, i) => {
      const v = (what === "key" ? kv[L][p].keys : kv[L][p].values)[H][i];
      detail.textContent = "layer " + L + ", key/value head " + H + ", position " + p + " (“" + labels[p] + "”): " + what + " number " + i + " = " + IS.fmt(v, 5);
      Object.assign(detail.dataset, { layer: L, head: H, pos: p, what, i, value: String(v) });
    };
    const ls = slider("layer", "kv-layer", 0, m.layers - 1, 1, 0, (v) => { L = v; draw(); return String(v); });
    const hs = slider("key/value head", "kv-head", 0, m.kv_heads - 1, 1, 0, (v) => { H = v; draw(); return String(v); });
    root.append(el("div", { class: "lp-controls" }, [ls, hs]), grid, detail,
      el("p", { class: "small muted", text: "Blue negative, red positive; each half scaled to its largest |number|. Hover or tap a cell for its value. " + P + " positions × " + m.layers + " layers × " + m.kv_heads +
        " key/value heads × (" + m.head_dim + " key + " + m.head_dim + " value numbers) are in the cache now." }));
    draw();
    ls.update(); hs.update();
    // a layer's keys differ from another's for the same token: the first key number of the last position, per layer
    api.setLive(sec, "kvgrid.positions", P);
    api.setLive(sec, "kvgrid.per_position", 2 * m.layers * m.kv_heads * m.head_dim);
    api.setLive(sec, "kvgrid.cached_numbers", P * 2 * m.layers * m.kv_heads * m.head_dim);
    root.dataset.ready = "1";
  } finally { r.close(); }
});

// ---------- one more token ----------

register("kvgrow", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run(), pts = [];
  const chart = el("div", { class: "chart", "data-testid": "kv-chart" }), detail = el("p", { class: "lp-detail", "data-testid": "kv-grow", "aria-live": "polite" });
  let busy = false, cap = 0, perTok = 0;
  const draw = () => line(chart, { points: pts.map((p) => ({ x: p.n, y: p.bytes / 1024, title: p.n + " positions: " + IS.bytes(p.bytes) })), step: true, dots: pts.length <= 40, height: 180,
    xTitle: "positions in the cache", yTitle: "cache bytes used (KiB)", xMin: 0, xInt: true, yFmt: (t) => IS.fmt(t, 0), aria: "KV cache bytes used against positions" });
  const feed = (evs) => {
    for (const ev of evs) {
      if (!ev.append) continue;
      const a = ev.append, prev = pts[pts.length - 1];
      pts.push({ n: a.cache_len, bytes: a.bytes_used });
      perTok = a.bytes_per_token;
      detail.textContent = "“" + IS.tokenLabel({ piece: a.piece, text: a.text }) + "” joined: the cache holds " + a.cache_len + " of " + a.cache_cap + " positions, " + IS.bytes(a.bytes_used) +
        (prev ? ", " + (a.bytes_used - prev.bytes) + " bytes more than before" : "") + ".";
      detail.dataset.grew = prev ? String(a.bytes_used - prev.bytes) : "";
      api.setLive(sec, "kvcache.positions", a.cache_len);
      api.setLive(sec, "kvcache.bytes_used", IS.bytes(a.bytes_used));
      if (prev) api.setLive(sec, "kvcache.grew", String(a.bytes_used - prev.bytes));
    }
    draw();
  };
  const more = (k) => async () => {
    if (busy || !root.alive()) return;
    busy = true;
    try { for (let i = 0; i < k && root.alive(); i++) { const evs = await gather(r, "step_token", undefined, untilToken); feed(evs); if (evs.some((e) => e.stop || e.next === "stop")) { oneB.disabled = tenB.disabled = true; break; } } }
    catch (e) { detail.textContent = String(e.message || e); } finally { busy = false; }
  };
  const oneB = button("One more token", "kv-more", more(1), "primary"), tenB = button("Ten more", "kv-more10", more(10));
  root.append(el("div", { class: "lp-controls" }, [oneB, tenB]), chart, detail);
  await r.start(api.payload(o, { stop_at_eos: false }));
  const evs = await r.stepTo("prefill"), pre = evs[2].prefill;
  const first = await gather(r, "step_token", undefined, untilToken);
  const a = first.find((e) => e.append).append;
  cap = a.cache_cap;
  pts.push({ n: pre.positions, bytes: pre.positions * a.bytes_per_token });
  feed(first);
  api.setLive(sec, "kvcache.bytes_per_token", String(a.bytes_per_token));
  api.setLive(sec, "kvcache.bytes_per_token_h", IS.bytes(a.bytes_per_token));
  api.setLive(sec, "kvcache.capacity", cap);
  root.dataset.perToken = perTok;
  root.dataset.ready = "1";
  const closer = setInterval(() => { if (!root.alive()) { clearInterval(closer); r.close(); } }, 1000);
});

// ---------- the memory budget ----------

register("memory-budget", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  let m, mem, perTok;
  try {
    m = (await r.start(api.payload(o, { max_new_tokens: 1 }))).payload.model;
    const evs = await gather(r, "run", undefined, untilStop), a = evs.find((e) => e.append).append;
    mem = a.memory;
    perTok = a.bytes_per_token;
  } finally { r.close(); }
  const bar = el("div", { class: "budget-bar", "data-testid": "budget-bar" }), text = el("p", { "data-testid": "budget-text", "aria-live": "polite" });
  let reqs = parseInt(o.requests || "16", 10), ctx = m.context;
  const draw = () => {
    const kv = reqs * ctx * perTok, total = m.weights_bytes + kv;
    IS.clear(bar);
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", "weights " + IS.bytes(m.weights_bytes) + ", KV cache " + IS.bytes(kv));
    for (const [name, v, cls] of [["weights", m.weights_bytes, "s-accent"], ["KV cache", kv, "s-good"]]) {
      const seg = el("span", { class: "budget-seg " + cls, title: name + ": " + IS.bytes(v) });
      seg.style.width = Math.max(0.5, 100 * v / total) + "%";
      bar.append(seg);
    }
    text.textContent = "Weights " + IS.bytes(m.weights_bytes) + " (shared) + " + reqs + " requests × " + ctx + " positions × " + IS.bytes(perTok) + " per position = KV cache " + IS.bytes(kv) +
      "; total " + IS.bytes(total) + ". The cache is " + IS.pct(kv / total, 0) + " of it.";
    Object.assign(text.dataset, { requests: reqs, context: ctx, kv: String(kv), total: String(total), weights: String(m.weights_bytes) });
    api.setLive(sec, "budget.requests", reqs);
    api.setLive(sec, "budget.context", ctx);
    api.setLive(sec, "budget.kv", IS.bytes(kv));
    api.setLive(sec, "budget.total", IS.bytes(total));
    api.setLive(sec, "budget.total_bytes", String(total));
    api.setLive(sec, "budget.kv_share", IS.pct(kv / total, 0));
  };
  // requests on a doubling scale: 1, 2, 4 … 256
  const rs = slider("requests at once", "budget-requests", 0, 8, 1, Math.round(Math.log2(reqs)), (v) => { reqs = 2 ** v; draw(); return String(reqs); });
  const cs = slider("context per request (positions)", "budget-context", 1, m.context, 1, ctx, (v) => { ctx = v; draw(); return String(ctx); });
  root.append(el("div", { class: "lp-controls" }, [rs, cs]), bar, text,
    el("p", { class: "small muted", text: "Not counted above: scratch buffers for the computation (" + IS.bytes(mem.scratch) + " for this panel's one-token run; they grow with the context) and the runtime itself." }));
  rs.update();
  cs.update();
  api.setLive(sec, "budget.per_token", IS.bytes(perTok));
  api.setLive(sec, "budget.per_request_full", IS.bytes(perTok * m.context));
  root.dataset.ready = "1";
});

// ---------- cache on against cache off ----------

register("cache-compare", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "3", 10), status = el("p", { class: "small muted", text: "Warming up…" });
  root.append(status);
  const one = async (noCache) => {
    const r = new api.Run();
    try {
      await r.start(api.payload(o, { no_cache: noCache, stop_at_eos: false }));
      const evs = await gather(r, "run", undefined, untilStop), s = evs.find((e) => e.stop).stop;
      return { text: s.text, itl: s.timings.itl_model_ms || [] };
    } finally { r.close(); }
  };
  await one(false); await one(true);
  const on = [], off = [];
  let texts = [];
  for (let k = 0; k < reps && root.alive(); k++) {
    status.textContent = "Run " + (k + 1) + " of " + reps + "…";
    const a = await one(false), b = await one(true);
    on.push(a.itl); off.push(b.itl);
    texts = [a.text, b.text];
  }
  if (!root.alive()) return;
  // per token: the median over runs
  const perTok = (runs) => runs[0].map((_, i) => median(runs.map((x) => x[i])));
  const pOn = perTok(on), pOff = perTok(off), yMax = Math.max(...pOn, ...pOff) * 1.1;
  status.textContent = "Model time of each decode step (the forward pass alone), median of " + reps + " runs after a warm-up.";
  const charts = el("div", { class: "lp-pair" });
  for (const [name, pts, cls] of [["cache on", pOn, "l-accent"], ["cache off", pOff, "l-warn"]]) {
    const c = el("div", { class: "chart", "data-testid": "cache-chart-" + (name === "cache on" ? "on" : "off") });
    charts.append(el("figure", {}, [el("figcaption", { class: "small", text: name }), c]));
    line(c, { points: pts.map((y, i) => ({ x: i + 2, y, title: "token " + (i + 2) + ": " + IS.ms(y) + " ms" })), height: 170, yMax, cls, xTitle: "generated token", yTitle: "model ms", xInt: true, yFmt: (t) => IS.fmt(t, 2), aria: name + ": model time per token" });
  }
  root.append(charts);
  const mOn = median(pOn), mOff = median(pOff), same = texts[0] === texts[1];
  root.append(el("p", { "data-testid": "cache-same", "data-same": String(same), text: (same ? "Same text with the cache on and off ✓ " : "The texts differ ✗ ") + "“" + IS.visible(texts[0]).slice(0, 70) + "…”" }));
  root.dataset.on = mOn;
  root.dataset.off = mOff;
  api.setLive(sec, "cache.on_ms", IS.ms(mOn));
  api.setLive(sec, "cache.off_ms", IS.ms(mOff));
  api.setLive(sec, "cache.off_last_ms", IS.ms(pOff[pOff.length - 1]));
  api.setLive(sec, "cache.on_last_ms", IS.ms(pOn[pOn.length - 1]));
  api.setLive(sec, "cache.ratio", IS.fmt(mOff / mOn, 1));
  api.setLive(sec, "cache.same", same ? "the same" : "different");
  api.setLive(sec, "cache.choices", ["the same", "different"]);
});
