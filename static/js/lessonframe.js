// lessonframe.js: what every lesson page shares around its panels:
// predict-then-reveal questions and exercises checked against the live
// values panels publish, glossary definitions on hover/focus/tap, colours
// per kind of number, presenter mode (large type, clicker keys) and the
// view's state in the URL (?s=N, present=1, each panel's prompt and
// sliders).
import * as IS from "./core.js";
import { setChartScale } from "./charts.js";

// ---------- kinds of number ----------

// numberKind says which kind of number a table column holds, from its
// header: "token", "id", "logit", "prob" (CSS classes n-token…), or "".
export function numberKind(head) {
  const h = String(head).trim().toLowerCase();
  if (/\blogits?\b|raw score/.test(h)) return "logit";
  if (/^(token )?ids?\b/.test(h)) return "id";
  if (/^p\b|^p at|^p after|probabilit/.test(h)) return "prob";
  if (/^(token|candidate|chosen token|next token)( \(|$)/.test(h)) return "token";
  return "";
}

// wrapTables puts each table of a panel's output that is not yet in one
// into a box that scrolls sideways (a phone never scrolls the page).
export function wrapTables(root) {
  root.querySelectorAll("table").forEach((t) => {
    if (t.closest(".table-wrap")) return;
    const head = [...t.querySelectorAll("th")].map((th) => th.textContent).slice(0, 4).join(", ");
    const box = IS.el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "table: " + head });
    t.replaceWith(box);
    box.appendChild(t);
  });
}

// ---------- questions and exercises ----------

