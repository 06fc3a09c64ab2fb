// aftersend.js: the live panels of the lesson "What happens after you press
// send" — tokens with their bytes, the same token's embedding row, prefill
// as one pass against one position at a time, the model view, the decode
// loop stepped by hand, the four stop conditions, a busy server, and stage
// timings measured as model time (warm-up, then medians of several runs).
import * as IS from "../core.js";
import * as P from "../panels.js";
import { hbars, line } from "../charts.js";
import { ModelView } from "../modelview.js";
import { register } from "./registry.js";
import { busyFigures } from "../classrequest.js";
import { mount, median, sum, button, wrapTable, css, hex, keepOpen, pace } from "./util.js";

const el = IS.el;

// ---------- tokens and their bytes ----------

// tokenBytes is the slice of the text's UTF-8 bytes a token covers.
function tokenBytes(enc, tok) { return enc.slice(tok.start, tok.end); }

function describeToken(t, enc, i) {
  const tok = t.tokens[i], b = tokenBytes(enc, tok);
  const head = "Token " + (i + 1) + " · id " + tok.id + " · ";
  if (tok.start === tok.end) return head + "inserted by the application: it covers no bytes of your text (vocabulary piece " + JSON.stringify(tok.piece) + ")";
  const txt = IS.isPartial(tok) ? "part of a character" : "“" + IS.visible(new TextDecoder().decode(b)) + "”";
  return head + b.length + (b.length === 1 ? " byte: " : " bytes: ") + hex(b) + " = " + txt + " · the vocabulary spells it " + JSON.stringify(tok.piece);
}

register("bytes", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  try {
    await r.start(api.payload(o));
    const t = (await r.step()).tokenize, enc = new TextEncoder().encode(t.text);
    const detail = el("p", { class: "lp-detail mono small", "data-testid": "byte-detail", "aria-live": "polite" });
    const box = el("div", { class: "chips" });
    const show = (i) => { detail.textContent = describeToken(t, enc, i); detail.dataset.i = i; };
    P.tokenChips(box, t, { button: true, onPick: show, onHover: (i, on) => { if (on) show(i); } });
    // the tooltip says which bytes the chip covers, as bytes
    box.querySelectorAll(".chip").forEach((c, i) => { c.title = describeToken(t, enc, i); c.dataset.hex = hex(tokenBytes(enc, t.tokens[i])); });
    root.append(box, detail);
    show(t.tokens.findIndex((k) => k.start !== k.end) >= 0 ? t.tokens.findIndex((k) => k.start !== k.end) : 0);
    // what the marks mean, for the tokens this prompt actually has
    const notes = [];
    const bos = t.tokens.find((k) => k.special && k.start === k.end);
    if (bos) notes.push("The first chip, " + bos.piece + " (id " + bos.id + "), is the start-of-text token: the application puts it in front of every prompt so the model knows where a text begins. It covers none of your bytes.");
    const marks = [["Ġ", "a byte-level tokenizer writes every byte as a printable character, and the space byte (20) becomes Ġ"], ["▁", "a SentencePiece tokenizer writes a space as ▁"]];
    let mark = "";
    for (const [m, why] of marks) if (t.tokens.some((k) => !k.special && k.piece && k.piece.includes(m))) { mark = m; notes.push("In the vocabulary a leading space is spelled " + m + ": " + why + ". The chips show it as ␣; hover a chip to see its bytes and its spelling."); }
    const chars = Array.from(t.text);
    const partial = t.tokens.filter((k) => k.partial).length, firstPartial = box.querySelector(".chip.partial .chip-text");
    api.setLive(sec, "tokens.byte_example", firstPartial ? firstPartial.textContent : "<C3>");
    if (partial) notes.push(partial + " chips show raw bytes such as " + firstPartial.textContent + ": a character that takes several bytes in UTF-8 and has no piece of its own in the vocabulary is split into one token per byte (or per few bytes).");
    root.append(el("ul", { class: "small lp-notes", "data-testid": "token-notes" }, notes.map((n) => el("li", { text: n }))));
    api.setLive(sec, "tokens.count", t.count);
    api.setLive(sec, "tokens.chars", chars.length);
    api.setLive(sec, "tokens.bytes", enc.length);
    api.setLive(sec, "tokens.added", t.added_by_app);
    api.setLive(sec, "tokens.byte_tokens", partial);
    api.setLive(sec, "tokens.space_mark", mark || "␣");
    root.dataset.count = t.count;
  } finally { r.close(); }
});

// ---------- the same token, the same row ----------

