// panels.js: the panel renderers /lab, /compare and the lessons share —
// token chips (with byte chips for split characters), the legend for
// token text, the candidates table and probability chart with the cut-off
// at its true rank, the logits histogram, the CDF with the draw, the
// attention heatmap, embedding strips and the inter-token latency chart.
// Each takes the engine's event payload as it is and draws into a box.

import { el, clear, fmt, pct, ms, visible, tokenLabel, isPartial, hexByte, seq, heat, cssVar, isDark } from "./core.js";
import { hbars, vbars, line, boxWidth, chartScale, remember } from "./charts.js";

// ---------- tokens ----------

// tokenUnits groups a prompt's tokens by the characters they cover: a
// character split across several tokens (é = <C3><A9>) is one unit with
// several tokens, shown joined in the text and as byte chips.
function tokenBytes(text) { return new TextEncoder().encode(text); }

// sourceText draws the tokenized text with each token's span shaded; a
// character split across tokens is drawn once, joined, under its tokens.
export function sourceText(box, t) {
  clear(box);
  const bytes = tokenBytes(t.text), dec = new TextDecoder();
  let pos = 0;
  t.tokens.forEach((tok, i) => {
    if (tok.start === tok.end || tok.start < pos) return;
    if (tok.start > pos) box.appendChild(document.createTextNode(visible(dec.decode(bytes.slice(pos, tok.start)))));
    let end = tok.end, last = i;
    // extend to the whole character: the following partial tokens join it
    while (end < bytes.length && (bytes[end] & 0xc0) === 0x80) end++;
    while (last + 1 < t.tokens.length && t.tokens[last + 1].end <= end && t.tokens[last + 1].start >= tok.start) last++;
    const ids = [];
    for (let k = i; k <= last; k++) ids.push(k);
    box.appendChild(el("span", { class: "src-tok c" + (i % 5), "data-i": ids.join(" "), text: visible(dec.decode(bytes.slice(tok.start, end))),
      title: ids.length > 1 ? "one character split across tokens " + ids.join(", ") : "token " + i }));
    pos = end;
  });
  if (pos < bytes.length) box.appendChild(document.createTextNode(visible(dec.decode(bytes.slice(pos)))));
}

// tokenChips draws one chip per token: its text (␣ for a space), or its
// byte as <C3> when it covers part of a character, and its id underneath.
// opts.button makes chips focusable buttons; opts.onPick(i) on click.
export function tokenChips(box, t, opts = {}) {
  clear(box);
  const bytes = tokenBytes(t.text);
  t.tokens.forEach((tok, i) => {
    const partial = isPartial(tok) && tok.end > tok.start;
    const b = partial ? Array.from(bytes.slice(tok.start, tok.end)) : null;
    const label = tokenLabel(tok, b);
    const cls = "chip c" + (i % 5) + (tok.special ? " special" : "") + (tok.added ? " added" : "") + (partial ? " partial" : "");
    const title = "token " + (i + 1) + " · id " + tok.id + " · vocabulary piece " + JSON.stringify(tok.piece) +
      (tok.start !== tok.end ? " · bytes " + tok.start + "–" + (tok.end - 1) + " of the text" : " · inserted, covers no input text") +
      (tok.added ? " · added by the application" : "") + (partial ? " · one byte of a character split across tokens" : "");
    const chip = el(opts.button ? "button" : "span", { type: opts.button ? "button" : null, class: cls, "data-i": i, "data-id": tok.id, "data-testid": "chip",
      "data-bytes": b ? b.map(hexByte).join("") : null, title },
      [el("span", { class: "chip-text", text: label }), el("span", { class: "chip-id", text: String(tok.id) })]);
    if (opts.onPick) chip.addEventListener("click", () => opts.onPick(i));
    if (opts.onHover) {
      chip.addEventListener("mouseenter", () => opts.onHover(i, true));
      chip.addEventListener("mouseleave", () => opts.onHover(i, false));
      chip.addEventListener("focus", () => opts.onHover(i, true));
      chip.addEventListener("blur", () => opts.onHover(i, false));
    }
    box.appendChild(chip);
  });
}

// pieceLegend explains the marks token text uses.
export function pieceLegend() {
  return el("p", { class: "legend small", "data-testid": "piece-legend" }, [
    el("b", { text: "Token text: " }), "␣ space · ↵ newline · ⇥ tab · ", el("span", { class: "mono", text: "<C3>" }),
    " one byte of a character that the tokenizer split across tokens (é is ", el("span", { class: "mono", text: "<C3><A9>" }),
    ") · dashed chips are added by the application (start-of-text, chat template)."]);
}

