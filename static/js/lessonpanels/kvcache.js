// kvcache.js: the live panels of the lesson "Context and KV cache" — the
// keys and values the cache holds, per layer and key/value head (read from
// the engine's cache with inspect), the cache growing by one position per
// token, the memory budget at full context × many requests (sliders), and
// the cache on against off in model time per token.
import * as IS from "../core.js";
import { line } from "../charts.js";
import { register } from "./registry.js";
import { mount, median, button, slider, wrapTable, keepOpen } from "./util.js";

const el = IS.el;

// ---------- keys and values, per layer and head ----------

register("kvgrid", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  try {
    const m = (await r.start(api.payload(o))).payload.model;
    const evs = await r.stepTo("prefill"), t = evs[0].tokenize, P = evs[2].prefill.positions;
    const labels = t.tokens.map((k) => IS.tokenLabel(k));
    // kv[layer][pos] = {keys: [head][d], values: [head][d]}, read from the cache
    // (null where a sliding-window layer no longer keeps the position)
    const kv = [];
    let held = 0;
    for (let l = 0; l < m.layers && root.alive(); l++) {
      kv.push([]);
      for (let p = 0; p < P; p++) {
        try {
          kv[l].push((await r.cmd("inspect", { what: "kv", layer: l, pos: p })).payload);
          held++;
        } catch (err) {
          if (!/sliding window/.test(err.message)) throw err;
          kv[l].push(null);
        }
      }
    }
    if (!root.alive()) return;
    const detail = el("p", { class: "lp-detail mono small", "data-testid": "kv-detail", "aria-live": "polite" });
    const grid = el("div", { class: "lp-kvgrid", "data-testid": "kv-grid" });
    let L = 0, H = 0;
    const draw = () => {
      IS.clear(grid);
      // keys and values side by side when there is room, else keys above values
      const avail = Math.min(grid.clientWidth || 340, 900), lw = 70, hd = m.head_dim;
      const side = (avail - lw) / (2 * hd + 2) >= 6;
      const cell = Math.max(3, Math.min(12, Math.floor((avail - lw - 4) / (side ? 2 * hd + 2 : hd))));
      const blockH = 16 + P * cell, W = lw + (side ? 2 * hd + 2 : hd) * cell, Hh = (side ? blockH : 2 * blockH + 6) + 4, dpr = window.devicePixelRatio || 1;
      const origin = (isV) => side ? [lw + (isV ? hd + 2 : 0) * cell, 16] : [lw, 16 + (isV ? blockH + 6 : 0)];
      const c = el("canvas", { width: String(Math.ceil(W * dpr)), height: String(Math.ceil(Hh * dpr)), role: "img", "data-testid": "kv-canvas", "data-layer": L, "data-head": H,
        "aria-label": "Layer " + L + ", key/value head " + H + ": keys and values, " + hd + " numbers each, one row per position" });
      c.style.width = W + "px";
      c.style.height = Hh + "px";
      const g = c.getContext("2d"), dark = IS.isDark();
      g.scale(dpr, dpr);
      g.font = "11px system-ui, sans-serif";
      let mk = 0, mv = 0;
      for (const e of kv[L]) { if (!e) continue; for (const x of e.keys[H]) mk = Math.max(mk, Math.abs(x)); for (const x of e.values[H]) mv = Math.max(mv, Math.abs(x)); }
      for (const isV of [false, true]) {
        const [x0, y0] = origin(isV), rows = kv[L].map((e) => e && (isV ? e.values[H] : e.keys[H])), mx = isV ? mv : mk;
        g.fillStyle = IS.cssVar("--fg");
        g.textAlign = "left";
        g.fillText(isV ? "values" : "keys", x0, y0 - 4);
        rows.forEach((row, p) => {
          const y = y0 + p * cell;
          g.fillStyle = IS.cssVar("--fg");
          g.textAlign = "right";
          g.fillText(labels[p].length > 9 ? labels[p].slice(0, 8) + "…" : labels[p], lw - 4, y + Math.min(cell, 11) - 1);
          if (!row) { // left this layer's sliding window: no longer in its cache
            g.strokeStyle = IS.cssVar("--muted");
            g.strokeRect(x0 + 0.5, y + 0.5, hd * cell - 1, cell - 1);
            return;
          }
          row.forEach((x, i) => { g.fillStyle = IS.heat(x, mx, dark); g.fillRect(x0 + i * cell, y, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0)); });
        });
      }
      const pick = (e) => {
        const b = c.getBoundingClientRect(), X = e.clientX - b.left, Y = e.clientY - b.top;
        for (const isV of [false, true]) {
          const [x0, y0] = origin(isV), i = Math.floor((X - x0) / cell), p = Math.floor((Y - y0) / cell);
          if (i >= 0 && i < hd && p >= 0 && p < P) { show(p, isV ? "value" : "key", i); return; }
        }
      };
      c.addEventListener("mousemove", pick);
      c.addEventListener("click", pick);
      grid.append(c);
      show(P - 1, "key", 0);
    };
    const show = (p, what, i) => {
      if (!kv[L][p]) {
        detail.textContent = "layer " + L + ", position " + p + " (“" + labels[p] + "”): no longer in this layer's cache (it attends over a sliding window of the latest positions)";
        Object.assign(detail.dataset, { layer: L, head: H, pos: p, what, i, value: "" });
        return;
      }
      const v = (what === "key" ? kv[L][p].keys : kv[L][p].values)[H][i];
      detail.textContent = "layer " + L + ", key/value head " + H + ", position " + p + " (“" + labels[p] + "”): " + what + " number " + i + " = " + IS.fmt(v, 5);
      Object.assign(detail.dataset, { layer: L, head: H, pos: p, what, i, value: String(v) });
    };
    const ls = slider("layer", "kv-layer", 0, m.layers - 1, 1, 0, (v) => { L = v; draw(); return String(v); });
    const hs = slider("key/value head", "kv-head", 0, m.kv_heads - 1, 1, 0, (v) => { H = v; draw(); return String(v); });
    root.append(el("div", { class: "lp-controls" }, [ls, hs]), grid, detail,
      el("p", { class: "small muted", text: "Blue negative, red positive; each half scaled to its largest |number|. Hover or tap a cell for its value. " + P + " positions × " + m.layers + " layers × " + m.kv_heads +
        " key/value heads × (" + m.head_dim + " key + " + m.head_dim + " value numbers) are in the cache now." +
        (held < P * m.layers ? " Not quite: " + (P * m.layers - held) + " of the " + P * m.layers + " layer-positions (outlined empty rows) have left a sliding-window layer's cache, which keeps only its latest positions, so it holds " +
          held * 2 * m.kv_heads * m.head_dim + " numbers." : "") }));
    draw();
    ls.update(); hs.update();
    // a layer's keys differ from another's for the same token: the first key number of the last position, per layer
    api.setLive(sec, "kvgrid.positions", P);
    api.setLive(sec, "kvgrid.per_position", 2 * m.layers * m.kv_heads * m.head_dim);
    api.setLive(sec, "kvgrid.cached_numbers", held * 2 * m.kv_heads * m.head_dim);
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
    try { for (let i = 0; i < k && root.alive(); i++) { const evs = await r.cmd("step_token"); feed(evs); if (evs.some((e) => e.stop || e.next === "stop")) { oneB.disabled = tenB.disabled = true; break; } } }
    catch (e) { detail.textContent = String(e.message || e); } finally { busy = false; }
  };
  const oneB = button("One more token", "kv-more", more(1), "primary"), tenB = button("Ten more", "kv-more10", more(10));
  root.append(el("div", { class: "lp-controls" }, [oneB, tenB]), chart, detail);
  await r.start(api.payload(o, { stop_at_eos: false }));
  const evs = await r.stepTo("prefill"), pre = evs[2].prefill;
  const first = await r.cmd("step_token");
  const a = first.find((e) => e.append).append;
  cap = a.cache_cap;
  pts.push({ n: pre.positions, bytes: pre.positions * a.bytes_per_token });
  feed(first);
  api.setLive(sec, "kvcache.bytes_per_token", String(a.bytes_per_token));
  api.setLive(sec, "kvcache.bytes_per_token_h", IS.bytes(a.bytes_per_token));
  api.setLive(sec, "kvcache.capacity", cap);
  root.dataset.perToken = perTok;
  root.dataset.ready = "1";
  keepOpen(root, sec, r);
});