register("same-row", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run();
  try {
    await r.start(api.payload(o));
    const evs = await r.stepTo("embed"), t = evs[0].tokenize, e = evs[1].embed;
    const seen = new Map();
    let pair = null;
    e.positions.forEach((p) => {
      if (t.tokens[p.pos].special || pair) return;
      if (seen.has(p.id)) pair = [seen.get(p.id), p]; else seen.set(p.id, p);
    });
    if (!pair) { root.append(el("p", { text: "No token repeats in this prompt: write one word twice (with a space before it both times) and press Run." })); return; }
    const [a, b] = pair, label = IS.tokenLabel(t.tokens[a.pos]);
    let diff = 0, sdiff = 0;
    a.token_vec.forEach((v, i) => { diff = Math.max(diff, Math.abs(v - b.token_vec[i])); sdiff = Math.max(sdiff, Math.abs(a.sum[i] - b.sum[i])); });
    root.append(el("div", { class: "chips" }, t.tokens.map((k, i) => el("span", { class: "chip c" + (i % 5) + (i === a.pos || i === b.pos ? " lp-same" : "") + (k.special ? " special" : ""), text: IS.tokenLabel(k) }))));
    root.append(P.strip("row " + a.id + " at position " + a.pos + " (“" + label + "”)", a.token_vec, a.token_norm), P.strip("row " + b.id + " at position " + b.pos + " (“" + label + "”)", b.token_vec, b.token_norm));
    const same = diff === 0 ? "identical: all " + e.dim + " numbers equal" : "largest difference " + IS.fmt(diff, 6);
    root.append(el("p", { "data-testid": "same-row", "data-diff": String(diff), "data-id": a.id, text: "Token “" + label + "” (id " + a.id + ") at positions " + a.pos + " and " + b.pos + ": " + same + "." }));
    root.append(el("p", { class: "small", text: a.pos_vec ? "What enters the first layer differs (largest difference " + IS.fmt(sdiff, 4) + "): a learned position vector was added to each." :
      "What enters the first layer is the same row at both positions (largest difference " + IS.fmt(sdiff, 4) + "): " + e.method }));
    api.setLive(sec, "embed.repeat", "“" + label + "”");
    api.setLive(sec, "embed.positions", a.pos + " and " + b.pos);
    api.setLive(sec, "embed.diff", diff === 0 ? "nothing: all " + e.dim + " numbers are equal" : "at most " + IS.fmt(diff, 6));
    api.setLive(sec, "embed.dim", e.dim);
  } finally { r.close(); }
});

// ---------- prefill: one pass against one position at a time ----------

// onePass runs prefill as the engine does it: every prompt position in one
// forward pass. r is kept open between repetitions (reset restarts it).
async function onePass(r, api, o, again) {
  if (again) await r.cmd("reset"); else await r.start(api.payload(o, { max_new_tokens: 1 }));
  const evs = await r.stepTo("logits");
  const v = (await r.cmd("get_logits")).payload.values;
  return { ms: evs[2].prefill.model_ms, t: evs[0].tokenize, pre: evs[2].prefill, top: evs[3].logits.top[0], logits: v };
}

// stepwise feeds the same prompt one position per forward pass: start from
// the start-of-text token alone, then force each prompt token in turn.
async function stepwise(r, api, o, t, again) {
  const n = t.tokens.length;
  if (again) await r.cmd("reset"); else await r.start(api.payload(Object.assign({}, o, { prompt: "" }), { max_new_tokens: n, stop_at_eos: false, stop_strings: [] }));
  const evs = await r.stepTo("prefill");
  const times = [evs[2].prefill.model_ms];
  for (let i = 1; i < n; i++) {
    await pace(r);
    const got = await r.cmd("force", { id: t.tokens[i].id });
    const a = got.find((e) => e.append);
    if (!a) throw new Error("the run stopped before the whole prompt was fed");
    times.push(a.append.model_ms);
  }
  const lg = await r.step();
  const v = (await r.cmd("get_logits")).payload.values;
  return { ms: sum(times), passes: times.length, top: lg.logits.top[0], logits: v };
}