// ---------- logits ----------

// probability names, the same words everywhere they appear
export const P1 = "p at T=1", PT = "p after temperature", PK = "p after the cut (the draw uses this)";

function tempLabel(p) { return p.temperature > 0 ? "T=" + p.temperature : "greedy (T=0)"; }

// cutLabel says what the cut kept, in words.
export function cutSentence(l) {
  const p = l.params, parts = [];
  if (p.temperature === 0) return "Greedy (temperature 0): only the top token is kept; it is taken with p = 1.";
  if (p.top_k > 0) parts.push("top-k " + p.top_k + " keeps " + l.after_top_k);
  if (p.top_p < 1) parts.push("top-p " + p.top_p + " keeps " + l.after_top_p);
  if (p.min_p > 0) parts.push("min-p " + p.min_p + " keeps " + l.kept);
  return (parts.length ? parts.join(", then ") + ": " : "No cut (top-k off, top-p 1, min-p 0): ") + l.kept + " of " + l.vocab +
    " tokens kept, holding " + pct(l.kept_mass, 1) + " of the probability after temperature; divided by that mass they add up to 1.";
}

// chainTable shows the sampler chain in the order it is applied —
// temperature, top-k, top-p, min-p (or greedy) — with the candidates and
// the probability (after temperature) each step leaves, and the likeliest
// candidate each step removed.
const RULE_SETTING = { temperature: (p) => "T=" + p.temperature, "top-k": (p) => p.top_k > 0 ? "k=" + p.top_k : "off (k=0)",
  "top-p": (p) => p.top_p < 1 ? "p=" + p.top_p : "off (p=1)", "min-p": (p) => p.min_p > 0 ? "min-p=" + p.min_p : "off (0)", greedy: () => "T=0" };
export function chainTable(box, l) {
  box.replaceChildren();
  if (!l.chain || !l.chain.length) return;
  const table = el("table", { class: "chain-table", "data-testid": "chain-table" }, [
    el("caption", { text: "The sampler chain, in the order it is applied" }),
    el("thead", {}, [el("tr", {}, ["step", "setting", "candidates left", "probability they hold (" + PT + ")", "likeliest candidate it removed"].map((h) => el("th", { scope: "col", text: h })))]),
    el("tbody", {}, l.chain.map((c) => el("tr", { "data-rule": c.rule, "data-kept": c.kept, class: c.on ? "" : "off" }, [
      el("td", { text: c.rule === "greedy" ? "greedy" : c.rule }),
      el("td", { text: RULE_SETTING[c.rule] ? RULE_SETTING[c.rule](l.params) : "" }),
      el("td", { text: c.rule === "temperature" ? "all " + l.vocab + " (it reshapes, keeps all)" : String(c.kept) }),
      el("td", { text: pct(c.mass, 1) }),
      el("td", { text: c.removed ? "“" + tokenLabel(c.removed) + "” (rank " + (c.removed.rank + 1) + ", " + PT + " " + fmt(c.removed.prob_t, 4) + ")" : "none" }),
    ]))),
  ]);
  box.appendChild(table);
}

// candidatesTable lists the top candidates: rank from 1, the token as
// text, id, raw logit and the three probabilities, labelled. Redrawing
// reuses the rows and cells (only changed text is written) and one
// delegated listener forces a clicked row's token.
const CAND_COLS = ["rank", "token", "id", "logit", "p1", "pt", "pkept"];
export function candidatesTable(table, l, opts = {}) {
  const head = ["rank", "token", "id", "logit", P1, PT + " (" + tempLabel(l.params) + ")", PK];
  const caption = opts.caption || "Top " + l.top.length + " of " + l.vocab + " candidates at position " + l.pos +
    (opts.onForce ? ". Click a row (or press Enter on it) to force that token." : "");
  let body = table.tBodies[0];
  if (!body || !table.caption || table.dataset.head !== head.join("|")) {
    clear(table);
    table.appendChild(el("caption"));
    table.appendChild(el("thead", {}, [el("tr", {}, head.map((x) => el("th", { scope: "col", text: x })))]));
    body = el("tbody");
    table.appendChild(body);
    table.dataset.head = head.join("|");
  }
  if (table.caption.textContent !== caption) table.caption.textContent = caption;
  table._onForce = opts.onForce;
  if (opts.onForce && !table._delegated) {
    table._delegated = true;
    const pick = (e) => {
      const tr = e.target.closest && e.target.closest('tr[data-testid="cand-row"]');
      if (tr && table._onForce && tr.tabIndex >= 0) table._onForce(+tr.dataset.id);
    };
    table.addEventListener("click", pick);
    table.addEventListener("keydown", (e) => { if (e.key === "Enter") pick(e); });
  }
  while (body.rows.length > l.top.length) body.lastChild.remove();
  l.top.forEach((t, i) => {
    let tr = body.rows[i];
    if (!tr) {
      tr = el("tr", { "data-testid": "cand-row" }, CAND_COLS.map((c) => el("td", { "data-col": c })));
      body.appendChild(tr);
    }
    const cls = (t.kept ? "kept" : "cut") + (t.rank === l.kept - 1 && l.kept < l.top.length ? " last-kept" : "") + (opts.chosenId === t.id ? " chosen" : "");
    if (tr.className !== cls) tr.className = cls;
    tr.dataset.id = t.id;
    tr.dataset.rank = t.rank + 1;
    if (opts.onForce) {
      tr.tabIndex = 0;
      tr.title = "force " + JSON.stringify(t.text) + " as the next token";
    } else {
      tr.removeAttribute("tabindex");
      tr.removeAttribute("title");
    }
    const vals = [String(t.rank + 1), tokenLabel(t), String(t.id), fmt(t.logit, 4), fmt(t.prob, 4), fmt(t.prob_t, 4), t.kept ? fmt(t.prob_kept, 4) : "cut"];
    for (let k = 0; k < vals.length; k++) if (tr.cells[k].textContent !== vals[k]) tr.cells[k].textContent = vals[k];
  });
}

