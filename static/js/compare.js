// compare.js: the same prompt run greedy and sampled side by side, over two
// websocket connections; the sampled side also draws its first token N times.
(function () {
  "use strict";
  var IS = window.IS, $ = function (id) { return document.getElementById(id); };
  var data = IS.pageData(), models = data.models || [];
  var chart = null;
  IS.chartDefaults();

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
    if (m.type === "error") { setStatus(this.name + ": " + p.message, true); this.done = true; this.onDone(); return; }
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
    var d = data.defaults || {}, u = IS.readURL();
    sel.value = u.model || (models[0] && models[0].name) || "";
    $("prompt").value = u.prompt !== undefined ? u.prompt : d.prompt;
    $("temperature").value = u.temperature !== undefined ? u.temperature : (d.temperature || 0.8);
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
    var sampling = { temperature: parseFloat(s.temperature), top_k: parseInt(s.top_k, 10), top_p: parseFloat(s.top_p), min_p: parseFloat(s.min_p), seed: parseInt(s.seed, 10) };
    var greedy = Object.assign({}, sampling, { temperature: 0 });
    if (sides) { sides.forEach(function (x) { if (x.client.ws) x.client.ws.close(); }); }
    sides = [new Side("greedy"), new Side("sampled")];
    sides[1].sampleN = Math.max(1, Math.min(data.limits.max_sample_n, parseInt($("sample-n").value, 10) || 200));
    $("h-sampled").textContent = "Sampled (T=" + sampling.temperature + (sampling.top_k ? ", top-k " + sampling.top_k : "") + (sampling.top_p < 1 ? ", top-p " + sampling.top_p : "") + ", seed " + sampling.seed + ")";
    setStatus("Running both…");
    document.body.setAttribute("data-compare", "running");
    ["gen-greedy", "gen-sampled", "align"].forEach(function (id) { IS.clear($(id)); });
    $("diverge").textContent = "";
    var finished = 0;
    sides.forEach(function (side, i) {
      side.onDone = function () { if (++finished === 2) render(); };
      side.client.connect().then(function () {
        side.client.send("start", Object.assign({}, base, { sampling: i === 0 ? greedy : sampling }));
      }).catch(function () { setStatus("Cannot reach the server.", true); });
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
      var span = IS.el("span", { class: "gen-tok" + (diff ? " differs" : ""), "data-id": t.id, text: t.text, title: "id " + t.id + " · p " + IS.fmt(t.prob, 4) });
      box.appendChild(span);
    });
  }
  function render() {
    var g = sides[0], s = sides[1];
    genView($("gen-greedy"), g, s);
    genView($("gen-sampled"), s, g);
    var table = $("align"), n = Math.max(g.tokens.length, s.tokens.length), first = -1;
    table.appendChild(IS.el("tr", {}, ["#", "greedy", "id", "sampled", "id", "p (sampled)"].map(function (x) { return IS.el("th", { scope: "col", text: x }); })));
    for (var i = 0; i < n; i++) {
      var a = g.tokens[i], b = s.tokens[i];
      var same = a && b && a.id === b.id;
      if (!same && first < 0) first = i;
      table.appendChild(IS.el("tr", { class: same ? "same" : (i === first ? "first-diverge" : "diff"), "data-step": i },
        [String(i), a ? IS.visible(a.text) : "", a ? String(a.id) : "", b ? IS.visible(b.text) : "", b ? String(b.id) : "", b ? IS.fmt(b.prob, 4) : ""].map(function (x) { return IS.el("td", { text: x }); })));
    }
    var d = $("diverge");
    if (first < 0) d.textContent = "The two runs agree on every token.";
    else d.textContent = "First divergence at generated token " + first + ": greedy " + (g.tokens[first] ? JSON.stringify(g.tokens[first].text) : "(stopped)") +
      " vs sampled " + (s.tokens[first] ? JSON.stringify(s.tokens[first].text) : "(stopped)") + ". Greedy always takes the top token; sampling drew a lower-ranked one.";
    d.setAttribute("data-first", first);
    setStatus("Done. Greedy stopped: " + (g.stop ? g.stop.reason : "?") + "; sampled stopped: " + (s.stop ? s.stop.reason : "?") + ".");
    document.body.setAttribute("data-compare", "done");
  }
  function drawSamples(p) {
    if (!window.Chart) return;
    if (chart) chart.destroy();
    var top = p.counts.slice(0, 20);
    chart = new Chart($("chart-samples"), { type: "bar", data: { labels: top.map(function (c) { return IS.visible(c.text) || c.token; }), datasets: [
      { label: "times drawn of " + p.n, data: top.map(function (c) { return c.count; }), backgroundColor: IS.cssVar("--accent"), yAxisID: "y" },
      { label: "expected (p × N)", data: top.map(function (c) { return c.prob_kept * p.n; }), backgroundColor: IS.cssVar("--muted"), yAxisID: "y" }] },
      options: { responsive: true } });
    $("chart-samples").setAttribute("data-n", p.n);
  }

  $("controls").addEventListener("submit", function (e) { e.preventDefault(); run(); });
  $("share").addEventListener("click", function (e) { e.preventDefault(); var l = IS.writeURL(settings()); if (navigator.clipboard) navigator.clipboard.writeText(l).catch(function () {}); setStatus("Link copied: " + l); });
  fill();
  if (IS.readURL().prompt !== undefined) run();
})();
