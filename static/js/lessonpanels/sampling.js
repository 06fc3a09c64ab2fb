// lessonpanels/sampling.js: the sampling lesson's interactive panels.
// Sliders for temperature, top-k, top-p, min-p and seed recompute at once:
// each move sends the resample command (the same logits under other
// settings, no forward pass) and redraws the engine's answer — the kept
// set, the three probabilities, the cumulative distribution with the
// random draw and the chosen token. Also: a confident and an unsure prompt
// side by side, greedy vs sampled one step at a time, and seeds.
//
// Every panel starts from the lab's sampling defaults (the page's data
// block, session.DefaultSampling on the server): no panel keeps its own.
// Values the prose and the lesson's questions quote are published with the
// lesson page's setLive (and a bubbling "inferscope:live" event carrying
// the raw value, lists included).
import * as IS from "../core.js";
import * as P from "../panels.js";
import { Run } from "./util.js";

// The sliders: the engine allows temperature up to 10 and top-k up to the
// vocabulary; the sliders cover the range where the picture changes.
const SLIDERS = {
  temperature: { label: "temperature", min: 0, max: 2, step: 0.05, words: (v) => v === 0 ? "greedy" : "" },
  top_k: { label: "top-k", min: 0, max: 50, step: 1, words: (v) => v === 0 ? "off" : "" },
  top_p: { label: "top-p", min: 0.01, max: 1, step: 0.01, words: (v) => v >= 1 ? "off" : "" },
  min_p: { label: "min-p", min: 0, max: 0.5, step: 0.01, words: (v) => v === 0 ? "off" : "" },
  seed: { label: "seed", min: 0, max: 100, step: 1, words: () => "" },
};
const KEYS = ["temperature", "top_k", "top_p", "min_p", "seed"];
const TOP_N = 12; // candidates listed

