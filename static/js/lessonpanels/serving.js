// serving.js: the live panels of the lesson "Serving: memory, scale and fair
// comparisons" — a request's KV cache held and freed, as the server's own
// view (/api/server) reports it; a shared prefix computed once and reused
// for a second request (rewind to the prefix, then only the new tokens);
// a conversation longer than the context truncated oldest turn first, on
// the real tokenizer; bigger models' costs from their published configs
// (bigmodels.json) and this machine's measured bandwidth (/api/machine)
// and FLOP rate; and benchmarks that differ only in their workload.
import * as IS from "../core.js";
import * as P from "../panels.js";
import { line } from "../charts.js";
import { register } from "./registry.js";
import { mount, median, sum, slider, wrapTable, css, pace } from "./util.js";

const el = IS.el;
css("/static/css/serving.css");

// ---------- shared ----------

async function serverView() {
  const r = await fetch("/api/server", { cache: "no-store" });
  if (!r.ok) throw new Error("the server view (/api/server) answered " + r.status);
  return r.json();
}
// THIN is the detail_ms of timed runs: the heavy detail of one token a
// minute at most (web/thin.go), so encoding and drawing it stays out of
// what is measured
const THIN = 60000;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const gb = (b) => IS.fmt(b / 1e9, b >= 1e10 ? 0 : b >= 1e9 ? 1 : 2) + " GB";
// rate writes tokens/s with digits that suit its size
function rate(x) { return x >= 100 ? IS.fmt(x, 0) : x >= 10 ? IS.fmt(x, 1) : x >= 1 ? IS.fmt(x, 2) : IS.fmt(x, 3); }
function secs(s) { return s >= 100 ? IS.fmt(s, 0) + " s" : s >= 1 ? IS.fmt(s, 1) + " s" : IS.ms(s * 1000) + " ms"; }

// followWidth draws box's chart again when the box changes width (a phone
// turned, a window resized): charts.js keeps each box's width, and the
// chart's own redraw (box._redraw) reads it.
function followWidth(box) {
  let w = 0;
  new ResizeObserver((es) => {
    const nw = Math.round(es[es.length - 1].contentRect.width);
    if (!w) { w = nw; return; }
    if (nw === w || !box.isConnected || !box._redraw) return;
    w = nw;
    requestAnimationFrame(() => { box._svg = null; box._redraw(); });
  }).observe(box);
}

// openRun opens a session and starts a run on it. A session refused
// because one this page just closed is not yet released at the server is
// tried again, on a new session (a refused one stays closed), a few times.
async function openRun(api, p) {
  for (let tries = 0; ; tries++) {
    const r = new api.Run();
    try { await r.start(p); return r; } catch (err) {
      r.close();
      if (err.code !== "too_many_sessions" || tries >= 10) throw err;
      await sleep(200);
    }
  }
}

// ---------- the cache is freed when the request ends ----------

// kv-lifecycle: the server's memory for runs (its /server figures) before a
// request, while it fills the context, while its finished session stays
// open, and after the session closed; and this request's own session row.
register("kv-lifecycle", async (o, out, sec, api) => {
  const root = mount(out), status = el("p", { class: "small muted", "data-testid": "life-status", text: "Reading the server's memory…" });
  const chart = el("div", { class: "chart", "data-testid": "life-chart" });
  root.append(status, chart);
  const t0 = performance.now(), pts = [];
  let mineNum = null, beforeNums = new Set(), myTokens = 0;
  const mineOf = (v) => {
    if (mineNum !== null) return v.sessions.find((s) => s.num === mineNum) || null;
    const fresh = v.sessions.filter((s) => !beforeNums.has(s.num));
    if (fresh.length === 1) return fresh[0];
    return fresh.find((s) => s.tokens === myTokens) || null;
  };
  const sample = async (phase) => {
    const v = await serverView(), mine = mineOf(v);
    pts.push({ t: performance.now() - t0, kv: v.memory.kv, phase, mine: mine ? mine.kv_used : null });
    return { v, mine };
  };
  // before: two equal readings in a row (a panel this page just closed may still be leaving)
  let before = await sample("before");
  for (let i = 0; i < 20; i++) {
    await sleep(100);
    const again = await sample("before");
    const same = again.v.memory.kv === before.v.memory.kv;
    before = again;
    if (same) break;
  }
  beforeNums = new Set(before.v.sessions.map((s) => s.num));
  const r = new api.Run();
  let m, appends = [], stop = null, polling = true;
  status.textContent = "The request runs until its context is full…";
  try {
    m = (await r.start(api.payload(o, { stop_at_eos: false, stop_strings: [] }))).payload.model;
    const poller = (async () => { while (polling && root.alive()) { await sample("during"); await sleep(40); } })();
    await r.cmd("run", undefined, (ev) => {
      if (ev.append) { appends.push(ev.append); myTokens = ev.append.step + 1; }
      if (ev.stop) stop = ev.stop;
    });
    polling = false;
    await poller;
    // finished, session still open: the cache is still held
    status.textContent = "The run has stopped; its session is still open…";
    let held = await sample("held");
    if (held.mine) mineNum = held.mine.num;
    for (let i = 0; i < 3; i++) { await sleep(120); held = await sample("held"); if (held.mine) mineNum = held.mine.num; }
    // the request ends: its session closes
    r.close();
    status.textContent = "The session closed; waiting for the server to free it…";
    let after = await sample("after");
    for (let i = 0; i < 40 && (after.mine || after.v.memory.kv > before.v.memory.kv); i++) { await sleep(100); after = await sample("after"); }
    if (!root.alive()) return;
    const a = appends[appends.length - 1], perTok = a.bytes_per_token, peak = a.bytes_used, positions = a.cache_len;
    const B = before.v.memory.kv, H = held.v.memory.kv, A = after.v.memory.kv, mineHeld = held.mine ? held.mine.kv_used : null, mineAfter = after.mine ? after.mine.kv_used : 0;
    status.textContent = "Measured just now from the server's own view (/api/server, what the /server page shows), every 40 ms.";
    const z = pts[0].t;
    line(chart, { points: pts.map((p) => ({ x: (p.t - z) / 1000, y: p.kv / 1024, title: p.phase + ": " + IS.bytes(p.kv) })), step: true, dots: pts.length <= 60, height: 190,
      xTitle: "seconds since the first reading", yTitle: "memory for runs, KiB", xMin: 0, yFmt: (t) => IS.fmt(t, 0),
      aria: "The server's memory for runs over time: before the request, rising while it runs, held while its session is open, back down after it closed" });
    followWidth(chart);
    const row = (label, v, mine, cls) => el("tr", { class: cls || "" }, [el("th", { scope: "row", text: label }), el("td", { class: "num", text: IS.bytes(v) }), el("td", { class: "num", text: mine })]);
    const tbl = el("table", { class: "lesson-table lp-life", "data-testid": "life-table" }, [
      el("tr", {}, [el("th", { scope: "col", text: "moment" }), el("th", { scope: "col", text: "server: memory for runs" }), el("th", { scope: "col", text: "this request: KV cache" })]),
      row("before the request", B, "no session yet"),
      row("context full, session open", H, mineHeld !== null ? IS.bytes(mineHeld) + " (" + positions + " × " + IS.bytes(perTok) + ")" : "–"),
      row("session closed", A, after.mine ? IS.bytes(mineAfter) + " (still listed)" : "gone: 0 B", "lp-after")]);
    root.append(wrapTable(tbl), el("p", { class: "small muted", text: "Memory for runs: every session's KV cache and scratch buffers, as /server adds them up (the weights are counted apart). This request: its own session's row there, found by its number." }));
    const returned = A === B ? "exactly what it was before the request" : A < B ? IS.bytes(B - A) + " less than before the request: other runs on this server ended meanwhile" :
      IS.bytes(A - B) + " more than before the request: other runs on this server started meanwhile";
    root.append(el("p", { "data-testid": "life-verdict", "data-before": String(B), "data-held": String(H), "data-after": String(A), "data-peak": String(peak), "data-mine-held": String(mineHeld),
      "data-mine-after": String(mineAfter), "data-positions": String(positions), "data-context": String(m.context), "data-reason": stop ? stop.reason : "",
      text: "The request stopped with its cache full (" + positions + " of " + m.context + " positions, " + IS.bytes(peak) + " of keys and values). While its session stayed open the server still held " +
        IS.bytes(H - B) + " for it (its cache and scratch buffers). When the session closed the server freed " + IS.bytes(Math.max(0, H - A)) + ": its memory for runs is now " + IS.bytes(A) + ", " + returned + "." }));
    api.setLive(sec, "life.positions", positions);
    api.setLive(sec, "life.peak_kv", String(peak) + " B");
    api.setLive(sec, "life.peak_kv_h", IS.bytes(peak));
    api.setLive(sec, "life.before", IS.bytes(B));
    api.setLive(sec, "life.held", IS.bytes(H));
    api.setLive(sec, "life.held_extra", IS.bytes(H - B));
    api.setLive(sec, "life.scratch", IS.bytes(Math.max(0, H - B - peak)));
    api.setLive(sec, "life.after", IS.bytes(A));
    api.setLive(sec, "life.freed", IS.bytes(Math.max(0, H - A)));
    api.setLive(sec, "life.after_bytes", String(mineAfter) + " B");
    api.setLive(sec, "life.returned", returned);
    root.dataset.ready = "1";
  } finally { polling = false; r.close(); }
});

