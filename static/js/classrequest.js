// classrequest.js: the class request on both sides. The presenter picks
// one request and every following student's device sends it at the same
// moment, each as its own session on the server (web/classrequest.go).
// presenterPanel is the presenter's form and live chart of the whole class
// (a row per student: waiting, prefill and first token, generating; the gap
// between tokens and the batch size over time; the class's output against
// one request alone; memory); it keeps the run before beside the latest,
// so "again without batching" or "again with a longer prompt" compare side
// by side. studentRequest is a student's side: it sends the request on its
// own connection and shows that request's own timings and, once the class
// is done, where it ranked.
import * as C from "./core.js";
import { line, remember, boxWidth, forgetWidth, niceTicks, esc, chartScale } from "./charts.js";

const el = C.el;
const MiB = 1 << 20;

// ---------- the presenter ----------

// presenterPanel returns the panel; send(type, payload) sends a room
// command, defaults() the request to start from (the page's prompt and
// settings), onState(state) hears every state (lessons set their numbers).
export function presenterPanel({ send, defaults, onState }) {
  const d = defaults() || {};
  const prompt = el("textarea", { id: "class-prompt", rows: "2", "data-testid": "class-prompt" });
  prompt.value = d.prompt || "Once upon a time";
  const tokens = el("input", { id: "class-tokens", type: "number", min: "1", max: "256", value: String(Math.min(256, d.max_new_tokens || 32)), "data-testid": "class-tokens" });
  const batch = el("input", { id: "class-batch", type: "checkbox", checked: true, "data-testid": "class-batch" });
  const go = el("button", { type: "submit", class: "primary", "data-testid": "btn-class-send", text: "Send it from every student's device" });
  const again = el("button", { type: "button", "data-testid": "btn-class-again-batch", text: "Again without batching", hidden: true });
  const longer = el("button", { type: "button", "data-testid": "btn-class-again-longer", text: "Again with a 4× longer prompt", hidden: true });
  const status = el("p", { class: "small", role: "status", "data-testid": "class-status" });
  const runs = el("div", { class: "class-runs", "data-testid": "class-runs" });
  const form = el("form", { class: "class-form", "data-no-mirror": "" }, [
    el("label", { for: "class-prompt", text: "Request every student sends" }), prompt,
    el("div", { class: "class-form-row" }, [
      el("label", { for: "class-tokens", text: "Output tokens" }), tokens,
      el("label", { class: "class-check" }, [batch, " batch the class's decode steps"]),
      go,
    ]),
  ]);
  const box = el("section", { class: "class-request", "data-testid": "class-request", "aria-labelledby": "class-request-title" }, [
    el("h3", { id: "class-request-title", text: "The class is the load test" }),
    el("p", { class: "small muted", text: "Every student following sends the same request at the same moment, each from their own device as their own session on this server, through the same queue and batches as any run. First the server runs it once alone, for comparison." }),
    form, el("div", { class: "class-again", "data-no-mirror": "" }, [again, longer]), status, runs,
  ]);
  let last = null, shown = []; // shown: [{id, el, draw}] latest first, at most 2
  // the charts are drawn to their boxes' widths: again when those change
  // (a window resized, a phone turned, a second run beside the first)
  let resized = 0, width = 0;
  new ResizeObserver((entries) => {
    const w = Math.round(entries[entries.length - 1].contentRect.width);
    if (w === width || resized) return;
    width = w;
    resized = requestAnimationFrame(() => {
      resized = 0;
      for (const x of shown) {
        x.el.querySelectorAll(".chart").forEach((b) => forgetWidth(b));
        if (x.last) x.draw(x.last);
      }
    });
  }).observe(runs);
  const request = () => {
    const s = Object.assign({}, d.sampling ? { sampling: d.sampling } : {}, { prompt: prompt.value, max_new_tokens: Math.max(1, Math.min(256, parseInt(tokens.value, 10) || 32)) });
    if (d.model) s.model = d.model;
    return s;
  };
  const submit = () => {
    status.textContent = "Running the request once alone, then sending it to the class…";
    status.classList.remove("error");
    send("room_class", { start: request(), batch: batch.checked });
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); submit(); });
  again.addEventListener("click", () => { batch.checked = !batch.checked; submit(); });
  longer.addEventListener("click", () => {
    const p = prompt.value.trim();
    prompt.value = [p, p, p, p].join(" ");
    submit();
  });
  const api = {
    el: box,
    onState(st) {
      last = st;
      let r = shown.find((x) => x.id === st.id);
      if (!r) {
        r = runView();
        r.id = st.id;
        shown.unshift(r);
        if (shown.length > 2) shown.pop().el.remove();
        runs.prepend(r.el);
        shown.forEach((x, i) => x.el.querySelector("h4 .class-when").textContent = i === 0 ? "This run" : "The run before");
      }
      r.draw(st);
      // a second column narrows the first: its charts are drawn again to fit
      shown.forEach((x) => { if (x !== r && x.last) x.draw(x.last); });
      const a = st.aggregate;
      status.textContent = st.done ? "Done: " + a.finished + " of " + st.expected + " students' requests finished" + (a.failed ? ", " + a.failed + " did not" : "") + "." :
        a.rows + " of " + st.expected + " students' devices have sent it; " + a.finished + " finished…";
      again.hidden = longer.hidden = !st.done;
      again.textContent = st.batch ? "Again without batching" : "Again with batching";
      box.dataset.state = st.done ? "done" : "running";
      if (onState) onState(st);
    },
    onError(p) {
      status.textContent = C.errorText(p);
      status.classList.add("error");
    },
    state: () => last,
    // setRequest puts a request in the form (a lesson section's own)
    setRequest(r) {
      if (r.prompt) prompt.value = r.prompt;
      if (r.max_new_tokens) tokens.value = String(Math.min(256, r.max_new_tokens));
    },
  };
  return api;
}