let uid = 0;
function label(t) { return "“" + IS.tokenLabel(t) + "”"; }
function plain(t) { return IS.tokenLabel(t); }
// scroller wraps a wide table: it scrolls sideways on a phone, and the
// keyboard can reach it.
function scroller(table, name) { return IS.el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": name + " (scrolls sideways)" }, [table]); }
function showValue(name, v) { const w = SLIDERS[name].words(v); return String(v) + (w ? " (" + w + ")" : ""); }

// Conn is a panel's Run (util.js: replies matched by command id, a closed
// connection fails what is waiting) spoken in the panel's settings; its
// answers are payloads, a streamed command's its events.
class Conn extends Run {
  send(type, payload) { return this.cmd(type, payload).then((r) => Array.isArray(r) ? r : r.payload); }
  // start opens the connection and starts a run with settings s.
  start(prompt, s, extra) {
    return super.start(Object.assign({ prompt, max_new_tokens: 1, top_n: TOP_N, sampling: payloadOf(s) }, extra || {})).then((m) => m.payload);
  }
  token() { return this.cmd("step_token"); }
  run() { return this.cmd("run"); }
  resample(s) { return this.send("resample", Object.assign(payloadOf(s), { top_n: TOP_N })); }
}

function payloadOf(s) {
  return { temperature: +s.temperature, top_k: +s.top_k || 0, top_p: +s.top_p, min_p: +s.min_p || 0, seed: +s.seed || 0 };
}

// latest runs f on the newest request only: one in flight, and while it
// runs later requests replace each other, so a fast slider never queues
// work and the page draws at most once per answer.
function latest(f, onResult, onError) {
  let busy = false, next = null, has = false;
  function pump() {
    if (busy || !has) return;
    const arg = next;
    has = false;
    busy = true;
    Promise.resolve().then(() => f(arg)).then((r) => { busy = false; if (!has) onResult(r, arg); pump(); },
      (e) => { busy = false; if (!has) onError(e); pump(); });
  }
  const req = (arg) => { next = arg; has = true; pump(); };
  req.busy = () => busy || has;
  return req;
}

// sliderRow draws the sliders named in names over settings s; onChange
// gets the slider's name after s was updated.
function sliderRow(names, s, onChange) {
  const box = IS.el("div", { class: "sp-sliders" });
  names.forEach((name) => {
    const d = SLIDERS[name];
    if (!d) return;
    const id = "sp-" + name + "-" + (++uid), v = +s[name];
    const input = IS.el("input", { type: "range", id, min: String(Math.min(d.min, v)), max: String(Math.max(d.max, v)), step: String(d.step), value: String(v),
      "data-testid": "slider-" + name, "data-name": name, "aria-valuetext": showValue(name, v) });
    const out = IS.el("output", { for: id, class: "mono", "data-testid": "slider-value-" + name, text: showValue(name, v) });
    input.addEventListener("input", () => {
      const x = parseFloat(input.value);
      s[name] = x;
      out.textContent = showValue(name, x);
      input.setAttribute("aria-valuetext", showValue(name, x));
      onChange(name);
    });
    box.appendChild(IS.el("div", { class: "sp-slider" }, [IS.el("label", { for: id, text: d.label }), input, out]));
  });
  return box;
}

// A panel's state element carries what the page shows for tests and
// screen readers: the settings drawn, kept count, chosen token.
function stamp(box, s, r) {
  box.dataset.settings = JSON.stringify(payloadOf(r ? r.logits.params : s));
  if (!r) return;
  box.dataset.kept = r.logits.kept;
  box.dataset.afterTopK = r.logits.after_top_k;
  box.dataset.afterTopP = r.logits.after_top_p;
  box.dataset.chosenId = r.sample.chosen.id;
  box.dataset.draw = r.sample.draw;
}

export function register(views, ctx) {
  const defaults = ctx.defaults;
  function settingsFor() {
    const s = {};
    KEYS.forEach((k) => { s[k] = +defaults[k] || 0; });
    return s;
  }
  function publish(sec, key, value) {
    ctx.setLive(sec, key, Array.isArray(value) ? value.join(", ") : value);
    sec.dispatchEvent(new CustomEvent("inferscope:live", { bubbles: true, detail: { key, value } }));
  }
  // Each panel's runs are closed when a new Run replaces them and when
  // the section is left (a visitor may hold only a few runs at once).
  function own(out, sec, conns) {
    if (out._dispose) out._dispose();
    const closeAll = () => { conns.forEach((c) => c.close()); conns.length = 0; };
    out._dispose = closeAll;
    if (!sec._spObserver) {
      sec._spObserver = new MutationObserver(() => { if (sec.hidden) sec.querySelectorAll(".panel-out").forEach((o) => o._onHide && o._onHide()); });
      sec._spObserver.observe(sec, { attributes: true, attributeFilter: ["hidden"] });
    }
    out._onHide = closeAll;
  }

  // Explorer: one prompt's next-token distribution under the sliders.
  // A run steps to its logits once; every slider move is a resample.
  function explorer(o, out, sec, opts) {
    const s = settingsFor(), conns = [], name = opts.name;
    // a panel about one setting shows it alone: the cuts it is not about are off
    if (opts.alone) Object.assign(s, { top_k: 0, top_p: 1, min_p: 0 });
    own(out, sec, conns);
    const root = IS.el("div", { class: "sp", "data-testid": "sampler", "data-name": name });
    if (opts.alone) root.appendChild(IS.el("p", { class: "small muted", "data-testid": "sampler-alone", text: "Top-k, top-p and min-p are off in this panel, so it shows what " + name + " alone does." }));
    const status = IS.el("p", { class: "small muted sp-status", role: "status", "aria-live": "polite" });
    const readout = IS.el("p", { class: "sp-readout", "data-testid": "sampler-readout" });
    const chart = IS.el("div", { class: "chart" }), cdf = IS.el("div", { class: "chart" }), cut = IS.el("p", { class: "small" }), why = IS.el("p", { class: "small", "data-testid": "draw-sentence" });
    const tbl = IS.el("table", { class: "cands" });
    let conn = null, ready = null;
    function ensure() {
      if (ready && conn && !conn.closed) return ready;
      conn = new Conn();
      conns.push(conn);
      ready = conn.start(o.prompt, s).then(() => conn.stepTo("logits"));
      return ready;
    }
    function draw(r) {
      const l = r.logits, smp = r.sample;
      stamp(root, s, r);
      IS.clear(readout);
      const top = l.top[0];
      readout.append("Kept ", IS.el("b", { "data-testid": "kept", text: String(l.kept) }), " of " + l.vocab + " tokens · top token " + label(top) +
        " with " + P.PT + " " + IS.fmt(top.prob_t, 4) + " · entropy " + IS.fmt(l.entropy_t, 3) + " nats (" + IS.fmt(l.entropy, 3) + " at T=1)" +
        (smp.draw >= 0 ? " · draw r = " + IS.fmt(smp.draw, 4) : " · no draw (greedy)") + " · chosen ", IS.el("b", { "data-testid": "chosen", text: label(smp.chosen) }));
      if (opts.bars) P.probChart(chart, l);
      if (opts.cdf) P.cdfChart(cdf, smp);
      if (opts.table) P.candidatesTable(tbl, l, { chosenId: smp.chosen.id, caption: "Top " + l.top.length + " of " + l.vocab + " candidates; the chosen one is marked" });
      cut.textContent = P.cutSentence(l);
      why.textContent = P.sampleSentence(smp);
      status.textContent = "";
      opts.publish && opts.publish(r, s);
    }
    const request = latest(() => ensure().then(() => conn.resample(s)), draw, (e) => { status.textContent = ""; status.appendChild(IS.el("span", { class: "error", text: String(e.message || e) })); });
    root.appendChild(sliderRow(opts.controls, s, () => { status.textContent = "recomputing…"; request(); }));
    root.appendChild(readout);
    if (opts.bars) root.appendChild(chart);
    if (opts.cdf) root.appendChild(cdf);
    root.appendChild(cut);
    if (opts.cdf) root.appendChild(why);
    if (opts.table) root.appendChild(scroller(tbl, "Candidates table"));
    root.appendChild(status);
    out.appendChild(root);
    stamp(root, s);
    return new Promise((resolve, reject) => {
      latest(() => ensure().then(() => conn.resample(s)), (r) => { draw(r); resolve(); }, reject)();
    });
  }

  // Contrast: two prompts side by side under the same sliders.
  function contrast(o, out, sec, opts) {
    const s = settingsFor(), conns = [], name = opts.name;
    own(out, sec, conns);
    const prompts = [o.prompt, o.compare], sides = [];
    // each side has its own prompt box; the panel head's would edit only the first
    const headPrompt = out.parentNode && out.parentNode.querySelector(".panel-head .panel-prompt");
    if (headPrompt) headPrompt.hidden = true;
    const root = IS.el("div", { class: "sp", "data-testid": "sampler", "data-name": name });
    const cols = IS.el("div", { class: "sp-cols" });
    const status = IS.el("p", { class: "small muted sp-status", role: "status", "aria-live": "polite" });
    const results = [null, null];
    prompts.forEach((prompt, i) => {
      const side = { conn: null, ready: null, prompt };
      const box = IS.el("div", { class: "sp-col", "data-testid": "sampler-side", "data-side": i === 0 ? "confident" : "unsure" });
      const input = IS.el("input", { type: "text", class: "panel-prompt", value: prompt || "", "aria-label": (i === 0 ? "First" : "Second") + " prompt" });
      const head = IS.el("p", { class: "sp-side-head" });
      const chart = IS.el("div", { class: "chart" }), cut = IS.el("p", { class: "small" });
      box.append(input, head, chart, cut);
      cols.appendChild(box);
      side.ensure = () => {
        if (side.ready && side.conn && !side.conn.closed) return side.ready;
        side.conn = new Conn();
        conns.push(side.conn);
        side.ready = side.conn.start(side.prompt, s).then(() => side.conn.stepTo("logits"));
        return side.ready;
      };
      side.draw = (r) => {
        const l = r.logits;
        results[i] = r;
        stamp(box, s, r);
        IS.clear(head);
        head.append(IS.el("b", { "data-testid": "kept", text: String(l.kept) }), " of " + l.vocab + " tokens kept · top " + label(l.top[0]) + " " + P.PT + " " + IS.fmt(l.top[0].prob_t, 3));
        P.probChart(chart, l);
        cut.textContent = P.cutSentence(l);
        if (results[0] && results[1]) opts.publish(results, s, prompts);
      };
      side.request = latest(() => side.ensure().then(() => side.conn.resample(s)), side.draw, (e) => { status.textContent = ""; status.appendChild(IS.el("span", { class: "error", text: String(e.message || e) })); });
      input.addEventListener("change", () => {
        side.prompt = prompts[i] = input.value;
        // keep the edit when the panel's Run button starts over
        if (i === 0 && headPrompt) headPrompt.value = input.value;
        if (i === 1) o.compare = input.value;
        if (side.conn) side.conn.close();
        side.ready = null;
        side.request();
      });
      sides.push(side);
    });
    root.appendChild(sliderRow(opts.controls, s, () => sides.forEach((sd) => sd.request())));
    root.appendChild(cols);
    root.appendChild(status);
    out.appendChild(root);
    stamp(root, s);
    return Promise.all(sides.map((sd) => sd.ensure().then(() => sd.conn.resample(s)).then((r) => sd.draw(r)))).then(() => stamp(root, s));
  }

  function alpha(tokens) { return tokens.map(plain).sort((a, b) => a.localeCompare(b)); }

  // "sampling-softmax": the raw scores and what softmax makes of them.
  views["sampling-softmax"] = function (o, out, sec) {
    const conns = [], c = new Conn();
    own(out, sec, conns);
    conns.push(c);
    let l;
    return c.start(o.prompt, settingsFor()).then(() => c.stepTo("logits")).then((evs) => {
      l = evs[evs.length - 1].logits;
      return c.send("get_logits");
    }).then((full) => {
      const v = full.values, mx = l.max;
      let z = 0;
      v.forEach((x) => { z += Math.exp(x - mx); });
      const t = IS.el("table", { class: "lesson-table", "data-testid": "softmax-table" });
      t.appendChild(IS.el("caption", { class: "small", text: "The top " + Math.min(10, l.top.length) + " of " + l.vocab + " scores at the last position" }));
      t.appendChild(IS.el("tr", {}, ["rank", "token", "logit (raw score)", "e^(logit − top logit)", P.P1 + " = that ÷ " + IS.fmt(z, 3)].map((h) => IS.el("th", { scope: "col", text: h }))));
      l.top.slice(0, 10).forEach((tk) => {
        t.appendChild(IS.el("tr", { "data-id": tk.id }, [String(tk.rank + 1), IS.tokenLabel(tk), IS.fmt(tk.logit, 4), IS.fmt(Math.exp(tk.logit - mx), 4), IS.fmt(tk.prob, 4)].map((x) => IS.el("td", { text: x }))));
      });
      out.appendChild(scroller(t, "Softmax table"));
      out.appendChild(IS.el("p", { class: "small", text: "The divisor " + IS.fmt(z, 3) + " is e^(logit − top logit) added over all " + v.length + " tokens, so the " + v.length + " probabilities add up to 1." }));
      publish(sec, "logits.top1", plain(l.top[0]));
      publish(sec, "logits.top4", alpha(l.top.slice(0, 4)));
      publish(sec, "logits.greedy", plain(l.top[0]));
      publish(sec, "logits.greedy_prob", IS.fmt(l.top[0].prob, 3));
      publish(sec, "logits.divisor", IS.fmt(z, 3));
      c.close();
    });
  };

  // "sampling-temperature": one slider, the three probabilities as bars.
  views["sampling-temperature"] = function (o, out, sec) {
    return explorer(o, out, sec, { name: "temperature", controls: ["temperature"], bars: true, alone: true, publish: (r, s) => {
      const l = r.logits;
      publish(sec, "temperature.t", s.temperature === 0 ? "zero (greedy)" : String(s.temperature));
      publish(sec, "temperature.top_prob", IS.fmt(l.top[0].prob_t, 3));
      publish(sec, "temperature.top_prob_one", IS.fmt(l.top[0].prob, 3));
      publish(sec, "temperature.entropy", IS.fmt(l.entropy_t, 3));
      publish(sec, "temperature.entropy_one", IS.fmt(l.entropy, 3));
      publish(sec, "temperature.top_token", plain(l.top[0]));
      const d = l.top[0].prob_t - l.top[0].prob;
      publish(sec, "temperature.directions", ["higher", "lower", "the same"]);
      publish(sec, "temperature.direction", Math.abs(d) < 5e-7 ? "the same" : d > 0 ? "higher" : "lower");
    } });
  };

  // "sampling-topk": top-k (and the top-p that is also on by default).
  views["sampling-topk"] = function (o, out, sec) {
    return explorer(o, out, sec, { name: "topk", controls: ["top_k", "top_p"], bars: true, table: true, publish: (r, s) => {
      publish(sec, "topk.k", s.top_k === 0 ? "off" : String(s.top_k));
      publish(sec, "topk.after_k", String(r.logits.after_top_k));
      publish(sec, "topk.kept", String(r.logits.kept));
    } });
  };

  // "sampling-topp" and "sampling-minp": a confident and an unsure prompt.
  function sideBySide(name, controls) {
    return function (o, out, sec) {
      return contrast(o, out, sec, { name, controls, publish: (rs, s, prompts) => {
        const k = rs.map((r) => r.logits.kept);
        publish(sec, name + ".kept_confident", String(k[0]));
        publish(sec, name + ".kept_unsure", String(k[1]));
        publish(sec, name + ".top_confident", IS.fmt(rs[0].logits.top[0].prob_t, 3));
        publish(sec, name + ".top_unsure", IS.fmt(rs[1].logits.top[0].prob_t, 3));
        publish(sec, name + ".prompts", prompts.slice().sort());
        publish(sec, name + ".wider", k[1] >= k[0] ? prompts[1] : prompts[0]);
        if (name === "minp") {
          publish(sec, "minp.threshold_confident", IS.fmt(s.min_p * rs[0].logits.top[0].prob_t, 4));
          publish(sec, "minp.threshold_unsure", IS.fmt(s.min_p * rs[1].logits.top[0].prob_t, 4));
        }
      } });
    };
  }
  views["sampling-topp"] = sideBySide("topp", ["top_p"]);
  views["sampling-minp"] = sideBySide("minp", ["min_p", "top_p"]);

  // "sampling-draw": all five sliders, the cumulative distribution with the draw r.
  views["sampling-draw"] = function (o, out, sec) {
    return explorer(o, out, sec, { name: "draw", controls: KEYS, cdf: true, table: true, publish: (r) => {
      const smp = r.sample, l = r.logits;
      publish(sec, "draw.r", smp.draw >= 0 ? IS.fmt(smp.draw, 4) : "none (greedy)");
      publish(sec, "draw.chosen", plain(smp.chosen));
      publish(sec, "draw.rank", String(smp.chosen.rank + 1));
      publish(sec, "draw.kept", String(l.kept));
      publish(sec, "draw.top1", plain(l.top[0]));
      publish(sec, "draw.top4", alpha(l.top.slice(0, 4)));
      // four candidates to choose from: the top three and the chosen one (or the fourth)
      const opts = l.top.slice(0, 3);
      opts.push(smp.chosen.rank >= 3 ? smp.chosen : l.top[3]);
      publish(sec, "draw.options", alpha(opts.filter(Boolean)));
    } });
  };

  // "sampling-greedy": greedy and sampled runs, one token per click.
  views["sampling-greedy"] = function (o, out, sec) {
    const conns = [], n = parseInt(o.tokens || "16", 10), s = settingsFor();
    own(out, sec, conns);
    const runs = [{ name: "greedy", s: Object.assign({}, s, { temperature: 0 }) }, { name: "sampled", s }];
    const root = IS.el("div", { class: "sp", "data-testid": "greedy-panel" });
    const stepBtn = IS.el("button", { type: "button", class: "primary", "data-testid": "step-token", text: "Next token ⟶" });
    const allBtn = IS.el("button", { type: "button", "data-testid": "step-all", text: "To the end" });
    const cols = IS.el("div", { class: "sp-cols" });
    const status = IS.el("p", { class: "small muted sp-status", role: "status", "aria-live": "polite" });
    runs.forEach((r) => {
      r.text = IS.el("p", { class: "gen mono", "data-testid": "gen-" + r.name }, [IS.el("span", { class: "gen-prompt", text: o.prompt })]);
      r.log = IS.el("ol", { class: "decode-log", "data-testid": "log-" + r.name });
      r.steps = 0;
      const title = r.name === "greedy" ? "Greedy (temperature 0): the top token every time" :
        "Sampled (the lab's settings: temperature " + s.temperature + ", top-k " + (s.top_k || "off") + ", top-p " + s.top_p + ", min-p " + (s.min_p || "off") + ", seed " + s.seed + ")";
      cols.appendChild(IS.el("div", { class: "sp-col", "data-side": r.name }, [IS.el("p", { class: "sp-side-head", text: title }), r.text, r.log]));
    });
    root.append(IS.el("div", { class: "buttons" }, [stepBtn, allBtn]), cols, status);
    out.appendChild(root);
    function open() {
      return Promise.all(runs.map((r) => {
        if (r.conn && !r.conn.closed) return r.ready;
        r.conn = new Conn();
        conns.push(r.conn);
        r.steps = 0;
        r.done = false;
        r.text.replaceChildren(IS.el("span", { class: "gen-prompt", text: o.prompt }));
        IS.clear(r.log);
        r.ready = r.conn.start(o.prompt, r.s, { max_new_tokens: n }).then(() => r.conn.stepTo("prefill"));
        return r.ready;
      }));
    }
    function one(r) {
      if (r.done) return Promise.resolve();
      return r.conn.token().then((evs) => {
        const smp = evs.find((e) => e.sample), app = evs.find((e) => e.append), stop = evs.find((e) => e.stop);
        if (smp) {
          const c = smp.sample.chosen;
          r.steps++;
          r.text.appendChild(IS.el("span", { class: "gen-tok", text: app ? app.append.text : "" }));
          r.log.appendChild(IS.el("li", { "data-id": c.id, text: label(c) + " · rank " + (c.rank + 1) + " · " + P.PK + " " + IS.fmt(c.prob_kept, 3) +
            (smp.sample.draw >= 0 ? " · r = " + IS.fmt(smp.sample.draw, 4) : " · no draw") }));
        }
        if (stop || (app && app.next === "stop")) r.done = true;
        if (stop) r.log.appendChild(IS.el("li", { text: "stop: " + IS.stopReason(stop.stop.reason, stop.stop.generated) }));
      });
    }
    function publishAll() {
      publish(sec, "greedy.steps", String(runs[0].steps));
      publish(sec, "greedy.first", runs[0].log.firstChild ? runs[0].log.firstChild.textContent.split(" · ")[0] : "");
      publish(sec, "sampled.first", runs[1].log.firstChild ? runs[1].log.firstChild.textContent.split(" · ")[0] : "");
      root.dataset.steps = runs[0].steps + "," + runs[1].steps;
    }
    let busy = false;
    function guarded(f) {
      return () => {
        if (busy) return;
        busy = true;
        stepBtn.disabled = allBtn.disabled = true;
        status.textContent = "running…";
        open().then(f).then(() => { status.textContent = ""; publishAll(); }, (e) => { status.textContent = ""; status.appendChild(IS.el("span", { class: "error", text: String(e.message || e) })); })
          .then(() => { busy = false; stepBtn.disabled = allBtn.disabled = runs.every((r) => r.done); });
      };
    }
    stepBtn.addEventListener("click", guarded(() => Promise.all(runs.map(one))));
    allBtn.addEventListener("click", guarded(() => {
      const loop = () => runs.every((r) => r.done) ? null : Promise.all(runs.map(one)).then(loop);
      return loop();
    }));
    // the first token of each, so the panel starts with something to compare
    return open().then(() => Promise.all(runs.map(one))).then(publishAll);
  };

  // "sampling-seeds": two seed sliders, a whole sampled text for each.
  views["sampling-seeds"] = function (o, out, sec) {
    const conns = [], n = parseInt(o.tokens || "16", 10), base = settingsFor();
    own(out, sec, conns);
    const runs = [{ s: Object.assign({}, base) }, { s: Object.assign({}, base) }];
    const root = IS.el("div", { class: "sp", "data-testid": "seeds-panel" });
    const cols = IS.el("div", { class: "sp-cols" });
    const verdict = IS.el("p", { "data-testid": "seeds-verdict" });
    const status = IS.el("p", { class: "small muted sp-status", role: "status", "aria-live": "polite" });
    const texts = ["", ""];
    runs.forEach((r, i) => {
      r.out = IS.el("p", { class: "gen mono", "data-testid": "seed-text" });
      const sl = sliderRow(["seed"], r.s, () => r.request(Object.assign({}, r.s)));
      sl.querySelector("label").textContent = "seed of run " + (i ? "B" : "A");
      cols.appendChild(IS.el("div", { class: "sp-col", "data-side": i ? "b" : "a" }, [sl, r.out]));
      r.request = latest((snap) => {
        if (r.conn) r.conn.close(); // a new request cancels a stale run
        r.conn = new Conn();
        conns.push(r.conn);
        return r.conn.start(o.prompt, snap, { max_new_tokens: n }).then(() => r.conn.run());
      }, (evs, s) => {
        const stop = evs[evs.length - 1].stop;
        texts[i] = stop.text;
        r.out.replaceChildren(IS.el("span", { class: "gen-prompt", text: o.prompt }), IS.el("span", { class: "gen-tok", text: stop.text }));
        r.out.dataset.seed = s.seed;
        r.out.dataset.text = stop.text;
        r.conn.close();
        judge();
        if (r.first) { r.first.resolve(); r.first = null; }
      }, (e) => {
        status.textContent = "";
        status.appendChild(IS.el("span", { class: "error", text: String(e.message || e) }));
        if (r.first) { r.first.reject(e); r.first = null; }
      });
    });
    function judge() {
      if (runs.some((r) => r.out.dataset.text === undefined)) return;
      const same = texts[0] === texts[1], sameSeed = runs[0].s.seed === runs[1].s.seed;
      verdict.textContent = (sameSeed ? "Same seed (" + runs[0].s.seed + ")" : "Different seeds (" + runs[0].s.seed + " and " + runs[1].s.seed + ")") + ": " +
        (same ? "the same text." : "different texts.");
      verdict.dataset.same = same ? "1" : "0";
      publish(sec, "seeds.a", String(runs[0].s.seed));
      publish(sec, "seeds.b", String(runs[1].s.seed));
      publish(sec, "seeds.verdict", same ? "the same" : "different");
      publish(sec, "seeds.choices", ["the same", "different"]);
    }
    root.append(IS.el("p", { class: "small", text: "Both runs use the lab's settings (temperature " + base.temperature + ", top-p " + base.top_p + ") and the same prompt; only the seeds can differ." }), cols, verdict, status);
    out.appendChild(root);
    // the first texts: the panel's promise settles when both are drawn
    return Promise.all(runs.map((r) => new Promise((resolve, reject) => { r.first = { resolve, reject }; r.request(Object.assign({}, r.s)); })));
  };

  // A panel's Run button starts it over while the old start may still be
  // on its way: the old promise then never settles, so neither its result
  // nor the error from its closed run reaches the page.
  Object.keys(views).filter((k) => k.startsWith("sampling-")).forEach((k) => {
    const view = views[k];
    views[k] = function (o, out, sec) {
      const gen = (out._spGen || 0) + 1;
      out._spGen = gen;
      const stale = () => out._spGen !== gen;
      return Promise.resolve(view(o, out, sec)).then((v) => stale() ? new Promise(() => {}) : v,
        (e) => { if (stale()) return new Promise(() => {}); throw e; });
    };
  });
  return { sliders: SLIDERS };
}