// ---------- a shared prefix, computed once ----------

// prefix-reuse: request 1 and request 2 share a long prefix and differ in
// their last few tokens (a country drawn per visit). Without reuse each is
// prefilled whole; with reuse the prefix is prefilled once, request 1's
// tokens are fed after it, and request 2 rewinds the cache to the prefix
// and feeds only its own tokens. Model time from the engine's events.
const COUNTRIES = ["Italy", "Spain", "Peru", "Chile", "Cuba", "Ghana", "Nepal", "Austria", "Ireland", "Vietnam", "Morocco", "Finland"];
let drawn = null; // the two countries of this visit

register("prefix-reuse", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "3", 10), status = el("p", { class: "small muted", text: "Prefilling both requests whole…" });
  root.append(status);
  if (!drawn) { const i = Math.floor(Math.random() * COUNTRIES.length), j = (i + 1 + Math.floor(Math.random() * (COUNTRIES.length - 1))) % COUNTRIES.length; drawn = [COUNTRIES[i], COUNTRIES[j]]; }
  // a lesson's options are trimmed: a request's own text starts a new word
  const tmpl = " " + (o.suffix || "The capital of %s is").trim(), prefix = o.prompt;
  const suffixes = drawn.map((c) => tmpl.replace("%s", c));
  const greedy = { temperature: "0" };
  const full = new api.Run(), reuse = new api.Run();
  let fullStarted = false;
  // fullPrefill: one request prefilled whole (a fresh run of prefix + suffix)
  const fullPrefill = async (text) => {
    const p = api.payload(Object.assign({}, o, greedy, { prompt: text }), { max_new_tokens: 4, stop_at_eos: false, stop_strings: [] });
    if (fullStarted) await full.cmd("start", p); else { await full.start(p); fullStarted = true; }
    const evs = await full.stepTo("logits");
    const logits = (await full.cmd("get_logits")).payload.values;
    return { tokens: evs[0].tokenize.tokens, positions: evs[2].prefill.positions, ms: evs[2].prefill.model_ms, logits, next: evs[3].logits.top[0] };
  };
  try {
    // request 1 prefilled whole (its tokens say where the prefix ends)
    const f1 = await fullPrefill(prefix + suffixes[0]);
    if (!root.alive()) return;
    // the prefix alone: its tokens are the first ones of both requests
    status.textContent = "Prefilling the shared prefix once, then feeding only each request's own tokens…";
    await reuse.start(api.payload(Object.assign({}, o, greedy, { prompt: prefix }), { max_new_tokens: 64, stop_at_eos: false, stop_strings: [] }));
    const pe = await reuse.stepTo("prefill"), prefixToks = pe[0].tokenize.tokens, P = pe[2].prefill.positions, prefixMs = pe[2].prefill.model_ms;
    const sameStart = (f) => prefixToks.every((t, i) => f.tokens[i] && f.tokens[i].id === t.id);
    if (!sameStart(f1)) throw new Error("The prefix's tokens change when a request's own text follows it (the tokenizer joined them across the boundary): end the prefix with a full stop and start each request with a space.");
    const own1 = f1.tokens.slice(P);
    let gen = 0; // tokens after the prefix in the cache's run (what a rewind removes)
    // feed: the request's own tokens after the cached prefix, one forward
    // pass each; the model time of each pass
    const feed = async (toks) => {
      const ms = [];
      for (const t of toks) {
        await pace(reuse);
        const evs = await reuse.cmd("force", { id: t.id });
        const a = evs.find((e) => e.append);
        if (!a || !a.append.forwarded) throw new Error("the run stopped before the request's tokens were all fed");
        ms.push(a.append.model_ms);
        gen++;
      }
      return ms;
    };
    const answer = async (n) => {
      let txt = "";
      for (let i = 0; i < n; i++) { await pace(reuse); const evs = await reuse.cmd("step_token"); const a = evs.find((e) => e.append); if (a) { txt += a.append.text; gen++; } }
      return txt;
    };
    await feed(own1);
    const ans1 = await answer(3);
    // request 2, both ways in turn (so a busier moment of the machine
    // falls on both): prefilled whole; then the cache rewound to the
    // prefix (it keeps the prefix's positions and drops the rest) and only
    // its own tokens fed. A warm-up round, then reps timed.
    const fulls = [], feeds = [], passes = [];
    let f2 = null;
    for (let k = 0; k <= reps && root.alive(); k++) {
      f2 = await fullPrefill(prefix + suffixes[1]);
      if (!sameStart(f2)) throw new Error("The prefix's tokens change when the second request's own text follows it: end the prefix with a full stop and start each request with a space.");
      await pace(reuse);
      await reuse.cmd("rewind", { n: gen });
      gen = 0;
      const ms = await feed(f2.tokens.slice(P));
      if (k > 0) { fulls.push(f2.ms); feeds.push(sum(ms)); passes.push(...ms); }
    }
    if (!root.alive()) return;
    const own2 = f2.tokens.slice(P);
    const logits2 = (await reuse.cmd("get_logits")).payload.values;
    const next2 = (await reuse.step()).logits.top[0];
    const ans2 = await answer(3);
    // request 2's figures: medians of the timed rounds. The rewind's one
    // recomputed position is not timed apart by the engine: it is counted
    // at the median time of a one-position pass.
    const fullMs = median(fulls), reuseFeed = median(feeds), rewindMs = median(passes), reuseMs = reuseFeed + rewindMs;
    const S2 = own2.length, fullPos = f2.positions, reusePos = S2 + 1;
    let maxDiff = 0;
    logits2.forEach((x, i) => { maxDiff = Math.max(maxDiff, Math.abs(x - f2.logits[i])); });
    const same = next2.id === f2.next.id;
    const chips = (toks, cls) => el("div", { class: "chips lp-req" }, toks.map((t, i) => el("span", { class: "chip c" + (i % 5) + (cls ? " " + cls : "") + (t.special ? " special" : ""), text: IS.tokenLabel(t) })));
    root.append(el("p", { class: "small", text: "The shared prefix: " + P + " tokens (its first and last shown), prefilled once in " + IS.ms(prefixMs) + " ms of model time:" }),
      chips(prefixToks.slice(0, 6).concat([{ piece: "…", text: "…" }], prefixToks.slice(-4)), "lp-shared"),
      el("p", { class: "small", text: "Request 1 adds " + own1.length + " tokens:" }), chips(own1), el("p", { class: "small mono", "data-testid": "prefix-answer-1", text: "→ greedy continuation: “" + IS.visible(ans1) + "”" }),
      el("p", { class: "small", text: "Request 2 adds " + S2 + " tokens:" }), chips(own2), el("p", { class: "small mono", "data-testid": "prefix-answer-2", text: "→ greedy continuation: “" + IS.visible(ans2) + "”" }));
    const faster = reuseMs < 0.87 * fullMs ? "reusing the cached prefix" : reuseMs > 1.15 * fullMs ? "prefilling it whole" : "about the same";
    const verdict = faster === "reusing the cached prefix" ? "reusing the prefix took " + IS.fmt(fullMs / reuseMs, 1) + " times less model time than prefilling the whole request" :
      faster === "prefilling it whole" ? "this time reusing the prefix took longer: one position per pass costs more per position than a whole prefill, and the machine may have been busy" :
        "the two took about the same time this time";
    root.append(wrapTable(api.table(["request 2", "positions computed", "model ms", "next token"], [
      ["prefilled whole", fullPos + " = " + P + " + " + S2, IS.ms(fullMs), "“" + IS.tokenLabel(f2.next) + "”"],
      ["prefix reused", reusePos + " = " + S2 + " + 1", IS.ms(reuseMs) + " = " + IS.ms(reuseFeed) + " + " + IS.ms(rewindMs), "“" + IS.tokenLabel(next2) + "”"]])),
    el("p", { class: "small muted", text: "Model ms: medians of " + reps + " rounds after a warm-up, the two ways taking turns. Prefilled whole: the prefix's " + P + " positions and the request's own " + S2 + " in one pass. Prefix reused: " + S2 +
      " passes of one position, plus the one position the rewind recomputes (the prefix's last; the engine does not time it apart, so it counts at the median pass time)." }));
    status.textContent = "Measured just now on this server: request 2 both ways, model time from the engine's events.";
    root.append(el("p", { "data-testid": "prefix-verdict", "data-full-ms": String(fullMs), "data-reuse-ms": String(reuseMs), "data-full-pos": String(fullPos), "data-reuse-pos": String(reusePos),
      "data-same": String(same), "data-max-diff": String(maxDiff), "data-prefix": String(P), "data-own": String(S2), "data-countries": drawn.join(","), "data-next-id": String(next2.id),
      text: (same ? "Same next token both ways ✓" : "The next token differs ✗") + " (their logits differ by at most " + IS.fmt(maxDiff, 6) + "); " + verdict + "." }));
    api.setLive(sec, "prefix.positions", P);
    api.setLive(sec, "prefix.full_positions", fullPos);
    api.setLive(sec, "prefix.reuse_positions", reusePos);
    api.setLive(sec, "prefix.own", S2);
    api.setLive(sec, "prefix.full_ms", IS.ms(fullMs));
    api.setLive(sec, "prefix.reuse_ms", IS.ms(reuseMs));
    api.setLive(sec, "prefix.saved", IS.pct(1 - reusePos / fullPos, 0));
    api.setLive(sec, "prefix.verdict", verdict);
    api.setLive(sec, "prefix.max_diff", IS.fmt(maxDiff, 6));
    api.setLive(sec, "prefix.same", same ? "the same" : "different");
    api.setLive(sec, "prefix.next", "“" + IS.tokenLabel(next2) + "”");
    api.setLive(sec, "prefix.choices", ["reusing the cached prefix", "prefilling it whole", "about the same"]);
    api.setLive(sec, "prefix.faster", faster);
    root.dataset.ready = "1";
  } finally { full.close(); reuse.close(); }
});