register("prefill-steps", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "3", 10), ra = new api.Run(), rb = new api.Run();
  const status = el("p", { class: "small muted", text: "Warming up…" });
  root.append(status);
  const one = [], steps = [];
  let first, last = null, lastOne;
  try {
    first = lastOne = await onePass(ra, api, o, false);
    if (!first.t.tokens[0].special) { root.append(el("p", { text: "This model has no start-of-text token to begin from, so the one-at-a-time run cannot start." })); return; }
    await stepwise(rb, api, o, first.t, false); // warm-up
    for (let k = 0; k < reps && root.alive(); k++) {
      status.textContent = "Run " + (k + 1) + " of " + reps + "…";
      lastOne = await onePass(ra, api, o, true);
      last = await stepwise(rb, api, o, first.t, true);
      one.push(lastOne.ms);
      steps.push(last.ms);
    }
  } finally { ra.close(); rb.close(); }
  if (!root.alive()) return;
  const n = first.t.count, m1 = median(one), m2 = median(steps);
  let diff = 0;
  lastOne.logits.forEach((x, i) => { diff = Math.max(diff, Math.abs(x - last.logits[i])); });
  status.textContent = "Model time only (the forward passes, as the engine timed them), median of " + reps + " runs after a warm-up.";
  const chart = el("div", { class: "chart", "data-testid": "prefill-compare" });
  root.append(chart);
  hbars(chart, { rows: [{ label: "one pass", values: [m1], title: n + " positions in one pass: " + IS.ms(m1) + " ms" }, { label: n + " passes", values: [m2], title: n + " passes of one position: " + IS.ms(m2) + " ms" }],
    series: [{ name: "model ms", cls: "s-accent" }], xTitle: "milliseconds of model time (median)", fmt: (v) => IS.ms(v) + " ms", tickFmt: (t) => IS.fmt(t, 1),
    aria: "Prefill of " + n + " positions: one pass " + IS.ms(m1) + " ms, one position per pass " + IS.ms(m2) + " ms" });
  chart.dataset.one = m1;
  chart.dataset.steps = m2;
  root.append(el("p", { "data-testid": "prefill-same", "data-diff": String(diff), text: "Both ways end with the same scores for the next token: top “" + IS.tokenLabel(lastOne.top) + "” both times, largest difference among all " +
    lastOne.logits.length + " logits " + IS.fmt(diff, 6) + " (rounding: the sums are added in a different order)." }));
  // the layers run one after another: the last position's vector after each
  const layers = first.pre.layers, bars = el("div", { class: "chart", "data-testid": "layer-bars" });
  root.append(el("p", { class: "small", text: "Inside the pass the layers run one after another; each takes every prompt position at once. The length of the last position's vector after each layer:" }), bars);
  hbars(bars, { rows: layers.map((l) => ({ label: "after layer " + l.layer, values: [l.residual_norm[l.residual_norm.length - 1]], title: "layer " + l.layer })),
    series: [{ name: "length", cls: "s-light" }], xTitle: "length (norm) of the last position's vector", fmt: (v) => IS.fmt(v, 2), tickFmt: (t) => IS.fmt(t, 0), aria: "Vector length after each layer" });
  api.setLive(sec, "prefill.positions", n);
  api.setLive(sec, "prefill.one_pass_ms", IS.ms(m1));
  api.setLive(sec, "prefill.steps_ms", IS.ms(m2));
  api.setLive(sec, "prefill.ratio", IS.fmt(m2 / m1, 1));
  api.setLive(sec, "prefill.max_diff", IS.fmt(diff, 6));
  api.setLive(sec, "prefill.layers", layers.length);
  api.setLive(sec, "prefill.choices", ["one pass", "one pass per position"]);
  api.setLive(sec, "prefill.faster", m1 < m2 ? "one pass" : "one pass per position");
});

// ---------- the model view as a lesson panel ----------

register("modelview", async (o, out, sec, api) => {
  css("/static/css/modelview.css");
  const root = mount(out), r = new api.Run(), labels = [];
  const box = el("div", { class: "lp-mv", "data-testid": "lesson-modelview" }), now = el("p", { class: "lp-now", "data-testid": "mv-now", "aria-live": "polite" });
  let chain = Promise.resolve();
  const mv = new ModelView(box, { label: (p) => labels[p] || String(p), onInspect: (req) => { chain = chain.then(() => r.cmd("inspect", req)).then((m) => mv.inspection(m.payload)).catch((e) => mv.inspectError(String(e.message || e))); } });
  const words = { tokenize: "the prompt became token ids", embed: "each id picked its row of the embedding table",
    prefill: "prefill: all prompt positions went through the blocks, block after block", logits: "the last position's vector became one score per vocabulary entry",
    sample: "the sampler chose a token", append: "the token joined the sequence; one decode pass (one position) went through every block and added its keys and values to each block's cache", stop: "the run stopped" };
  const feed = (ev) => {
    if (ev.tokenize) ev.tokenize.tokens.forEach((t, i) => { labels[i] = IS.tokenLabel(t); });
    if (ev.append) labels[ev.append.pos] = IS.tokenLabel({ piece: ev.append.piece, text: ev.append.text });
    mv.event(ev);
    now.textContent = "Last stage: " + (words[ev.stage] || ev.stage) + (ev.stop ? " (" + IS.stopReason(ev.stop.reason, ev.stop.generated) + ")" : "") + ".";
    now.dataset.stage = ev.stage;
    root.dataset.stage = ev.stage;
    api.setLive(sec, "modelview.stage", ev.stage);
  };
  const act = (f) => () => { if (root.dataset.busy) return; root.dataset.busy = "1"; chain = chain.then(f).catch((e) => { now.textContent = String(e.message || e); }).then(() => { delete root.dataset.busy; }); };
  const step = button("Step one stage", "mv-step", act(() => r.step().then(feed)));
  const tok = button("Next token", "mv-token", act(() => r.cmd("step_token").then((evs) => evs.forEach(feed))));
  root.append(el("div", { class: "lp-controls" }, [step, tok]), now, box);
  const m = await r.start(api.payload(o, { lens: true, max_new_tokens: parseInt(o.tokens || "6", 10) }));
  mv.setModel(m.payload.model);
  api.setLive(sec, "modelview.blocks", m.payload.model.layers);
  now.textContent = "Press “Step one stage” to run the next stage and watch it light up.";
  root.dataset.ready = "1";
  // the socket stays open while the student steps; it closes when the panel re-runs
  keepOpen(root, sec, r);
});