// probChart draws the top candidates' three probabilities as labelled bars,
// with the cut-off line below the last kept rank (or a note when every
// listed candidate is kept).
export function probChart(box, l) {
  const rows = l.top.map((t) => ({ label: tokenLabel(t), values: [t.prob_kept, t.prob_t, t.prob], rank: t.rank + 1, id: t.id, cls: t.kept ? "kept" : "cut",
    title: "rank " + (t.rank + 1) + " " + JSON.stringify(t.text) + " (id " + t.id + "): " + P1 + " " + fmt(t.prob, 4) + ", " + PT + " " + fmt(t.prob_t, 4) + ", " + PK + " " + fmt(t.prob_kept, 4) }));
  const cut = l.kept < l.top.length ? { after: l.kept, label: l.kept === 1 ? "cut-off: only rank 1 kept" : "cut-off: ranks 1–" + l.kept + " kept" } : { after: l.top.length, label: "" };
  const svg = hbars(box, { rows, series: [{ name: PK, cls: "s-accent" }, { name: PT, cls: "s-light" }, { name: P1, cls: "s-muted" }],
    cut, xTitle: "probability (value printed: " + PK + ")", fmt: (v, r) => r.cls === "cut" ? "cut" : fmt(v, 3), tickFmt: (t) => fmt(t, 2),
    aria: "Top " + l.top.length + " candidates with three probabilities each; " + l.kept + " kept" });
  box.dataset.kept = l.kept;
  const note = l.kept >= l.top.length ? "All " + l.top.length + " candidates shown are kept; the cut-off is further down, after rank " + l.kept + " of " + l.vocab + "." : "";
  box.dataset.note = note;
  return { svg, note };
}

// logitsHistogram draws all the vocabulary's logits in bins.
export function logitsHistogram(box, l) {
  const h = l.histogram, w = (h.hi - h.lo) / h.counts.length;
  vbars(box, { counts: h.counts, lo: h.lo, hi: h.hi, xTitle: "raw logit (score)", yTitle: "tokens (log scale)", height: 190,
    binTitle: (i, c) => c + " tokens with logits " + fmt(h.lo + i * w, 2) + " to " + fmt(h.lo + (i + 1) * w, 2),
    aria: "Histogram of all " + l.vocab + " logits" });
}

// ---------- sampling ----------

// cdfChart draws the cumulative probability after the cut over every kept
// candidate by rank, the draw r as a horizontal line and the chosen rank.
export function cdfChart(box, s) {
  const pts = s.cdf.map((c, i) => ({ x: i + 1, y: c.cum, title: "rank " + (i + 1) + " " + JSON.stringify(c.text) + ": cumulative " + fmt(c.cum, 4) }))
    .concat((s.cdf_tail || []).map((c) => ({ x: c.rank + 1, y: c.cum, title: "rank " + (c.rank + 1) + ": cumulative " + fmt(c.cum, 4) })));
  const kept = s.kept || pts.length;
  const r = s.chosen.rank, chosenCum = s.cdf[r] ? s.cdf[r].cum : 1;
  line(box, { points: pts, step: true, xInt: true, xLog: kept > 30, xMin: kept > 30 ? 1 : 0, xMax: kept, yMax: 1.0001, height: 210,
    xTitle: "rank among the " + kept + " kept candidates" + (kept > 30 ? " (log scale)" : ""), yTitle: "cumulative p after the cut",
    yFmt: (t) => fmt(t, 1), hline: s.draw >= 0 ? { y: s.draw, label: "draw r = " + fmt(s.draw, 4), testid: "draw-line" } : null,
    mark: { x: r + 1, y: chosenCum, label: "chosen: rank " + (r + 1) + " “" + tokenLabel(s.chosen) + "”" }, aria: "Cumulative distribution over the kept candidates with the draw" });
  box.dataset.points = pts.length;
  box.dataset.lastRank = pts.length ? pts[pts.length - 1].x : 0;
  box.dataset.lastCum = pts.length ? pts[pts.length - 1].y : 0;
}

