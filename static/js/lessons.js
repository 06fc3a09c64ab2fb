// lessons.js: shows one lesson section at a time (progress in the URL, ?s=N)
// and runs each section's live panels against the engine over the websocket,
// drawn with the same panel renderers as the lab.
import * as IS from "./core.js";
import * as P from "./panels.js";
import * as SamplingPanels from "./lessonpanels/sampling.js";

{
  var $ = IS.$;
  var data = IS.pageData("lesson-data");
  var defaults = IS.samplingDefaults(data);
  var sections = document.querySelectorAll(".lesson-section");
  var current = 0;

  // Run is a promise-based wrapper around one websocket session.
  function Run() {
    var self = this;
    this.waiters = [];
    this.client = new IS.Client(function (m) {
      if (m.type === "welcome") return;
      var w = self.waiters.shift();
      if (w) w(m);
    });
  }
  Run.prototype.next = function () { var self = this; return new Promise(function (res) { self.waiters.push(res); }); };
  Run.prototype.cmd = function (type, payload) {
    var p = this.next();
    this.client.send(type, payload);
    return p.then(function (m) { if (m.type === "error") throw new Error(IS.errorText(m.payload)); return m; });
  };
  Run.prototype.start = function (payload) {
    var self = this;
    return this.client.connect().then(function () { return self.cmd("start", payload); });
  };
  Run.prototype.step = function () { return this.cmd("step").then(function (m) { return m.payload; }); };
  Run.prototype.stepTo = function (stage) {
    var self = this, evs = [];
    function go() {
      return self.step().then(function (ev) { evs.push(ev); return ev.stage === stage || ev.stage === "stop" ? evs : go(); });
    }
    return go();
  };
  Run.prototype.runAll = function () {
    var self = this, evs = [];
    this.client.send("run");
    function go() {
      return self.next().then(function (m) {
        if (m.type === "error") throw new Error(IS.errorText(m.payload));
        evs.push(m.payload);
        return m.payload.stage === "stop" ? evs : go();
      });
    }
    return go();
  };
  Run.prototype.close = function () { if (this.client.ws) this.client.ws.close(); };

  // payload: a panel's options over the shared sampling defaults
  function payload(o, extra) {
    var pick = function (k) { return o[k] !== undefined ? o[k] : defaults[k]; };
    var p = { prompt: o.prompt, max_new_tokens: parseInt(o.tokens || "8", 10),
      sampling: IS.samplingPayload({ temperature: pick("temperature"), top_p: pick("top_p"), top_k: pick("top_k"), min_p: pick("min_p"), seed: pick("seed") }) };
    if (o.system !== undefined) { p.chat = [{ role: "system", content: o.system }, { role: "user", content: o.prompt }]; delete p.prompt; }
    if (o.no_cache) p.no_cache = true;
    return Object.assign(p, extra || {});
  }
  function pick(evs, stage) { return evs.filter(function (e) { return e.stage === stage; }); }
  function setLive(sec, key, value) {
    sec.querySelectorAll('[data-live="' + key + '"]').forEach(function (e) { e.textContent = value; });
  }
  function table(head, rows) {
    var t = IS.el("table", { class: "lesson-table" });
    t.appendChild(IS.el("tr", {}, head.map(function (h) { return IS.el("th", { scope: "col", text: h }); })));
    rows.forEach(function (r) { t.appendChild(IS.el("tr", {}, r.map(function (c) { return IS.el("td", { text: String(c) }); }))); });
    return t;
  }
  function chips(t) {
    var box = IS.el("div", { class: "chips" });
    P.tokenChips(box, t);
    return box;
  }
  function strip(label, vec) { return P.strip(label, vec); }
  function text(evs) { var s = pick(evs, "stop")[0]; return s ? s.stop.text : ""; }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  // Each view runs the engine and draws what the section talks about.
  var views = {
    tokens: function (o, out, sec) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.step(); }).then(function (ev) {
        var t = ev.tokenize;
        out.appendChild(chips(t));
        out.appendChild(P.pieceLegend());
        setLive(sec, "tokens.count", t.count);
        setLive(sec, "tokens.chars", Array.from(t.text).length);
        setLive(sec, "tokens.added", t.added_by_app);
        r.close();
        return { count: t.count };
      });
    },
    chat: function (o, out, sec) { return views.tokens(o, out, sec); },
    embed: function (o, out) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.stepTo("embed"); }).then(function (evs) {
        var e = evs[1].embed, p = e.positions[e.positions.length - 1];
        out.appendChild(IS.el("p", { text: "Last position " + p.pos + ": token " + p.id + " “" + IS.tokenLabel({ piece: p.piece, text: evs[0].tokenize.tokens[p.pos].text, special: evs[0].tokenize.tokens[p.pos].special }) + "” → a vector of " + e.dim + " numbers (length " + IS.fmt(p.token_norm, 3) + ")." }));
        out.appendChild(strip("token vector", p.token_vec));
        if (p.pos_vec) out.appendChild(strip("position vector", p.pos_vec));
        else out.appendChild(IS.el("p", { class: "muted small", text: e.method }));
        out.appendChild(strip("what enters layer 0", p.sum));
        r.close();
      });
    },
    prefill: function (o, out, sec) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.stepTo("prefill"); }).then(function (evs) {
        var p = evs[2].prefill;
        var pos = IS.el("div", { class: "positions" });
        for (var i = 0; i < p.positions; i++) pos.appendChild(IS.el("span", { class: "pos pass", text: String(i) }));
        out.appendChild(pos);
        out.appendChild(table(["layer", "size of the last position's vector after the layer"], p.layers.map(function (l) { return [l.layer, IS.fmt(l.residual_norm[l.residual_norm.length - 1], 3)]; })));
        out.appendChild(IS.el("p", { text: p.positions + " positions × " + p.layers.length + " layers in one pass: " + IS.fmt(p.duration_ms, 3) + " ms (" + IS.fmt(p.tokens_per_s, 0) + " tokens/s)." }));
        setLive(sec, "prefill.positions", p.positions);
        setLive(sec, "prefill.ms", IS.fmt(p.duration_ms, 3));
        r.close();
      });
    },
    logits: function (o, out, sec) {
      var r = new Run(), lg;
      return r.start(payload(o)).then(function () { return r.stepTo("logits"); }).then(function (evs) {
        lg = evs[3].logits;
        return r.cmd("get_logits");
      }).then(function (m) {
        var v = m.payload.values, sum = 0, mx = -Infinity, z = 0;
        v.forEach(function (x) { sum += x; mx = Math.max(mx, x); });
        v.forEach(function (x) { z += Math.exp(x - mx); });
        var probSum = 0;
        v.forEach(function (x) { probSum += Math.exp(x - mx) / z; });
        out.appendChild(table(["rank", "token", "id", "logit (raw score)", P.P1 + " (softmax)"], lg.top.slice(0, 10).map(function (t) {
          return [t.rank + 1, IS.tokenLabel(t), t.id, IS.fmt(t.logit, 4), IS.fmt(t.prob, 4)]; })));
        out.appendChild(IS.el("p", { class: "small", text: "All " + v.length + " logits: from " + IS.fmt(lg.min, 2) + " to " + IS.fmt(lg.max, 2) + "." }));
        setLive(sec, "logits.max", IS.fmt(lg.max, 3));
        setLive(sec, "logits.sum", IS.fmt(sum, 1));
        setLive(sec, "logits.probsum", IS.fmt(probSum, 4));
        r.close();
      });
    },
    decode: function (o, out) {
      var r = new Run(), n = parseInt(o.tokens || "8", 10), log = IS.el("ol", { class: "decode-log" }), gen = IS.el("p", { class: "gen mono" });
      out.appendChild(gen);
      out.appendChild(log);
      var lastLogits = null, lastSample = null, k = 0;
      function loop() {
        return r.step().then(function (ev) {
          if (ev.logits) lastLogits = ev.logits;
          if (ev.sample) lastSample = ev.sample;
          if (ev.append) {
            k++;
            gen.appendChild(IS.el("span", { class: "gen-tok", text: ev.append.text }));
            log.appendChild(IS.el("li", { text: "calculate: logits at position " + lastLogits.pos + " (top “" + IS.tokenLabel(lastLogits.top[0]) + "”, " +
              IS.fmt(lastLogits.top[0].logit, 2) + ") → select: “" + IS.tokenLabel(lastSample.chosen) + "” (rank " + (lastSample.chosen.rank + 1) + ", p after the cut " + IS.fmt(lastSample.chosen.prob_kept, 3) +
              ") → append: the sequence has " + (ev.append.pos + 1) + " tokens, the cache " + ev.append.cache_len + " positions → " + (ev.next === "stop" ? "stop" : "repeat") }));
            return sleep(150).then(function () { return ev.next === "stop" ? null : loop(); });
          }
          if (ev.stop) { log.appendChild(IS.el("li", { text: "stop: " + IS.stopReason(ev.stop.reason, ev.stop.generated) })); return null; }
          return loop();
        });
      }
      return r.start(payload(o, { max_new_tokens: n })).then(function (m) {
        gen.appendChild(IS.el("span", { class: "gen-prompt", text: o.prompt }));
        return r.stepTo("prefill");
      }).then(loop).then(function () { r.close(); });
    },
    kv: function (o, out) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.runAll(); }).then(function (evs) {
        var rows = pick(evs, "append").map(function (e) { var a = e.append; return [a.step + 1, IS.tokenLabel({ piece: a.piece, text: a.text }), a.cache_len + " / " + a.cache_cap, IS.bytes(a.bytes_used)]; });
        var pre = pick(evs, "prefill")[0].prefill;
        rows.unshift(["prefill", "(prompt)", pre.positions, IS.bytes(pre.positions * pick(evs, "append")[0].append.bytes_per_token)]);
        out.appendChild(table(["step", "token", "cache positions", "cache bytes used"], rows));
        r.close();
      });
    },
    checksum: function (o, out) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.runAll(); }).then(function (evs) {
        var s = pick(evs, "stop")[0].stop;
        out.appendChild(IS.el("p", { class: "gen mono", text: o.prompt + s.text }));
        out.appendChild(IS.el("p", { class: "mono small", text: "before: " + s.checksum_before }));
        out.appendChild(IS.el("p", { class: "mono small", text: "after:  " + s.checksum_after }));
        out.appendChild(IS.el("p", { class: s.weights_unchanged ? "ok" : "error", "data-testid": "lesson-checksum", text: s.weights_unchanged ? "unchanged ✓" : "changed ✗" }));
        r.close();
      });
    },
    timing: function (o, out) {
      var prompts = [o.prompt, o.compare], rows = [];
      function one(i) {
        if (i >= prompts.length) return Promise.resolve();
        var r = new Run();
        return r.start(payload(Object.assign({}, o, { prompt: prompts[i] }))).then(function () { return r.runAll(); }).then(function (evs) {
          var t = pick(evs, "stop")[0].stop.timings, n = pick(evs, "tokenize")[0].tokenize.count;
          rows.push([i === 0 ? "short" : "long", n, IS.fmt(t.prefill_ms, 3), IS.fmt(t.prefill_tokens_per_s, 0), IS.fmt(t.ttft_ms, 3), IS.fmt(t.itl_p50_ms, 3), IS.fmt(t.output_tokens_per_s, 0)]);
          r.close();
          return one(i + 1);
        });
      }
      return one(0).then(function () {
        out.appendChild(table(["prompt", "prompt tokens", "prefill ms", "prefill tokens/s", "time to first token ms", "inter-token latency ms (median)", "output tokens/s"], rows));
      });
    },
    temperature: function (o, out, sec) {
      var temps = (o.temperatures || "0.5, 1, 1.5").split(",").map(function (x) { return parseFloat(x); }), cols = [];
      function one(i) {
        if (i >= temps.length) return Promise.resolve();
        var r = new Run();
        return r.start(payload(Object.assign({}, o, { temperature: String(temps[i]), top_p: "1" }))).then(function () { return r.stepTo("logits"); }).then(function (evs) {
          cols.push(evs[3].logits);
          r.close();
          return one(i + 1);
        });
      }
      return one(0).then(function () {
        var base = cols[0].top.slice(0, 6);
        out.appendChild(table(["token", "logit"].concat(temps.map(function (t) { return "p at T=" + t; })), base.map(function (t, i) {
          return [IS.tokenLabel(t), IS.fmt(t.logit, 3)].concat(cols.map(function (c) { return IS.fmt(c.top[i].prob_t, 4); })); })));
        out.appendChild(IS.el("p", { class: "small", text: "Entropy: " + cols.map(function (c, i) { return "T=" + temps[i] + " " + IS.fmt(c.entropy_t, 3) + " nats"; }).join(" · ") }));
        setLive(sec, "temperature.entropy_low", IS.fmt(cols[0].entropy_t, 3));
        setLive(sec, "temperature.entropy_high", IS.fmt(cols[cols.length - 1].entropy_t, 3));
      });
    },
    topk: function (o, out) { return cutView(o, out); },
    topp: function (o, out) { return cutView(o, out); },
    "greedy-vs-sampled": function (o, out) {
      var a = new Run(), b = new Run(), ta;
      return a.start(payload(Object.assign({}, o, { temperature: "0" }))).then(function () { return a.runAll(); }).then(function (evs) {
        ta = text(evs); a.close();
        return b.start(payload(o));
      }).then(function () { return b.runAll(); }).then(function (evs) {
        out.appendChild(table(["decoding", "continuation of " + JSON.stringify(o.prompt)], [["greedy", ta], ["sampled (T=" + o.temperature + ", top-p " + o.top_p + ")", text(evs)]]));
        b.close();
      });
    },
    seeds: function (o, out) {
      var seeds = (o.seeds || "7, 7, 8").split(",").map(function (x) { return x.trim(); }), rows = [];
      function one(i) {
        if (i >= seeds.length) return Promise.resolve();
        var r = new Run();
        return r.start(payload(Object.assign({}, o, { seed: seeds[i] }))).then(function () { return r.runAll(); }).then(function (evs) {
          rows.push([seeds[i], text(evs)]); r.close(); return one(i + 1);
        });
      }
      return one(0).then(function () {
        rows.forEach(function (row, i) { row.push(i > 0 && row[1] === rows[0][1] ? "same as the first run" : i > 0 ? "different" : ""); });
        out.appendChild(table(["seed", "continuation", ""], rows));
      });
    },
    budget: function (o, out) {
      var r = new Run();
      return r.start(payload(o)).then(function () { return r.runAll(); }).then(function (evs) {
        var a = pick(evs, "append"), mem = a[a.length - 1].append.memory;
        out.appendChild(table(["part", "bytes"], [["weights (shared by all requests)", IS.bytes(mem.weights)], ["KV cache allocated for this request", IS.bytes(mem.kv_allocated)],
          ["KV cache used so far", IS.bytes(mem.kv_used)], ["scratch buffers", IS.bytes(mem.scratch)], ["total for one request", IS.bytes(mem.total)]]));
        var rows = [1, 8, 64].map(function (n) { return [n, IS.bytes(mem.weights + n * (mem.kv_allocated + mem.scratch))]; });
        out.appendChild(table(["concurrent requests like this one", "memory"], rows));
        r.close();
      });
    },
    "context-limit": function (o, out) {
      var r = new Run();
      // the end-of-text token would end the run early: this demo ignores it
      return r.start(payload(o, { stop_at_eos: false })).then(function () { return r.runAll(); }).then(function (evs) {
        var s = pick(evs, "stop")[0].stop, last = pick(evs, "append").pop().append;
        out.appendChild(IS.el("p", { "data-testid": "lesson-stop", "data-reason": s.reason, text: "Stopped: " + IS.stopReason(s.reason, s.generated) + " (cache " + last.cache_len + " of " + last.cache_cap + " positions)." }));
        r.close();
      });
    },
    "cache-off": function (o, out) {
      var res = [];
      function one(noCache) {
        var r = new Run();
        return r.start(payload(o, { no_cache: noCache })).then(function () { return r.runAll(); }).then(function (evs) {
          var s = pick(evs, "stop")[0].stop; res.push(s); r.close();
        });
      }
      return one(false).then(function () { return one(true); }).then(function () {
        var avg = function (a) { var t = 0; a.forEach(function (x) { t += x; }); return a.length ? t / a.length : 0; };
        out.appendChild(table(["KV cache", "mean inter-token latency ms", "last token ms", "output tokens/s", "text"], res.map(function (s, i) {
          var itl = s.timings.itl_ms || [];
          return [i === 0 ? "on" : "off", IS.fmt(avg(itl), 3), IS.fmt(itl[itl.length - 1], 3), IS.fmt(s.timings.output_tokens_per_s, 0), s.text.slice(0, 60) + "…"]; })));
        out.appendChild(IS.el("p", { text: res[0].text === res[1].text ? "Same text with the cache on and off ✓" : "The texts differ ✗" }));
      });
    }
  };
  function cutView(o, out) {
    var r = new Run();
    return r.start(payload(o, { top_n: 12 })).then(function () { return r.stepTo("logits"); }).then(function (evs) {
      var l = evs[3].logits, chart = IS.el("div", { class: "chart" });
      out.appendChild(chart);
      P.probChart(chart, l);
      var tbl = IS.el("table", { class: "cands" });
      out.appendChild(IS.el("div", { class: "table-wrap" }, [tbl]));
      P.candidatesTable(tbl, l);
      out.appendChild(IS.el("p", { text: P.cutSentence(l) }));
      r.close();
    });
  }

  // lesson-specific panel modules (lessonpanels/*.js) add their views
  SamplingPanels.register(views, { defaults: defaults, setLive: setLive });

  function runPanels(i) {
    var sec = sections[i], body = sec.querySelector(".lesson-body");
    var spec = data.sections[i];
    body.querySelectorAll(".lesson-panel").forEach(function (div) {
      var p = spec.panels[parseInt(div.dataset.panel, 10)];
      if (div.dataset.built) return;
      div.dataset.built = "1";
      var o = Object.assign({}, p.options);
      var input = IS.el("input", { type: "text", value: o.prompt || "", "aria-label": "Prompt for this panel", class: "panel-prompt" });
      var btn = IS.el("button", { type: "button", class: "primary", text: "Run" });
      var out = IS.el("div", { class: "panel-out", "data-testid": "panel-out", "data-kind": p.kind });
      div.appendChild(IS.el("div", { class: "panel-head" }, [IS.el("span", { class: "stage-tag", text: "live: " + p.kind }), input, btn]));
      div.appendChild(out);
      function go() {
        IS.clear(out);
        out.dataset.state = "running";
        o.prompt = input.value;
        Promise.resolve(views[p.kind](o, out, sec)).then(function () { out.dataset.state = "done"; })
          .catch(function (err) { out.dataset.state = "error"; out.appendChild(IS.el("p", { class: "error", text: String(err.message || err) })); });
      }
      btn.addEventListener("click", go);
      input.addEventListener("keydown", function (e) { if (e.key === "Enter") go(); });
      go();
    });
  }

  function show(i) {
    current = Math.max(0, Math.min(sections.length - 1, i));
    sections.forEach(function (s, k) { s.hidden = k !== current; });
    document.querySelectorAll("#toc a").forEach(function (a, k) { if (k === current) a.setAttribute("aria-current", "step"); else a.removeAttribute("aria-current"); });
    $("sec-prev").disabled = current === 0;
    $("sec-next").disabled = current === sections.length - 1;
    var q = new URLSearchParams(location.search);
    q.set("s", String(current + 1));
    history.replaceState(null, "", location.pathname + "?" + q.toString());
    runPanels(current);
  }
  $("sec-prev").addEventListener("click", function () { show(current - 1); });
  $("sec-next").addEventListener("click", function () { show(current + 1); });
  document.querySelectorAll("#toc a").forEach(function (a, k) { a.addEventListener("click", function (e) { e.preventDefault(); show(k); }); });
  document.addEventListener("keydown", function (e) {
    var tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea") return;
    if (e.key === "ArrowRight") show(current + 1);
    if (e.key === "ArrowLeft") show(current - 1);
  });
  show((parseInt(new URLSearchParams(location.search).get("s"), 10) || 1) - 1);
}
