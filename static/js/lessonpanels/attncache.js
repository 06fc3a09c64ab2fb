// attncache.js: the lesson panel "Attention under the cache" — one decode
// step of one head, with the engine's numbers (inspect what: attention):
// the newest token's query against every key (each marked read from the
// cache or computed in this step), the scores q·k and q·k/√d, the softmax
// weights and the weighted mix of the values. The same step runs with the
// cache off, where every earlier key is recomputed. This page recomputes
// the scores, the softmax and the mix from the query, keys and values the
// server sent and shows how far they are from the engine's.
import * as IS from "../core.js";
import { register } from "./registry.js";
import { mount, slider, wrapTable, keepOpen } from "./util.js";
import { small } from "./position.js";

const el = IS.el;

export const COMPARES = ["only its own key", "only the keys read from the cache", "every key: those read from the cache and its own"];

// recompute: scores, softmax and mix from the view's vectors, in float64
export function recompute(a) {
  const hd = a.head_dim, scale = 1 / Math.sqrt(hd);
  const scaled = a.keys.map((k) => { let s = 0; for (let i = 0; i < hd; i++) s += a.query[i] * k.key[i]; return s * scale; });
  const mx = Math.max(...scaled);
  const ex = scaled.map((s) => Math.exp(s - mx)), z = ex.reduce((x, y) => x + y, 0), w = ex.map((x) => x / z);
  const mix = new Array(hd).fill(0);
  a.keys.forEach((k, p) => { for (let i = 0; i < hd; i++) mix[i] += w[p] * k.value[i]; });
  let dw = 0, dm = 0;
  w.forEach((x, p) => { dw = Math.max(dw, Math.abs(x - a.keys[p].weight)); });
  mix.forEach((x, i) => { dm = Math.max(dm, Math.abs(x - a.output[i])); });
  return { scaled, w, mix, dw, dm };
}

