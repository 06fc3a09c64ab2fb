// lessons.js: shows one lesson section at a time (progress in the URL, ?s=N)
// and runs each section's live panels against the engine over the websocket,
// drawn with the same panel renderers as the lab.
import * as IS from "./core.js";
import * as P from "./panels.js";
import * as L from "./lessonframe.js";
import { panelViews } from "./lessonpanels/registry.js";
import { Run } from "./lessonpanels/util.js";
import "./lessonpanels/aftersend.js";
import "./lessonpanels/kvcache.js";
import "./lessonpanels/appcontext.js";
import "./lessonpanels/position.js";
import "./lessonpanels/attncache.js";
import "./lessonpanels/serving.js";
import "./lessonpanels/quantization.js";
import * as SamplingPanels from "./lessonpanels/sampling.js";
import { initRoom, panelTrees, mirrorPanels, liveValues } from "./room.js";

{
  const $ = IS.$;
  const data = IS.pageData("lesson-data");
  const defaults = IS.samplingDefaults(data);
  const sections = document.querySelectorAll(".lesson-section");
  let current = 0;
  let room = null, following = false; // classroom (room.js): a follower's panels show the presenter's

  // every panel session (util.js's Run: replies matched by command id)
  // remembers the section shown when it opened: leaving that section
  // closes it (a visitor's sessions are limited)
  let openRuns = [];
  function newRun() {
    const r = new Run();
    r.section = current;
    openRuns.push(r);
    return r;
  }

  // a visit's draw: a panel with alternatives (prompts:, compares:, notes:
  // lists) uses one of them, the same index of each list, so neighbours'
  // answers differ; ?draw=N picks it (a link, a test), and a class follows
  // its presenter's draw (the room's state carries it)
  const DRAWN = { prompts: "prompt", compares: "compare", notes: "note" };
  let draw = (() => { const d = parseInt(new URLSearchParams(location.search).get("draw"), 10); return d >= 0 ? d : Math.floor(Math.random() * 1e6); })();
  function drawnOptions(p) {
    const o = Object.assign({}, p.options);
    for (const [list, one] of Object.entries(DRAWN)) {
      if (!o[list]) continue;
      const alts = o[list].split("|").map((x) => x.trim());
      o[one] = alts[draw % alts.length];
    }
    return o;
  }
  // the prompt a section's questions may name ({{prompt}}): its first panel's
  function askPrompt(i) {
    const sp = data.sections[i], p = sp && sp.panels && sp.panels[0];
    if (!p) return "";
    const saved = L.savedPanel(i, 0);
    return saved.prompt !== undefined ? saved.prompt : drawnOptions(p).prompt || "";
  }
  function setDraw(d) {
    if (d === undefined || d === draw) return;
    draw = d;
    sections.forEach((sec, i) => L.fillAsks(sec, askPrompt(i)));
  }

  // payload: a panel's options over the shared sampling defaults
  function payload(o, extra) {
    const pick = (k) => o[k] !== undefined ? o[k] : defaults[k];
    const p = { prompt: o.prompt, max_new_tokens: parseInt(o.tokens || "8", 10),
      sampling: IS.samplingPayload({ temperature: pick("temperature"), top_p: pick("top_p"), top_k: pick("top_k"), min_p: pick("min_p"), seed: pick("seed") }) };
    if (o.system !== undefined) { p.chat = [{ role: "system", content: o.system }, { role: "user", content: o.prompt }]; delete p.prompt; }
    if (o.no_cache) p.no_cache = true;
    return Object.assign(p, extra || {});
  }
  function pick(evs, stage) { return evs.filter((e) => e.stage === stage); }
  function setLive(sec, key, value) {
    sec.querySelectorAll('[data-live="' + key + '"]').forEach((e) => { e.textContent = value; });
    // every published value, also those no prose shows (questions' answers)
    (window.ISLive = window.ISLive || {})[key] = value;
    sec.dispatchEvent(new CustomEvent("lesson-live", { bubbles: true, detail: { key, value } }));
  }
  // table: a lesson table in a box that scrolls sideways on a phone; a
  // column of tokens, ids, logits or probabilities gets that kind's colour
  function table(head, rows) {
    const t = IS.el("table", { class: "lesson-table" }), kinds = head.map(L.numberKind);
    t.appendChild(IS.el("tr", {}, head.map((h) => IS.el("th", { scope: "col", text: h }))));
    rows.forEach((r) => { t.appendChild(IS.el("tr", {}, r.map((c, i) => IS.el("td", { text: String(c), class: kinds[i] ? "n-" + kinds[i] : "" })))); });
    return t; // the page puts it in a box that scrolls sideways (L.wrapTables)
  }
  function chips(t) {
    const box = IS.el("div", { class: "chips" });
    P.tokenChips(box, t);
    return box;
  }

  // Each view runs the engine and draws what the section talks about.
  const views = {
    tokens: (o, out, sec, api) => {
      const r = new api.Run();
      return r.start(payload(o)).then(() => r.step()).then((ev) => {
        const t = ev.tokenize;
        out.appendChild(chips(t));
        out.appendChild(P.pieceLegend());
        api.setLive(sec, "tokens.count", t.count);
        api.setLive(sec, "tokens.chars", Array.from(t.text).length);
        api.setLive(sec, "tokens.added", t.added_by_app);
        r.close();
        return { count: t.count };
      });
    },
    chat: (o, out, sec, api) => views.tokens(o, out, sec, api),
    logits: (o, out, sec, api) => {
      const r = new api.Run();
      let lg;
      return r.start(payload(o)).then(() => r.stepTo("logits")).then((evs) => {
        lg = evs[3].logits;
        return r.cmd("get_logits");
      }).then((m) => {
        const v = m.payload.values;
        let sum = 0, mx = -Infinity, z = 0;
        v.forEach((x) => { sum += x; mx = Math.max(mx, x); });
        v.forEach((x) => { z += Math.exp(x - mx); });
        let probSum = 0;
        v.forEach((x) => { probSum += Math.exp(x - mx) / z; });
        out.appendChild(table(["rank", "token", "id", "logit (raw score)", P.P1 + " (softmax)"], lg.top.slice(0, 10).map((t) =>
          [t.rank + 1, IS.tokenLabel(t), t.id, IS.fmt(t.logit, 4), IS.fmt(t.prob, 4)])));
        out.appendChild(IS.el("p", { class: "small", text: "All " + v.length + " logits: from " + IS.fmt(lg.min, 2) + " to " + IS.fmt(lg.max, 2) + "." }));
        api.setLive(sec, "logits.max", IS.fmt(lg.max, 3));
        api.setLive(sec, "logits.sum", IS.fmt(sum, 1));
        api.setLive(sec, "logits.probsum", IS.fmt(probSum, 4));
        // for questions: the top candidates as the page writes them, and the greedy pick
        api.setLive(sec, "logits.top1", IS.tokenLabel(lg.top[0]));
        api.setLive(sec, "logits.top4", lg.top.slice(0, 4).map((t) => IS.tokenLabel(t)));
        r.close();
      });
    },
    checksum: (o, out, sec, api) => {
      const r = new api.Run();
      return r.start(payload(o)).then(() => r.runAll()).then((evs) => {
        const s = pick(evs, "stop")[0].stop;
        out.appendChild(IS.el("p", { class: "gen mono", text: o.prompt + s.text }));
        out.appendChild(IS.el("p", { class: "mono small", text: "before: " + s.checksum_before }));
        out.appendChild(IS.el("p", { class: "mono small", text: "after:  " + s.checksum_after }));
        out.appendChild(IS.el("p", { class: s.weights_unchanged ? "ok" : "error", "data-testid": "lesson-checksum", text: s.weights_unchanged ? "unchanged ✓" : "changed ✗" }));
        r.close();
      });
    },
  };
  function cutView(o, out, api, sec) {
    const r = new api.Run();
    return r.start(payload(o, { top_n: 12 })).then(() => r.stepTo("logits")).then((evs) => {
      const l = evs[3].logits, chart = IS.el("div", { class: "chart" });
      out.appendChild(chart);
      P.probChart(chart, l);
      const tbl = IS.el("table", { class: "cands" });
      out.appendChild(IS.el("div", { class: "table-wrap" }, [tbl]));
      P.candidatesTable(tbl, l);
      out.appendChild(IS.el("p", { text: P.cutSentence(l) }));
      if (sec) api.setLive(sec, "cut.kept", l.kept);
      r.close();
    });
  }

  // lesson-specific panel modules (lessonpanels/*.js) add their views
  SamplingPanels.register(views, { defaults, setLive });

  // runPanels builds the section's panels once and runs them. A new Run of
  // a panel cancels its stale one: the stale run's sockets close, its
  // drawing lands in a detached box and its live values are dropped.
  function runPanels(i) {
    // a student following a class gets the section's question forms (they
    // answer on their own device); the panels are the presenter's
    if (following) { L.questions(sections[i], data.sections[i], askPrompt(i)); return; }
    const sec = sections[i], body = sec.querySelector(".lesson-body");
    const spec = data.sections[i];
    L.questions(sec, spec, askPrompt(i));
    body.querySelectorAll(".lesson-panel").forEach((div) => {
      const k = parseInt(div.dataset.panel, 10), p = spec.panels[k];
      if (div.dataset.built) { if (div.leftWhileOpen) { div.leftWhileOpen = false; div.rerun(); } return; }
      div.dataset.built = "1";
      const o = drawnOptions(p), saved = L.savedPanel(i, k);
      const input = IS.el("input", { type: "text", value: saved.prompt !== undefined ? saved.prompt : o.prompt || "", "aria-label": "Prompt for this panel", class: "panel-prompt", "data-testid": "panel-prompt" });
      const btn = IS.el("button", { type: "button", class: "primary", text: "Run", "data-testid": "panel-run" });
      const out = IS.el("div", { class: "panel-out", "data-testid": "panel-out", "data-kind": p.kind });
      div.appendChild(IS.el("div", { class: "panel-head" }, [IS.el("span", { class: "stage-tag", text: "live: " + p.kind }), input, btn]));
      div.appendChild(out);
      let ctx = null, runs = 0;
      const go = () => {
        if (ctx) { ctx.cancelled = true; ctx.runs.forEach((r) => r.close()); }
        const my = ctx = { cancelled: false, runs: [] };
        IS.clear(out);
        const box = IS.el("div", { class: "run-box panel-out" }); // panel-out: modules find their own box by it
        out.appendChild(box);
        out.dataset.state = "running";
        out.dataset.runs = String(++runs);
        o.prompt = input.value;
        L.noteSettings(i, k, div, o.prompt !== (drawnOptions(p).prompt || ""));
        // api.Run: a view's `new api.Run()` is a session of this run of the panel
        function PanelRun() {
          const r = newRun();
          if (my.cancelled) { r.close(); throw new Error("cancelled"); }
          my.runs.push(r);
          return r;
        }
        const api = { payload, pick, table, defaults, data, Run: PanelRun,
          setLive: (s, key, value) => { if (!my.cancelled) setLive(s, key, value); } };
        Promise.resolve().then(() => (panelViews[p.kind] || views[p.kind])(o, box, sec, api)).then(() => {
          if (my.cancelled) return;
          L.wrapTables(out);
          out.dataset.state = "done";
          L.restoreSliders(i, k, div);
          if (room) room.changed();
        }).catch((err) => {
          if (my.cancelled) return;
          out.dataset.state = "error";
          out.appendChild(IS.el("p", { class: "error", text: String(err.message || err) }));
        });
      };
      btn.addEventListener("click", go);
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
      // leaving the section closes the panel's sessions (a student's
      // sessions are limited); coming back runs it again
      div.rerun = go;
      div.leave = (force) => {
        if (!ctx || ctx.cancelled || (!force && !ctx.runs.some((r) => r.open()))) return;
        ctx.cancelled = true;
        ctx.runs.forEach((r) => r.close());
        div.leftWhileOpen = true;
      };
      go();
    });
  }

  function show(i) {
    current = Math.max(0, Math.min(sections.length - 1, i));
    sections.forEach((s, k) => { s.hidden = k !== current; });
    openRuns = openRuns.filter((r) => {
      const open = r.open();
      if (!open || r.section === current) return open || (!r.client.ws && !r.closed);
      r.close();
      sections[r.section].querySelectorAll(".lesson-panel").forEach((d) => { if (d.leave) d.leave(true); });
      return false;
    });
    document.querySelectorAll("#toc a").forEach((a, k) => { if (k === current) a.setAttribute("aria-current", "step"); else a.removeAttribute("aria-current"); });
    $("sec-prev").disabled = current === 0;
    $("sec-next").disabled = current === sections.length - 1;
    L.setSection(current);
    runPanels(current);
    if (room) room.changed();
  }
  // go to a section and scroll to its top (a new section never opens at
  // the old one's scroll position)
  function goTo(i) {
    show(i);
    const top = sections[current].getBoundingClientRect().top + window.scrollY - 8;
    if (window.scrollY > top) window.scrollTo(0, Math.max(0, top));
  }
  $("sec-prev").addEventListener("click", () => goTo(current - 1));
  $("sec-next").addEventListener("click", () => goTo(current + 1));
  document.querySelectorAll("#toc a").forEach((a, k) => { a.addEventListener("click", (e) => { e.preventDefault(); goTo(k); }); });
  // Arrow keys change section. PageDown/PageUp (what most clickers send)
  // scroll within the section as the browser does, and move on only at
  // its end (PageDown with the section's bottom in view) or its top
  // (PageUp with the page at the section's top).
  document.addEventListener("keydown", (e) => {
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || e.target.isContentEditable || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.target.closest && e.target.closest("[role=slider], .table-wrap")) return;
    const box = sections[current].getBoundingClientRect();
    if (e.key === "ArrowRight" || e.key === "PageDown" && box.bottom <= window.innerHeight + 4) { e.preventDefault(); goTo(current + 1); }
    if (e.key === "ArrowLeft" || e.key === "PageUp" && box.top >= -4) { e.preventDefault(); goTo(current - 1); }
  });
  // presenting: what the section shows goes to the class as it changes (a
  // slider moved, a step pressed, a panel uncovered), at most every 100 ms
  // (room.changed throttles; it does nothing unless presenting)
  new MutationObserver(() => { if (room && !following) room.changed(); })
    .observe(sections[0].parentElement, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["class", "value", "data-state", "hidden"] });
  // back from the back/forward cache: core.js closed every session on
  // pagehide; the section's panels run again
  window.addEventListener("pageshow", (e) => {
    if (!e.persisted || following) return;
    sections[current].querySelectorAll(".lesson-panel").forEach((d) => { if (d.rerun) d.rerun(); });
  });
  L.initTools();
  // classroom: "Present to a class" from a lesson; students follow the section and see its panels
  room = initRoom({ kind: "lesson", buttons: document.querySelector(".lesson-tools"),
    // while the presenter's section waits for a prediction, its panels and
    // live numbers stay on the presenter's screen: nothing covered is sent
    state: () => {
      const sec = sections[current];
      if (sec.classList.contains("predicting")) return { section: current, covered: true, panels: [], live: {}, draw };
      const live = liveValues(sec), all = window.ISLive || {};
      // the questions' answers too (no prose shows them): a student's form checks against them
      (data.sections[current].questions || []).forEach((q) => { if (all[q.answer] !== undefined && live[q.answer] === undefined) live[q.answer] = all[q.answer]; });
      return { section: current, panels: panelTrees(sec), live, draw };
    },
    show: (st) => { setDraw(st.draw); show(st.section || 0); mirrorPanels(sections[current], st.panels, st.live, !!st.covered); },
    setFollowing: (on) => {
      following = on;
      if (!on) { document.querySelectorAll("[data-mirror]").forEach((e) => e.remove()); runPanels(current); }
    } });
  show((parseInt(new URLSearchParams(location.search).get("s"), 10) || 1) - 1);
}