// runView is one class request's figures: what it was, the summary, the
// rows, the gaps and batches over time, memory, and a table of the rows.
function runView() {
  const head = el("h4", {}, [el("span", { class: "class-when" }), el("span", { class: "class-what" })]);
  const summary = el("p", { class: "class-summary", "data-testid": "class-summary" });
  const rowsBox = el("div", { class: "chart class-rows", "data-testid": "class-rows-chart" });
  const gapBox = el("div", { class: "chart", "data-testid": "class-gap-chart" });
  const batchBox = el("div", { class: "chart", "data-testid": "class-batch-chart" });
  const memory = el("p", { class: "small class-memory", "data-testid": "class-memory" });
  const table = el("tbody");
  const details = el("details", { class: "class-table" }, [el("summary", { text: "Every student's request in numbers" }),
    el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Every student's request in numbers" }, [el("table", {}, [
      el("thead", {}, [el("tr", {}, ["student", "waited before the first token ms", "tokenize + embed + prefill + first token ms", "time to first token ms", "tokens", "tokens/s", "largest batch"].map((h) => el("th", { scope: "col", text: h })))]),
      table])])]);
  const root = el("div", { class: "class-run", "data-testid": "class-run" }, [head, summary,
    el("p", { class: "small muted", text: "One row per student (anonymous, in the order their requests arrived): grey is waiting before the first token (for an engine slot or the prefill slot), blue is the work up to the first token (tokenize, embed, prefill, choosing it), light blue is generating the rest. Time starts when the first request arrived." }),
    rowsBox, gapBox, batchBox, memory, details]);
  const view = {
    el: root,
    last: null,
    draw(st) {
      view.last = st;
      const a = st.aggregate, al = st.alone;
      root.dataset.id = st.id;
      root.dataset.done = st.done ? "1" : "0";
      root.dataset.rows = a.rows;
      head.querySelector(".class-what").textContent = ": batching " + (st.batch ? "on" : st.server_batches ? "off" : "off (this server does not batch: serve --batch)") + ", " + st.start.max_new_tokens + " output tokens, prompt “" + clip(st.start.prompt, 40) + "”";
      summary.textContent = "The class's output: " + C.fmt(a.tok_s, 0) + " tokens/s (all " + String(a.tokens) + " tokens the students got ÷ " + C.ms(a.wall_ms) +
        " ms from the first request's arrival to the last one's end). One request alone, just before: " + C.fmt(al.tok_s, 0) + " tokens/s" +
        (al.tok_s > 0 && a.tok_s > 0 ? ": the class got " + C.fmt(a.tok_s / al.tok_s, 2) + "× as many tokens per second in total" : "") +
        ", while its median time to the first token was " + C.ms(median(st.rows.filter((r) => r.state === "done").map((r) => r.ttft_ms))) + " ms against " + C.ms(al.ttft_ms) + " ms alone.";
      summary.dataset.aggregate = a.tok_s;
      summary.dataset.alone = al.tok_s;
      drawRows(rowsBox, st);
      drawOverTime(gapBox, batchBox, st);
      const runs = a.runs_bytes;
      memory.textContent = "Memory: the model's weights " + C.bytes(st.weights_bytes) + " (shared by every request) + the class's runs " + C.bytes(runs) +
        " (each its own KV cache and scratch, " + C.bytes(al.memory_bytes) + " at full length) of the " + C.bytes(st.budget_bytes) + " this server allows for runs (--max-kv-bytes): " + C.pct(runs / st.budget_bytes, runs / st.budget_bytes < 0.01 ? 3 : 1) + ".";
      table.replaceChildren(...st.rows.map((r, i) => el("tr", { "data-state": r.state }, [String(i + 1), C.ms(r.queue_ms), C.ms(r.ttft_ms - r.queue_ms), C.ms(r.ttft_ms), String(r.tokens),
        r.state === "done" ? C.fmt(r.tok_s, 0) : r.state, String(Math.max(0, ...r.batches))].map((t) => el("td", { text: t })))));
    },
  };
  return view;
}