// ---------- the conversation outgrows the context ----------

// context-overflow: a chat application sends the whole conversation every
// turn. When it no longer fits the context with room for the reply (a
// quarter of the context here), the application drops the oldest turns
// (never the system message or the new question) and counts again, on the
// model's own tokenizer, until it fits; then the model answers.
const TURNS = [
  ["user", "I am planning a trip to Europe in the spring with my family."],
  ["assistant", "That sounds lovely. Spring is a good time to visit, before the summer crowds arrive."],
  ["user", "We would like to see old cities, museums and a few mountains."],
  ["assistant", "Then you could start in Paris, take the train to Switzerland and finish in Rome."],
  ["user", "How long should we stay in each city?"],
  ["assistant", "Three or four days in each city gives you time for the main sights and a slow afternoon."],
  ["user", "What should we pack for the weather?"],
  ["assistant", "Bring light layers, a warm jacket for the mountains and good walking shoes."],
  ["user", "Is it easy to travel between the countries by train?"],
  ["assistant", "Yes, trains are fast and frequent, and one ticket can cover several countries."],
  ["user", "What food should we try on the way?"],
  ["assistant", "Try cheese in Switzerland, pastries in Paris and fresh pasta in Rome."],
];

// messageStarts: the byte offset where each message's share of the
// rendered chat begins (the tokens' start and end are byte offsets of the
// rendered text): where the previous message's content ended, so a role
// marker belongs to the message it introduces; the first at 0.
function messageStarts(rendered, msgs) {
  const enc = new TextEncoder(), out = [0];
  let from = 0;
  msgs.forEach((m, i) => {
    const at = rendered.indexOf(m.content, from), end = at < 0 ? from : at + m.content.length;
    if (i + 1 < msgs.length) out.push(enc.encode(rendered.slice(0, end)).length);
    from = end;
  });
  return out;
}

