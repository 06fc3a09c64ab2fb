// appcontext.js: the lesson panel "What the application adds" — a chat
// application's whole context around one question (system message, a tool's
// description, a retrieved document, earlier turns, a saved memory note,
// the question and the start of the reply), cut by the model's real
// tokenizer, each part's tokens and share of the context; then the model's
// next token with the note and without it, and the hash of every weight
// before and after both runs.
import * as IS from "../core.js";
import * as P from "../panels.js";
import { register } from "./registry.js";
import { mount, wrapTable } from "./util.js";

const el = IS.el;

// the parts of the context, in the order of the legend
const PARTS = [
  ["template", "chat template: start-of-text, role markers, line breaks"],
  ["system", "system message"],
  ["tool", "tool description"],
  ["document", "retrieved document"],
  ["turns", "earlier turns"],
  ["memory", "saved memory note"],
  ["question", "your question"],
  ["reply", "start of the reply"],
];

// segments: the context as [part, text] pieces, in order, written the way
// a plain chat template writes a conversation (Role: text, one per line).
function segments(o, question, withNote) {
  const s = [];
  const msg = (role, part, text) => { s.push(["template", role + ": "], [part, text], ["template", "\n"]); };
  msg("System", "system", o.instructions);
  s.push(["tool", "Tool: " + o.tool], ["template", "\n"]);
  s.push(["document", "Document: " + o.document], ["template", "\n"]);
  msg("User", "turns", o.turn_user);
  msg("Assistant", "turns", o.turn_assistant);
  if (withNote) s.push(["memory", "Memory: " + o.note], ["template", "\n"]);
  msg("User", "question", question);
  s.push(["template", "Assistant: "], ["reply", o.reply]);
  return s;
}

// layout: the text and each segment's byte range in it
function layout(segs) {
  const enc = new TextEncoder();
  let text = "", at = 0;
  const ranges = segs.map(([part, t]) => {
    const n = enc.encode(t).length, r = { part, text: t, start: at, end: at + n };
    text += t;
    at += n;
    return r;
  });
  return { text, ranges };
}

// partOf: the part a token belongs to: the message part it covers most
// bytes of (a word's token often starts with the space the template put
// before it), else the template (the start-of-text token covers no byte)
export function partOf(tok, ranges) {
  let best = "template", most = 0;
  for (const r of ranges) {
    const n = Math.min(tok.end, r.end) - Math.max(tok.start, r.start);
    if (r.part !== "template" && n > most) { best = r.part; most = n; }
  }
  return best;
}

function softmaxP(values, id) {
  let mx = -Infinity;
  for (const v of values) mx = Math.max(mx, v);
  let z = 0;
  for (const v of values) z += Math.exp(v - mx);
  return Math.exp(values[id] - mx) / z;
}