// ---------- the decode loop, stepped by hand ----------

register("loop", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run(), n = parseInt(o.tokens || "6", 10);
  const phases = [["logits", "1 calculate"], ["sample", "2 select"], ["append", "3 append"], ["stop", "4 stop or repeat"]];
  const cycle = el("ol", { class: "lp-cycle", "data-testid": "loop-cycle" }, phases.map(([s, w]) => el("li", { "data-stage": s, text: w })));
  const gen = el("p", { class: "gen mono", "data-testid": "loop-text" }, [el("span", { class: "gen-prompt", text: o.prompt })]);
  const log = el("ol", { class: "decode-log", "data-testid": "loop-log" });
  let last = {}, busy = false;
  const light = (stage) => cycle.querySelectorAll("li").forEach((li) => li.classList.toggle("on", li.dataset.stage === stage));
  const feed = (ev) => {
    light(ev.stage);
    root.dataset.stage = ev.stage;
    if (ev.logits) { last.logits = ev.logits; log.append(el("li", { text: "calculate: " + ev.logits.vocab + " scores at position " + ev.logits.pos + "; the top one is “" + IS.tokenLabel(ev.logits.top[0]) + "”" })); }
    if (ev.sample) { last.sample = ev.sample; log.append(el("li", { text: "select: “" + IS.tokenLabel(ev.sample.chosen) + "” (rank " + (ev.sample.chosen.rank + 1) + ", " + P.PK + " " + IS.fmt(ev.sample.chosen.prob_kept, 3) + ")" })); }
    if (ev.append) {
      gen.append(el("span", { class: "gen-tok", text: ev.append.text }));
      log.append(el("li", { text: "append: the sequence has " + (ev.append.pos + 1) + " tokens, the cache " + ev.append.cache_len + " positions → " +
        (ev.next === "stop" ? "the next step is stop" + (ev.append.forwarded ? "" : " (this last token is not run through the model: nothing needs its keys and values)") : "repeat") }));
      api.setLive(sec, "decode.generated", ev.append.step + 1);
    }
    if (ev.stop) {
      log.append(el("li", { class: "lp-stopline", "data-testid": "loop-stop", "data-reason": ev.stop.reason, text: "stop: " + IS.stopReason(ev.stop.reason, ev.stop.generated) }));
      api.setLive(sec, "decode.stop_reason", IS.stopReason(ev.stop.reason, ev.stop.generated));
      [stepB, tokB, runB].forEach((b) => { b.disabled = true; });
    }
    log.scrollTop = log.scrollHeight;
  };
  const act = (f) => async () => {
    if (busy || !root.alive()) return;
    busy = true;
    try { (await f()).forEach(feed); } catch (e) { log.append(el("li", { class: "error", text: String(e.message || e) })); } finally { busy = false; }
  };
  const stepB = button("Step", "loop-step", act(async () => [await r.step()]), "primary");
  const tokB = button("Next token", "loop-token", act(() => r.cmd("step_token")));
  const runB = button("Run to the stop", "loop-run", act(() => r.cmd("run")));
  root.append(el("div", { class: "lp-controls" }, [stepB, tokB, runB]), cycle, gen, log);
  await r.start(api.payload(o, { max_new_tokens: n }));
  const pre = await r.stepTo("prefill");
  root.dataset.ready = "1";
  api.setLive(sec, "decode.generated", 0);
  api.setLive(sec, "decode.stop_reason", "(not yet: press Step until the loop stops)");
  log.append(el("li", { class: "muted", text: "prompt: " + pre[0].tokenize.count + " tokens, prefilled. Press Step: each press runs one stage of the loop." }));
  keepOpen(root, sec, r);
});