register("attention-cache", async (o, out, sec, api) => {
  const root = mount(out), on = new api.Run(), off = new api.Run();
  const status = el("p", { class: "small muted", text: "One decode step with the cache on and one with it off…" });
  root.append(status);
  let m;
  const prep = async (r, noCache) => {
    const st = await r.start(api.payload(Object.assign({}, o, { temperature: "0" }), { no_cache: noCache, max_new_tokens: 4, stop_at_eos: false }));
    m = st.payload.model;
    await r.stepTo("prefill");
    return r.cmd("step_token"); // its append runs the newest token through the model
  };
  let evOn, evOff;
  try { evOn = await prep(on, false); evOff = await prep(off, true); } catch (err) { on.close(); off.close(); throw err; }
  if (!root.alive()) { on.close(); off.close(); return; }
  const newest = evOn.find((e) => e.append).append, newestOff = evOff.find((e) => e.append).append;
  let L = 0, H = 0, busy = 0;
  const view = el("div", { class: "attn-view", "data-testid": "attn-view", "aria-live": "polite" });
  const look = async (r, l, h) => (await r.cmd("inspect", { what: "attention", layer: l, head: h })).payload.attention;
  const draw = async () => {
    const my = ++busy, l = L, h = H;
    let a, b;
    try { a = await look(on, l, h); b = await look(off, l, h); } catch (err) { if (my === busy && root.alive()) { IS.clear(view); view.append(el("p", { class: "error", text: String(err.message || err) })); } return; }
    if (my !== busy || !root.alive()) return;
    IS.clear(view);
    const n = a.keys.length, rc = recompute(a), rcOff = recompute(b);
    const read = a.keys.filter((k) => k.cached).length, fresh = n - read;
    const recomputed = b.keys.filter((k, p) => !k.cached && p < n - 1).length;
    let onOff = 0;
    a.keys.forEach((k, p) => { onOff = Math.max(onOff, Math.abs(k.weight - b.keys[p].weight)); });
    const label = (k) => IS.tokenLabel({ text: k.text, piece: k.token, special: k.pos === 0 && !k.text });
    const top = a.keys.reduce((x, y) => (y.weight > x.weight ? y : x));
    view.append(el("p", { "data-testid": "attn-head", text: "Layer " + l + ", query head " + h + " (it reads key/value head " + a.kv_head + "): the query of “" + label(a.keys[n - 1]) + "”, position " + (n - 1) + ", against " + n + " keys." }));
    const mark = (k, p, off) => (p === n - 1 ? "new" : k.cached ? "read" : off ? "recomputed" : "new");
    const rows = a.keys.map((k, p) => {
      const bar = el("span", { class: "attn-bar" });
      bar.style.width = Math.max(1, Math.round(100 * k.weight)) + "%";
      return el("tr", { "data-testid": "attn-row", "data-pos": String(p), "data-on": mark(k, p, false), "data-off": mark(b.keys[p], p, true) }, [
        el("td", { class: "mono", text: String(p) }),
        el("td", { class: "n-token mono", text: label(k) }),
        el("td", { class: "attn-src src-" + mark(k, p, false), text: mark(k, p, false) }),
        el("td", { class: "attn-src src-" + mark(b.keys[p], p, true), text: mark(b.keys[p], p, true) }),
        el("td", { class: "mono", text: IS.fmt(k.score, 3) }),
        el("td", { class: "mono", text: IS.fmt(k.scaled, 3) }),
        el("td", { class: "mono attn-w" }, [el("span", { text: IS.fmt(k.weight, 4) }), el("span", { class: "attn-track" }, [bar])]),
      ]);
    });
    const t = el("table", { class: "lesson-table attn-table" }, [
      el("tr", {}, ["position", "token", "key, cache on", "key, cache off", "q·k", "q·k / √" + a.head_dim, "softmax weight"].map((x) => el("th", { scope: "col", text: x }))), ...rows]);
    view.append(wrapTable(t));
    // the weighted mix of the values: the head's output, one cell per number
    const mx = Math.max(...rc.mix.map(Math.abs), 1e-9), cells = el("div", { class: "attn-mix", role: "img", "data-testid": "attn-mix",
      "aria-label": "the weighted mix of the values: " + a.head_dim + " numbers, from " + IS.fmt(Math.min(...rc.mix), 3) + " to " + IS.fmt(Math.max(...rc.mix), 3) });
    rc.mix.forEach((x) => { const c = el("span", { class: "attn-cell", title: IS.fmt(x, 4) }); c.style.background = IS.heat(x, mx); cells.append(c); });
    view.append(el("p", { class: "small", text: "The weighted mix of the values, Σ weight × value over the " + n + " positions (blue negative, red positive): the head's output before the output projection mixes the heads." }), cells);
    view.append(el("p", { "data-testid": "attn-checks", "data-softmax-diff": String(rc.dw), "data-mix-diff": String(rc.dm), "data-onoff-diff": String(onOff), "data-off-softmax-diff": String(rcOff.dw),
      "data-read": String(read), "data-new": String(fresh), "data-recomputed": String(recomputed), "data-keys": String(n), "data-layer": String(l), "data-head": String(h), "data-weights": JSON.stringify(a.keys.map((k) => k.weight)),
      text: "Computed again in this page from the query, keys and values the server sent: softmax(q·k/√d) matches the engine's weights to within " + small(rc.dw) + ", and the mix matches its output to within " + small(rc.dm) +
        ". With the cache on this step computed " + fresh + " key and value and read " + read + " from the cache; with it off it computed all " + n + ", " + recomputed + " of them again, and the weights agree with the cache-on run to within " + small(onOff) + "." }));
    view.dataset.layer = l;
    view.dataset.head = h;
    const compares = read === n - 1 && fresh === 1 ? COMPARES[2] : read === 0 ? COMPARES[0] : COMPARES[1];
    api.setLive(sec, "attn.layer", l);
    api.setLive(sec, "attn.head", h);
    api.setLive(sec, "attn.token", "“" + label(a.keys[n - 1]) + "”");
    api.setLive(sec, "attn.keys", n);
    api.setLive(sec, "attn.read", read);
    api.setLive(sec, "attn.recomputed", recomputed);
    api.setLive(sec, "attn.top_token", "“" + label(top) + "”");
    api.setLive(sec, "attn.top_pos", top.pos);
    api.setLive(sec, "attn.top_weight", IS.fmt(top.weight, 4));
    api.setLive(sec, "attn.softmax_diff", small(rc.dw));
    api.setLive(sec, "attn.mix_diff", small(rc.dm));
    api.setLive(sec, "attn.onoff_diff", small(onOff));
    api.setLive(sec, "attn.compares", compares);
    root.dataset.drawn = String(l) + "/" + String(h);
  };
  IS.clear(root);
  // a slider draws when it moved (update() below only writes its value)
  const ls = slider("layer", "attn-layer", 0, m.layers - 1, 1, 0, (v) => { if (v !== L) { L = v; draw(); } return String(v); });
  const hs = slider("query head", "attn-head", 0, m.heads - 1, 1, 0, (v) => { if (v !== H) { H = v; draw(); } return String(v); });
  root.append(el("p", { class: "small", text: "Prompt, then one greedy token: “" + IS.tokenLabel({ text: newest.text, piece: newest.piece }) + "” joined at position " + (newest.cache_len - 1) +
    (newestOff.id === newest.id ? " (the same token with the cache off)." : " (the cache-off run chose “" + IS.tokenLabel({ text: newestOff.text, piece: newestOff.piece }) + "”).") }),
  el("div", { class: "lp-controls" }, [ls, hs]), view,
  el("p", { class: "small legend" }, [el("span", { class: "key src-read" }), " read: computed by an earlier step, read from the cache · ", el("span", { class: "key src-new" }), " new: computed in this step · ",
    el("span", { class: "key src-recomputed" }), " recomputed: computed again in this step (cache off)"]));
  ls.update();
  hs.update();
  await draw();
  api.setLive(sec, "attn.compares_options", COMPARES);
  root.dataset.ready = "1";
  keepOpen(root, sec, { close: () => { on.close(); off.close(); } });
});
