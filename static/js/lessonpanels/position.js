// position.js: the lesson panel "Position matters" — one token that occurs
// twice in the prompt, its vectors once position is applied (a model with
// RoPE: the first layer's keys as the cache holds them, rotated pair by
// pair; a model with learned position vectors: the token's row plus each
// position's vector), and two prompts with the same tokens in another
// order, run for real, their top next tokens side by side.
import * as IS from "../core.js";
import * as P from "../panels.js";
import { register } from "./registry.js";
import { mount, slider, wrapTable } from "./util.js";

const el = IS.el;
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}
function norm(v) { let s = 0; for (const x of v) s += x * x; return Math.sqrt(s); }
function maxDiff(a, b) { let d = 0; a.forEach((x, i) => { d = Math.max(d, Math.abs(x - b[i])); }); return d; }
// small: a tiny difference as the page writes it
export function small(x) { return x === 0 ? "0" : x < 1e-3 ? x.toExponential(1) : IS.fmt(x, 4); }

// strip draws a vector as one row of coloured cells (blue negative, red positive).
function strip(v, mx, label, testid) {
  const n = v.length, cell = Math.max(2, Math.min(14, Math.floor(320 / n))), dpr = window.devicePixelRatio || 1;
  const c = el("canvas", { width: String(Math.ceil(n * cell * dpr)), height: String(Math.ceil(16 * dpr)), role: "img", "data-testid": testid, "aria-label": label + ": " + n + " numbers, length " + IS.fmt(norm(v), 4) });
  c.style.width = n * cell + "px";
  c.style.height = "16px";
  const g = c.getContext("2d"), dark = IS.isDark();
  g.scale(dpr, dpr);
  v.forEach((x, i) => { g.fillStyle = IS.heat(x, mx, dark); g.fillRect(i * cell, 0, cell - (cell > 3 ? 1 : 0), 16); });
  return el("div", { class: "pos-strip" }, [el("p", { class: "small pos-strip-label", text: label + " · length " + IS.fmt(norm(v), 4) }), c]);
}

// pairs: the (x, y) halves RoPE rotates together, by the model's convention
function pairs(hd, adjacent) {
  const out = [];
  for (let j = 0; j < hd / 2; j++) out.push(adjacent ? [2 * j, 2 * j + 1] : [j, j + hd / 2]);
  return out;
}

// dial draws one pair of both positions as two arrows from a centre.
function dial(j, pa, pb, la, lb) {
  const R = 22, S = 56, len = Math.max(Math.hypot(...pa), Math.hypot(...pb)) || 1;
  const g = svg("svg", { width: S, height: S + 14, viewBox: "0 0 " + S + " " + (S + 14), role: "img", class: "pos-dial" });
  const angA = Math.atan2(pa[1], pa[0]), angB = Math.atan2(pb[1], pb[0]);
  let d = (angB - angA) * 180 / Math.PI;
  d = ((d + 540) % 360) - 180;
  g.setAttribute("aria-label", "pair " + j + ": " + la + " and " + lb + " are " + IS.fmt(Math.abs(d), 0) + " degrees apart, lengths " + IS.fmt(Math.hypot(...pa), 3) + " and " + IS.fmt(Math.hypot(...pb), 3));
  g.append(svg("circle", { cx: S / 2, cy: S / 2, r: R, class: "pos-dial-ring" }));
  for (const [p, cls] of [[pa, "pos-dial-a"], [pb, "pos-dial-b"]]) {
    g.append(svg("line", { x1: S / 2, y1: S / 2, x2: S / 2 + R * p[0] / len, y2: S / 2 - R * p[1] / len, class: cls }));
  }
  const tx = svg("text", { x: S / 2, y: S + 11, "text-anchor": "middle", class: "pos-dial-text" });
  tx.textContent = "#" + j + " " + IS.fmt(d, 0) + "°";
  g.append(tx);
  return { node: g, deg: d };
}