// ---------- four ways to stop ----------

async function runTo(api, o, extra, force) {
  const r = new api.Run();
  try {
    const m = await r.start(api.payload(o, extra));
    let evs = await r.stepTo("prefill");
    if (force !== undefined) evs = evs.concat(await r.cmd("force", { id: force }));
    if (!evs.some((e) => e.stop)) evs = evs.concat(await r.cmd("run"));
    return { card: m.payload.model, evs, stop: evs.find((e) => e.stop).stop, t: evs[0].tokenize };
  } finally { r.close(); }
}

register("stops", async (o, out, sec, api) => {
  const root = mount(out), greedy = Object.assign({}, o, { temperature: "0" });
  const rows = el("tbody"), tbl = el("table", { class: "lesson-table", "data-testid": "stops-table" }, [
    el("thead", {}, [el("tr", {}, ["condition", "how this run triggers it", "what the engine reported", "text"].map((h) => el("th", { scope: "col", text: h })))]), rows]);
  root.append(wrapTable(tbl));
  const row = (cond, how, res, key) => {
    rows.append(el("tr", { "data-testid": "stop-row", "data-reason": res.stop.reason, "data-key": key }, [el("td", { text: cond }), el("td", { text: how }),
      el("td", { text: key === "eos" && res.stop.reason === "eos" ? "end-of-text token (forced here), after " + res.stop.generated + " tokens" : IS.stopReason(res.stop.reason, res.stop.generated) }), el("td", { class: "mono", text: IS.visible(res.stop.text).slice(0, 60) })]));
    api.setLive(sec, "stops." + key, IS.stopReason(res.stop.reason));
  };
  // output limit, and the text the stop string is taken from
  const lim = await runTo(api, greedy, { max_new_tokens: 3 });
  row("output limit", "max new tokens = 3", lim, "max_new_tokens");
  const card = lim.card;
  // end token: the model's own end-of-text token, forced at the first step
  if (card.eos_id >= 0) {
    const eos = await runTo(api, greedy, { max_new_tokens: 8 }, card.eos_id);
    row("end token", "end-of-text token (id " + card.eos_id + ") forced as the first token; the model picks it itself when it judges a text over", eos, "eos");
  }
  // stop string: a piece of what greedy wrote, so it surely appears
  const long = await runTo(api, greedy, { max_new_tokens: 8 });
  const gen = long.evs.filter((e) => e.append).map((e) => e.append.text), k = Math.min(2, gen.length - 1);
  const stop = gen.slice(0, k + 1).join("").trim().split(/\s+/).pop() || gen.join("").trim().slice(0, 3);
  if (stop) {
    const st = await runTo(api, greedy, { max_new_tokens: 8, stop_strings: [stop] });
    row("stop string", "stop string " + JSON.stringify(stop) + " (taken from what this prompt produces)", st, "stop_string");
    api.setLive(sec, "stops.string_used", JSON.stringify(stop));
  }
  // context limit: the prompt repeated until only a few positions are left
  const per = Math.max(1, lim.t.count - 1), reps = Math.max(1, Math.floor((card.context - 8) / (per + 1)));
  const longPrompt = Array(reps).fill(o.prompt).join(" ");
  const ctx = await runTo(api, Object.assign({}, greedy, { prompt: longPrompt }), { max_new_tokens: card.context, stop_at_eos: false });
  row("context limit", "the prompt repeated " + reps + " times (" + ctx.t.count + " of " + card.context + " positions), end token ignored", ctx, "context_full");
  api.setLive(sec, "stops.reasons", ["eos", "stop_string", "max_new_tokens", "context_full"].map((k) => IS.stopReason(k)));
  root.dataset.done = "1";
});

// ---------- a busy server ----------

// roomFor is how many requests at once this browser may open beside the
// sessions this page already holds: the per-visitor limit the server sent
// in its welcome (IS.serverLimits) minus what is open. A visitor's
// sessions are limited; panels left behind close theirs (keepOpen).
function roomFor(want) {
  const lim = IS.serverLimits || {};
  const cap = Math.min(lim.max_sessions_per_visitor || want, lim.max_sessions_per_address || Infinity);
  return { cap, n: Math.min(want, cap - IS.openSessions()) };
}