function norm(x) {
  return String(x).replace(/␣/g, " ").trim().replace(/^["“”'‘’]+|["“”'‘’]+$/g, "").replace(/\s+/g, " ").toLowerCase();
}
// numbers with their units: what a student types ("4 KiB", "271.26 MiB",
// "0.5 s", "12%") and what a panel shows are compared as the same quantity:
// bytes (B, KB/MB/GB ×1000, KiB/MiB/GiB ×1024), milliseconds (µs, ms, s)
// or a fraction (%). nums gives every reading: a percentage is also its
// plain number, as a panel may publish either.
const UNITS = { b: 1, byte: 1, bytes: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3,
  "µs": 1e-3, us: 1e-3, ms: 1, s: 1e3, "%": 0.01 };
function nums(x) {
  const m = String(x).replace(/[\s,\u00a0\u202f]/g, "").match(/^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)([a-zµ%]*)$/i);
  if (!m) return [NaN];
  const v = parseFloat(m[1]), u = m[2].toLowerCase();
  if (!u) return [v];
  if (!(u in UNITS)) return [NaN];
  return u === "%" ? [v * UNITS[u], v] : [v * UNITS[u]];
}
function num(x) { return nums(x)[0]; }
function shown(v) { return Array.isArray(v) ? v.join(", ") : String(v); }

// checkAnswer: is the student's answer right, given the live value?
export function checkAnswer(q, given, real) {
  if (given === undefined || given === null || String(given).trim() === "" || real === undefined) return false;
  if (q.kind === "number") {
    // right when any reading of the answer is within tolerance of any reading of the value
    return nums(given).some((a) => nums(real).some((b) => {
      if (!isFinite(a) || !isFinite(b)) return false;
      const tol = q.relative ? q.tolerance * Math.abs(b) : q.tolerance;
      return Math.abs(a - b) <= tol + 1e-9 * Math.max(1, Math.abs(b));
    }));
  }
  return norm(given) === norm(real);
}
if (typeof window !== "undefined") window.ISCheckAnswer = checkAnswer; // for tests

// ASK_PROMPT in an ask is the prompt the page drew for the section's first
// panel (lessons.js fills it in: a question names the prompt the student sees).
const ASK_PROMPT = "{{prompt}}";
function askText(raw, prompt) { return raw.split(ASK_PROMPT).join("“" + (prompt || "") + "”"); }

// fillAsks writes the prompt into the section's asks again (a class's
// presenter drew another prompt than this page).
export function fillAsks(sec, prompt) { if (sec.fillAsks) sec.fillAsks(prompt); }

// questions draws the section's question and exercise blocks (once) and
// checks them as the section's panels publish live values. While a question
// waits for its answer, the section's panels run but stay covered. prompt
// is the section's drawn prompt, for asks that name it.
export function questions(sec, spec, prompt) {
  if (sec.dataset.qbuilt) return;
  sec.dataset.qbuilt = "1";
  const live = {}, forms = [];
  // each form keeps its own copy of the question, its ask filled in
  const qs = (spec.questions || []).map((q) => Object.assign({}, q, { raw: q.ask, ask: askText(q.ask, prompt) }));
  sec.fillAsks = (p) => forms.forEach((f) => f.fill(p));
  const pending = () => forms.filter((f) => !f.q.exercise && !f.revealed).length;
  const cover = () => sec.classList.toggle("predicting", pending() > 0);
  sec.querySelectorAll(".lesson-question").forEach((div) => {
    const q = qs[parseInt(div.dataset.question, 10)];
    if (q) forms.push(build(div, q));
  });
  if (forms.some((f) => !f.q.exercise)) {
    sec.querySelectorAll(".lesson-panel").forEach((p) => p.prepend(IS.el("p", { class: "predict-note", "data-testid": "predict-note",
      text: "This panel has already run. Answer the question above to uncover it, or press “Show me”." })));
  }
  cover();
  // lessonpanels/sampling.js publishes lists joined into text, and the
  // lists themselves as inferscope:live: choices come from the lists
  sec.addEventListener("inferscope:live", (e) => {
    if (Array.isArray(e.detail.value)) forms.forEach((f) => f.onOptions(e.detail.key, e.detail.value));
  });
  sec.addEventListener("lesson-live", (e) => {
    const { key, value } = e.detail;
    live[key] = value;
    forms.forEach((f) => f.onLive(key, value));
  });

  function build(div, q) {
    const id = "q-" + q.id;
    const f = { q, revealed: false, given: undefined, checked: false };
    const form = IS.el("form", { class: "question" + (q.exercise ? " exercise" : ""), "data-testid": "question", "data-id": q.id, "data-kind": q.kind, "data-ask": q.ask, "data-options-live": q.options_live || null,
      "data-exercise": q.exercise ? "1" : "0", "data-state": "open", "aria-labelledby": id + "-ask" });
    const tag = IS.el("span", { class: "q-tag", text: q.exercise ? "Exercise" : "Predict first" });
    const askSpan = IS.el("span", { class: "q-ask-text", text: q.ask });
    const ask = IS.el("p", { class: "q-ask", id: id + "-ask" }, [tag, " ", askSpan]);
    f.fill = (p) => {
      q.ask = askText(q.raw, p);
      askSpan.textContent = q.ask;
      form.dataset.ask = q.ask;
      const lg = form.querySelector("legend");
      if (lg) lg.textContent = q.ask;
    };
    const field = IS.el("div", { class: "q-field" });
    const check = IS.el("button", { type: "submit", class: "primary", "data-testid": "q-check", text: q.exercise ? "Check" : "Check my prediction" });
    const skip = IS.el("button", { type: "button", "data-testid": "q-skip", text: "Show me" });
    const again = IS.el("button", { type: "button", "data-testid": "q-again", text: "Try again", hidden: true });
    const result = IS.el("p", { class: "q-result", role: "status", "aria-live": "polite", "data-testid": "q-result" });
    form.append(ask, field, IS.el("div", { class: "buttons q-buttons" }, q.exercise ? [check, again] : [check, skip, again]), result);
    div.appendChild(form);
    let input = null;
    const drawOptions = (opts) => {
      IS.clear(field);
      const fs = IS.el("fieldset", { class: "q-options" }, [IS.el("legend", { class: "sr-only", text: q.ask })]);
      opts.forEach((o, i) => {
        const rid = id + "-o" + i;
        fs.appendChild(IS.el("label", { for: rid, class: "q-option" }, [IS.el("input", { type: "radio", name: id, id: rid, value: o }), " ", IS.el("span", { text: o })]));
      });
      field.appendChild(fs);
    };
    if (q.kind === "choice") {
      if (q.options && q.options.length) drawOptions(q.options);
      else field.appendChild(IS.el("p", { class: "muted small", text: "The choices appear as soon as the panel has computed them…" }));
    } else {
      input = IS.el("input", { type: q.kind === "number" ? "text" : "text", inputmode: q.kind === "number" ? "decimal" : "text", id: id + "-in",
        autocomplete: "off", "data-testid": "q-input", "aria-labelledby": id + "-ask" });
      field.appendChild(input);
      if (q.kind === "number" && q.tolerance > 0) field.appendChild(IS.el("span", { class: "muted small", text: " counted right within " + (q.relative ? Math.round(q.tolerance * 100) + "%" : "±" + q.tolerance) }));
    }
    const value = () => {
      if (q.kind === "choice") { const c = form.querySelector("input[type=radio]:checked"); return c ? c.value : ""; }
      return input.value;
    };
    const reveal = () => {
      if (f.revealed) return;
      f.revealed = true;
      cover();
    };
    const verdict = () => {
      const real = live[q.answer];
      if (real === undefined) {
        result.className = "q-result";
        result.textContent = q.exercise ? "Run the panel first: its result checks your answer." : "Locked in. Waiting for the panel…";
        return;
      }
      f.checked = true;
      result.dataset.real = shown(real);
      if (f.given === undefined) {
        result.className = "q-result";
        result.dataset.verdict = "shown";
        result.textContent = "The panel shows: " + shown(real) + ".";
      } else {
        const ok = checkAnswer(q, f.given, real);
        result.className = "q-result " + (ok ? "ok" : "bad");
        result.dataset.verdict = ok ? "right" : "wrong";
        result.textContent = (ok ? "Right: " : "Not this time: you said " + f.given + "; ") + "the panel shows " + shown(real) + ".";
      }
      form.dataset.state = "done";
      again.hidden = false;
      check.disabled = true;
      skip.disabled = true;
    };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const v = value();
      if (String(v).trim() === "") { result.className = "q-result bad"; result.textContent = q.kind === "choice" ? "Pick one of the choices first." : "Type your answer first."; return; }
      if (q.kind === "number" && !isFinite(num(v))) { result.className = "q-result bad"; result.textContent = "Type a number, such as 12 or 0.5, with a unit if you like: B, KiB, MiB, ms, s or %."; return; }
      f.given = String(v).trim();
      // in a class (room.js), the answer goes to the class's question when
      // the presenter asked it; the verdict comes with the reveal
      if (classHook() && classHook().answer(q, f.given)) {
        form.dataset.state = "locked";
        result.className = "q-result";
        result.textContent = "Sent to the class: " + f.given + ". Your presenter reveals the answer; you can change yours until then.";
        return;
      }
      form.dataset.state = "locked";
      reveal();
      verdict();
    });
    skip.addEventListener("click", () => { f.given = undefined; reveal(); verdict(); });
    again.addEventListener("click", () => {
      f.given = undefined;
      form.dataset.state = "open";
      result.textContent = "";
      delete result.dataset.verdict;
      again.hidden = true;
      check.disabled = false;
      skip.disabled = false;
      (input || form.querySelector("input")) && (input || form.querySelector("input")).focus();
    });
    f.onOptions = (key, v) => {
      if (key === q.options_live && form.dataset.state === "open") drawOptions(v.map(String).slice().sort((a, b) => a.localeCompare(b)));
    };
    if (classHook() && classHook().following()) skip.hidden = true; // the presenter reveals
    f.onLive = (key, v) => {
      if (key === q.options_live && form.dataset.state === "open") drawOptions((Array.isArray(v) ? v : String(v).split(String(v).includes(" | ") ? " | " : ", ")).map(String).slice().sort((a, b) => a.localeCompare(b)));
      // a question is checked by the value its panel revealed; an exercise
      // waits for the student to press Check after changing the panel
      if (key === q.answer && !q.exercise && form.dataset.state === "locked") verdict();
    };
    return f;
  }
}