// sampleSentence explains the choice with the probability the draw used.
export function sampleSentence(s) {
  const r = s.chosen.rank, lo = r > 0 && s.cdf[r - 1] ? s.cdf[r - 1].cum : 0, hi = s.cdf[r] ? s.cdf[r].cum : 1;
  const why = s.forced ? "You forced this token; nothing was drawn." : s.draw < 0 ? "Greedy: no random draw; the top-scoring token is taken." :
    "The draw r = " + fmt(s.draw, 4) + " fell in [" + fmt(lo, 4) + ", " + fmt(hi, 4) + "), the interval of rank " + (r + 1) + ".";
  // a forced token was not drawn: the cut's probability (often 0, when the
  // cut removed it) says nothing about this choice, so it is named apart
  const p = s.forced ? (s.chosen.prob_kept > 0 ? ", the draw would have picked it with p " + fmt(s.chosen.prob_kept, 4) : ", a token the cut removed: the draw could never have picked it") :
    ", " + PK + " " + fmt(s.chosen.prob_kept, 4);
  return s.rule.charAt(0).toUpperCase() + s.rule.slice(1) + ". " + why + " Chosen: “" + tokenLabel(s.chosen) + "” (id " + s.chosen.id + ", rank " + (r + 1) +
    p + ", " + P1 + " " + fmt(s.chosen.prob, 4) + ").";
}

// ---------- attention ----------

// heatScale is the heatmaps' colour ramp, weight 0 to 1 (set through the
// CSSOM: the page's CSP allows no style attributes)
function heatScale(dark) {
  const s = el("span", { class: "heat-scale", "aria-hidden": "true" });
  s.style.background = "linear-gradient(to right, " + [0, 0.25, 0.5, 0.75, 1].map((v) => seq(v, dark)).join(", ") + ")";
  return s;
}