register("context-overflow", async (o, out, sec, api) => {
  const root = mount(out), r = new api.Run(), status = el("p", { class: "small muted", text: "Counting the conversation's tokens…" });
  root.append(status);
  const system = { role: "system", content: o.system || "You are a friendly travel assistant for a family trip." };
  const question = { role: "user", content: o.prompt };
  const turns = TURNS.map(([role, content]) => ({ role, content }));
  const attempts = []; // {dropped, tokens, refused, message}
  let started = false, m = null, fit = null;
  const payload = (msgs, reply) => {
    const p = api.payload(Object.assign({}, o, { temperature: o.temperature || "0" }), { max_new_tokens: reply, stop_strings: [] });
    delete p.prompt;
    p.chat = msgs;
    return p;
  };
  try {
    // the model's context, from a first short run
    for (let k = 0; k <= turns.length && root.alive(); k++) {
      const msgs = [system, ...turns.slice(k), question];
      const reply = m ? Math.floor(m.context / 4) : 1;
      try {
        const st = started ? await r.cmd("start", payload(msgs, reply)) : await r.start(payload(msgs, reply));
        started = true;
        if (!m) { m = st.payload.model; k--; continue; } // now the reply's room is known: count this conversation again
        const t = (await r.step()).tokenize;
        attempts.push({ dropped: k, tokens: t.count, refused: false, t, msgs });
        if (t.count + reply <= m.context) { fit = { k, t, msgs, reply }; break; }
      } catch (err) {
        const n = /prompt is (\d+) tokens/i.exec(String(err.message));
        if (!n) throw err;
        started = true;
        if (!m) { const cm = /context is (\d+) tokens/i.exec(String(err.message)); m = { context: cm ? parseInt(cm[1], 10) : 0 }; }
        attempts.push({ dropped: k, tokens: parseInt(n[1], 10), refused: true, message: err.message, msgs });
      }
    }
    if (!root.alive()) return;
    if (!fit) throw new Error("Even the system message and the question alone do not leave a quarter of the context for the reply: shorten the question.");
    const ctx = m.context, reserve = fit.reply, budget = ctx - reserve;
    // the reply: the kept conversation runs
    status.textContent = "The kept conversation runs…";
    const evs = await r.cmd("run");
    const stop = evs.find((e) => e.stop).stop, last = evs.filter((e) => e.append).pop();
    const used = last ? last.append.cache_len : fit.t.count;
    // tokens per message: the full conversation's count, less each turn as it was dropped
    const full = attempts[0], perTurn = [];
    for (let i = 0; i < fit.k; i++) {
      const a = attempts.find((x) => x.dropped === i), b = attempts.find((x) => x.dropped === i + 1);
      perTurn.push(a && b ? a.tokens - b.tokens : null);
    }
    const starts = messageStarts(fit.t.text, fit.msgs), kept = fit.msgs.map(() => []);
    fit.t.tokens.forEach((tok) => { let i = 0; while (i + 1 < starts.length && tok.start >= starts[i + 1]) i++; kept[i].push(tok); });
    // the context as a bar: kept messages, the reply's room, what is left
    const bar = el("div", { class: "budget-bar lp-ctxbar", "data-testid": "overflow-bar", role: "img",
      "aria-label": "Context of " + ctx + " positions: " + fit.t.count + " for the kept conversation, " + reserve + " kept for the reply" });
    const seg = (n, cls, title) => { const s = el("span", { class: "budget-seg " + cls, title }); s.style.width = (100 * n / ctx) + "%"; bar.append(s); };
    kept.forEach((toks, i) => seg(toks.length, i === 0 ? "s-muted" : i === kept.length - 1 ? "s-warn" : "s-accent", fit.msgs[i].role + ": " + toks.length + " tokens"));
    seg(reserve, "s-good", "kept for the reply: " + reserve + " positions");
    root.append(el("p", { class: "small", text: "The context: " + ctx + " positions." }), bar,
      el("p", { class: "small legend" }, [el("span", { class: "key s-muted" }), " system message · ", el("span", { class: "key s-accent" }), " earlier turns kept · ",
        el("span", { class: "key s-warn" }), " the new question · ", el("span", { class: "key s-good" }), " room kept for the reply"]));
    // every message: kept (its tokens as chips) or dropped (how many tokens dropping it saved)
    const list = el("ol", { class: "lp-turns", "data-testid": "overflow-turns" });
    const all = [system, ...turns, question];
    all.forEach((msg, i) => {
      const turnIdx = i - 1, dropped = turnIdx >= 0 && turnIdx < fit.k && i < all.length - 1;
      const keptIdx = dropped ? -1 : i === 0 ? 0 : i === all.length - 1 ? fit.msgs.length - 1 : turnIdx - fit.k + 1;
      const li = el("li", { class: dropped ? "lp-dropped" : "lp-kept", "data-dropped": dropped ? "1" : "0", "data-role": msg.role });
      const n = dropped ? perTurn[turnIdx] : kept[keptIdx].length;
      li.append(el("p", { class: "small" }, [el("strong", { text: msg.role + (i === all.length - 1 ? " (the new question)" : "") + ": " }), dropped ? el("s", { text: msg.content }) : msg.content,
        el("span", { class: "muted", text: dropped ? " — dropped, " + (n === null ? "?" : n) + " tokens saved" : " — " + n + " tokens sent" })]));
      if (!dropped) { const box = el("div", { class: "chips" }); P.tokenChips(box, { text: fit.t.text, tokens: kept[keptIdx] }); li.append(box); }
      list.append(li);
    });
    root.append(list);
    const rows = attempts.map((a) => [a.dropped, a.tokens, a.refused ? "refused by the engine: “" + a.message + "”" : a.tokens + reserve <= ctx ? "fits: " + a.tokens + " + " + reserve + " ≤ " + ctx : "starts, but leaves only " + (ctx - a.tokens) + " positions for the reply"]);
    root.append(el("p", { class: "small", text: "What the application tried, oldest turn dropped first, each count by the model's tokenizer:" }),
      wrapTable(api.table(["oldest turns dropped", "tokens of the conversation", "result"], rows)));
    root.append(el("p", { class: "gen mono small", "data-testid": "overflow-reply", text: "Assistant: " + IS.visible(stop.text) }));
    root.append(el("p", { "data-testid": "overflow-verdict", "data-full": String(full.tokens), "data-full-refused": String(full.refused), "data-dropped": String(fit.k), "data-kept-tokens": String(fit.t.count),
      "data-reserve": String(reserve), "data-context": String(ctx), "data-used": String(used), "data-reason": stop.reason, "data-generated": String(stop.generated),
      "data-kept-msgs": JSON.stringify(fit.msgs), "data-all-msgs": JSON.stringify([system, ...turns, question]),
      text: "The whole conversation is " + full.tokens + " tokens: more than the context of " + ctx + (full.refused ? ", so the engine refuses it" : "") + ". Dropping the " + fit.k + " oldest turns leaves " + fit.t.count +
        " tokens, within the " + budget + " that leave " + reserve + " for the reply. The reply took " + stop.generated + " tokens (" + IS.stopReason(stop.reason, stop.generated) + "); the cache ended at " + used + " of " + ctx + " positions." }));
    status.textContent = "";
    api.setLive(sec, "overflow.context", ctx);
    api.setLive(sec, "overflow.reserve", reserve);
    api.setLive(sec, "overflow.budget", String(budget));
    api.setLive(sec, "overflow.full", full.tokens);
    api.setLive(sec, "overflow.dropped", fit.k);
    api.setLive(sec, "overflow.kept", fit.t.count);
    api.setLive(sec, "overflow.turns", turns.length);
    api.setLive(sec, "overflow.generated", stop.generated);
    api.setLive(sec, "overflow.used", used);
    api.setLive(sec, "overflow.refused", full.refused ? "the engine refuses it outright: a prompt must leave room to generate" : "the engine would start it, but the reply would run out of room");
    root.dataset.ready = "1";
  } finally { r.close(); }
});

