// compare.js: the same prompt run greedy and sampled side by side, over two
// websocket connections; the sampled side also draws its first token N times.
import * as IS from "./core.js";
import { samplesChart } from "./panels.js";
import { initRoom } from "./room.js";

{
  const $ = IS.$;
  const data = IS.pageData(), models = data.models || [];

  // Side is one of the two runs, on its own session; each command waits
  // for the reply carrying its id. The greedy side starts and runs to the
  // stop; the sampled side (sampleN > 0) steps to its first choice, draws
  // it sampleN times, then runs to the stop. onDone is called once, when
  // the side stopped or failed; a side closed by a new comparison is silent.
  class Side {
    constructor(name) {
      this.name = name;
      this.tokens = [];
      this.prompt = "";
      this.done = false;
      this.samples = null;
      this.closed = false;
      this.client = new IS.Client();
    }
    onEvent(p) {
      if (p.tokenize) this.prompt = p.tokenize.text;
      if (p.sample) this.lastSample = p.sample;
      if (p.append) this.tokens.push({ id: p.append.id, text: p.append.text, piece: p.append.piece, prob: this.lastSample ? this.lastSample.chosen.prob_kept : 0 });
      if (p.stop) this.stop = p.stop;
    }
    finish() {
      if (this.closed || this.done) return;
      this.done = true;
      this.onDone();
    }
    async drive(start, sampleN) {
      const c = this.client;
      try {
        await c.connect();
      } catch (err) {
        if (this.closed) return;
        if (err.code !== "closed") this.finish(); // refused: this side is over
        setStatus(IS.connectText(err), true);
        return;
      }
      try {
        await c.request("start", start);
        if (sampleN) {
          // tokenize, embed, prefill, logits step by step, then sample_n
          for (;;) {
            const [ev] = await c.request("step");
            this.onEvent(ev);
            if (ev.next === "sample" || ev.stop) break;
          }
          if (!this.stop) {
            const m = await c.request("sample_n", { n: sampleN });
            if (this.closed) return;
            this.samples = m.payload;
            drawSamples(m.payload);
          }
        }
        if (!this.stop) await c.request("run", undefined, (ev) => this.onEvent(ev));
      } catch (err) {
        if (this.closed) return;
        setStatus(this.name + ": " + err.message, true);
      }
      this.finish();
    }
    close() {
      this.closed = true;
      this.client.close();
    }
  }

  function fill() {
    const sel = $("model");
    models.forEach((m) => sel.appendChild(IS.el("option", { value: m.name, text: m.name })));
    const d = IS.samplingDefaults(data), u = IS.readURL();
    sel.value = u.model || (models[0] && models[0].name) || "";
    $("prompt").value = u.prompt !== undefined ? u.prompt : d.prompt;
    $("temperature").value = u.temperature !== undefined ? u.temperature : d.temperature;
    $("top-k").value = u.top_k !== undefined ? u.top_k : d.top_k;
    $("top-p").value = u.top_p !== undefined ? u.top_p : d.top_p;
    $("min-p").value = u.min_p !== undefined ? u.min_p : d.min_p;
    $("seed").value = u.seed !== undefined ? u.seed : d.seed;
    $("max-new").value = u.max_new_tokens !== undefined ? u.max_new_tokens : d.max_new_tokens;
  }
  function settings() {
    return { model: $("model").value, prompt: $("prompt").value, temperature: $("temperature").value, top_k: $("top-k").value,
      top_p: $("top-p").value, min_p: $("min-p").value, seed: $("seed").value, max_new_tokens: $("max-new").value };
  }
  function setStatus(t, err) { $("status").textContent = t; $("status").className = "status" + (err ? " error" : ""); }

  let sides = null;
  function run() {
    const s = settings();
    $("share").href = IS.writeURL(s);
    const base = { model: s.model, prompt: s.prompt, max_new_tokens: parseInt(s.max_new_tokens, 10) };
    const sampling = IS.samplingPayload(s);
    const greedy = Object.assign({}, sampling, { temperature: 0 });
    if (sides) sides.forEach((x) => { if (x.close) x.close(); });
    const mine = [new Side("greedy"), new Side("sampled")];
    sides = mine;
    const sampleN = Math.max(1, Math.min(data.limits.max_sample_n, parseInt($("sample-n").value, 10) || 200));
    $("h-sampled").textContent = "Sampled (T=" + sampling.temperature + (sampling.top_k ? ", top-k " + sampling.top_k : "") + (sampling.top_p < 1 ? ", top-p " + sampling.top_p : "") + ", seed " + sampling.seed + ")";
    setStatus("Running both…");
    document.body.setAttribute("data-compare", "running");
    room.changed();
    ["gen-greedy", "gen-sampled", "align"].forEach((id) => IS.clear($(id)));
    $("diverge").textContent = "";
    let finished = 0;
    mine.forEach((side, i) => {
      side.onDone = () => { if (++finished === 2) render(); };
      side.drive(Object.assign({}, base, { sampling: i === 0 ? greedy : sampling }), i === 0 ? 0 : sampleN);
    });
  }

  function genView(box, side, other) {
    box.appendChild(IS.el("span", { class: "gen-prompt", text: side.prompt }));
    side.tokens.forEach((t, i) => {
      const diff = !other.tokens[i] || other.tokens[i].id !== t.id;
      const span = IS.el("span", { class: "gen-tok" + (diff ? " differs" : ""), "data-id": t.id, text: t.text, title: "id " + t.id + " · p after the cut " + IS.fmt(t.prob, 4) });
      span.style.setProperty("--p", (0.1 + 0.55 * t.prob).toFixed(3));
      box.appendChild(span);
    });
  }
  function render() {
    const g = sides[0], s = sides[1];
    genView($("gen-greedy"), g, s);
    genView($("gen-sampled"), s, g);
    const table = $("align"), n = Math.max(g.tokens.length, s.tokens.length);
    let first = -1;
    table.appendChild(IS.el("tr", {}, ["token", "greedy", "id", "sampled", "id", "sampled: p after the cut"].map((x) => IS.el("th", { scope: "col", text: x }))));
    for (let i = 0; i < n; i++) {
      const a = g.tokens[i], b = s.tokens[i];
      const same = a && b && a.id === b.id;
      if (!same && first < 0) first = i;
      table.appendChild(IS.el("tr", { class: same ? "same" : (i === first ? "first-diverge" : "diff"), "data-step": i },
        [String(i + 1), a ? IS.tokenLabel(a) : "", a ? String(a.id) : "", b ? IS.tokenLabel(b) : "", b ? String(b.id) : "", b ? IS.fmt(b.prob, 4) : ""].map((x) => IS.el("td", { text: x }))));
    }
    const d = $("diverge");
    if (first < 0) d.textContent = "The two runs agree on every token.";
    else d.textContent = "First divergence at generated token " + (first + 1) + ": greedy “" + (g.tokens[first] ? IS.tokenLabel(g.tokens[first]) : "(stopped)") +
      "” vs sampled “" + (s.tokens[first] ? IS.tokenLabel(s.tokens[first]) : "(stopped)") + "”. Greedy always takes the top token; sampling drew a lower-ranked one.";
    d.setAttribute("data-first", first);
    setStatus("Done. Greedy stopped because " + (g.stop ? IS.stopReason(g.stop.reason, g.stop.generated) : "of an error") + "; sampled stopped because " + (s.stop ? IS.stopReason(s.stop.reason, s.stop.generated) : "of an error") + ".");
    document.body.setAttribute("data-compare", "done");
    room.changed();
  }
  function drawSamples(p) {
    samplesChart($("chart-samples"), p);
    $("chart-samples").setAttribute("data-n", p.n);
    room.changed();
  }

  // classroom (room.js): what this page shows, for students following it
  function pageState() {
    return { settings: settings(), sample_n: $("sample-n").value, heading: $("h-sampled").textContent, status: $("status").textContent,
      sides: sides ? sides.map((x) => ({ prompt: x.prompt, tokens: x.tokens, stop: x.stop || null, done: x.done })) : null,
      samples: sides && sides[1].samples || null };
  }
  function showState(st) {
    const s = st.settings || {}, ids = { model: "model", prompt: "prompt", temperature: "temperature", top_k: "top-k", top_p: "top-p", min_p: "min-p", seed: "seed", max_new_tokens: "max-new" };
    Object.keys(ids).forEach((k) => { if (s[k] !== undefined) $(ids[k]).value = s[k]; });
    if (st.sample_n) $("sample-n").value = st.sample_n;
    if (st.heading) $("h-sampled").textContent = st.heading;
    ["gen-greedy", "gen-sampled", "align"].forEach((id) => IS.clear($(id)));
    $("diverge").textContent = "";
    sides = st.sides;
    if (sides && sides.length === 2 && sides[0].done && sides[1].done) render();
    else { document.body.setAttribute("data-compare", sides ? "running" : ""); setStatus(sides ? "The presenter is running both…" : "Waiting for the presenter to run a comparison."); }
    if (st.samples) drawSamples(st.samples);
  }

  $("controls").addEventListener("submit", (e) => { e.preventDefault(); run(); });
  $("share").addEventListener("click", (e) => { e.preventDefault(); const l = IS.writeURL(settings()); if (navigator.clipboard) navigator.clipboard.writeText(l).catch(() => {}); setStatus("Link copied: " + l); });
  fill();
  const room = initRoom({ kind: "compare", buttons: document.querySelector("#controls .buttons"), setStatus, state: pageState, show: showState,
    setFollowing() {} });
  if (IS.readURL().prompt !== undefined && !room.following) run();
}