register("position", async (o, out, sec, api) => {
  const root = mount(out);
  const status = el("p", { class: "small muted", text: "Running…" });
  root.append(status);
  const A = o.prompt || "", B = o.compare || "";
  // 1. one token at two positions
  const r = new api.Run();
  let m, t, e, pair = null, kvA = null, kvB = null, windowNote = "";
  try {
    m = (await r.start(api.payload(Object.assign({}, o, { prompt: A, temperature: "0" })))).payload.model;
    const evs = await r.stepTo("prefill");
    t = evs[0].tokenize;
    e = evs[1].embed;
    // every repeat of a token with its previous occurrence, the first one first
    const repeats = [], seen = new Map();
    t.tokens.forEach((k, p) => {
      if (k.special) return;
      if (seen.has(k.id)) repeats.push([seen.get(k.id), p]);
      seen.set(k.id, p);
    });
    if (repeats.length && m.shape.rope) {
      // a sliding-window first layer keeps its last positions only: then the
      // latest repeat whose both positions it still holds
      for (const cand of [repeats[0], ...repeats.slice(1).reverse()]) {
        try {
          kvA = (await r.cmd("inspect", { what: "kv", layer: 0, pos: cand[0] })).payload;
          kvB = (await r.cmd("inspect", { what: "kv", layer: 0, pos: cand[1] })).payload;
          pair = cand;
          break;
        } catch (err) {
          if (!/sliding window/.test(err.message)) throw err;
          windowNote = err.message;
        }
      }
    } else pair = repeats[0] || null;
  } finally { r.close(); }
  if (!root.alive()) return;
  // 2. the same tokens in another order: two real runs
  const order = [];
  for (const prompt of [A, B]) {
    const q = new api.Run();
    try {
      await q.start(api.payload(Object.assign({}, o, { prompt, temperature: "0" })));
      const evs = await q.stepTo("logits");
      order.push({ prompt, t: evs[0].tokenize, lg: evs[evs.length - 1].logits });
    } finally { q.close(); }
    if (!root.alive()) return;
  }
  IS.clear(root);

  const one = el("div", { class: "pos-one", "data-testid": "pos-one" });
  root.append(el("p", { class: "lp-sub" }, [el("b", { text: "One token at two positions" })]), one);
  if (!pair && windowNote) {
    one.append(el("p", { "data-testid": "pos-window", text: "This model's first block attends over a sliding window, and its cache keeps only those positions: " + windowNote.replace(/^position/, "position") +
      ". No repeated token has both its positions inside the window: write one word twice, close together, and press Run." }));
  } else if (!pair) {
    one.append(el("p", { text: "No token repeats in this prompt: write one word twice (with a space before it both times) and press Run." }));
  } else {
    const [a, b] = pair, lab = IS.tokenLabel(t.tokens[a]);
    const where = (p) => "“" + lab + "” at position " + p;
    let lenA, lenB, diff, extra = "", sameLen;
    if (m.shape.rope) {
      const adjacent = /adjacent/.test(m.position || ""), hd = m.head_dim, prs = pairs(hd, adjacent);
      let H = 0;
      const box = el("div", { class: "pos-rope", "data-testid": "pos-rope" });
      const draw = () => {
        IS.clear(box);
        const ka = kvA.keys[H], kb = kvB.keys[H];
        const mx = Math.max(...ka.map(Math.abs), ...kb.map(Math.abs));
        let pd = 0;
        const dials = el("div", { class: "pos-dials", "data-testid": "pos-dials" }), degs = [];
        prs.forEach(([i, k], j) => {
          const pa = [ka[i], ka[k]], pb = [kb[i], kb[k]];
          pd = Math.max(pd, Math.abs(Math.hypot(...pa) - Math.hypot(...pb)));
          const d = dial(j, pa, pb, "position " + a, "position " + b);
          degs.push(d.deg);
          dials.append(d.node);
        });
        lenA = norm(ka); lenB = norm(kb); diff = maxDiff(ka, kb);
        sameLen = Math.abs(lenA - lenB) <= 1e-4 * Math.max(1, lenA);
        box.append(strip(ka, mx, "key of " + where(a) + ", layer 0, key/value head " + H, "pos-key-a"), strip(kb, mx, "key of " + where(b) + ", layer 0, key/value head " + H, "pos-key-b"),
          el("p", { class: "small", text: "Each dial is one pair of numbers that the rotation turns together, both positions drawn: " }, [el("span", { class: "key pos-key-a" }), " position " + a + " · ", el("span", { class: "key pos-key-b" }), " position " + b + ". The angle between them is what moving the token " + (b - a) + " positions added."]),
          dials,
          el("p", { "data-testid": "pos-rope-sum", "data-head": String(H), "data-pos-a": String(a), "data-pos-b": String(b), "data-id": String(t.tokens[a].id), "data-len-a": String(lenA), "data-len-b": String(lenB),
            "data-pair-diff": String(pd), "data-diff": String(diff), "data-degrees": JSON.stringify(degs),
            text: "The two keys differ by up to " + IS.fmt(diff, 4) + " in a number, yet pair by pair their lengths agree to " + small(pd) + ", and the whole vectors have the same length (" + IS.fmt(lenA, 4) + " and " + IS.fmt(lenB, 4) +
              "): the same key, turned by a different angle in each pair. In the first layer nothing but the rotation tells the two apart: the token's own key, before rotation, is the same at every position." }));
        extra = "the key was rotated, pair by pair: each pair kept its length and turned by an angle that grows with the position";
        api.setLive(sec, "position.pair_diff", small(pd));
      };
      const hs = slider("key/value head", "pos-head", 0, m.kv_heads - 1, 1, 0, (v) => { H = v; draw(); return String(v); });
      one.append(el("div", { class: "lp-controls" }, [hs]), box);
      hs.update();
    } else {
      const pa = e.positions[a], pb = e.positions[b];
      const mx = Math.max(...[pa.token_vec, pa.pos_vec, pb.pos_vec, pa.sum, pb.sum].flatMap((v) => v.map(Math.abs)));
      lenA = norm(pa.sum); lenB = norm(pb.sum); diff = maxDiff(pa.sum, pb.sum);
      sameLen = Math.abs(lenA - lenB) <= 1e-4 * Math.max(1, lenA);
      one.append(el("div", { class: "pos-learned", "data-testid": "pos-learned" }, [
        strip(pa.token_vec, mx, "token row of “" + lab + "” (the same at both positions: they differ by " + small(maxDiff(pa.token_vec, pb.token_vec)) + ")", "pos-token"),
        strip(pa.pos_vec, mx, "position vector " + a, "pos-vec-a"), strip(pb.pos_vec, mx, "position vector " + b, "pos-vec-b"),
        strip(pa.sum, mx, "token row + position vector " + a, "pos-sum-a"), strip(pb.sum, mx, "token row + position vector " + b, "pos-sum-b"),
        el("p", { "data-testid": "pos-learned-sum", "data-pos-a": String(a), "data-pos-b": String(b), "data-len-a": String(lenA), "data-len-b": String(lenB), "data-diff": String(diff),
          text: "The sums differ by up to " + IS.fmt(diff, 4) + " in a number; their lengths are " + IS.fmt(lenA, 4) + " and " + IS.fmt(lenB, 4) + "." })]));
      extra = "a different position vector was added to the same token row, so the sum changed its direction and its length";
    }
    api.setLive(sec, "position.token", "“" + lab + "”");
    api.setLive(sec, "position.pos_a", a);
    api.setLive(sec, "position.pos_b", b);
    api.setLive(sec, "position.len_a", IS.fmt(lenA, 4));
    api.setLive(sec, "position.len_b", IS.fmt(lenB, 4));
    api.setLive(sec, "position.diff", IS.fmt(diff, 4));
    api.setLive(sec, "position.how", extra);
    api.setLive(sec, "position.lengths", sameLen ? "the same length" : "different lengths");
  }

  // the same tokens, another order
  const [x, y] = order, ids = (k) => k.t.tokens.map((tk) => tk.id).sort((p, q) => p - q).join(",");
  const sameTokens = ids(x) === ids(y) && x.prompt !== y.prompt;
  const rows = [0, 1, 2, 3, 4].map((i) => {
    const a = x.lg.top[i], b = y.lg.top[i];
    return [i + 1, a ? IS.tokenLabel(a) : "", a ? IS.fmt(a.prob, 4) : "", b ? IS.tokenLabel(b) : "", b ? IS.fmt(b.prob, 4) : ""];
  });
  const topX = x.lg.top[0], topY = y.lg.top[0];
  root.append(el("p", { class: "lp-sub" }, [el("b", { text: "The same tokens in another order" })]),
    el("p", { class: "small" }, [el("span", { class: "mono", text: "A: " + x.prompt }), el("br"), el("span", { class: "mono", text: "B: " + y.prompt })]),
    el("p", { class: sameTokens ? "ok" : "lp-stopline", "data-testid": "pos-same-tokens", "data-same": String(sameTokens),
      text: sameTokens ? "A and B are the same " + x.t.count + " tokens in another order ✓" : "A and B are not the same tokens in another order: their token ids differ (edit the prompt to swap two words)." }),
    wrapTable(api.table(["rank", "token after A", P.P1 + " (A)", "token after B", P.P1 + " (B)"], rows)),
    el("p", { "data-testid": "pos-order", "data-top-a": String(topX.id), "data-top-b": String(topY.id), "data-same-tokens": String(sameTokens),
      text: "Top next token: “" + IS.tokenLabel(topX) + "” after A, “" + IS.tokenLabel(topY) + "” after B." }));
  api.setLive(sec, "position.count", x.t.count);
  api.setLive(sec, "position.top_a", "“" + IS.tokenLabel(topX) + "”");
  api.setLive(sec, "position.top_b", "“" + IS.tokenLabel(topY) + "”");
  api.setLive(sec, "position.p_a", IS.fmt(topX.prob, 4));
  api.setLive(sec, "position.p_b", IS.fmt(topY.prob, 4));
  api.setLive(sec, "position.order", !sameTokens ? "do not hold the same tokens, so this comparison says nothing about order" :
    topX.id !== topY.id ? "hold the same tokens, and the model predicts differently: it reads their order" : "hold the same tokens, and the top prediction is the same this time, though its probability moved from " + IS.fmt(topX.prob, 4) + " to " + IS.fmt(topY.prob, 4));
  root.dataset.ready = "1";
});