// startAll starts every run; a run refused because a session this page just
// closed is not yet released at the server is tried again a few times.
async function startAll(api, runs, p) {
  await Promise.all(runs.map(async (r) => {
    for (let tries = 0; ; tries++) {
      try { return await r.start(p); } catch (err) {
        if (err.code !== "too_many_sessions" || tries >= 10) throw err;
        await new Promise((res) => setTimeout(res, 200));
      }
    }
  }));
}

async function runMany(api, o, n) {
  const runs = [];
  for (let i = 0; i < n; i++) runs.push(new api.Run());
  try {
    await startAll(api, runs, api.payload(o));
    const t0 = performance.now();
    const res = await Promise.all(runs.map((r) => r.cmd("run")));
    return { wall: performance.now() - t0, res };
  } finally { runs.forEach((r) => r.close()); }
}

function summarize(res, wall) {
  const appends = res.flatMap((evs) => evs.filter((e) => e.append && e.append.step > 0).map((e) => e.append));
  const stops = res.map((evs) => evs.find((e) => e.stop).stop);
  const tokens = sum(stops.map((s) => s.generated));
  return { itl: median(appends.map((a) => a.duration_ms + (a.queue_ms || 0))), queue: median(appends.map((a) => a.queue_ms || 0)), model: median(appends.map((a) => a.model_ms)),
    batch: Math.max(1, ...appends.map((a) => a.batch_size || 1)), ttft: median(stops.map((s) => s.timings.ttft_ms)), perReq: tokens / res.length / (wall / 1000), total: tokens / (wall / 1000) };
}

// lineup says what the largest batch means, from the run's own numbers.
function lineup(batch, n) {
  if (batch >= 2) return "here the requests' decode steps did line up, so one pass read the weights once for up to " + batch + " of the " + n + " requests.";
  return "here they never lined up: on a model this small a step is so short that requests seldom wait for each other; on a large model steps take longer and batches fill.";
}

// busyClass is the busy-server panel while this page presents to a class:
// instead of a few requests from this browser, every student following
// sends the request from their own device (classrequest.js); the section's
// numbers come from the class's run.
function busyClass(o, out, sec, api) {
  const root = mount(out);
  root.dataset.mode = "class";
  root.append(el("p", { class: "small", "data-testid": "busy-class-note", text: "You are presenting to a class: instead of " + (o.requests || 6) + " requests from this browser, every student following sends this request from their own device at the same moment. Each student's screen shows their own request's times; yours shows the whole class." }));
  const panel = window.ISClass.mount(root);
  panel.setRequest({ prompt: o.prompt, max_new_tokens: parseInt(o.tokens || "32", 10) });
  window.ISClass.onState = (st) => {
    if (!st.done || !root.alive()) return;
    const f = busyFigures(st);
    api.setLive(sec, "busy.n", f.n);
    api.setLive(sec, "busy.itl_alone", IS.ms(f.itlAlone));
    api.setLive(sec, "busy.itl_busy", IS.ms(f.itlBusy));
    api.setLive(sec, "busy.queue_busy", IS.ms(f.queueBusy));
    api.setLive(sec, "busy.max_batch", f.maxBatch);
    api.setLive(sec, "busy.lineup", lineup(f.maxBatch, f.n));
    root.dataset.batch = f.maxBatch;
  };
}

