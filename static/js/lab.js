// lab.js: the step-through lab. Every number drawn here arrives in an engine
// event over the websocket; nothing is computed for display that the engine
// did not compute, except sums of the engine's own byte counts.
(function () {
  "use strict";
  var IS = window.IS, $ = function (id) { return document.getElementById(id); };
  var data = IS.pageData();
  var models = data.models || [];
  IS.chartDefaults();

  var state = resetState();
  var charts = {};
  // A dropped connection loses nothing: the engine is deterministic, so one
  // "resume" message with this run's start settings and its command log
  // ("step", "force 12", "rewind 1", …) lets the server rebuild exactly the
  // same run; its "resumed" answer carries the events to redraw from.
  var startP = null, log = [], resuming = false, retries = 0;
  var client = new IS.Client(onMessage, function () {
    setButtons(false);
    if (state.closing || !state.model) {
      setStatus("Disconnected from the server. Press Start to reconnect.", true);
      return;
    }
    setStatus("Connection lost; reconnecting…", true);
    setTimeout(reconnect, Math.min(5000, 250 * Math.pow(2, retries++)));
  });
  function reconnect() {
    client.connect().then(function () {
      retries = 0;
      state.pending = null;
      resuming = true;
      client.send("resume", { start: startP, log: log.slice() });
    }).catch(function () { /* onClose schedules the next try */ });
  }
  // logEntry is a command's line in the resume log (null: not logged).
  function logEntry(type, payload) {
    if (type === "rewind") return "rewind " + payload.n;
    if (type === "force") return "force " + payload.id;
    if (type === "step" || type === "step_token" || type === "run") return type;
    return null;
  }

  function resetState() {
    return { model: null, next: null, tokens: [], prompt: null, embed: null, selected: -1, gen: [], logitsByStep: {},
      lastLogits: null, step: 0, cacheLen: 0, cacheCap: 0, itl: [], timings: {}, prefillLayers: null, lastLayers: null,
      passPositions: [], checksumBefore: "", stopped: false, pending: null };
  }

  // ---------- controls ----------
  function fillForm() {
    var sel = $("model");
    models.forEach(function (m) {
      var o = IS.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") });
      sel.appendChild(o);
    });
    var d = data.defaults || {}, u = IS.readURL();
    sel.value = u.model || (models[0] && models[0].name) || "";
    $("prompt").value = u.prompt !== undefined ? u.prompt : d.prompt;
    $("temperature").value = u.temperature !== undefined ? u.temperature : d.temperature;
    $("top-k").value = u.top_k !== undefined ? u.top_k : d.top_k;
    $("top-p").value = u.top_p !== undefined ? u.top_p : d.top_p;
    $("min-p").value = u.min_p !== undefined ? u.min_p : d.min_p;
    $("seed").value = u.seed !== undefined ? u.seed : d.seed;
    $("max-new").value = u.max_new_tokens !== undefined ? u.max_new_tokens : d.max_new_tokens;
    $("stops").value = u.stop || "";
    $("chat-mode").checked = u.chat === "1";
    $("system").value = u.system || "";
    chatToggle();
    showModelCard();
  }
  function currentModel() {
    var name = $("model").value;
    return models.filter(function (m) { return m.name === name; })[0] || models[0];
  }
  function showModelCard() {
    var m = currentModel();
    if (!m) return;
    $("model-card").textContent = m.arch + " · " + IS.count(m.params) + " parameters (" + IS.bytes(m.weights_bytes) + " as " + (m.precision === "bf16" ? "bfloat16" : "float32") + ") · " + m.layers + " layers · width " + m.dim +
      " · " + m.heads + " query heads, " + m.kv_heads + " key/value heads of " + m.head_dim + " · vocabulary " + m.vocab + " · context " + m.context +
      " · " + m.position + (m.note ? " · " + m.note : "");
  }
  function chatToggle() {
    var on = $("chat-mode").checked;
    $("chat-fields").hidden = !on;
    $("prompt-label").textContent = on ? "User message" : "Prompt";
  }
  function settings() {
    return { model: $("model").value, prompt: $("prompt").value, chat: $("chat-mode").checked, system: $("system").value,
      temperature: $("temperature").value, top_k: $("top-k").value, top_p: $("top-p").value, min_p: $("min-p").value,
      seed: $("seed").value, max_new_tokens: $("max-new").value, stop: $("stops").value };
  }
  function startPayload(s) {
    var p = { model: s.model, max_new_tokens: parseInt(s.max_new_tokens, 10),
      sampling: { temperature: parseFloat(s.temperature), top_k: parseInt(s.top_k, 10), top_p: parseFloat(s.top_p),
        min_p: parseFloat(s.min_p), seed: parseInt(s.seed, 10) } };
    if (s.chat) {
      p.chat = [];
      if (s.system) p.chat.push({ role: "system", content: s.system });
      p.chat.push({ role: "user", content: s.prompt });
    } else p.prompt = s.prompt;
    if (s.stop) p.stop_strings = s.stop.split("|").filter(function (x) { return x !== ""; });
    return p;
  }

  function start() {
    var s = settings();
    var link = IS.writeURL(s);
    $("share").href = link;
    setStatus("Connecting…");
    client.connect().then(function () {
      state.pending = null;
      var p = startPayload(s);
      startP = p;
      log = [];
      resuming = false;
      client.send("start", p);
    }).catch(function () { setStatus("Cannot reach the server.", true); });
  }

  // pending is the command whose reply stream is still arriving: step and
  // rewind end after one event, step_token/force after an append or stop,
  // run after the stop.
  function send(type, payload) {
    if (state.pending && type !== "cancel") return;
    if (type === "reset") log = [];
    else if (logEntry(type, payload)) log.push(logEntry(type, payload));
    state.pending = { step: "step", rewind: "step", step_token: "token", force: "token", run: "run", reset: "reset" }[type] || null;
    if (type === "run") state.runEvents = 0;
    client.send(type, payload);
    setButtons(true);
  }

  function setButtons(on) {
    var busy = !!state.pending;
    $("btn-reset").disabled = !on || busy;
    $("btn-step").disabled = $("btn-token").disabled = $("btn-run").disabled = !on || busy || state.stopped;
    $("btn-rewind").disabled = !on || busy || state.gen.length === 0;
    $("btn-cancel").disabled = state.pending !== "run";
    document.body.setAttribute("data-busy", busy ? "1" : "0");
  }
  function setStatus(text, isError) {
    var s = $("status");
    s.textContent = text;
    s.className = "status" + (isError ? " error" : "");
  }

  // ---------- messages ----------
  function onMessage(msg) {
    var p = msg.payload || {};
    switch (msg.type) {
      case "welcome":
        if (p.models) { models = p.models; }
        break;
      case "started":
        onStarted(p);
        setStatus("Ready. Press “Next stage” (→ or space) to tokenize the prompt.");
        break;
      case "resumed":
        // the run as it was: started, then every event since, as if live
        onStarted(p);
        (p.events || []).forEach(function (ev) { state.pending = null; onEvent(ev); });
        resuming = false;
        state.pending = null;
        setButtons(true);
        setStatus("Reconnected: your run was restored.");
        document.body.setAttribute("data-restored", "1");
        break;
      case "event":
        onEvent(p);
        break;
      case "error":
        state.pending = null;
        setButtons(!!state.model);
        if (resuming) { resuming = false; p.message = "could not restore your run: " + p.message + ". Press Start"; }
        setStatus(p.message + " [" + p.code + "]", true);
        break;
      case "closing":
        state.closing = true;
        setStatus("The server is shutting down: " + p.reason, true);
        break;
    }
  }

  function onStarted(p) {
    state = resetState();
    state.pending = null;
    state.model = p.model;
    state.next = p.next;
    state.checksumBefore = p.model.checksum;
    resetPanels();
    setButtons(true);
    markTimeline(null, p.next);
  }

  function onEvent(ev) {
    state.next = ev.next;
    markTimeline(ev.stage, ev.next);
    if (ev.tokenize) onTokenize(ev.tokenize);
    if (ev.embed) onEmbed(ev.embed);
    if (ev.prefill) onPrefill(ev.prefill);
    if (ev.logits) onLogits(ev.logits);
    if (ev.sample) onSample(ev.sample);
    if (ev.append) onAppend(ev.append);
    if (ev.stop) onStop(ev.stop);
    var p = state.pending;
    if (p === "run") state.runEvents = (state.runEvents || 0) + 1;
    if (p === "step" || (p === "token" && (ev.stage === "append" || ev.stage === "stop")) || ev.stage === "stop" || p === "reset") {
      state.pending = null;
    }
    setButtons(true);
    var nextLabel = { tokenize: "tokenize the prompt", embed: "look up embeddings", prefill: "run prefill", logits: "compute the logits",
      sample: "choose a token", append: "append it and grow the KV cache", stop: "finish" }[ev.next] || ev.next;
    if (!ev.stop) setStatus("Done: " + ev.stage + ". Next: " + nextLabel + ".");
    document.body.setAttribute("data-seq", ev.seq);
  }

  function markTimeline(done, next) {
    document.querySelectorAll("#timeline li").forEach(function (li) {
      li.classList.toggle("done", li.dataset.stage === done);
      li.classList.toggle("next", li.dataset.stage === next && !state.stopped);
      if (li.dataset.stage === next) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
    });
  }

  // ---------- 1 tokens ----------
  function onTokenize(t) {
    state.tokens = t.tokens;
    state.prompt = t;
    var src = IS.clear($("source-text"));
    var text = t.text, pos = 0;
    var enc = new TextEncoder(), dec = new TextDecoder();
    var bytes = enc.encode(text);
    t.tokens.forEach(function (tok, i) {
      if (tok.start === tok.end) return;
      if (tok.start > pos) src.appendChild(document.createTextNode(IS.visible(dec.decode(bytes.slice(pos, tok.start)))));
      if (tok.start < pos) return; // inside a character already shown
      var end = tok.end;
      // extend partial tokens to the whole character so the text stays readable
      while (end < bytes.length && (bytes[end] & 0xc0) === 0x80) end++;
      var span = IS.el("span", { class: "src-tok c" + (i % 5), "data-i": i, text: IS.visible(dec.decode(bytes.slice(tok.start, end))) });
      src.appendChild(span);
      pos = end;
    });
    if (pos < bytes.length) src.appendChild(document.createTextNode(IS.visible(dec.decode(bytes.slice(pos)))));
    var chips = IS.clear($("chips"));
    t.tokens.forEach(function (tok, i) {
      var cls = "chip c" + (i % 5) + (tok.special ? " special" : "") + (tok.added ? " added" : "") + (tok.partial ? " partial" : "");
      var b = IS.el("button", { type: "button", class: cls, "data-i": i, "data-id": tok.id, "data-testid": "chip",
        title: "id " + tok.id + " · vocabulary piece " + JSON.stringify(tok.piece) + (tok.start !== tok.end ? " · bytes [" + tok.start + "," + tok.end + ")" : " · inserted, covers no input text") +
          (tok.added ? " · added by the application" : "") + (tok.partial ? " · part of a character" : "") },
        [IS.el("span", { class: "chip-text", text: tok.special ? tok.piece : IS.pieceText(tok) }), IS.el("span", { class: "chip-id", text: String(tok.id) })]);
      b.addEventListener("mouseenter", function () { highlightTok(i, true); });
      b.addEventListener("mouseleave", function () { highlightTok(i, false); });
      b.addEventListener("focus", function () { highlightTok(i, true); });
      b.addEventListener("blur", function () { highlightTok(i, false); });
      b.addEventListener("click", function () { state.selected = i; drawEmbed(); });
      chips.appendChild(b);
    });
    var added = t.added_by_app;
    $("ctx-text").textContent = t.count + " prompt tokens" + (added ? " (" + added + " added by the application" + (t.chat ? ", " + t.chat_style + " chat template" : "") + ")" : "") +
      " · context used " + t.context_used + " of " + t.context_limit;
    setContext(t.context_used, t.context_limit);
    state.selected = t.tokens.length - 1;
  }
  function setContext(used, limit) {
    $("ctx-fill").style.width = Math.min(100, 100 * used / limit) + "%";
    $("ctx-fill").setAttribute("data-used", used);
  }
  function highlightTok(i, on) {
    document.querySelectorAll('[data-i="' + i + '"]').forEach(function (e) { e.classList.toggle("hl", on); });
  }

  // ---------- 2 embeddings ----------
  function onEmbed(e) {
    state.embed = e;
    drawEmbed();
  }
  function strip(label, vec, norm) {
    var wrap = IS.el("div", { class: "strip" });
    wrap.appendChild(IS.el("div", { class: "strip-label", text: label + (norm !== undefined ? " · norm " + IS.fmt(norm, 3) : "") }));
    var c = IS.el("canvas", { class: "strip-canvas", width: String(Math.max(vec.length, 1)), height: "1", "aria-label": label });
    var ctx = c.getContext("2d"), m = 0;
    vec.forEach(function (v) { m = Math.max(m, Math.abs(v)); });
    vec.forEach(function (v, i) { ctx.fillStyle = IS.heat(v, m); ctx.fillRect(i, 0, 1, 1); });
    c.title = label + ": " + vec.length + " numbers, largest |value| " + IS.fmt(m, 4) + "; first: " + vec.slice(0, 4).map(function (x) { return IS.fmt(x, 4); }).join(", ");
    wrap.appendChild(c);
    return wrap;
  }
  function drawEmbed() {
    var e = state.embed, view = IS.clear($("embed-view"));
    if (!e) return;
    var i = Math.max(0, Math.min(state.selected, e.positions.length - 1));
    var p = e.positions[i];
    view.appendChild(IS.el("p", { "data-testid": "embed-pos", text: "Position " + p.pos + ": token " + p.id + " " + JSON.stringify(p.piece) + " · " + e.dim + " numbers per vector" }));
    view.appendChild(strip("token vector (row " + p.id + " of the embedding table)", p.token_vec, p.token_norm));
    if (p.pos_vec) view.appendChild(strip("position vector (row " + p.pos + " of the position table)", p.pos_vec, p.pos_norm));
    else view.appendChild(IS.el("p", { class: "muted small", text: "Position: " + e.method }));
    view.appendChild(strip("sum: what enters layer 0", p.sum, p.sum_norm));
    view.appendChild(IS.el("p", { class: "muted small", text: "Blue is negative, red positive, white zero." }));
  }

  // ---------- 3 prefill / decode ----------
  function onPrefill(p) {
    state.prefillLayers = p.layers;
    state.lastLayers = p.layers;
    state.passPositions = [];
    for (var i = 0; i < p.positions; i++) state.passPositions.push(i);
    $("pass-explain").textContent = "Prefill: all " + p.positions + " prompt positions went through " + p.layers.length + " layers in one batched pass (" +
      IS.fmt(p.duration_ms, 2) + " ms, " + IS.fmt(p.tokens_per_s, 0) + " tokens/s).";
    drawPositions(p.positions);
    drawLayers(p.layers, "prefill");
    fillLayerSelect(p.layers.length);
    drawAttention();
    state.cacheLen = p.positions;
    drawKV();
  }
  function drawPositions(total) {
    var box = IS.clear($("positions"));
    for (var i = 0; i < total; i++) {
      var isPass = state.passPositions.indexOf(i) >= 0;
      var tok = i < state.tokens.length ? state.tokens[i] : state.gen[i - state.tokens.length];
      var label = tok ? (tok.special ? tok.piece : IS.pieceText(tok)) : "";
      box.appendChild(IS.el("span", { class: "pos" + (isPass ? " pass" : "") + (i >= state.tokens.length ? " gen" : ""), title: "position " + i + ": " + label, text: String(i) }));
    }
  }
  function drawLayers(layers, kind) {
    var box = IS.clear($("layers"));
    var max = 0;
    layers.forEach(function (l) { max = Math.max(max, l.residual_norm[l.residual_norm.length - 1]); });
    layers.forEach(function (l, i) {
      var n = l.residual_norm[l.residual_norm.length - 1];
      var row = IS.el("div", { class: "layer-row" }, [IS.el("span", { class: "layer-name", text: "layer " + l.layer }),
        IS.el("span", { class: "layer-bar" }, [IS.el("span", { class: "layer-fill" })]), IS.el("span", { class: "layer-val", text: "‖x‖ " + IS.fmt(n, 2) })]);
      var fill = row.querySelector(".layer-fill");
      fill.style.width = "0%";
      fill.style.transitionDelay = (i * 60) + "ms";
      box.appendChild(row);
      requestAnimationFrame(function () { requestAnimationFrame(function () { fill.style.width = (100 * n / (max || 1)) + "%"; }); });
    });
    box.setAttribute("data-kind", kind);
  }
  function fillLayerSelect(n) {
    var sel = $("attn-layer"), cur = sel.value;
    IS.clear(sel);
    for (var i = 0; i < n; i++) sel.appendChild(IS.el("option", { value: String(i), text: String(i) }));
    sel.value = cur && cur < n ? cur : String(n - 1);
  }
  function drawAttention() {
    var layers = state.lastLayers;
    var c = $("attn"), ctx = c.getContext("2d");
    ctx.clearRect(0, 0, c.width, c.height);
    if (!layers) return;
    var l = layers[parseInt($("attn-layer").value, 10) || 0] || layers[0];
    var heads = l.attn, keys = heads[0].length;
    var labelW = 56, cw = Math.max(2, Math.min(24, (c.width - labelW) / keys)), ch = Math.max(8, Math.min(24, (c.height - 16) / heads.length));
    ctx.font = "11px system-ui";
    ctx.fillStyle = IS.cssVar("--fg");
    heads.forEach(function (row, h) {
      ctx.fillStyle = IS.cssVar("--fg");
      ctx.fillText("head " + h, 0, 12 + h * ch + ch / 2);
      row.forEach(function (w, k) {
        ctx.fillStyle = IS.seq(w);
        ctx.fillRect(labelW + k * cw, 4 + h * ch, cw - 1, ch - 1);
      });
    });
    c.title = "Layer " + l.layer + ": " + heads.length + " heads × " + keys + " key positions; darker = more attention. The current position attends only to itself and earlier positions.";
    c.setAttribute("data-keys", keys);
  }

  // ---------- 4 logits ----------
  function onLogits(l) {
    state.lastLogits = l;
    state.logitsByStep[state.gen.length] = l;
    if (l.recomputed) {
      state.gen.pop();
      state.cacheLen = l.pos + 1;
      drawGen();
      drawKV();
      state.itl = state.itl.slice(0, Math.max(0, state.gen.length - 1));
      drawTiming();
      state.stopped = false;
      $("stop-text").textContent = "";
    }
    var lbl = function (t) { return t.text && !/\ufffd/.test(t.text) ? IS.visible(t.text) : t.token; };
    $("logit-stats").innerHTML = "";
    var stats = [
      ["position", l.pos], ["vocabulary", l.vocab], ["max logit", IS.fmt(l.max, 3)], ["min", IS.fmt(l.min, 3)], ["mean", IS.fmt(l.mean, 3)],
      ["entropy T=1", IS.fmt(l.entropy, 3) + " nats"], ["entropy at T", IS.fmt(l.entropy_t, 3) + " nats"],
      ["after top-k", l.after_top_k], ["after top-p", l.after_top_p], ["kept", l.kept + " tokens, " + IS.pct(l.kept_mass) + " of the mass"]
    ];
    stats.forEach(function (s) { $("logit-stats").appendChild(IS.el("span", { class: "stat", "data-stat": s[0] }, [IS.el("b", { text: s[0] + " " }), String(s[1])])); });
    var top = l.top;
    var labels = top.map(lbl);
    var fg = IS.cssVar("--accent"), muted = IS.cssVar("--muted");
    chart("chart-logits", "bar", { labels: labels, datasets: [{ label: "raw logit", data: top.map(function (t) { return t.logit; }),
      backgroundColor: top.map(function (t) { return t.kept ? fg : muted; }) }] }, { plugins: { title: { display: true, text: "Top " + top.length + " raw logits (grey: cut by top-k/top-p/min-p)" } } });
    var temp = l.params.temperature;
    chart("chart-probs", "bar", { labels: labels, datasets: [
      { label: "softmax at T=1", data: top.map(function (t) { return t.prob; }), backgroundColor: muted },
      { label: temp > 0 ? "after T=" + temp : "greedy (T=0): shown at T=1", data: top.map(function (t) { return t.prob_t; }), backgroundColor: fg }] },
      { plugins: { title: { display: true, text: "Probabilities; dashed line: cut-off, kept mass " + IS.pct(l.kept_mass) } }, cutoff: l.kept });
    var h = l.histogram, w = (h.hi - h.lo) / h.counts.length;
    chart("chart-hist", "bar", { labels: h.counts.map(function (_, i) { return IS.fmt(h.lo + (i + 0.5) * w, 1); }),
      datasets: [{ label: "tokens per bin (log scale)", data: h.counts, backgroundColor: muted }] },
      { scales: { y: { type: "logarithmic" } }, plugins: { title: { display: true, text: "All " + l.vocab + " logits: most are far below the top few" } } });
    var table = IS.clear($("cands"));
    table.appendChild(IS.el("caption", { text: "Candidates: click one to force it as the next token" }));
    table.appendChild(IS.el("tr", {}, ["rank", "token", "id", "logit", "p (T=1)", "p (T)", "p kept"].map(function (x) { return IS.el("th", { scope: "col", text: x }); })));
    top.forEach(function (t) {
      var tr = IS.el("tr", { class: t.kept ? "kept" : "cut", tabindex: "0", "data-id": t.id, "data-testid": "cand-row", title: "force " + JSON.stringify(t.token) },
        [String(t.rank), lbl(t), String(t.id), IS.fmt(t.logit, 4), IS.fmt(t.prob, 4), IS.fmt(t.prob_t, 4), IS.fmt(t.prob_kept, 4)].map(function (x) { return IS.el("td", { text: x }); }));
      tr.addEventListener("click", function () { force(t.id); });
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") force(t.id); });
      table.appendChild(tr);
    });
  }
  function force(id) {
    if (state.stopped || (state.next !== "sample" && state.next !== "logits")) {
      setStatus("A token can be forced when the next stage is logits or sample.", true);
      return;
    }
    send("force", { id: id });
  }

  var cutoffPlugin = {
    id: "cutoff",
    afterDraw: function (ch) {
      var k = ch.options.cutoff;
      if (!k || k >= ch.data.labels.length) return;
      var x = ch.scales.x, y = ch.scales.y, ctx = ch.ctx;
      var px = (x.getPixelForTick(k - 1) + x.getPixelForTick(k)) / 2;
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.strokeStyle = IS.cssVar("--bad");
      ctx.beginPath();
      ctx.moveTo(px, y.top);
      ctx.lineTo(px, y.bottom);
      ctx.stroke();
      ctx.restore();
    }
  };
  var drawPlugin = {
    id: "draw",
    afterDraw: function (ch) {
      var r = ch.options.draw;
      if (r === undefined || r < 0) return;
      var x = ch.scales.x, y = ch.scales.y, ctx = ch.ctx, py = y.getPixelForValue(r);
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.strokeStyle = IS.cssVar("--bad");
      ctx.beginPath();
      ctx.moveTo(x.left, py);
      ctx.lineTo(x.right, py);
      ctx.stroke();
      ctx.fillStyle = IS.cssVar("--bad");
      ctx.fillText("draw r = " + IS.fmt(r, 4), x.left + 4, py - 4);
      ctx.restore();
    }
  };
  // chart draws or updates a Chart.js chart (updating in place is much
  // cheaper than rebuilding it at every step).
  function chart(id, type, dataObj, opts) {
    if (!window.Chart) return;
    var options = Object.assign({ responsive: true, plugins: {} }, opts || {});
    options.plugins = Object.assign({ legend: { display: dataObj.datasets.length > 1 } }, options.plugins || {});
    var c = charts[id];
    if (c && c.config.type === type) {
      c.data = dataObj;
      c.options = options;
      c.update("none");
      return;
    }
    if (c) c.destroy();
    charts[id] = new Chart($(id), { type: type, data: dataObj, options: options, plugins: [cutoffPlugin, drawPlugin] });
  }

  // ---------- 5 sampling ----------
  function onSample(s) {
    var labels = s.cdf.map(function (c) { return IS.visible(c.text) || c.token; });
    var chosenRank = s.chosen.rank;
    chart("chart-cdf", "line", { labels: labels, datasets: [{ label: "cumulative probability (kept candidates)", data: s.cdf.map(function (c) { return c.cum; }),
      stepped: "before", borderColor: IS.cssVar("--accent"), pointRadius: s.cdf.map(function (_, i) { return i === chosenRank ? 7 : 2; }),
      pointBackgroundColor: s.cdf.map(function (_, i) { return i === chosenRank ? IS.cssVar("--bad") : IS.cssVar("--accent"); }) }] },
      { scales: { y: { min: 0, max: 1 } }, draw: s.draw });
    var lo = chosenRank > 0 && s.cdf[chosenRank - 1] ? s.cdf[chosenRank - 1].cum : 0, hi = s.cdf[chosenRank] ? s.cdf[chosenRank].cum : 1;
    var why = s.forced ? "You forced this token." : s.draw < 0 ? "Greedy: no random draw; the top-scoring token wins." :
      "The draw r = " + IS.fmt(s.draw, 4) + " fell in [" + IS.fmt(lo, 4) + ", " + IS.fmt(hi, 4) + ").";
    $("sample-text").textContent = s.rule + ". " + why + " Chosen: " + JSON.stringify(s.chosen.text) + " (id " + s.chosen.id + ", rank " + s.chosen.rank +
      ", p = " + IS.fmt(s.chosen.prob_kept, 4) + ").";
    $("sample-text").setAttribute("data-chosen", s.chosen.id);
    state.lastSample = s;
    // show the choice in the logits panel too: its rank and its row
    var old = document.querySelector('#logit-stats [data-stat="chosen"]');
    if (old) old.remove();
    $("logit-stats").appendChild(IS.el("span", { class: "stat", "data-stat": "chosen", "data-testid": "chosen-rank" },
      [IS.el("b", { text: "chosen " }), JSON.stringify(s.chosen.text) + " at rank " + s.chosen.rank]));
    document.querySelectorAll('#cands tr[data-id]').forEach(function (tr) { tr.classList.toggle("chosen", +tr.dataset.id === s.chosen.id); });
  }

  // ---------- 6 KV cache ----------
  function drawKV() {
    var m = state.model, c = $("kv-grid"), ctx = c.getContext("2d");
    if (!m) return;
    var L = m.layers, cap = state.cacheCap || Math.min(m.context, state.tokens.length + (parseInt($("max-new").value, 10) || 0));
    state.cacheCap = cap;
    ctx.clearRect(0, 0, c.width, c.height);
    var labelW = 52, cw = Math.max(1, Math.min(16, (c.width - labelW) / cap)), ch = Math.max(4, Math.min(18, (c.height - 4) / L));
    ctx.font = "11px system-ui";
    for (var l = 0; l < L; l++) {
      ctx.fillStyle = IS.cssVar("--fg");
      ctx.fillText("layer " + l, 0, 2 + l * ch + ch * 0.75);
      for (var p = 0; p < cap; p++) {
        var filled = p < state.cacheLen, newest = p === state.cacheLen - 1;
        ctx.fillStyle = newest ? IS.cssVar("--bad") : filled ? (p < state.tokens.length ? IS.cssVar("--accent") : IS.cssVar("--good")) : IS.cssVar("--border");
        ctx.fillRect(labelW + p * cw, 2 + l * ch, Math.max(1, cw - 1), ch - 1);
      }
    }
    c.setAttribute("data-cache-len", state.cacheLen);
    var bpt = m.kv_bytes_per_token;
    $("kv-text").textContent = "Cache: " + state.cacheLen + " of " + cap + " positions filled (blue: prompt, green: generated, red: newest). Per position: 2 (K and V) × " +
      m.layers + " layers × " + m.kv_heads + " KV heads × " + m.head_dim + " dims × 4 bytes = " + IS.bytes(bpt) + "; used " + IS.bytes(bpt * state.cacheLen) +
      " of " + IS.bytes(bpt * cap) + " allocated.";
  }
  function drawBudget(mem) {
    var box = IS.clear($("budget"));
    var parts = [["weights", mem.weights, "--accent"], ["KV used", mem.kv_used, "--good"], ["KV allocated, free", mem.kv_allocated - mem.kv_used, "--border"], ["scratch buffers", mem.scratch, "--warn"]];
    var total = mem.weights + mem.kv_allocated + mem.scratch;
    var bar = IS.el("div", { class: "budget-bar", role: "img", "aria-label": "memory budget" });
    parts.forEach(function (p) {
      var seg = IS.el("span", { class: "budget-seg", title: p[0] + ": " + IS.bytes(p[1]) });
      seg.style.width = Math.max(0.5, 100 * p[1] / total) + "%";
      seg.style.background = IS.cssVar(p[2]);
      bar.appendChild(seg);
    });
    box.appendChild(bar);
    box.appendChild(IS.el("p", { class: "small", text: parts.map(function (p) { return p[0] + " " + IS.bytes(p[1]); }).join(" · ") + " · total " + IS.bytes(total) }));
    state.memory = mem;
    whatIf();
  }
  function whatIf() {
    var m = state.model, mem = state.memory;
    if (!m) return;
    var n = Math.max(1, parseInt($("wi-n").value, 10) || 1), ctxLen = Math.max(1, parseInt($("wi-ctx").value, 10) || 1);
    var kv = n * ctxLen * m.kv_bytes_per_token, scratch = mem ? n * mem.scratch : 0, total = m.weights_bytes + kv + scratch;
    var over = ctxLen > m.context ? " Note: " + ctxLen + " tokens is beyond this model's context of " + m.context + "." : "";
    $("wi-out").textContent = n + " requests × " + ctxLen + " tokens × " + IS.bytes(m.kv_bytes_per_token) + " per token = " + IS.bytes(kv) +
      " of KV cache, plus the weights once (" + IS.bytes(m.weights_bytes) + ")" + (mem ? " and scratch per request (" + IS.bytes(scratch) + ")" : "") +
      ": " + IS.bytes(total) + ". The cache is " + IS.pct(kv / total) + " of it." + over;
  }

  // ---------- 8 generated text ----------
  function onAppend(a) {
    var l = state.logitsByStep[a.step];
    var s = state.lastSample;
    state.gen.push({ id: a.id, piece: a.piece, text: a.text, prob: s ? s.chosen.prob_kept : 0, probT: s ? s.chosen.prob_t : 0, rank: s ? s.chosen.rank : 0, alts: l ? l.top.slice(0, 6) : [] });
    state.cacheLen = a.cache_len;
    state.cacheCap = a.cache_cap;
    drawGen();
    drawKV();
    drawBudget(a.memory);
    setContext(state.tokens.length + state.gen.length, state.prompt ? state.prompt.context_limit : 1);
    $("ctx-text").textContent = state.tokens.length + " prompt + " + state.gen.length + " generated tokens · context used " + (state.tokens.length + state.gen.length) + " of " + state.prompt.context_limit;
    if (a.forwarded && a.layer_traces && a.layer_traces.length) {
      state.lastLayers = a.layer_traces;
      state.passPositions = [a.pos];
      $("pass-explain").textContent = "Decode step " + (a.step + 1) + ": only the new position " + a.pos + " went through the " + a.layer_traces.length +
        " layers (" + IS.fmt(a.duration_ms, 2) + " ms); earlier positions were read from the KV cache.";
      drawPositions(a.pos + 1);
      drawLayers(a.layer_traces, "decode");
      drawAttention();
    }
    if (a.forwarded) state.itl.push(null);
  }
  function drawGen() {
    var box = IS.clear($("gen"));
    if (state.prompt) box.appendChild(IS.el("span", { class: "gen-prompt", text: state.prompt.text }));
    state.gen.forEach(function (g, i) {
      var span = IS.el("span", { class: "gen-tok", "data-step": i, "data-id": g.id, "data-testid": "gen-tok", tabindex: "0", text: g.text || "" });
      span.style.backgroundColor = "rgba(36, 86, 200, " + (0.12 + 0.6 * g.prob).toFixed(3) + ")";
      span.addEventListener("mouseenter", function (e) { showAlts(e.target, g); });
      span.addEventListener("focus", function (e) { showAlts(e.target, g); });
      span.addEventListener("mouseleave", hideTip);
      span.addEventListener("blur", hideTip);
      box.appendChild(span);
    });
    $("btn-rewind").disabled = !!state.pending || state.gen.length === 0;
  }
  function showAlts(target, g) {
    var tip = $("tooltip");
    IS.clear(tip);
    tip.appendChild(IS.el("div", { text: "chosen " + JSON.stringify(g.text) + " · id " + g.id + " · rank " + g.rank + " · p " + IS.fmt(g.prob, 4) }));
    var ul = IS.el("ul");
    g.alts.forEach(function (t) { ul.appendChild(IS.el("li", { text: JSON.stringify(t.text) + "  logit " + IS.fmt(t.logit, 3) + "  p(T) " + IS.fmt(t.prob_t, 4) + (t.id === g.id ? "  ← chosen" : "") })); });
    tip.appendChild(ul);
    var r = target.getBoundingClientRect();
    tip.style.left = (window.scrollX + r.left) + "px";
    tip.style.top = (window.scrollY + r.bottom + 4) + "px";
    tip.hidden = false;
  }
  function hideTip() { $("tooltip").hidden = true; }

  // ---------- 7 timing + stop + 9 checksum ----------
  function onStop(s) {
    state.stopped = true;
    // A cancelled run is recorded as the stages it really ran plus the
    // cancel, so a resume after a reconnect stops at the same token.
    if (s.reason === "cancelled" && !resuming) {
      for (var i = log.length - 1; i >= 0; i--) {
        if (log[i] !== "run") continue;
        var steps = [];
        for (var k = 0; k < (state.runEvents || 0); k++) steps.push("step");
        steps.push("cancel");
        log.splice.apply(log, [i, 1].concat(steps));
        break;
      }
    }
    state.runEvents = 0;
    state.timings = s.timings;
    drawTiming();
    var reasons = { eos: "the model emitted its end-of-sequence token", stop_string: "a stop string appeared", max_new_tokens: "the max new tokens limit was reached",
      context_full: "the context (KV cache) is full", cancelled: "the run was cancelled" };
    $("stop-text").textContent = "Stopped: " + (reasons[s.reason] || s.reason) + " — " + s.detail + ". " + s.generated + " tokens generated.";
    $("stop-text").setAttribute("data-reason", s.reason);
    var ok = s.weights_unchanged;
    $("checksum").innerHTML = "";
    $("checksum").appendChild(IS.el("span", { text: "before: " + s.checksum_before }));
    $("checksum").appendChild(IS.el("br"));
    $("checksum").appendChild(IS.el("span", { text: "after:  " + s.checksum_after }));
    $("checksum").appendChild(IS.el("br"));
    $("checksum").appendChild(IS.el("strong", { class: ok ? "ok" : "error", "data-testid": "checksum-verdict", text: ok ? "unchanged ✓ — inference only reads the weights" : "CHANGED ✗" }));
    setStatus("Stopped: " + (reasons[s.reason] || s.reason) + ". Rewind to continue from an earlier token, or Reset.");
    markTimeline("stop", null);
  }
  function drawTiming() {
    var t = state.timings || {};
    var box = IS.clear($("ttft"));
    var parts = [["tokenize", t.tokenize_ms, "--muted"], ["embed", t.embed_ms, "--warn"], ["prefill", t.prefill_ms, "--accent"], ["first decode", t.first_decode_ms, "--good"]];
    var total = t.ttft_ms || 0;
    box.appendChild(IS.el("p", { "data-testid": "ttft-text", text: "Time to first token: " + IS.fmt(total, 2) + " ms = " + parts.map(function (p) { return p[0] + " " + IS.fmt(p[1] || 0, 3); }).join(" + ") + " ms" }));
    var bar = IS.el("div", { class: "budget-bar" });
    parts.forEach(function (p) {
      var seg = IS.el("span", { class: "budget-seg", title: p[0] + " " + IS.fmt(p[1] || 0, 3) + " ms" });
      seg.style.width = (total > 0 ? Math.max(0.5, 100 * (p[1] || 0) / total) : 0) + "%";
      seg.style.background = IS.cssVar(p[2]);
      bar.appendChild(seg);
    });
    box.appendChild(bar);
    var itl = t.itl_ms || [];
    chart("chart-itl", "line", { labels: itl.map(function (_, i) { return String(i + 2); }), datasets: [{ label: "inter-token latency (ms), token 2 onward", data: itl,
      borderColor: IS.cssVar("--accent"), pointRadius: 2 }] }, { scales: { y: { beginAtZero: true } } });
    $("rates").textContent = "Prefill " + IS.fmt(t.prefill_tokens_per_s, 0) + " tokens/s (all prompt positions in parallel) · output " + IS.fmt(t.output_tokens_per_s, 0) +
      " tokens/s (one at a time) · median inter-token latency " + IS.fmt(t.itl_p50_ms, 3) + " ms.";
  }

  function resetPanels() {
    ["source-text", "chips", "embed-view", "positions", "layers", "logit-stats", "cands", "gen", "budget", "ttft"].forEach(function (id) { IS.clear($(id)); });
    ["sample-text", "kv-text", "rates", "stop-text", "ctx-text", "wi-out"].forEach(function (id) { $(id).textContent = ""; });
    Object.keys(charts).forEach(function (k) { charts[k].destroy(); delete charts[k]; });
    ["attn", "kv-grid"].forEach(function (id) { var c = $(id); c.getContext("2d").clearRect(0, 0, c.width, c.height); });
    $("checksum").textContent = "before: " + state.checksumBefore + " (after: shown when the run stops)";
    $("pass-explain").textContent = "Prefill runs every prompt position through all layers in one pass; decode runs one new position per step.";
    setContext(0, 1);
  }

  // ---------- get more models ----------
  var pullTimer = null;
  function refreshModels() {
    return fetch("/api/models").then(function (r) { return r.json(); }).then(function (d) {
      models = d.models || [];
      var sel = $("model"), cur = sel.value;
      IS.clear(sel);
      models.forEach(function (m) { sel.appendChild(IS.el("option", { value: m.name, text: m.name + (m.default ? " (default)" : "") })); });
      sel.value = cur;
      showModelCard();
    });
  }
  function pollPull() {
    fetch("/api/pull").then(function (r) { return r.ok ? r.json() : null; }).then(function (d) {
      if (!d) { $("pull").hidden = true; return; }
      var st = d.status, list = IS.clear($("presets"));
      d.presets.forEach(function (p) {
        var loaded = models.some(function (m) { return m.name === p.repo; });
        var cached = (st.cached || []).indexOf(p.repo) >= 0;
        var btn = IS.el("button", { type: "button", text: loaded ? "loaded" : cached ? "load from cache" : "download ~" + IS.bytes(p.bytes) });
        btn.disabled = loaded || st.state === "running";
        btn.addEventListener("click", function () {
          fetch("/api/pull", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ repo: p.repo }) })
            .then(function (r) { return r.json(); }).then(function (x) { if (x.error) $("pull-status").textContent = x.error; schedulePull(); });
        });
        list.appendChild(IS.el("li", {}, [IS.el("b", { text: p.repo }), " — " + p.about + " ", btn]));
      });
      var frac = st.total > 0 ? st.done / st.total : 0;
      $("pull-fill").style.width = (100 * frac) + "%";
      var msg = { idle: "", running: "Downloading " + st.repo + ": " + st.file + " " + IS.bytes(st.done) + " / " + IS.bytes(st.total) + " at " + IS.bytes(st.bytes_per_s) + "/s, about " + Math.round(st.eta_s) + " s left",
        done: st.repo + " is ready: pick it above.", error: "Download of " + st.repo + " failed: " + st.error }[st.state];
      $("pull-status").textContent = msg || "";
      $("pull-status").className = "small" + (st.state === "error" ? " error" : "");
      if (st.state === "done") refreshModels();
      if (st.state === "running") schedulePull();
    }).catch(function () {});
  }
  function schedulePull() { clearTimeout(pullTimer); pullTimer = setTimeout(pollPull, 500); }
  $("pull").addEventListener("toggle", function () { if ($("pull").open) pollPull(); });

  // ---------- wiring ----------
  function act(type) {
    return function () {
      if (type === "rewind") send("rewind", { n: 1 });
      else send(type);
    };
  }
  $("controls").addEventListener("submit", function (e) { e.preventDefault(); start(); });
  $("btn-step").addEventListener("click", act("step"));
  $("btn-token").addEventListener("click", act("step_token"));
  $("btn-run").addEventListener("click", act("run"));
  $("btn-rewind").addEventListener("click", act("rewind"));
  $("btn-reset").addEventListener("click", act("reset"));
  $("btn-cancel").addEventListener("click", function () { client.send("cancel"); });
  $("model").addEventListener("change", showModelCard);
  $("chat-mode").addEventListener("change", chatToggle);
  $("attn-layer").addEventListener("change", drawAttention);
  $("wi-n").addEventListener("input", whatIf);
  $("wi-ctx").addEventListener("input", whatIf);
  $("share").addEventListener("click", function (e) { e.preventDefault(); var l = IS.writeURL(settings()); $("share").href = l; if (navigator.clipboard) navigator.clipboard.writeText(l).catch(function () {}); setStatus("Link copied: " + l); });
  document.addEventListener("keydown", function (e) {
    var tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || e.ctrlKey || e.metaKey || e.altKey) return;
    if ($("btn-step").disabled && e.key !== "Escape") return;
    if (e.key === "ArrowRight" || e.key === " ") { e.preventDefault(); act("step")(); }
    else if (e.key === "t") act("step_token")();
    else if (e.key === "r") act("run")();
    else if (e.key === "Backspace") { e.preventDefault(); if (!$("btn-rewind").disabled) act("rewind")(); }
    else if (e.key === "Escape" && !$("btn-reset").disabled) act("reset")();
  });
  fillForm();
  client.connect().then(function () {
    setStatus("Connected. Press Start.");
    if (IS.readURL().prompt !== undefined) start();
  }).catch(function () { setStatus("Cannot reach the server.", true); });
})();