// ---------- bigger models: the same arithmetic ----------

// costs: what a config implies. readParams are the weights one decode step
// multiplies by (an untied input embedding table and learned positions are
// looked up, one row each, not read whole); FLOPs of a prefill of T
// positions: 2 per weight and position, plus attention's scores and mix
// (2 × layers × query width × T², causal).
export function costs(c) {
  const d = c.hidden, q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim, L = c.layers, V = c.vocab, I = c.intermediate;
  let params, lookedUp;
  if (c.arch === "gpt2") {
    const block = 4 * d + d * 3 * d + 3 * d + d * d + d + d * I + I + I * d + d;
    params = V * d + c.context * d + L * block + 2 * d;
    lookedUp = c.context * d - d; // the position table: one row per step
  } else {
    params = V * d + L * (d * q + 2 * d * kv + q * d + 3 * d * I + 2 * d) + d + (c.tied ? 0 : V * d);
    lookedUp = c.tied ? 0 : V * d - d; // an untied input table: one row per step
  }
  const readParams = params - lookedUp;
  return { params, readParams, kvNumbers: 2 * L * kv, prefillFlops: (T) => 2 * readParams * T + 2 * L * q * T * T };
}

// fromCard: the live model's card in the configs' field names.
function fromCard(m) {
  return { name: m.name, arch: m.arch === "gpt2" ? "gpt2" : "llama", layers: m.layers, hidden: m.dim, heads: m.heads, kv_heads: m.kv_heads, head_dim: m.head_dim,
    intermediate: m.hidden_dim, vocab: m.vocab, context: m.context, tied: !!(m.shape && m.shape.params && m.shape.params.tied) };
}

const PRECISIONS = [[4, "f32: 4 bytes"], [2, "bf16: 2 bytes"], [1, "8-bit: 1 byte"], [0.5, "4-bit: ½ byte"]];
const CONTEXTS = [16, 64, 256, 1024, 4096, 16384, 65536, 131072];
const SLOW = [[0.1, "a network disk"], [0.5, "a SATA SSD"], [1, ""], [2, ""], [3.5, "an NVMe SSD"], [7, "a fast NVMe SSD"], [14, ""], [28, "a PCIe 5.0 ×16 link"]];