// attentionHeatmap draws, for one layer, one heatmap per head: query
// tokens as rows, key tokens as columns, a stronger colour = more attention
// (darker on a light page, brighter on a dark one), with its colour scale.
// Every key keeps its label at any cache length: cells are never narrower
// than a label, and a wide map scrolls in its own keyboard-reachable box.
// heads is [head][query][key]; rowLabels/colLabels name the tokens.
export function attentionHeatmap(box, o) {
  remember(box, () => attentionHeatmap(box, o));
  // large type (chartScale): laid out zoom times narrower, drawn zoom times larger
  const zoom = chartScale(), nq = o.rowLabels.length, nk = o.colLabels.length;
  const avail = Math.max(200, boxWidth(box, 360) / zoom);
  const labelW = 74, colLabelH = 60;
  const cell = Math.max(10, Math.min(24, Math.floor((Math.min(avail, 520) - labelW - 8) / Math.max(1, nk))));
  const showCols = true, showRows = nq <= 64;
  const figs = [], dpr = window.devicePixelRatio || 1, fg = cssVar("--fg"), empty = cssVar("--border"), dark = isDark(), font = "11px system-ui, sans-serif";
  o.heads.forEach((rows, h) => {
    const W = labelW + nk * cell + 4, ch = nq > 1 ? cell : Math.max(cell, 14);
    const c = el("canvas", { class: "heat", role: "img", width: String(Math.ceil(W * zoom * dpr)), height: String(Math.ceil(((showCols ? colLabelH : 6) + nq * ch) * zoom * dpr)),
      "aria-label": o.title + ", head " + h + ": " + nq + " query × " + nk + " key tokens", "data-head": h, "data-rows": nq, "data-cols": nk });
    c.style.width = W * zoom + "px";
    c.style.height = ((showCols ? colLabelH : 6) + nq * ch) * zoom + "px";
    const g = c.getContext("2d");
    g.scale(dpr * zoom, dpr * zoom);
    g.font = font;
    g.fillStyle = fg;
    const y0 = showCols ? colLabelH : 6;
    if (showCols) o.colLabels.forEach((lab, k) => {
      g.save();
      g.translate(labelW + k * cell + cell / 2 + 4, y0 - 4);
      g.rotate(-Math.PI / 3);
      g.fillText(String(lab).slice(0, 10), 0, 0);
      g.restore();
    });
    rows.forEach((row, q) => {
      if (showRows && (ch >= 10 || q % Math.ceil(10 / ch) === 0)) {
        g.fillStyle = fg;
        g.textAlign = "right";
        g.fillText(String(o.rowLabels[q]).slice(0, 10), labelW - 4, y0 + q * ch + ch / 2 + 4);
        g.textAlign = "left";
      }
      row.forEach((w, k) => {
        g.fillStyle = w === null ? empty : seq(w, dark);
        g.fillRect(labelW + k * cell, y0 + q * ch, cell - (cell > 4 ? 1 : 0), ch - (ch > 4 ? 1 : 0));
      });
    });
    c.title = o.title + ", head " + h + ". Rows: query tokens; columns: key tokens; " + (dark ? "brighter" : "darker") + " = more attention. Each row adds up to 1 over the keys it can see (itself and earlier).";
    const wide = W * zoom > avail * zoom;
    figs.push(el("figure", { class: "heat-fig" }, [el("figcaption", { class: "small", text: "head " + h }),
      wide ? el("div", { class: "heat-scroll", tabindex: "0", role: "region", "aria-label": o.title + ", head " + h + " (scrolls sideways: " + nk + " keys)" }, [c]) : c]));
  });
  // the colour scale: attention weight 0 to 1, in this scheme's colours
  const scale = el("div", { class: "heat-legend small", "data-testid": "attn-scale" }, [
    el("span", { text: "attention weight 0" }),
    heatScale(dark),
    el("span", { text: "1 (" + (dark ? "brighter" : "darker") + " = more attention; grey: a key the query cannot see)" })]);
  // fresh canvases, drawn off the page and swapped in at once, measured
  // faster than repainting the ones on the page (notes-issue-13.md)
  box.replaceChildren(scale, ...figs);
  box.dataset.heads = o.heads.length;
  box.dataset.rows = nq;
  box.dataset.cols = nk;
}

// ---------- embeddings ----------

export function strip(label, vec, normv) {
  const wrap = el("div", { class: "strip" });
  wrap.appendChild(el("div", { class: "strip-label", text: label + (normv !== undefined ? " · length (norm) " + fmt(normv, 3) : "") }));
  const c = el("canvas", { class: "strip-canvas", width: String(Math.max(vec.length, 1)), height: "1", role: "img", "aria-label": label });
  const g = c.getContext("2d");
  let m = 0;
  for (const v of vec) m = Math.max(m, Math.abs(v));
  const dark = isDark();
  vec.forEach((v, i) => { g.fillStyle = heat(v, m, dark); g.fillRect(i, 0, 1, 1); });
  c.title = label + ": " + vec.length + " numbers, largest |value| " + fmt(m, 4) + "; first: " + vec.slice(0, 4).map((x) => fmt(x, 4)).join(", ");
  wrap.appendChild(c);
  return wrap;
}

// ---------- timing ----------

// itlChart draws the inter-token latency of each token so far.
export function itlChart(box, itl) {
  line(box, { points: itl.map((v, i) => ({ x: i + 2, y: v, title: "token " + (i + 2) + ": " + ms(v) + " ms" })), dots: itl.length <= 60, height: 190,
    xTitle: "generated token number", yTitle: "inter-token latency (ms)", xMin: 1, xInt: true, xMax: Math.max(3, itl.length + 1), yFmt: (t) => ms(t),
    yMax: itl.length ? undefined : 1,
    aria: "Inter-token latency per generated token" });
  box.dataset.points = itl.length;
}

// samplesChart draws how often each token was drawn in N draws against
// the expected count p × N.
export function samplesChart(box, p) {
  const top = p.counts.slice(0, 20);
  hbars(box, { rows: top.map((c, i) => ({ label: tokenLabel(c), values: [c.count, c.prob_kept * p.n], rank: i + 1, id: c.id,
    title: JSON.stringify(c.text) + ": drawn " + c.count + " times, expected " + fmt(c.prob_kept * p.n, 1) })),
    series: [{ name: "times drawn of " + p.n, cls: "s-accent" }, { name: "expected (" + PK + " × " + p.n + ")", cls: "s-muted" }],
    xTitle: "draws", fmt: (v) => String(v), tickFmt: (t) => String(t), aria: "Histogram of " + p.n + " sampled next tokens" });
}
