// compare.js: the same prompt run greedy and sampled side by side, over two
// websocket connections; the sampled side also draws its first token N times.
import * as IS from "./core.js";
import { samplesChart } from "./panels.js";
import { initRoom } from "./room.js";

{
  var $ = IS.$;
  var data = IS.pageData(), models = data.models || [];

  function Side(name) {
    this.name = name;
    this.tokens = [];
    this.prompt = "";
    this.done = false;
    this.samples = null;
    var self = this;
    this.client = new IS.Client(function (m) { self.onMessage(m); });
  }
  Side.prototype.onMessage = function (m) {
    var p = m.payload || {};
    if (m.type === "error") { setStatus(this.name + ": " + IS.errorText(p), true); this.done = true; this.onDone(); return; }
    if (m.type === "samples") { this.samples = p; drawSamples(p); this.client.send("run"); return; }
    if (m.type === "started") { this.client.send("run"); return; }
    if (m.type !== "event") return;
    if (p.tokenize) this.prompt = p.tokenize.text;
    if (p.sample) this.lastSample = p.sample;
    if (p.append) this.tokens.push({ id: p.append.id, text: p.append.text, piece: p.append.piece, prob: this.lastSample ? this.lastSample.chosen.prob_kept : 0 });
    if (p.stop) { this.done = true; this.stop = p.stop; this.onDone(); }
  };

  function fill() {
    var sel = $("model");
    models.forEach(function (m) { sel.appendChild(IS.el("option", { value: m.name, text: m.name })); });
    var d = IS.samplingDefaults(data), u = IS.readURL();
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

  var sides = null;
  function run() {
    var s = settings();
    $("share").href = IS.writeURL(s);
    var base = { model: s.model, prompt: s.prompt, max_new_tokens: parseInt(s.max_new_tokens, 10) };
    var sampling = IS.samplingPayload(s);
    var greedy = Object.assign({}, sampling, { temperature: 0 });
    if (sides) { sides.forEach(function (x) { if (x.client && x.client.ws) x.client.ws.close(); }); }
    sides = [new Side("greedy"), new Side("sampled")];
    sides[1].sampleN = Math.max(1, Math.min(data.limits.max_sample_n, parseInt($("sample-n").value, 10) || 200));
    $("h-sampled").textContent = "Sampled (T=" + sampling.temperature + (sampling.top_k ? ", top-k " + sampling.top_k : "") + (sampling.top_p < 1 ? ", top-p " + sampling.top_p : "") + ", seed " + sampling.seed + ")";
    setStatus("Running both…");
    document.body.setAttribute("data-compare", "running");
    room.changed();
    ["gen-greedy", "gen-sampled", "align"].forEach(function (id) { IS.clear($(id)); });
    $("diverge").textContent = "";
    var finished = 0;
    sides.forEach(function (side, i) {
      side.onDone = function () { if (++finished === 2) render(); };
      side.client.connect().then(function () {
        side.client.send("start", Object.assign({}, base, { sampling: i === 0 ? greedy : sampling }));
      }).catch(function (err) { setStatus(IS.connectText(err), true); });
    });
    // the sampled side: tokenize, embed, prefill, logits step by step, then sample_n, then run
    var sd = sides[1], steps = 0;
    sd.onMessage = (function (orig) {
      return function (m) {
        if (m.type === "started") { sd.client.send("step"); return; }
        if (m.type === "event" && !sd.sampledMany) {
          orig.call(sd, m);
          steps++;
          if (m.payload.next === "sample") { sd.sampledMany = true; sd.client.send("sample_n", { n: sd.sampleN }); }
          else sd.client.send("step");
          return;
        }
        orig.call(sd, m);
      };
    })(sd.onMessage);
  }

  function genView(box, side, other) {
    box.appendChild(IS.el("span", { class: "gen-prompt", text: side.prompt }));
    side.tokens.forEach(function (t, i) {
      var diff = !other.tokens[i] || other.tokens[i].id !== t.id;
      var span = IS.el("span", { class: "gen-tok" + (diff ? " differs" : ""), "data-id": t.id, text: t.text, title: "id " + t.id + " · p after the cut " + IS.fmt(t.prob, 4) });
      span.style.setProperty("--p", (0.1 + 0.55 * t.prob).toFixed(3));
      box.appendChild(span);
    });
  }
  function render() {
    var g = sides[0], s = sides[1];
    genView($("gen-greedy"), g, s);
    genView($("gen-sampled"), s, g);
    var table = $("align"), n = Math.max(g.tokens.length, s.tokens.length), first = -1;
    table.appendChild(IS.el("tr", {}, ["token", "greedy", "id", "sampled", "id", "sampled: p after the cut"].map(function (x) { return IS.el("th", { scope: "col", text: x }); })));
    for (var i = 0; i < n; i++) {
      var a = g.tokens[i], b = s.tokens[i];
      var same = a && b && a.id === b.id;
      if (!same && first < 0) first = i;
      table.appendChild(IS.el("tr", { class: same ? "same" : (i === first ? "first-diverge" : "diff"), "data-step": i },
        [String(i + 1), a ? IS.tokenLabel(a) : "", a ? String(a.id) : "", b ? IS.tokenLabel(b) : "", b ? String(b.id) : "", b ? IS.fmt(b.prob, 4) : ""].map(function (x) { return IS.el("td", { text: x }); })));
    }
    var d = $("diverge");
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
      sides: sides ? sides.map(function (x) { return { prompt: x.prompt, tokens: x.tokens, stop: x.stop || null, done: x.done }; }) : null,
      samples: sides && sides[1].samples || null };
  }
  function showState(st) {
    var s = st.settings || {}, ids = { model: "model", prompt: "prompt", temperature: "temperature", top_k: "top-k", top_p: "top-p", min_p: "min-p", seed: "seed", max_new_tokens: "max-new" };
    Object.keys(ids).forEach(function (k) { if (s[k] !== undefined) $(ids[k]).value = s[k]; });
    if (st.sample_n) $("sample-n").value = st.sample_n;
    if (st.heading) $("h-sampled").textContent = st.heading;
    ["gen-greedy", "gen-sampled", "align"].forEach(function (id) { IS.clear($(id)); });
    $("diverge").textContent = "";
    sides = st.sides;
    if (sides && sides.length === 2 && sides[0].done && sides[1].done) render();
    else { document.body.setAttribute("data-compare", sides ? "running" : ""); setStatus(sides ? "The presenter is running both…" : "Waiting for the presenter to run a comparison."); }
    if (st.samples) drawSamples(st.samples);
  }

  $("controls").addEventListener("submit", function (e) { e.preventDefault(); run(); });
  $("share").addEventListener("click", function (e) { e.preventDefault(); var l = IS.writeURL(settings()); if (navigator.clipboard) navigator.clipboard.writeText(l).catch(function () {}); setStatus("Link copied: " + l); });
  fill();
  var room = initRoom({ kind: "compare", buttons: document.querySelector("#controls .buttons"), setStatus: setStatus, state: pageState, show: showState,
    setFollowing: function () {} });
  if (IS.readURL().prompt !== undefined && !room.following) run();
}
