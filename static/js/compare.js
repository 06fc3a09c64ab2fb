// compare.js: the same prompt run greedy and sampled side by side, over two
// websocket connections; the sampled side also draws its first token N times.
// After a run: a summary with links to the results (scrolled into view when
// the form hides them, as on a phone), the first divergence marked once in
// both texts and in the token table (every row shown), and the histogram of
// the draws with each drawn count and each expected count p × N printed,
// tested with Pearson's χ² (groups expecting fewer than 5 pooled).
import * as IS from "./core.js";
import { PK } from "./panels.js";
import { esc, boxWidth, chartScale, remember } from "./charts.js";
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

  let sides = null, ranHere = false, scrollAtRun = 0, lastFirst = null, lastTest = null;
  function run() {
    ranHere = true;
    scrollAtRun = window.scrollY;
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
    clearResults();
    lastTest = null;
    IS.clear(chi);
    IS.clear($("chart-samples"));
    $("chart-samples")._svg = null;
    $("chart-samples")._redraw = () => {}; // a Large type switch mid-run must not redraw the last run's histogram
    $("chart-samples").removeAttribute("data-n");
    let finished = 0;
    mine.forEach((side, i) => {
      side.onDone = () => { if (++finished === 2) render(); };
      side.drive(Object.assign({}, base, { sampling: i === 0 ? greedy : sampling }), i === 0 ? 0 : sampleN);
    });
  }

  // the results the summary links to get ids (the page's markup has none)
  const sections = { texts: document.querySelector(".compare"), table: document.querySelector('[data-testid="align"]'), hist: document.querySelector('[data-testid="hist"]') };
  sections.texts.id = "res-texts";
  sections.table.id = "res-table";
  sections.hist.id = "res-hist";
  sections.table.setAttribute("aria-labelledby", "h-res-table");
  sections.table.querySelector("h2").id = "h-res-table";
  // the summary sits right under the status line, so it is in view when the
  // run ends, with links to each result
  const summary = IS.el("section", { id: "compare-summary", class: "card compare-summary", "data-testid": "compare-summary", "aria-labelledby": "h-summary", hidden: true });
  $("status").after(summary);
  // the χ² test of the histogram, under the chart
  const chi = IS.el("div", { id: "chi2-box", class: "chi2", "data-testid": "chi2-box" });
  $("chart-samples").after(chi);

  function clearResults() {
    ["gen-greedy", "gen-sampled", "align"].forEach((id) => IS.clear($(id)));
    $("diverge").textContent = "";
    lastFirst = null;
    summary.hidden = true;
    IS.clear(summary);
  }

  // firstDiff is the first position where the two runs differ (one
  // stopped, or different tokens), -1 when they agree throughout.
  function firstDiff(g, s) {
    const n = Math.max(g.tokens.length, s.tokens.length);
    for (let i = 0; i < n; i++) {
      const a = g.tokens[i], b = s.tokens[i];
      if (!a || !b || a.id !== b.id) return i;
    }
    return -1;
  }
  const quote = (t) => t ? "“" + IS.tokenLabel(t) + "”" : "nothing (it had stopped)";

  // genView shows one run's text; the token at the first divergence is
  // boxed and labelled, once (the tokens after it are not marked: they
  // follow from different contexts, so they differ anyway).
  function genView(box, side, first) {
    box.appendChild(IS.el("span", { class: "gen-prompt", text: side.prompt }));
    side.tokens.forEach((t, i) => {
      if (i === first) box.appendChild(IS.el("span", { class: "diverge-flag", "data-testid": "diverge-flag", text: "first difference ▸" }));
      const span = IS.el("span", { class: "gen-tok" + (i === first ? " diverge-at" : ""), "data-id": t.id, "data-pos": i, text: t.text, title: "id " + t.id + " · p after the cut " + IS.fmt(t.prob, 4) });
      span.style.setProperty("--p", (0.1 + 0.55 * t.prob).toFixed(3));
      box.appendChild(span);
    });
    if (first >= side.tokens.length && first >= 0) box.appendChild(IS.el("span", { class: "diverge-flag", "data-testid": "diverge-flag", text: "first difference: this run stopped here" }));
  }
  function render() {
    const g = sides[0], s = sides[1];
    const first = firstDiff(g, s);
    lastFirst = { first, g, s };
    genView($("gen-greedy"), g, first);
    genView($("gen-sampled"), s, first);
    const table = $("align"), n = Math.max(g.tokens.length, s.tokens.length);
    table.appendChild(IS.el("caption", { text: "All " + n + " generated positions, greedy and sampled side by side" + (first < 0 ? "." : "; the first difference (position " + (first + 1) + ") is marked.") }));
    table.appendChild(IS.el("thead", {}, [IS.el("tr", {}, ["#", "greedy", "id", "sampled", "id", "sampled: p after the cut"].map((x) => IS.el("th", { scope: "col", text: x })))]));
    const body = IS.el("tbody");
    for (let i = 0; i < n; i++) {
      const a = g.tokens[i], b = s.tokens[i];
      const cls = i === first ? "first-diverge" : (first >= 0 && i > first ? "after" : "same");
      const num = IS.el("td", { text: String(i + 1) });
      if (i === first) num.appendChild(IS.el("span", { class: "diverge-flag", text: "first difference" }));
      body.appendChild(IS.el("tr", { class: cls, "data-step": i }, [num].concat(
        [a ? IS.tokenLabel(a) : "(stopped)", a ? String(a.id) : "", b ? IS.tokenLabel(b) : "(stopped)", b ? String(b.id) : "", b ? IS.fmt(b.prob, 4) : ""].map((x) => IS.el("td", { text: x })))));
    }
    table.appendChild(body);
    const d = $("diverge");
    if (first < 0) d.textContent = "The two runs agree on every token.";
    else d.textContent = "The runs split at generated token " + (first + 1) + ": greedy " + quote(g.tokens[first]) + ", sampled " + quote(s.tokens[first]) +
      ". Greedy always takes the top token; sampling drew a different one there, and from then on each run continues its own text.";
    d.setAttribute("data-first", first);
    setStatus("Done. Greedy stopped because " + (g.stop ? IS.stopReason(g.stop.reason, g.stop.generated) : "of an error") + "; sampled stopped because " + (s.stop ? IS.stopReason(s.stop.reason, s.stop.generated) : "of an error") + ".");
    document.body.setAttribute("data-compare", "done");
    drawSummary();
    if (ranHere && document.body.dataset.room !== "following") revealResults();
    room.changed();
  }

  // drawSummary: what the run found, in two sentences, with links to the
  // texts, the table and the histogram.
  function drawSummary() {
    if (!lastFirst) return;
    const { first, g, s } = lastFirst;
    const lines = [IS.el("h2", { id: "h-summary", text: "Result" }),
      IS.el("p", { "data-testid": "summary-split", text: first < 0 ? "Greedy and sampled agree on all " + g.tokens.length + " tokens." :
        (first === 0 ? "Greedy and sampled differ from the first generated token: " : "Greedy and sampled agree on the first " + first + " token" + (first === 1 ? "" : "s") + ", then split at token " + (first + 1) + ": ") +
        "greedy " + quote(g.tokens[first]) + ", sampled " + quote(s.tokens[first]) + "." })];
    if (lastTest) lines.push(IS.el("p", { "data-testid": "summary-chi2", text: lastTest.short }));
    const links = [["#res-texts", "the two texts"], ["#res-table", "token by token"], ["#res-hist", "the histogram"]];
    const nav = IS.el("p", { class: "jump" }, [IS.el("span", { text: "Jump to: " })]);
    links.forEach(([href, text], i) => { if (i) nav.appendChild(document.createTextNode(" · ")); nav.appendChild(IS.el("a", { href, "data-testid": "jump-" + href.slice(5), text })); });
    lines.push(nav);
    summary.replaceChildren(...lines);
    summary.hidden = false;
  }
  // revealResults scrolls the summary to the top when the run ended below
  // the fold (the form fills a phone's screen), unless the reader scrolled
  // meanwhile.
  function revealResults() {
    if (Math.abs(window.scrollY - scrollAtRun) > 2) return;
    const r = summary.getBoundingClientRect();
    if (r.top >= 0 && r.bottom <= window.innerHeight) return;
    summary.scrollIntoView({ block: "start" });
  }

  // ---------- the histogram of the draws and its χ² test ----------
  // chiSquare tests the draws against p × N (Pearson): each token expected
  // 5 or more times is a group of its own; the others, with the tokens
  // never drawn, are pooled into "other"; when "other" expects fewer than 5,
  // the smallest groups join it until it does. df = groups − 1.
  function chiSquare(p) {
    const N = p.n, drawn = p.counts.map((c) => ({ label: IS.tokenLabel(c), id: c.id, p: c.prob_kept, obs: c.count, exp: c.prob_kept * N }));
    let rest = N - drawn.reduce((a, c) => a + c.exp, 0);
    if (rest < 0.01) rest = 0; // rounding of float32 probabilities, not a token's share
    const own = drawn.filter((c) => c.exp >= 5).sort((a, b) => b.exp - a.exp);
    const pooled = drawn.filter((c) => c.exp < 5);
    const other = { label: "other", obs: pooled.reduce((a, c) => a + c.obs, 0), exp: pooled.reduce((a, c) => a + c.exp, 0) + rest, members: pooled.length, never: rest };
    let joined = 0;
    if (other.exp > 0) while (other.exp < 5 && own.length) { const c = own.pop(); other.obs += c.obs; other.exp += c.exp; other.members++; joined++; }
    const groups = own.map((c) => ({ label: "“" + c.label + "”", obs: c.obs, exp: c.exp }));
    if (other.exp > 0) groups.push({ label: "other (" + other.members + " token" + (other.members === 1 ? "" : "s") + " drawn" + (other.never > 0 ? " + those never drawn" : "") + ")", obs: other.obs, exp: other.exp, other: true });
    groups.forEach((x) => { x.part = (x.obs - x.exp) * (x.obs - x.exp) / x.exp; });
    const df = groups.length - 1, chi2 = groups.reduce((a, x) => a + x.part, 0);
    return { N, drawn, rest, groups, df, chi2, joined, pooled: pooled.length, pval: df > 0 ? gammaQ(df / 2, chi2 / 2) : NaN };
  }
  // lnGamma (Lanczos, g = 7) and gammaQ, the regularized upper incomplete
  // gamma function: the χ² p-value is gammaQ(df/2, χ²/2).
  const LG = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  function lnGamma(x) {
    if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
    x -= 1;
    let a = LG[0];
    const t = x + 7.5;
    for (let i = 1; i < 9; i++) a += LG[i] / (x + i);
    return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
  }
  function gammaQ(a, x) {
    if (x <= 0) return 1;
    const front = Math.exp(-x + a * Math.log(x) - lnGamma(a));
    if (x < a + 1) { // series for P
      let ap = a, sum = 1 / a, del = sum;
      for (let n = 0; n < 1000; n++) { ap++; del *= x / ap; sum += del; if (Math.abs(del) < Math.abs(sum) * 1e-15) break; }
      return Math.min(1, Math.max(0, 1 - sum * front));
    }
    let b = x + 1 - a, c = 1e300, d = 1 / b, h = d; // continued fraction for Q (Lentz)
    for (let i = 1; i < 1000; i++) {
      const an = -i * (i - a);
      b += 2; d = an * d + b; if (Math.abs(d) < 1e-300) d = 1e-300;
      c = b + an / c; if (Math.abs(c) < 1e-300) c = 1e-300;
      d = 1 / d; const del = d * c; h *= del;
      if (Math.abs(del - 1) < 1e-15) break;
    }
    return Math.min(1, Math.max(0, front * h));
  }
  const pText = (q) => q >= 0.001 ? IS.fmt(q, q >= 0.1 ? 2 : 3) : "< 0.001";

  // histChart: one row per drawn token (the 20 drawn most, then the rest
  // as one row), two bars each: drawn (value printed) and expected p × N
  // (value printed).
  function histChart(box, p, test) {
    remember(box, () => histChart(box, p, test));
    const scale = chartScale(), W = Math.floor(boxWidth(box, 360) / scale), N = p.n;
    const top = test.drawn.slice(0, 20);
    const rows = top.map((c) => ({ label: c.label, obs: c.obs, exp: c.exp, id: c.id, title: JSON.stringify(p.counts.find((x) => x.id === c.id).text) + ": drawn " + c.obs + " times, expected " + IS.fmt(c.exp, 1) }));
    const more = test.drawn.slice(20), restExp = N - top.reduce((a, c) => a + c.exp, 0);
    if (more.length || restExp >= 0.05) {
      const obs = more.reduce((a, c) => a + c.obs, 0);
      rows.push({ label: "(all others)", obs, exp: Math.max(0, restExp), cls: "others", title: "the " + more.length + " other tokens drawn, and those never drawn: drawn " + obs + " times, expected " + IS.fmt(Math.max(0, restExp), 1) });
    }
    const labelW = Math.min(120, Math.max(60, W * 0.26)), valW = 62, rowH = 30, T = 40;
    const plotW = Math.max(40, W - labelW - valW - 8), max = Math.max(1e-9, ...rows.map((r) => Math.max(r.obs, r.exp)));
    const x = (v) => labelW + Math.max(0, v) / max * plotW;
    let s = `<rect x="8" y="5" width="10" height="10" class="s-accent"/><text x="22" y="14" class="ch-legend">drawn (of ${N} draws)</text>` +
      `<rect x="8" y="21" width="10" height="10" class="s-muted"/><text x="22" y="30" class="ch-legend">expected: ${esc(PK.replace(/ \(.*\)$/, ""))} × ${N}</text>`;
    rows.forEach((r, i) => {
      const y0 = T + i * rowH;
      s += `<g class="ch-row${r.cls ? " " + r.cls : ""}" data-rank="${i + 1}"${r.id !== undefined ? ` data-id="${r.id}"` : ""}><title>${esc(r.title)}</title>`;
      s += `<text x="${labelW - 6}" y="${y0 + rowH / 2 + 3}" text-anchor="end" class="ch-label">${esc(r.label)}</text>`;
      s += `<rect x="${labelW}" y="${y0 + 3}" width="${Math.max(0.5, x(r.obs) - labelW).toFixed(1)}" height="10" class="s-accent" data-series="0"/>`;
      s += `<text x="${(x(r.obs) + 4).toFixed(1)}" y="${y0 + 12}" class="ch-val" data-testid="hist-drawn">${r.obs}</text>`;
      s += `<rect x="${labelW}" y="${y0 + 15}" width="${Math.max(0.5, x(r.exp) - labelW).toFixed(1)}" height="10" class="s-muted" data-series="1"/>`;
      s += `<text x="${(x(r.exp) + 4).toFixed(1)}" y="${y0 + 24}" class="ch-val ch-exp" data-testid="hist-expected">${IS.fmt(r.exp, 1)}</text>`;
      s += "</g>";
    });
    const bottom = T + rows.length * rowH;
    s += `<line x1="${labelW}" x2="${labelW}" y1="${T - 2}" y2="${bottom}" class="ch-axis"/>`;
    s += `<text x="${labelW + plotW / 2}" y="${bottom + 16}" text-anchor="middle" class="ch-title">draws of the first generated token</text>`;
    const H = bottom + 24;
    const html = `<svg xmlns="http://www.w3.org/2000/svg" width="${Math.round(W * scale)}" height="${Math.round(H * scale)}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc("Histogram of " + N + " sampled next tokens: drawn counts beside expected counts p × N; the table below lists them all")}">${s}</svg>`;
    if (box._svg !== html) { box.innerHTML = html; box._svg = html; }
    box.dataset.rows = rows.length;
  }

  // chiView: the χ² result in words, and (folded) the numbers behind it:
  // every token drawn and the groups the test compares.
  function chiView(box, test) {
    const N = test.N, out = [];
    const p = IS.el("p", { id: "chi2", class: "chi2-result", "data-testid": "chi2", "data-chi2": String(test.chi2), "data-df": String(test.df), "data-p": String(test.pval) });
    let verdict;
    if (test.df < 1) {
      p.textContent = "χ² test: not possible here — fewer than two groups expect 5 or more draws (at these settings nearly every draw is the same token). Draw more, or raise the temperature.";
      test.short = "Histogram: " + N + " draws; too concentrated for a χ² test.";
    } else {
      const ok = test.pval >= 0.05;
      verdict = ok ? "consistent with the probabilities" : "not consistent with the probabilities";
      p.append(IS.el("strong", { text: "χ² = " + IS.fmt(test.chi2, 2) + " with " + test.df + " degree" + (test.df === 1 ? "" : "s") + " of freedom, p = " + pText(test.pval) + ": " + verdict + "." }),
        document.createTextNode(" " + (ok ?
          "Counts this far from p × N, or farther, turn up by chance in " + IS.pct(test.pval, 0) + " of runs of " + N + " honest draws; only below 5% would we call them suspicious." :
          "Counts this far from p × N turn up by chance in fewer than 5% of runs, so this is unusual — though even a correct sampler does it about 1 run in 20.")));
      test.short = "Histogram: " + N + " draws of the first token; χ² = " + IS.fmt(test.chi2, 2) + " (" + test.df + " df), p = " + pText(test.pval) + ": " + verdict + " at the 5% level.";
    }
    out.push(p);
    out.push(IS.el("p", { class: "explain", text: "How: χ² adds up (drawn − expected)² / expected over the groups below. Each token expected 5 or more times is its own group; " +
      (test.pooled || test.rest > 0 ? "tokens expected fewer than 5 times" + (test.rest > 0 ? " (including the " + IS.fmt(test.rest, 1) + " expected draws of tokens never drawn)" : "") + " are pooled into one “other” group, as is standard" : "no token here is expected fewer than 5 times, so nothing is pooled") +
      (test.joined ? "; “other” still expected fewer than 5, so the " + test.joined + " smallest group" + (test.joined === 1 ? "" : "s") + " joined it" : "") +
      ". Degrees of freedom = groups − 1." }));
    const groups = IS.el("table", { class: "chi2-table", id: "chi2-groups", "data-testid": "chi2-groups" }, [
      IS.el("caption", { text: "The χ² groups" }),
      IS.el("thead", {}, [IS.el("tr", {}, ["group", "drawn", "expected p × N", "(drawn − expected)² / expected"].map((x) => IS.el("th", { scope: "col", text: x })))]),
      IS.el("tbody", {}, test.groups.map((g) => IS.el("tr", {}, [g.label, String(g.obs), IS.fmt(g.exp, 2), IS.fmt(g.part, 3)].map((x, i) => IS.el(i ? "td" : "th", i ? { text: x } : { scope: "row", text: x }))))),
      IS.el("tfoot", {}, [IS.el("tr", {}, [IS.el("th", { scope: "row", text: "total" }), IS.el("td", { text: String(test.groups.reduce((a, g) => a + g.obs, 0)) }),
        IS.el("td", { text: IS.fmt(test.groups.reduce((a, g) => a + g.exp, 0), 2) }), IS.el("td", { text: "χ² = " + IS.fmt(test.chi2, 3) })])]),
    ]);
    const draws = IS.el("table", { class: "chi2-table", id: "chi2-draws", "data-testid": "chi2-draws" }, [
      IS.el("caption", { text: "Every token drawn" }),
      IS.el("thead", {}, [IS.el("tr", {}, ["token", "id", PK, "drawn", "expected p × N"].map((x) => IS.el("th", { scope: "col", text: x })))]),
      IS.el("tbody", {}, test.drawn.map((c) => IS.el("tr", { "data-id": c.id, "data-count": c.obs, "data-p": String(c.p) },
        [c.label, String(c.id), IS.fmt(c.p, 4), String(c.obs), IS.fmt(c.exp, 2)].map((x, k) => IS.el(k ? "td" : "th", k ? { text: x } : { scope: "row", text: x }))))),
    ]);
    if (test.rest > 0) draws.querySelector("tbody").appendChild(IS.el("tr", { class: "never" }, ["never drawn (all other tokens)", "", IS.fmt(test.rest / N, 4), "0", IS.fmt(test.rest, 2)]
      .map((x, k) => IS.el(k ? "td" : "th", k ? { text: x } : { scope: "row", text: x }))));
    out.push(IS.el("details", { class: "chi2-details", "data-testid": "chi2-details" }, [IS.el("summary", { text: "The numbers behind the test: the groups and every token drawn" }), groups, draws]));
    box.replaceChildren(...out);
  }

  function drawSamples(p) {
    lastTest = chiSquare(p);
    histChart($("chart-samples"), p, lastTest);
    chiView(chi, lastTest);
    $("chart-samples").setAttribute("data-n", p.n);
    drawSummary();
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
    clearResults();
    lastTest = null;
    IS.clear(chi);
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