register("busy", async (o, out, sec, api) => {
  if (window.ISClass && window.ISClass.presenting()) return busyClass(o, out, sec, api);
  const root = mount(out), want = parseInt(o.requests || "6", 10), status = el("p", { class: "small muted", text: "One request alone…" });
  root.append(status);
  const ticks = [];
  let view = null, peak = 0, polling = true;
  const poll = async () => {
    while (polling && root.alive()) {
      try {
        const v = await (await fetch("/api/server", { cache: "no-store" })).json();
        view = v;
        peak = Math.max(peak, v.sessions.length);
        for (const s of v.schedulers || []) for (const t of s.ticks || []) if (!ticks.some((x) => x.at === t.at)) ticks.push(t);
      } catch (e) { /* the panel still shows the events' own figures */ }
      await new Promise((res) => setTimeout(res, 150));
    }
  };
  const poller = poll();
  try {
    await runMany(api, o, 1); // warm-up (and the welcome that says this browser's session limit)
    const alone = await runMany(api, o, 1);
    const fit = roomFor(want);
    if (fit.n < 2) throw new Error("This demo opens " + want + " sessions at once, and this browser may hold " + fit.cap + " (the server's limit per visitor) with " + IS.openSessions() + " open in this page: close other tabs of this app and press Run again.");
    const n = fit.n;
    status.textContent = n + " requests at once" + (n < want ? " (" + want + " asked for; this browser may hold " + fit.cap + " sessions and has " + (fit.cap - n) + " open elsewhere on this page)" : "") + "…";
    const t0 = new Date();
    const busy = await runMany(api, o, n);
    polling = false;
    await poller;
    const a = summarize(alone.res, alone.wall), b = summarize(busy.res, busy.wall);
    status.textContent = "Measured on this server just now, as the engine timed it. Per token: the wait in the queue for a batch plus the step itself (forward pass and choosing the token); model time is the forward pass alone.";
    const row = (label, s, k) => [label, k, IS.ms(s.ttft), IS.ms(s.itl), IS.ms(s.queue), IS.ms(s.model), s.batch, IS.fmt(s.perReq, 1), IS.fmt(s.total, 1)];
    root.append(wrapTable(api.table(["", "requests at once", "time to first token ms (median)", "per token ms: queue + step (median)", "queue ms per step (median)", "model ms per step (median)", "largest batch", "tokens/s per request", "tokens/s in total"],
      [row("alone", a, 1), row("busy", b, n)])));
    const batching = view ? view.batching : false;
    const during = ticks.filter((t) => Date.parse(t.at) >= t0.getTime() - 50);
    const chart = el("div", { class: "chart", "data-testid": "busy-ticks" });
    if (during.length) {
      const z = Date.parse(during[0].at);
      root.append(el("p", { class: "small", text: "The server's own view (the figures of /server): how many requests' decode steps shared each forward pass." }), chart);
      line(chart, { points: during.map((t) => ({ x: (Date.parse(t.at) - z) / 1000, y: t.size })), step: true, height: 160, xTitle: "seconds into the busy run", yTitle: "steps per pass",
        yMax: Math.max(2, ...during.map((t) => t.size)) * 1.1, aria: "Batch size of each forward pass while " + n + " requests ran" });
    }
    root.append(el("p", { class: "small", "data-testid": "busy-batching", "data-batching": String(batching), text: batching ? "Batching is on: decode steps of requests that are ready together run as one forward pass, so the weights are read once for all of them. See the whole server at /server." :
      "Batching is off on this server: each request runs its own forward passes, and they share the processor cores. See the whole server at /server." }));
    api.setLive(sec, "busy.n", n);
    api.setLive(sec, "busy.itl_alone", IS.ms(a.itl));
    api.setLive(sec, "busy.itl_busy", IS.ms(b.itl));
    api.setLive(sec, "busy.queue_busy", IS.ms(b.queue));
    api.setLive(sec, "busy.max_batch", b.batch);
    api.setLive(sec, "busy.lineup", lineup(b.batch, n));
    api.setLive(sec, "busy.peak_sessions", peak);
    root.dataset.batch = b.batch;
  } finally { polling = false; }
});

// ---------- stage timings, honestly ----------