register("big-models", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "3", 10), status = el("p", { class: "small muted", text: "Measuring this machine's read bandwidth…" });
  root.append(status);
  const [mach, data] = await Promise.all([
    fetch("/api/machine", { cache: "no-store" }).then((r) => { if (!r.ok) throw new Error("/api/machine answered " + r.status); return r.json(); }),
    fetch(new URL("./bigmodels.json", import.meta.url)).then((r) => r.json())]);
  if (!root.alive()) return;
  status.textContent = "Running this model: prefill and decode, " + reps + " times after a warm-up…";
  const r = new api.Run(), runs = [];
  let m;
  try {
    const p = api.payload(Object.assign({}, o, { temperature: "0" }), { stop_at_eos: false, stop_strings: [] });
    m = (await r.start(p)).payload.model;
    // each run beside a fresh probe of a model-sized buffer, so the bound
    // and the speed it bounds are measured at the same moment
    for (let k = 0; k <= reps && root.alive(); k++) {
      if (k > 0) await r.cmd("reset");
      const probe = await fetch("/api/machine?probe=model", { cache: "no-store" }).then((x) => x.json());
      const evs = await r.cmd("run", { detail_ms: THIN }), pre = evs.find((e) => e.prefill).prefill, s = evs.find((e) => e.stop).stop;
      if (k > 0) runs.push({ T: pre.positions, prefill: pre.model_ms, itl: median(s.timings.itl_model_ms), gen: s.generated, bw: probe.model_sized.median_GB_per_s * 1e9 });
    }
  } finally { r.close(); }
  if (!root.alive()) return;
  // this machine, measured: bandwidth (two buffer sizes) and FLOP rate (the live model's prefill)
  const live = fromCard(m), lc = costs(live), T = runs[0].T, gen = runs[0].gen;
  const bpwLive = m.weights_bytes / m.params, kvLive = m.kv_bytes_per_token;
  const flopRate = median(runs.map((x) => lc.prefillFlops(x.T) / (x.prefill / 1000)));
  const itl = median(runs.map((x) => x.itl)), measured = 1000 / itl;
  const ctxAvg = T + gen / 2, bytesLive = lc.readParams * bpwLive + ctxAvg * kvLive;
  const bwSmall = median(runs.map((x) => x.bw)), bwLarge = mach.large.median_GB_per_s * 1e9;
  const boundLive = bwSmall / bytesLive, liveRatio = measured / boundLive;
  root.append(el("dl", { class: "lp-defs small lp-machine", "data-testid": "big-machine" }, [
    el("dt", { text: "read bandwidth (measured now by the streaming-read probe of inferscope bench on " + mach.threads + " threads: the median of " + mach.large.runs + " reads)" }),
    el("dd", { text: IS.fmt(bwSmall / 1e9, 1) + " GB/s reading a buffer the size of this model's weights (" + IS.bytes(mach.model_sized.bytes) + "; a probe beside each run, the median of those); " +
      IS.fmt(bwLarge / 1e9, 1) + " GB/s reading " + IS.bytes(mach.large.bytes) + ", what a model of gigabytes is read at (fastest reads: " + IS.fmt(mach.model_sized.best_GB_per_s, 1) + " and " + IS.fmt(mach.large.best_GB_per_s, 1) + " GB/s)" }),
    el("dt", { text: "compute (measured now, from this model's prefill)" }),
    el("dd", { text: IS.fmt(flopRate / 1e9, 1) + " GFLOP/s: " + IS.fmt(lc.prefillFlops(T) / 1e6, 1) + " million FLOPs for " + T + " positions in " + IS.ms(median(runs.map((x) => x.prefill))) + " ms of model time (median of " + reps + ")" }),
    el("dt", { text: "memory" }), el("dd", { text: mach.memory_total_bytes ? IS.bytes(mach.memory_total_bytes) + " on this machine" : "not known on this system" })]));
  // the cross-check: the formula on this model against its measured decode
  root.append(el("p", { "data-testid": "big-check", "data-bound": String(boundLive), "data-measured": String(measured), "data-ratio": String(liveRatio), "data-params": String(lc.params), "data-card-params": String(m.params),
    text: "Cross-check on this model: it reads " + IS.bytes(bytesLive) + " per decode step (" + IS.bytes(lc.readParams * bpwLive) + " of weights + " + Math.round(ctxAvg) + " positions × " + IS.bytes(kvLive) + " of cache), so at " +
      IS.fmt(bwSmall / 1e9, 1) + " GB/s the bound is " + rate(boundLive) + " tokens/s. Measured: " + rate(measured) + " tokens/s (1000 ÷ the median inter-token model time, " + IS.ms(itl) + " ms, median of " + reps + " runs of " + gen + " tokens): " +
      IS.pct(liveRatio, 0) + " of the bound. Its parameters by the formula: " + lc.params.toLocaleString("en-US") + (lc.params === m.params ? " = the loaded weights ✓" : " ≠ the loaded " + m.params.toLocaleString("en-US") + " ✗") + "." }));
  // the table, recomputed from the sliders
  const models = data.models.map((c) => Object.assign({ cost: costs(c) }, c));
  const memGiB = mach.memory_total_bytes ? mach.memory_total_bytes / 2 ** 30 : 16;
  const MEMS = [...new Set([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, Math.round(memGiB * 10) / 10])].sort((a, b) => a - b);
  let prec = 1, ctxI = 2, memI = MEMS.indexOf(Math.round(memGiB * 10) / 10), slowI = 1;
  const box = el("div", { class: "lp-bigtable", "data-testid": "big-table" }), note = el("p", { class: "small", "data-testid": "big-note", "aria-live": "polite" });
  const draw = () => {
    const bpw = PRECISIONS[prec][0], kvb = bpw >= 4 ? 4 : 2, ctx = CONTEXTS[ctxI], mem = MEMS[memI] * 2 ** 30, slow = SLOW[slowI][0] * 1e9;
    const rows = [], figs = {};
    for (const c of models) {
      const n = Math.min(ctx, c.context), w = c.cost.params * bpw, kvTok = c.cost.kvNumbers * kvb, read = c.cost.readParams * bpw + n * kvTok;
      const bound = bwLarge / read, need = w + n * kvTok, over = Math.max(0, need - mem);
      const placed = over > 0 ? 1 / ((read - Math.min(over, read)) / bwLarge + Math.min(over, read) / slow) : bound;
      const prefill = c.cost.prefillFlops(n) / flopRate;
      figs[c.name] = { bound, placed, read, need, prefill };
      rows.push([c.name, IS.count(c.cost.params) + (c.cost.params === c.params_published ? " ✓" : " ✗"), gb(w), IS.bytes(kvTok), gb(read) + (n < ctx ? " (its context: " + n.toLocaleString("en-US") + ")" : ""),
        rate(bound), secs(prefill), need <= mem ? "yes" : "no: " + gb(over) + " read from storage", rate(placed)]);
    }
    IS.clear(box);
    const published = [...new Set(models.map((c) => c.dtype))].map((d) => models.filter((c) => c.dtype === d).map((c) => c.name).join(", ") + ": " + d).join("; ");
    box.append(el("p", { class: "small", "data-testid": "big-settings", text: "At " + PRECISIONS[prec][1].replace(/^(.*): (.*)$/, "$2 per weight ($1)") + ", a context of " + ctx.toLocaleString("en-US") + " tokens (a model's own if shorter), " +
      IS.fmt(bwLarge / 1e9, 1) + " GB/s of memory bandwidth, " + IS.fmt(flopRate / 1e9, 1) + " GFLOP/s, " + MEMS[memI] + " GiB of memory and storage read at " + SLOW[slowI][0] + " GB/s. ✓: the formula gives the published parameter count. Published as " + published + "." }),
      wrapTable(api.table(["model", "parameters", "weights", "KV cache per token", "read per token", "decode, tokens/s", "prefill", "fits?", "as placed, tokens/s"], rows)),
      el("p", { class: "small muted", text: "Read per token: the weights a decode step multiplies by and the cache of the context. Decode: the bound if it all sits in memory (bandwidth ÷ bytes read per token). Prefill: the context's FLOPs ÷ the FLOP rate. Fits: weights and the context's cache within the memory. As placed: the part in memory read at the memory's bandwidth, the rest from storage, every token." }));
    const big = models[models.length - 1], b8 = models.find((c) => c.params_published > 5e9 && c.params_published < 2e10) || models[3];
    const f = figs[big.name];
    note.textContent = big.name + " at " + PRECISIONS[prec][1].replace(/^(.*): (.*)$/, "$2 per weight ($1)") + ": " + gb(f.read) + " read per token → at most " + rate(f.bound) + " tokens/s if it all fit in memory" +
      (f.need > mem ? "; with " + gb(f.need - mem) + " streamed from " + (SLOW[slowI][1] || "storage") + " at " + SLOW[slowI][0] + " GB/s every token, " + rate(f.placed) + " tokens/s (" + secs(1 / f.placed) + " per token)." : ", and it fits.");
    Object.assign(box.dataset, { prec: String(bpw), ctx: String(ctx), mem: String(mem), slow: String(slow), bw: String(bwLarge), flops: String(flopRate) });
    box.dataset.figs = JSON.stringify(figs);
    api.setLive(sec, "big.largest_placed", rate(figs[big.name].placed));
    api.setLive(sec, "big.largest_name", big.name);
    api.setLive(sec, "big.mid_name", b8.name);
  };
  const ps = slider("bytes per weight", "big-precision", 0, PRECISIONS.length - 1, 1, prec, (v) => { prec = v; draw(); return PRECISIONS[v][1]; });
  const cs = slider("context (tokens)", "big-context", 0, CONTEXTS.length - 1, 1, ctxI, (v) => { ctxI = v; draw(); return CONTEXTS[v].toLocaleString("en-US"); });
  const ms = slider("memory for weights and cache (GiB)", "big-memory", 0, MEMS.length - 1, 1, memI, (v) => { memI = v; draw(); return MEMS[v] + " GiB" + (Math.abs(MEMS[v] - memGiB) < 0.05 && mach.memory_total_bytes ? " (this machine)" : ""); });
  const ss = slider("what does not fit is read from storage at", "big-slow", 0, SLOW.length - 1, 1, slowI, (v) => { slowI = v; draw(); return SLOW[v][0] + " GB/s" + (SLOW[v][1] ? " (" + SLOW[v][1] + ")" : ""); });
  root.append(el("div", { class: "lp-controls" }, [ps, cs, ms, ss]), box, note);
  [ps, cs, ms, ss].forEach((s) => s.update());
  status.textContent = "";
  // the question's figure: how many times more bytes a decode step of the
  // model with about sixteen gigabytes of weights (the 8-billion one at two
  // bytes per weight) reads than this model's, at this run's context
  const b8 = models.find((c) => c.params_published > 5e9 && c.params_published < 2e10) || models[3];
  const read8 = b8.cost.readParams * 2 + ctxAvg * b8.cost.kvNumbers * 2, ratio = read8 / bytesLive;
  const bound8 = bwLarge / read8;
  root.dataset.ratio = String(ratio);
  api.setLive(sec, "big.bw_model", IS.fmt(bwSmall / 1e9, 1) + " GB/s");
  api.setLive(sec, "big.bw_large", IS.fmt(bwLarge / 1e9, 1) + " GB/s");
  api.setLive(sec, "big.flops", IS.fmt(flopRate / 1e9, 1) + " GFLOP/s");
  api.setLive(sec, "big.live_bytes", IS.bytes(bytesLive));
  api.setLive(sec, "big.live_bound", rate(boundLive));
  api.setLive(sec, "big.live_measured", rate(measured));
  api.setLive(sec, "big.live_ratio", IS.pct(liveRatio, 0));
  api.setLive(sec, "big.live_verdict", liveRatio <= 1 ? (liveRatio >= 0.5 ? "close below the bound, as a bound must be: decode here is limited by reading the weights" :
    "well below the bound: on a model this small, the work around each pass (attention, synchronising the threads) takes a large share") :
    "above this bound: the probe read more slowly than decode did, on a shared machine whose caches can hold much of a model this small");
  api.setLive(sec, "big.time_ratio", String(Math.round(ratio)));
  api.setLive(sec, "big.mid_read", gb(read8));
  api.setLive(sec, "big.mid_bound", rate(bound8));
  api.setLive(sec, "big.mid_ms", secs(1 / bound8));
  api.setLive(sec, "big.mid_name", b8.name);
  root.dataset.ready = "1";
});