// ---------- the memory budget ----------

register("memory-budget", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  let m, mem, perTok;
  try {
    m = (await r.start(api.payload(o, { max_new_tokens: 1 }))).payload.model;
    const evs = await r.cmd("run"), a = evs.find((e) => e.append).append;
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
  const legend = el("p", { class: "small legend" }, [el("span", { class: "key s-accent" }), " weights (shared) · ", el("span", { class: "key s-good" }), " KV cache (one per request)"]);
  root.append(el("div", { class: "lp-controls" }, [rs, cs]), bar, legend, text,
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
  // one open session each for the cache on and off; reset reruns it
  const rs = [new api.Run(), new api.Run()], started = [false, false];
  const one = async (noCache) => {
    const k = noCache ? 1 : 0, r = rs[k];
    if (started[k]) await r.cmd("reset"); else { await r.start(api.payload(o, { no_cache: noCache, stop_at_eos: false })); started[k] = true; }
    const evs = await r.cmd("run"), s = evs.find((e) => e.stop).stop;
    return { text: s.text, itl: s.timings.itl_model_ms || [] };
  };
  const on = [], off = [];
  let texts = [];
  try {
    await one(false); await one(true);
    for (let k = 0; k < reps && root.alive(); k++) {
      status.textContent = "Run " + (k + 1) + " of " + reps + "…";
      const a = await one(false), b = await one(true);
      on.push(a.itl); off.push(b.itl);
      texts = [a.text, b.text];
    }
  } finally { rs.forEach((r) => r.close()); }
  if (!root.alive()) return;
  // per token: the median over runs
  const perTok = (runs) => runs[0].map((_, i) => median(runs.map((x) => x[i])));
  const pOn = perTok(on), pOff = perTok(off), yMax = Math.max(...pOn, ...pOff) * 1.1;
  status.textContent = "Model time of each decode step (the forward pass alone), median of " + reps + " runs after a warm-up.";
  const charts = el("div", { class: "lp-pair" });
  root.append(charts);
  // both boxes in place first, so each is measured at its final width
  const series = [["cache on", pOn, "l-accent"], ["cache off", pOff, "l-warn"]].map(([name, pts, cls]) => {
    const c = el("div", { class: "chart", "data-testid": "cache-chart-" + (name === "cache on" ? "on" : "off") });
    charts.append(el("figure", {}, [el("figcaption", { class: "small", text: name }), c]));
    return [name, pts, cls, c];
  });
  for (const [name, pts, cls, c] of series) {
    line(c, { points: pts.map((y, i) => ({ x: i + 2, y, title: "token " + (i + 2) + ": " + IS.ms(y) + " ms" })), height: 170, yMax, cls, xTitle: "generated token", yTitle: "model ms", xInt: true, yFmt: (t) => IS.fmt(t, 2), aria: name + ": model time per token" });
  }
  const mOn = median(pOn), mOff = median(pOff), same = texts[0] === texts[1];
  root.append(el("p", { "data-testid": "cache-same", "data-same": String(same), text: (same ? "Same text with the cache on and off ✓ " : "The texts differ ✗ ") + "“" + texts[0].slice(0, 70) + "…”" }));
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

// ---------- the context limit ----------

// context-limit: a run that cannot stop any other way (the end token is
// ignored, the output limit is above the room left) streams its tokens; the
// chart shows the cache's positions climbing to the context and the run
// stopping there, and the text's end shows it stopped mid-sentence.
register("context-limit", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run(), pts = [];
  const chart = el("div", { class: "chart", "data-testid": "ctx-chart" });
  const stopLine = el("p", { class: "lp-detail", "data-testid": "lesson-stop", "aria-live": "polite" });
  const tail = el("p", { class: "gen mono small", "data-testid": "ctx-tail" });
  root.append(chart, stopLine, tail);
  try {
    const cap = (await r.start(api.payload(o, { stop_at_eos: false }))).payload.model.context;
    let text = "", timer = 0;
    const draw = () => {
      timer = 0;
      if (!root.alive()) return;
      line(chart, { points: pts, step: true, dots: false, height: 180, xTitle: "generated tokens", yTitle: "positions in the cache", xMin: 0, xInt: true,
        yMax: cap * 1.1, yFmt: (t) => IS.fmt(t, 0), hline: { y: cap, label: "context: " + cap + " positions", testid: "ctx-cap" },
        aria: "Positions in the KV cache against generated tokens, up to the context of " + cap });
    };
    // the run's events as they come; a panel that re-ran closes its run
    await r.cmd("run", undefined, (ev) => {
      if (!root.alive()) { r.close(); return; }
      if (ev.prefill) pts.push({ x: 0, y: ev.prefill.positions });
      if (ev.append) {
        pts.push({ x: ev.append.step + 1, y: ev.append.cache_len });
        text += ev.append.text;
        stopLine.textContent = "Running: " + ev.append.cache_len + " of " + cap + " positions used.";
        if (!timer) timer = setTimeout(draw, 100); // at most ten drawings a second
      }
      if (ev.stop) {
        clearTimeout(timer);
        draw();
        const s = ev.stop, used = pts[pts.length - 1].y;
        stopLine.dataset.reason = s.reason;
        stopLine.textContent = "Stopped: " + IS.stopReason(s.reason, s.generated) + " (cache " + used + " of " + cap + " positions).";
        tail.textContent = "…" + Array.from(s.text || text).slice(-80).join("");
        api.setLive(sec, "context.cap", cap);
        api.setLive(sec, "context.generated", s.generated);
        api.setLive(sec, "context.reason", IS.stopReason(s.reason, s.generated));
      }
    }).catch((err) => { if (root.alive()) throw err; });
  } finally { r.close(); }
});