register("app-context", async (o, out, sec, api) => {
  const root = mount(out), question = o.prompt || "";
  const status = el("p", { class: "small muted", text: "Building the context and running it with and without the note…" });
  root.append(status);
  // the note's word: its last word, which the reply should name
  const word = (String(o.note || "").match(/([\p{L}\p{N}]+)[^\p{L}\p{N}]*$/u) || [])[1] || "";
  const runs = {};
  for (const withNote of [true, false]) {
    const { text, ranges } = layout(segments(o, question, withNote));
    const r = new api.Run();
    try {
      const st = await r.start(api.payload({ prompt: text, temperature: "0", tokens: "4" }, { stop_at_eos: false }));
      const evs = await r.stepTo("logits");
      const t = evs[0].tokenize, lg = evs[evs.length - 1].logits;
      const values = (await r.cmd("get_logits")).payload.values;
      const rest = await r.cmd("run");
      const stop = rest.find((e) => e.stop).stop;
      runs[withNote] = { model: st.payload.model, text, ranges, t, lg, values, stop };
    } finally { r.close(); }
    if (!root.alive()) return;
  }
  const W = runs[true], N = runs[false], m = W.model, t = W.t;
  // tokens per part, from the run with the note
  const parts = PARTS.map(([id, name]) => ({ id, name, toks: [] }));
  const byId = Object.fromEntries(parts.map((p) => [p.id, p]));
  t.tokens.forEach((tok) => byId[partOf(tok, W.ranges)].toks.push(tok));
  // tokens that cover bytes of two parts (a space of the template and a word of a message)
  const straddle = t.tokens.filter((tok) => W.ranges.filter((r) => Math.min(tok.end, r.end) > Math.max(tok.start, r.start)).length > 1).length;
  const total = t.count;
  // the note's word as the model would write it next: the note's token that starts at the word (with its space)
  const mem = W.ranges.find((x) => x.part === "memory");
  const wordAt = mem ? mem.start + new TextEncoder().encode(mem.text.slice(0, mem.text.lastIndexOf(word))).length : -1;
  const wordTok = t.tokens.find((k) => k.start === wordAt - 1 || k.start === wordAt);
  const pw = wordTok ? softmaxP(W.values, wordTok.id) : NaN, pn = wordTok ? softmaxP(N.values, wordTok.id) : NaN;

  IS.clear(root);
  // the share bar
  const bar = el("div", { class: "budget-bar ac-bar", "data-testid": "app-bar", role: "img",
    "aria-label": "share of the context: " + parts.filter((p) => p.toks.length).map((p) => p.name + " " + IS.pct(p.toks.length / total, 0)).join(", ") });
  parts.forEach((p) => {
    if (!p.toks.length) return;
    const seg = el("span", { class: "budget-seg ac-" + p.id, title: p.name + ": " + p.toks.length + " tokens" });
    seg.style.width = (100 * p.toks.length / total) + "%";
    bar.append(seg);
  });
  const legend = el("p", { class: "small legend" }, parts.filter((p) => p.toks.length).flatMap((p, i) => [i ? " · " : "", el("span", { class: "key ac-" + p.id }), " " + p.name]));
  // each part: its tokens as chips
  const list = el("div", { class: "ac-parts", "data-testid": "app-parts" });
  parts.forEach((p) => {
    if (!p.toks.length) return;
    const chips = el("div", { class: "chips" });
    P.tokenChips(chips, { text: W.text, tokens: p.toks.map((k) => Object.assign({}, k, { added: k.added || p.id === "template" })) });
    list.append(el("div", { class: "ac-part", "data-testid": "app-part", "data-part": p.id, "data-tokens": String(p.toks.length) }, [
      el("p", { class: "ac-head" }, [el("span", { class: "key ac-" + p.id }), " ", el("b", { text: p.name }), ": " + p.toks.length + (p.toks.length === 1 ? " token, " : " tokens, ") + IS.pct(p.toks.length / total, 0) + " of the context"]),
      chips]));
  });
  const mine = byId.question.toks.length, added = total - mine;
  root.append(el("p", { "data-testid": "app-total", "data-total": String(total), "data-limit": String(m.context),
    text: "The context holds " + total + " tokens (the model attends to at most " + m.context + "): " + mine + " are your question, " + added + " the application added." +
      (straddle ? " " + straddle + (straddle === 1 ? " token covers" : " tokens cover") + " bytes of two parts (a space the template wrote and the word after it): each counts with the message it carries." : "") }), bar, legend, list);

  // the prediction with and without the note
  const top = (lg) => lg.top.slice(0, 5);
  const rows = [0, 1, 2, 3, 4].map((i) => {
    const a = top(W.lg)[i], b = top(N.lg)[i];
    return [i + 1, a ? IS.tokenLabel(a) : "", a ? IS.fmt(a.prob, 4) : "", b ? IS.tokenLabel(b) : "", b ? IS.fmt(b.prob, 4) : ""];
  });
  root.append(el("p", { class: "lp-sub" }, [el("b", { text: "The model's next token after “" + o.reply + "”" })]),
    wrapTable(api.table(["rank", "token (with the note)", P.P1 + " (with)", "token (without the note)", P.P1 + " (without)"], rows)));
  const wl = wordTok ? IS.tokenLabel(wordTok) : word;
  const topW = W.lg.top[0], topN = N.lg.top[0], changed = topW.id !== topN.id, usesNote = !!wordTok && topW.id === wordTok.id;
  const hashes = new Set([W.stop.checksum_before, W.stop.checksum_after, N.stop.checksum_before, N.stop.checksum_after]);
  const same = W.stop.weights_unchanged && N.stop.weights_unchanged && hashes.size === 1 && !hashes.has("") && !hashes.has(undefined);
  root.append(el("p", { "data-testid": "app-note", "data-p-with": String(pw), "data-p-without": String(pn), "data-word-id": wordTok ? String(wordTok.id) : "",
    "data-top-with": String(topW.id), "data-top-without": String(topN.id), "data-changed": String(changed), "data-uses-note": String(usesNote),
    text: "“" + wl + "”, the note's word: " + P.P1 + " " + IS.fmt(pw, 4) + " with the note, " + IS.fmt(pn, 6) + " without it. Greedy replies: “" + o.reply + W.stop.text + "” with the note, “" + o.reply + N.stop.text + "” without." }));
  const hash = (s) => String(s || "").slice(0, 16) + "…";
  root.append(el("p", { class: "mono small", "data-testid": "app-hash", "data-same": String(same), "data-hash": String(W.stop.checksum_after),
    text: "weights hash: with the note " + hash(W.stop.checksum_before) + " → " + hash(W.stop.checksum_after) + "; without " + hash(N.stop.checksum_before) + " → " + hash(N.stop.checksum_after) }),
  el("p", { class: same ? "ok" : "error", text: same ? "The same hash before and after both runs ✓" : "The hashes differ ✗" }));
  if (m.chat_style && m.chat_style !== "plain") root.append(el("p", { class: "small muted", text: "This model's own chat template is " + m.chat_style + "; the panel writes the plain form (Role: text) so that it can start the reply." }));

  const share = (n) => IS.pct(n / total, 0);
  api.setLive(sec, "app.total", total);
  api.setLive(sec, "app.question_tokens", mine);
  api.setLive(sec, "app.question_share", share(mine));
  api.setLive(sec, "app.added", added);
  api.setLive(sec, "app.added_share", share(added));
  api.setLive(sec, "app.note_tokens", byId.memory.toks.length);
  api.setLive(sec, "app.template_tokens", byId.template.toks.length);
  api.setLive(sec, "app.word", wl);
  api.setLive(sec, "app.top_with", "“" + IS.tokenLabel(topW) + "”");
  api.setLive(sec, "app.top_without", "“" + IS.tokenLabel(topN) + "”");
  api.setLive(sec, "app.p_note_with", IS.fmt(pw, 4));
  api.setLive(sec, "app.p_note_without", IS.fmt(pn, 6));
  api.setLive(sec, "app.weights", same ? "the same" : "different");
  api.setLive(sec, "app.verdict", (usesNote ? "With the note the model's next token is the note's word; without it, the model names " + (changed ? "something else" : "it anyway") + "." :
    changed ? "The note changed the model's next token." : "This time the note did not change the model's top token, only its probabilities.") +
    (same ? " The weights' hash stayed the same through both runs: the note reached the model as tokens in its context, not through its weights." : " The weights' hash changed."));
  root.dataset.ready = "1";
});