// ---------- fair comparisons ----------

// fair-compare: pairs of "benchmarks" on this one server and model that
// differ in one thing only — the prompt's length, the output's length, or
// how many requests run at once — each reported the way a benchmark would,
// then with the like-for-like figure beside it.
register("fair-compare", async (o, out, sec, api) => {
  const root = mount(out), reps = parseInt(o.runs || "3", 10), status = el("p", { class: "small muted", text: "Warming up…" });
  root.append(status);
  const short = o.prompt, long = o.compare, medium = o.medium || o.compare, outN = parseInt(o.tokens || "16", 10);
  const few = parseInt(o.few || "8", 10), many = parseInt(o.many || "128", 10), streams = parseInt(o.streams || "8", 10), streamN = parseInt(o.stream_tokens || "64", 10);
  const concReps = parseInt(o.conc_runs || o.runs || "3", 10);
  const greedy = { temperature: "0" };
  // one request on one session: engine-timed figures from its stop event
  let r = null;
  const one = async (prompt, n) => {
    const p = api.payload(Object.assign({}, o, greedy, { prompt }), { max_new_tokens: n, stop_at_eos: false, stop_strings: [] });
    if (!r) r = await openRun(api, p); else await r.cmd("start", p);
    // thinned: the heavy detail of at most one token a minute (thin.go), so the
    // page's drawing and the events' encoding stay out of the measurement
    const evs = await r.cmd("run", { detail_ms: THIN }), s = evs.find((e) => e.stop).stop, t = s.timings, pre = evs.find((e) => e.prefill).prefill;
    const reqMs = t.ttft_ms + sum(t.itl_ms || []);
    return { prompt: pre.positions, gen: s.generated, reqMs, tps: s.generated / (reqMs / 1000), itlModel: median(t.itl_model_ms || []), ttft: t.ttft_ms, checksum: s.checksum_after };
  };
  const res = { promptShort: [], promptLong: [], outFew: [], outMany: [] };
  let conc1 = [], concN = [], nStreams = 0;
  try {
    const work = [["promptShort", short, outN], ["promptLong", long, outN], ["outFew", medium, few], ["outMany", medium, many]];
    for (const [, p, n] of work) await one(p, n); // warm-up
    for (let k = 0; k < reps && root.alive(); k++) {
      status.textContent = "Prompt and output length: run " + (k + 1) + " of " + reps + "…";
      for (const [key, p, n] of work) res[key].push(await one(p, n));
    }
    if (r) r.close();
    // concurrency: one stream, then several at once (as many as this browser may open)
    const lim = IS.serverLimits || {}, cap = Math.min(lim.max_sessions_per_visitor || streams, lim.max_sessions_per_address || Infinity);
    nStreams = Math.max(2, Math.min(streams, cap - IS.openSessions()));
    const wave = async (n) => {
      const rs = [];
      try {
        const p = api.payload(Object.assign({}, o, greedy, { prompt: short }), { max_new_tokens: streamN, stop_at_eos: false, stop_strings: [] });
        const got = await Promise.allSettled(Array.from({ length: n }, () => openRun(api, p)));
        got.forEach((g) => { if (g.status === "fulfilled") rs.push(g.value); });
        const refused = got.find((g) => g.status === "rejected");
        if (refused) throw refused.reason;
        const t0 = performance.now();
        const all = await Promise.all(rs.map((x) => x.cmd("run", { detail_ms: THIN })));
        const wall = performance.now() - t0;
        const stops = all.map((evs) => evs.find((e) => e.stop).stop);
        const steps = all.flatMap((evs) => evs.filter((e) => e.append && e.append.step > 0).map((e) => e.append.duration_ms + (e.append.queue_ms || 0)));
        const batch = Math.max(1, ...all.flatMap((evs) => evs.filter((e) => e.append).map((e) => e.append.batch_size || 1)));
        const tokens = sum(stops.map((s) => s.generated));
        return { n, wall, tokens, total: tokens / (wall / 1000), perStream: tokens / n / (wall / 1000), itl: median(steps), batch, checksum: stops[0].checksum_after };
      } finally { rs.forEach((x) => x.close()); }
    };
    await wave(1); await wave(nStreams); // warm-up
    for (let k = 0; k < concReps && root.alive(); k++) {
      status.textContent = "One request, then " + nStreams + " at once: run " + (k + 1) + " of " + concReps + "…";
      conc1.push(await wave(1));
      concN.push(await wave(nStreams));
    }
  } finally { if (r) r.close(); }
  if (!root.alive()) return;
  const med = (a, f) => median(a.map((x) => x[f]));
  status.textContent = "Every run on this server and this model, greedy, medians of " + reps + " runs after a warm-up. The same weights every time: checksum " +
    (res.promptShort[0].checksum || "").slice(0, 12) + "….";
  const card = (title, testid, a, b, headline, unit, rows, ratio) => {
    const fig = el("section", { class: "lp-bench", "data-testid": testid, "data-a": String(a), "data-b": String(b), "data-ratio": String(ratio) });
    fig.append(el("h3", { class: "lp-bench-title", text: title }),
      el("p", { class: "lp-headline" }, [el("span", { text: "Benchmark A: " }), el("strong", { text: rate(a) + " " + unit }), el("span", { text: " · Benchmark B: " }), el("strong", { text: rate(b) + " " + unit }),
        el("span", { class: "lp-claim", text: " → “B is " + IS.fmt(Math.max(a, b) / Math.min(a, b), 1) + "× " + (b > a ? "faster" : "slower") + "”" })]),
      el("p", { class: "small muted", text: headline }),
      wrapTable(api.table(["", "A", "B"], rows)));
    return fig;
  };
  const pS = med(res.promptShort, "tps"), pL = med(res.promptLong, "tps"), oF = med(res.outFew, "tps"), oM = med(res.outMany, "tps");
  const cA = med(conc1, "total"), cB = med(concN, "total");
  const reqDef = "Headline: output tokens/s of one request = generated tokens ÷ (time to first token + the time of every later token), as the engine timed it; the median of " + reps + " runs.";
  root.append(
    card("Only the prompt's length differs", "fair-prompt", pL, pS, reqDef, "tokens/s", [
      ["prompt (tokens)", res.promptLong[0].prompt, res.promptShort[0].prompt], ["generated tokens", res.promptLong[0].gen, res.promptShort[0].gen],
      ["first token, ms", IS.ms(med(res.promptLong, "ttft")), IS.ms(med(res.promptShort, "ttft"))],
      ["like for like: model ms per step", IS.ms(med(res.promptLong, "itlModel")), IS.ms(med(res.promptShort, "itlModel"))]], pS / pL),
    card("Only the output's length differs", "fair-output", oF, oM, reqDef, "tokens/s", [
      ["prompt (tokens)", res.outFew[0].prompt, res.outMany[0].prompt], ["generated tokens", res.outFew[0].gen, res.outMany[0].gen],
      ["first token, ms", IS.ms(med(res.outFew, "ttft")), IS.ms(med(res.outMany, "ttft"))],
      ["like for like: model ms per step", IS.ms(med(res.outFew, "itlModel")), IS.ms(med(res.outMany, "itlModel"))]], oM / oF),
    card("Only the number of requests at once differs", "fair-concurrency", cA, cB,
      "Headline: total output tokens/s = every request's generated tokens ÷ the wall time from sending the first request to the last one's end, as this page timed it; the median of " + concReps + " runs, one alone and " + nStreams + " at once taking turns.", "tokens/s", [
        ["requests at once", 1, nStreams], ["tokens in total", conc1[0].tokens, concN[0].tokens], ["largest batch", med(conc1, "batch"), med(concN, "batch")],
        ["like for like: tokens/s per request", rate(med(conc1, "perStream")), rate(med(concN, "perStream"))],
        ["ms per token per request", IS.ms(med(conc1, "itl")), IS.ms(med(concN, "itl"))]], cB / cA));
  root.append(el("p", { class: "small muted", text: "Rows: first token = time to first token (queue, tokenize, embed, prefill, the first token), median of runs. Model ms per step = the forward pass of a decode step alone: each run's median step, then the median of runs. " +
    "Largest batch = the most decode steps that shared one forward pass. Tokens/s per request = its tokens ÷ the same wall time. Ms per token per request = the wait for a batch plus the step, the median over every token of every request." }));
  const itlA = med(conc1, "itl"), itlB = med(concN, "itl"), itlR = itlB / itlA;
  const dir = itlR > 1.15 ? "longer" : itlR < 0.87 ? "shorter" : "about the same";
  const pWin = pS > 1.1 * pL ? "the short prompt" : pL > 1.1 * pS ? "the long prompt" : "about the same";
  api.setLive(sec, "fair.prompt_short", res.promptShort[0].prompt);
  api.setLive(sec, "fair.prompt_long", res.promptLong[0].prompt);
  api.setLive(sec, "fair.p_short_tps", rate(pS));
  api.setLive(sec, "fair.p_long_tps", rate(pL));
  api.setLive(sec, "fair.p_ratio", IS.fmt(pS / pL, 1));
  api.setLive(sec, "fair.p_ttft_long", IS.ms(med(res.promptLong, "ttft")));
  api.setLive(sec, "fair.p_ttft_short", IS.ms(med(res.promptShort, "ttft")));
  api.setLive(sec, "fair.p_itl_long", IS.ms(med(res.promptLong, "itlModel")));
  api.setLive(sec, "fair.p_itl_short", IS.ms(med(res.promptShort, "itlModel")));
  api.setLive(sec, "fair.prompt_winner", pWin);
  const ttL = med(res.promptLong, "ttft"), ttS = med(res.promptShort, "ttft"), stL = med(res.promptLong, "itlModel"), stS = med(res.promptShort, "itlModel");
  api.setLive(sec, "fair.p_verdict", (pWin === "about the same" ? "about the same" : (pS > pL ? "the short prompt's " : "the long prompt's ") + IS.fmt(Math.max(pS, pL) / Math.min(pS, pL), 1) + " times as many") +
    ", while the time to first token was " + IS.ms(ttL) + " ms with the long prompt and " + IS.ms(ttS) + " ms with the short one, and a decode step took " + IS.ms(stL) + " and " + IS.ms(stS) + " ms of model time" +
    (ttL > 1.5 * ttS && Math.abs(stL / stS - 1) < 0.35 ? ": the difference is the prefill inside the request's time, not a faster engine" : ""));
  api.setLive(sec, "fair.o_verdict", oM > 1.1 * oF ? "the longer output reports " + IS.fmt(oM / oF, 1) + " times as many, because the prefill's fixed cost is spread over more tokens" :
    oF > 1.1 * oM ? "this time the shorter output reported more (" + IS.fmt(oF / oM, 1) + " times as many): the machine was busier during the long runs" : "about the same this time");
  api.setLive(sec, "fair.prompt_choices", ["the short prompt", "the long prompt", "about the same"]);
  api.setLive(sec, "fair.o_few", few);
  api.setLive(sec, "fair.o_many", many);
  api.setLive(sec, "fair.o_few_tps", rate(oF));
  api.setLive(sec, "fair.o_many_tps", rate(oM));
  api.setLive(sec, "fair.o_ratio", IS.fmt(oM / oF, 1));
  api.setLive(sec, "fair.streams", nStreams);
  api.setLive(sec, "fair.c_one", rate(cA));
  api.setLive(sec, "fair.c_many", rate(cB));
  api.setLive(sec, "fair.c_ratio", IS.fmt(cB / cA, 1));
  api.setLive(sec, "fair.c_itl_one", IS.ms(itlA));
  api.setLive(sec, "fair.c_itl_many", IS.ms(itlB));
  api.setLive(sec, "fair.c_itl_dir", dir);
  api.setLive(sec, "fair.c_choices", ["shorter", "about the same", "longer"]);
  api.setLive(sec, "fair.c_batch", med(concN, "batch"));
  root.dataset.ready = "1";
});