// classHook connects questions to a class (room.js sets
// window.ISClassHook): answer(q, given) sends a student's answer to the
// class's open question and reports whether it did; following() says
// whether this page follows a presenter.
const classHook = () => window.ISClassHook || null;

// ---------- the view in the URL, presenter mode, classes ----------

const initial = new URLSearchParams(location.search);
const initialSection = (parseInt(initial.get("s"), 10) || 1) - 1;
let section = initialSection;

function setURL(q) {
  history.replaceState(null, "", location.pathname + "?" + q.toString());
  const a = document.getElementById("lesson-link");
  if (!a) return;
  // the link is to this view, not to the class a student follows (?room=)
  const l = new URLSearchParams(q);
  l.delete("room");
  a.href = location.origin + location.pathname + "?" + l.toString();
}

function sectionEl(i) { return document.getElementById("section-" + (i + 1)); }

// setSection puts ?s=N in the URL; the panel settings in the URL belong to
// one section, so moving on drops them. A new section opens at its top,
// however it was reached (a button, a key, the presenter's page when
// following a class).
export function setSection(i) {
  const q = new URLSearchParams(location.search);
  const moved = i !== section;
  if (moved) [...q.keys()].filter((k) => /^p\d+/.test(k)).forEach((k) => q.delete(k));
  section = i;
  q.set("s", String(i + 1));
  setURL(q);
  const sec = sectionEl(i);
  if (moved && sec) {
    const top = sec.getBoundingClientRect().top;
    if (top < 0) window.scrollTo({ top: Math.max(0, scrollY + top - 8), behavior: "instant" });
  }
}