register("stage-timing", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "5", 10), status = el("p", { class: "small muted", text: "Warming up…" });
  root.append(status);
  const prompts = [["short", o.prompt], ["long", o.compare]];
  // one open session per prompt; reset reruns it with the same settings
  const rs = { short: new api.Run(), long: new api.Run() }, started = {};
  const one = async (name, prompt) => {
    const r = rs[name];
    if (started[name]) await r.cmd("reset"); else { await r.start(api.payload(Object.assign({}, o, { prompt }), { stop_at_eos: false })); started[name] = true; }
    const sent = performance.now();
    const evs = await r.cmd("run");
    const arrived = performance.now() - sent;
    const pre = evs.find((e) => e.prefill).prefill, s = evs.find((e) => e.stop).stop, t = s.timings;
    return { n: pre.positions, prefill: pre.model_ms, ttft: t.ttft_ms, queue: t.queue_ms, itl: median(t.itl_model_ms), itlAll: t.itl_p50_ms, out: t.model_tokens_per_s, page: arrived, gen: s.generated };
  };
  const runs = { short: [], long: [] };
  try {
    for (const [name, p] of prompts) await one(name, p); // warm-up
    for (let k = 0; k < reps && root.alive(); k++) {
      status.textContent = "Run " + (k + 1) + " of " + reps + "…";
      for (const [name, p] of prompts) runs[name].push(await one(name, p));
    }
  } finally { rs.short.close(); rs.long.close(); }
  if (!root.alive()) return;
  const med = (name, f) => median(runs[name].map((x) => x[f]));
  const rows = prompts.map(([name]) => {
    const n = runs[name][0].n, pre = med(name, "prefill");
    return [name, n, IS.ms(pre), IS.fmt(n / (pre / 1000), 0), IS.ms(med(name, "ttft")), IS.ms(med(name, "itl")), IS.ms(med(name, "itlAll")), IS.fmt(med(name, "out"), 0)];
  });
  status.textContent = "Medians of " + reps + " runs of each prompt after a warm-up run, " + runs.short[0].gen + " generated tokens each, as the engine timed them (the page's drawing is not included).";
  root.append(wrapTable(api.table(["prompt", "prompt tokens", "prefill ms (model)", "prefill tokens/s", "time to first token ms", "inter-token latency ms (model, median token)", "inter-token latency ms (with the lab's inspection, median token)", "output tokens/s (model, mean over the run: tokens ÷ their total decode time)"], rows)));
  const ps = med("short", "prefill"), pl = med("long", "prefill");
  const page = median(runs.short.map((x) => x.page));
  root.append(el("dl", { class: "lp-defs small" }, [
    el("dt", { text: "time to first token (TTFT)" }), el("dd", { text: "from the request's arrival to the first generated token: queue + tokenize + embed + prefill + choosing the first token." }),
    el("dt", { text: "inter-token latency (ITL)" }), el("dd", { text: "the time between two generated tokens: one decode forward pass plus choosing the token." }),
    el("dt", { text: "prefill throughput" }), el("dd", { text: "prompt tokens ÷ prefill time." }),
    el("dt", { text: "output tokens/s" }), el("dd", { text: "generated tokens after the first ÷ their decode time (here: forward passes alone). A mean over the run, so it is 1000 ÷ the mean inter-token latency, not ÷ the median the table shows beside it: a few slow tokens lower it more than they move the median." }),
    el("dt", { text: "what a real server adds" }), el("dd", { text: "waiting in the queue behind other requests (here a median of " + IS.ms(median(runs.short.map((x) => x.queue))) + " ms) and the network both ways. This page saw a whole short run take " +
      IS.ms(page) + " ms from sending it to the last event: the engine's time plus the websocket, JSON and the lab's inspection." })]));
  root.dataset.prefillShort = ps;
  root.dataset.prefillLong = pl;
  api.setLive(sec, "timing.prefill_short", IS.ms(ps));
  api.setLive(sec, "timing.prefill_long", IS.ms(pl));
  api.setLive(sec, "timing.tokens_short", runs.short[0].n);
  api.setLive(sec, "timing.tokens_long", runs.long[0].n);
  api.setLive(sec, "timing.itl_short", IS.ms(med("short", "itl")));
  api.setLive(sec, "timing.itl_long", IS.ms(med("long", "itl")));
  api.setLive(sec, "timing.ttft_short", IS.ms(med("short", "ttft")));
  // what the two decode paces say, from the numbers shown beside it (as
  // rounded: "0.50 and 0.60 ms" read beside "a similar pace" contradicts
  // itself when the unrounded ratio was 1.19)
  const shown = (x) => +IS.ms(x) || x;
  const il = shown(med("long", "itl")), is = shown(med("short", "itl")), ratio = il / is;
  api.setLive(sec, "timing.pace", ratio < 1.2 && ratio > 1 / 1.2 ? "both decode at a similar pace" :
    ratio >= 1.2 ? "the long prompt decodes " + IS.fmt(ratio, 1) + " times as slowly per token (each step's attention reads its longer cache)" :
      "the short prompt decodes " + IS.fmt(1 / ratio, 1) + " times as slowly per token (the machine was busier during its runs)");
  api.setLive(sec, "timing.ttft_long", IS.ms(med("long", "ttft")));
  api.setLive(sec, "timing.prompts", ["the short prompt", "the long prompt"]);
  api.setLive(sec, "timing.slower_ttft", med("long", "ttft") > med("short", "ttft") ? "the long prompt" : "the short prompt");
});

// ---------- what the model knows ----------

register("knows", async (o, out, sec, api) => {
  const root = mount(out), rows = [];
  for (const prompt of [o.prompt, o.compare].filter(Boolean)) {
    const r = new api.Run();
    try {
      await r.start(api.payload(Object.assign({}, o, { prompt, temperature: "0" }), { max_new_tokens: parseInt(o.tokens || "4", 10) }));
      const evs = await r.cmd("run");
      const lg = evs.find((e) => e.logits).logits, s = evs.find((e) => e.stop).stop;
      rows.push([prompt, IS.visible(s.text), lg.top.slice(0, 3).map((t) => "“" + IS.tokenLabel(t) + "” " + IS.pct(t.prob, 1)).join(", ")]);
    } finally { r.close(); }
  }
  root.append(wrapTable(api.table(["prompt", "greedy continuation", "top 3 first tokens (" + P.P1 + ")"], rows)));
});