function clip(s, n) { s = String(s || ""); return s.length > n ? s.slice(0, n - 1) + "…" : s; }
function median(xs) {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// busyFigures are the after-send lesson's busy-server numbers from a class
// request, defined as its simulated panel defines them where they can be:
// the median wall-clock time between a request's consecutive tokens, alone
// and in the class; the median wait of a decode step for its pass; the
// largest batch.
export function busyFigures(st) {
  const rows = st.rows.filter((r) => r.state === "done");
  const gaps = rows.flatMap((r) => (r.token_at || []).slice(1).map((t, i) => t - r.token_at[i]));
  return { n: rows.length, itlAlone: st.alone.gap_ms, itlBusy: median(gaps), queueBusy: median(rows.flatMap((r) => r.step_queue_ms || [])),
    maxBatch: Math.max(1, ...rows.flatMap((r) => r.batches || [])) };
}

// drawRows draws the class as rows on one time axis.
function drawRows(box, st) {
  remember(box, () => drawRows(box, st));
  const rows = st.rows, W = Math.floor(boxWidth(box, 600) / chartScale());
  const L = 66, R = 10, T = 6, rowH = rows.length > 60 ? 4 : rows.length > 30 ? 7 : rows.length > 4 ? 11 : 16, B = 34;
  const H = T + Math.max(1, rows.length) * rowH + B, pw = W - L - R;
  const t0 = Math.min(...rows.map((r) => r.start_ms)), now = Date.now();
  const end = (r) => (r.end_ms || (r.state === "running" ? now : r.start_ms)) - t0;
  const span = Math.max(1, ...rows.map(end));
  const x = (ms) => L + Math.max(0, ms) / span * pw;
  let s = "";
  rows.forEach((r, i) => {
    const y = T + i * rowH, h = Math.max(2, rowH - 2), start = r.start_ms - t0;
    const first = r.first_ms ? r.first_ms - t0 : null;
    const title = "student " + (i + 1) + ": " + (r.state === "done" ? "first token after " + C.ms(r.ttft_ms) + " ms (" + C.ms(r.queue_ms) + " waiting), " + r.tokens + " tokens, " + C.fmt(r.tok_s, 0) + " tokens/s" : r.state === "failed" ? "did not finish: " + (r.error || "") : "running, " + r.tokens + " tokens so far");
    s += `<g class="class-row" data-state="${r.state}"><title>${esc(title)}</title>`;
    if (r.state === "done") {
      // waiting, then work, up to the first token (the engine's own times), placed before the first token's wall time
      const f = first !== null ? first : start + r.ttft_ms;
      const work = r.ttft_ms - r.queue_ms;
      s += `<rect x="${x(start).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(f - work) - x(start)).toFixed(1)}" height="${h}" class="s-muted"/>`;
      s += `<rect x="${x(f - work).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(f) - x(f - work)).toFixed(1)}" height="${h}" class="s-accent"/>`;
      s += `<rect x="${x(f).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(end(r)) - x(f)).toFixed(1)}" height="${h}" class="s-light"/>`;
    } else {
      s += `<rect x="${x(start).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(end(r)) - x(start)).toFixed(1)}" height="${h}" class="${r.state === "failed" ? "s-warn" : "s-light"}"/>`;
    }
    s += "</g>";
  });
  const bottom = T + rows.length * rowH;
  s += `<line x1="${L}" x2="${L + pw}" y1="${bottom}" y2="${bottom}" class="ch-axis"/>`;
  for (const t of niceTicks(0, span, Math.max(2, Math.floor(pw / 70)))) s += `<text x="${x(t)}" y="${bottom + 13}" text-anchor="middle" class="ch-tick">${esc(t)}</text>`;
  s += `<text x="${L - 6}" y="${T + Math.min(9, rowH)}" text-anchor="end" class="ch-tick">student 1</text>`;
  if (rows.length > 1) s += `<text x="${L - 6}" y="${bottom - 1}" text-anchor="end" class="ch-tick">student ${rows.length}</text>`;
  s += `<text x="${L + pw / 2}" y="${H - 6}" text-anchor="middle" class="ch-title">ms since the first request arrived</text>`;
  const k = chartScale();
  box.innerHTML = `<svg viewBox="0 0 ${W} ${H}" width="${W * k}" height="${H * k}" role="img" aria-label="${esc("The class's " + rows.length + " requests on one time axis: waiting, work up to the first token, generating")}">${s}</svg>`;
}

// drawOverTime draws the gap between each student's consecutive tokens
// (median per time slice) and the batch size of the passes, over time.
function drawOverTime(gapBox, batchBox, st) {
  const rows = st.rows;
  if (!rows.length) return;
  const t0 = Math.min(...rows.map((r) => r.start_ms));
  const gaps = [], batches = [];
  for (const r of rows) {
    const at = r.token_at || [];
    for (let i = 1; i < at.length; i++) gaps.push({ t: r.start_ms - t0 + at[i], v: at[i] - at[i - 1] });
    // pass j made the token after token j: it happened between them
    (r.batches || []).forEach((b, j) => { if (j < at.length) batches.push({ t: r.start_ms - t0 + at[j], v: b }); });
  }
  // the same time axis as the rows: to the last request's end
  const span = Math.max(1, ...rows.map((r) => (r.end_ms || Date.now()) - t0), ...gaps.map((g) => g.t), ...batches.map((b) => b.t));
  const slices = Math.max(4, Math.min(40, Math.floor(span / 5)));
  const bucket = (pts, f) => {
    const out = [];
    for (let k = 0; k < slices; k++) {
      const lo = k * span / slices, hi = (k + 1) * span / slices, vs = pts.filter((p) => p.t >= lo && (p.t < hi || k === slices - 1)).map((p) => p.v);
      if (vs.length) out.push({ x: (lo + hi) / 2, y: f(vs), title: C.ms((lo + hi) / 2) + " ms: " + C.fmt(f(vs), 3) });
    }
    return out;
  };
  const g = bucket(gaps, median), b = bucket(batches, (vs) => Math.max(...vs));
  gapBox.dataset.points = g.length;
  batchBox.dataset.points = b.length;
  line(gapBox, { points: g, dots: true, height: 150, xMin: 0, xMax: span, xTitle: "ms since the first request arrived", yTitle: "ms between tokens", aria: "Median time between a student's consecutive tokens, over time" });
  line(batchBox, { points: b, step: true, height: 150, xMin: 0, xMax: span, yMax: Math.max(2, ...b.map((p) => p.y)) * 1.15, xTitle: "ms since the first request arrived", yTitle: "requests per pass", aria: "Largest batch of decode steps over time" });
}

// ---------- a student ----------

// studentRequest sends the class request from this device as its own
// session and draws its own timings into box; it returns {result(msg)},
// to call with the class's room_class_result (the rank).
export function studentRequest(box, msg, code) {
  const p = msg.payload || {};
  const row = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
  const status = el("p", { role: "status", "data-testid": "class-mine-status", text: "Your device is sending the class's request…" });
  const facts = el("dl", { class: "class-mine-facts", "data-testid": "class-mine-facts" });
  const itlBox = el("div", { class: "chart", "data-testid": "class-mine-itl" });
  const batchBox = el("div", { class: "chart", "data-testid": "class-mine-batches" });
  const rank = el("p", { class: "class-mine-rank", "data-testid": "class-mine-rank" });
  box.replaceChildren(el("h3", { text: "Your request, sent by this device with the whole class" }), status, facts, itlBox, batchBox, rank);
  box.hidden = false;
  box.dataset.state = "running";
  box.dataset.row = row;
  const start = Object.assign({}, p.start, { class: { code, id: p.id, row }, no_batch: !p.batch });
  const seen = new Set(), batches = [];
  let stop = null, tokens = 0, mine = null, result = null;
  const client = new C.Client((m) => {
    const evs = m.type === "event" ? [m.payload] : m.type === "events" || m.type === "detail" ? (m.payload && m.payload.events) || [] : [];
    for (const ev of evs) {
      if (seen.has(ev.seq)) continue; // a thinned event's detail, sent again in full
      seen.add(ev.seq);
      if (ev.sample) tokens++;
      if (ev.append && ev.append.batch_size > 0) batches.push(ev.append.batch_size);
      if (ev.stop) stop = ev.stop;
    }
    if (m.type === "error") { status.textContent = "Your request failed: " + C.errorText(m.payload || {}); box.dataset.state = "failed"; client.close(); return; }
    if (stop) { done(); client.close(); } else if (evs.length) status.textContent = "Generating: " + tokens + " of " + (p.start.max_new_tokens || "?") + " tokens…";
  }, () => {});
  client.connect().then(() => {
    client.send("start", start);
    client.send("run", { detail_ms: 60000 });
  }).catch((e) => { status.textContent = "Your device could not send the request: " + C.connectText(e); box.dataset.state = "failed"; });
  function done() {
    const t = stop.timings, q = t.ttft_ms - t.tokenize_ms - t.embed_ms - t.prefill_ms - t.first_decode_ms;
    mine = { ttft: t.ttft_ms };
    status.textContent = "Done: " + stop.generated + " tokens. These are your request's own times, as the server measured them.";
    box.dataset.state = "done";
    box.dataset.ttft = t.ttft_ms;
    const pair = (dt, dd) => [el("dt", { text: dt }), el("dd", { text: dd })];
    facts.replaceChildren(...[
      pair("waited before the first token (for the server's engine)", C.ms(q) + " ms"),
      pair("tokenize", C.ms(t.tokenize_ms) + " ms"), pair("embed", C.ms(t.embed_ms) + " ms"), pair("prefill", C.ms(t.prefill_ms) + " ms"),
      pair("choosing the first token", C.ms(t.first_decode_ms) + " ms"),
      pair("time to first token (the five above)", C.ms(t.ttft_ms) + " ms"),
      pair("each later token (median of " + (t.itl_ms || []).length + ", the engine's work per token)", C.ms(median(t.itl_ms || [])) + " ms"),
      pair("batch sizes of your decode passes", !batches.length ? "none" : Math.min(...batches) === Math.max(...batches) ?
        (batches[0] === 1 ? "1 (your request alone in every pass)" : batches[0] + " requests in every pass") : "from " + Math.min(...batches) + " to " + Math.max(...batches) + " requests per pass"),
    ].flat());
    const itl = t.itl_ms || [];
    line(itlBox, { points: itl.map((v, i) => ({ x: i + 2, y: v, title: "token " + (i + 2) + ": " + C.ms(v) + " ms" })), dots: true, height: 130, xMin: 1, xInt: true,
      xTitle: "your token", yTitle: "ms of work", aria: "The engine's work for each of your later tokens (inter-token latency without waiting)" });
    line(batchBox, { points: batches.map((b, i) => ({ x: i + 1, y: b })), step: true, height: 130, xMin: 0, xInt: true, yMax: Math.max(2, ...batches) * 1.15, xTitle: "your decode pass", yTitle: "requests per pass", aria: "How many requests shared each of your decode passes" });
    if (result) showRank();
  }
  function showRank() {
    const rows = (result.rows || []).filter((r) => r.state === "done"), me = rows.find((r) => r.row === row);
    if (!me) { rank.textContent = "The class's results are in; yours did not finish in time."; return; }
    const sorted = [...rows].sort((a, b) => a.ttft_ms - b.ttft_ms), k = sorted.indexOf(me) + 1;
    rank.textContent = "Your first token came " + ordinal(k) + " of " + rows.length + " in the class (the class's median: " + C.ms(median(rows.map((r) => r.ttft_ms))) + " ms). " +
      "Your request got " + C.fmt(me.tok_s, 0) + " tokens/s (its tokens ÷ its time from arrival to its last token); the server gave the whole class " + C.fmt(result.aggregate.tok_s, 0) +
      " tokens/s, and one request alone got " + C.fmt(result.alone.tok_s, 0) + ".";
    box.dataset.rank = k;
  }
  return {
    result(m) {
      if (!m.payload || m.payload.id !== p.id) return;
      result = m.payload;
      if (mine) showRank();
    },
  };
}

function ordinal(k) {
  const s = ["th", "st", "nd", "rd"], v = k % 100;
  return k + (s[(v - 20) % 10] || s[v] || s[0]);
}