// savedPanel: the settings the page was opened with for panel k of section i.
export function savedPanel(i, k) {
  const out = {};
  if (i !== initialSection) return out;
  const p = initial.get("p" + (k + 1));
  if (p !== null) out.prompt = p;
  return out;
}

// noteSettings records a panel's prompt in the URL when it differs from the lesson's.
export function noteSettings(i, k, div, changed) {
  if (i !== section) return;
  const q = new URLSearchParams(location.search);
  const input = div.querySelector(".panel-prompt");
  if (changed && input) q.set("p" + (k + 1), input.value); else q.delete("p" + (k + 1));
  setURL(q);
}

function sliderKey(input, div) {
  const all = [...div.querySelectorAll("input[type=range]")];
  return input.dataset.testid || input.name || "r" + all.indexOf(input);
}

// restoreSliders moves a panel's sliders to the values in the URL it was
// opened with (once, after the panel first ran), as if the student had.
export function restoreSliders(i, k, div) {
  if (i !== initialSection || div.dataset.restored) return;
  div.dataset.restored = "1";
  div.querySelectorAll("input[type=range]").forEach((r) => {
    const v = initial.get("p" + (k + 1) + "." + sliderKey(r, div));
    if (v === null || v === r.value) return;
    r.value = v;
    r.dispatchEvent(new Event("input", { bubbles: true }));
    r.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

function trackSliders() {
  const note = (e) => {
    const r = e.target;
    if (!(r instanceof HTMLInputElement) || r.type !== "range") return;
    const div = r.closest(".lesson-panel"), sec = r.closest(".lesson-section");
    if (!div || !sec || parseInt(sec.dataset.section, 10) - 1 !== section) return;
    const q = new URLSearchParams(location.search);
    q.set("p" + (parseInt(div.dataset.panel, 10) + 1) + "." + sliderKey(r, div), r.value);
    setURL(q);
  };
  document.addEventListener("change", note);
  document.addEventListener("input", note);
}

function presenter(on) {
  document.body.classList.toggle("presenter", on);
  setChartScale(on ? 1.5 : 1); // the panels' charts grow with the text
  const b = document.getElementById("btn-presenter");
  if (b) { b.setAttribute("aria-pressed", String(on)); b.textContent = on ? "Leave presenter mode" : "Presenter mode"; }
  const q = new URLSearchParams(location.search);
  if (on) q.set("present", "1"); else q.delete("present");
  setURL(q);
}

// glossary terms: hover and focus show the definition (CSS); a tap or a
// click keeps it open, Escape or a click elsewhere closes it
function glossary() {
  const closeAll = (except) => document.querySelectorAll(".term-wrap.open").forEach((w) => {
    if (w === except) return;
    w.classList.remove("open");
    w.querySelector(".term").setAttribute("aria-expanded", "false");
  });
  document.addEventListener("click", (e) => {
    const t = e.target.closest && e.target.closest(".term");
    if (!t) { closeAll(null); return; }
    const w = t.parentElement, open = !w.classList.contains("open");
    closeAll(w);
    w.classList.toggle("open", open);
    t.setAttribute("aria-expanded", String(open));
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeAll(null); });
}

// initTools wires the lesson toolbar (the classroom's "Present to a class"
// is room.js's, added by lessons.js).
export function initTools() {
  glossary();
  trackSliders();
  if (initial.get("present") === "1") presenter(true);
  const pb = document.getElementById("btn-presenter");
  if (pb) pb.addEventListener("click", () => presenter(!document.body.classList.contains("presenter")));
}
