// charts.js: the few charts the pages draw, as plain SVG sized to their
// box in CSS pixels: labelled horizontal bars (candidates, with the cut-off
// line between the true ranks), vertical bars (a histogram), and line or
// step charts (the CDF with the draw, inter-token latency). Every chart
// has axis titles and a legend when it has more than one series; colors
// come from CSS classes, so dark mode and contrast follow the stylesheet.
// Chosen over Chart.js by measurement: see docs/notes-issue-13.md.

const NS = "http://www.w3.org/2000/svg";

export function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

// Box widths come from a ResizeObserver, not from reading clientWidth at
// draw time: a read after the frame's other DOM writes would force a
// layout of the whole page, once per chart per frame.
const widths = new WeakMap();
let onResize = null;
const ro = new ResizeObserver((entries) => {
  let changed = false;
  for (const e of entries) {
    const w = Math.round(e.contentRect.width);
    if (widths.get(e.target) !== w) { widths.set(e.target, w); changed = true; }
  }
  if (changed && onResize) onResize();
});
// whenResized registers the redraw to run when a chart's box changes width.
export function whenResized(fn) { onResize = fn; }
// boxWidth is box's content width in CSS pixels (fallback while hidden);
// only the first call for a box measures it.
export function boxWidth(box, fallback) {
  let w = widths.get(box);
  if (w === undefined) {
    ro.observe(box);
    w = box.clientWidth;
    widths.set(box, w);
  }
  return w > 0 ? w : fallback;
}
function widthOf(box, fallback) { return boxWidth(box, fallback); }
// forgetWidth makes the next boxWidth measure box again (a box whose
// width changed outside the page's own redraws).
export function forgetWidth(box) { widths.delete(box); ro.unobserve(box); }

// ---------- large type ----------
// A chart is laid out in a box scale times narrower than its CSS box and
// drawn scale times larger (its viewBox), so its text, ticks and bars grow
// together and still fit: "Large type" for a projector sets the scale
// (setChartScale), and every chart on the page is drawn again at once.
let scale = 1;
const drawn = new Set(); // boxes holding a chart, each with its redraw (box._redraw)
export function chartScale() { return scale; }
export function setChartScale(k) {
  k = k > 0 ? k : 1;
  if (k === scale) return;
  scale = k;
  for (const box of drawn) {
    if (!box.isConnected) { drawn.delete(box); continue; }
    box._svg = null;
    box._redraw();
  }
  if (onResize) onResize();
}
// remember registers how to draw box's chart again (after a scale change).
export function remember(box, redraw) {
  box._redraw = redraw;
  if (drawn.size > 256) for (const b of drawn) if (!b.isConnected) drawn.delete(b);
  drawn.add(box);
}
// svgOpen is a chart's <svg> tag: W×H user units shown at scale.
function svgOpen(W, H, aria) {
  return `<svg xmlns="${NS}" width="${Math.round(W * scale)}" height="${Math.round(H * scale)}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(aria)}">`;
}

// setSVG puts a chart's markup in its box, skipping the work when the box
// already shows exactly that chart (a panel marked dirty by an event that
// did not change it).
function setSVG(box, html) {
  if (box._svg === html && box.firstChild && box.firstChild.tagName === "svg") return;
  box.innerHTML = html;
  box._svg = html;
}

// niceTicks returns about n round tick values covering [lo, hi].
export function niceTicks(lo, hi, n = 5, minStep = 0) {
  if (!(hi > lo)) return [lo];
  const raw = Math.max(minStep, (hi - lo) / n), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

// legend lists the series one per line from (x, y).
function legend(series, x, y) {
  let s = "";
  series.forEach((se, i) => {
    const ly = y + i * 15;
    s += `<rect x="${x}" y="${ly - 9}" width="10" height="10" class="${se.cls}"/><text x="${x + 14}" y="${ly}" class="ch-legend">${esc(se.name)}</text>`;
  });
  return s;
}

// hbars draws one row per item, labelled on the left, with one bar per
// series and the first series' value printed at its bar's end. cut.after
// (a count of rows) draws a dashed line below that many rows, labelled
// cut.label; rows after it get the class "cut".
// wrapLines splits text at spaces into lines of at most width px, at
// about 7 px per character of the charts' bold 11 px title font.
export function wrapLines(text, width) {
  const max = Math.max(12, Math.floor(width / 7)), lines = [];
  let cur = "";
  for (const w of String(text).split(" ")) {
    if (cur && (cur + " " + w).length > max) { lines.push(cur); cur = w; } else cur = cur ? cur + " " + w : w;
  }
  if (cur) lines.push(cur);
  return lines.length ? lines : [""];
}

export function hbars(box, o) {
  remember(box, () => hbars(box, o));
  const W = Math.floor(widthOf(box, 360) / scale), rows = o.rows, S = o.series;
  const rowH = S.length > 1 ? 12 + 7 * S.length : 18, top = S.length > 1 ? 10 + 15 * S.length : 6, labelW = Math.min(120, Math.max(60, W * 0.28)), valW = 54;
  const plotW = Math.max(40, W - labelW - valW - 8);
  const title = wrapLines(o.xTitle, W - 8), H = top + rows.length * rowH + 34 + 13 * (title.length - 1);
  const max = o.max || Math.max(1e-12, ...rows.flatMap((r) => r.values.map(Math.abs)));
  const x = (v) => labelW + Math.max(0, v) / max * plotW;
  let s = "";
  if (S.length > 1) s += legend(S, 8, 14);
  rows.forEach((r, i) => {
    const y0 = top + i * rowH, bh = S.length > 1 ? 6 : rowH - 6;
    s += `<g class="ch-row${r.cls ? " " + r.cls : ""}" data-rank="${r.rank !== undefined ? r.rank : i + 1}"${r.id !== undefined ? ` data-id="${r.id}"` : ""}>`;
    s += `<title>${esc(r.title || r.label)}</title>`;
    s += `<text x="${labelW - 6}" y="${y0 + rowH / 2 + 4}" text-anchor="end" class="ch-label">${esc(r.label)}</text>`;
    r.values.forEach((v, k) => {
      const by = S.length > 1 ? y0 + 3 + k * 7 : y0 + 3;
      s += `<rect x="${labelW}" y="${by}" width="${Math.max(0.5, x(v) - labelW).toFixed(1)}" height="${bh}" class="${S[k].cls}" data-series="${k}"/>`;
    });
    s += `<text x="${Math.min(x(Math.max(...r.values)) + 4, W - valW + 10)}" y="${y0 + rowH / 2 + 4}" class="ch-val">${esc(o.fmt ? o.fmt(r.values[0], r) : r.values[0])}</text>`;
    s += "</g>";
  });
  const bottom = top + rows.length * rowH;
  if (o.cut && o.cut.after > 0 && o.cut.after < rows.length) {
    const y = top + o.cut.after * rowH;
    s += `<g class="ch-cut" data-testid="cutoff-line" data-after="${o.cut.after}"><line x1="4" x2="${W - 4}" y1="${y}" y2="${y}"/>` +
      `<text x="${W - 6}" y="${y - 3}" text-anchor="end">${esc(o.cut.label)}</text></g>`;
  }
  s += `<line x1="${labelW}" x2="${labelW}" y1="${top - 2}" y2="${bottom}" class="ch-axis"/>`;
  for (const t of niceTicks(0, max, Math.max(2, Math.floor(plotW / 70)))) {
    s += `<text x="${x(t)}" y="${bottom + 13}" text-anchor="middle" class="ch-tick">${esc(o.tickFmt ? o.tickFmt(t) : t)}</text>`;
  }
  // a title wider than the chart is wrapped and centred on the whole width (a 390 px phone)
  const tx = title.length > 1 ? W / 2 : labelW + plotW / 2;
  title.forEach((t, i) => { s += `<text x="${tx}" y="${bottom + 28 + 13 * i}" text-anchor="middle" class="ch-title">${esc(t)}</text>`; });
  setSVG(box, `${svgOpen(W, H, o.aria || o.xTitle)}${s}</svg>`);
  box.dataset.rows = rows.length;
  if (o.cut) box.dataset.cutAfter = o.cut.after;
  return box.firstChild;
}

// vbars draws a histogram: bins from lo to hi, counts on a log scale.
export function vbars(box, o) {
  remember(box, () => vbars(box, o));
  const W = Math.floor(widthOf(box, 360) / scale), H = o.height || 200, L = 46, R = 8, T = 8, B = 40;
  const pw = W - L - R, ph = H - T - B, n = o.counts.length;
  const maxC = Math.max(1, ...o.counts), ly = (c) => c > 0 ? Math.log10(c + 1) / Math.log10(maxC + 1) : 0;
  let s = "";
  o.counts.forEach((c, i) => {
    const h = ly(c) * ph, bx = L + i * pw / n;
    s += `<rect x="${bx.toFixed(1)}" y="${(T + ph - h).toFixed(1)}" width="${Math.max(1, pw / n - 1).toFixed(1)}" height="${h.toFixed(1)}" class="${o.cls || "s-muted"}">` +
      `<title>${esc(o.binTitle(i, c))}</title></rect>`;
  });
  s += `<line x1="${L}" x2="${L + pw}" y1="${T + ph}" y2="${T + ph}" class="ch-axis"/><line x1="${L}" x2="${L}" y1="${T}" y2="${T + ph}" class="ch-axis"/>`;
  for (const t of [1, 10, 100, 1000, 10000, 100000].filter((t) => t <= maxC)) {
    const y = T + ph - ly(t) * ph;
    s += `<text x="${L - 4}" y="${y + 4}" text-anchor="end" class="ch-tick">${t}</text>`;
  }
  for (const t of niceTicks(o.lo, o.hi, Math.max(2, Math.floor(pw / 60)))) {
    const x = L + (t - o.lo) / (o.hi - o.lo || 1) * pw;
    s += `<text x="${x}" y="${T + ph + 13}" text-anchor="middle" class="ch-tick">${esc(t)}</text>`;
  }
  s += `<text x="${L + pw / 2}" y="${H - 6}" text-anchor="middle" class="ch-title">${esc(o.xTitle)}</text>`;
  s += `<text transform="translate(12 ${T + ph / 2}) rotate(-90)" text-anchor="middle" class="ch-title">${esc(o.yTitle)}</text>`;
  setSVG(box, `${svgOpen(W, H, o.aria || o.xTitle)}${s}</svg>`);
  return box.firstChild;
}

// line draws points [{x, y}] as a line (or a step line with o.step) with
// x and y axis titles; o.xLog uses a log scale for x; o.hline draws a
// labelled horizontal line; o.mark highlights one point with a label.
export function line(box, o) {
  remember(box, () => line(box, o));
  const W = Math.floor(widthOf(box, 360) / scale), H = o.height || 200, L = 50, R = 10, T = 10, B = 40;
  const pw = W - L - R, ph = H - T - B, pts = o.points;
  const xs = pts.map((p) => p.x), xlo = o.xMin !== undefined ? o.xMin : Math.min(...xs, 0), xhi = Math.max(o.xMax || 0, ...xs, xlo + 1);
  const yhi = o.yMax !== undefined ? o.yMax : Math.max(1e-9, ...pts.map((p) => p.y)) * 1.1, ylo = 0;
  const fx = o.xLog ? (v) => L + Math.log(v) / Math.log(xhi) * pw : (v) => L + (v - xlo) / (xhi - xlo) * pw;
  const fy = (v) => T + ph - (v - ylo) / (yhi - ylo) * ph;
  let s = "";
  for (const t of niceTicks(ylo, yhi, 4)) {
    s += `<line x1="${L}" x2="${L + pw}" y1="${fy(t)}" y2="${fy(t)}" class="ch-grid"/><text x="${L - 4}" y="${fy(t) + 4}" text-anchor="end" class="ch-tick">${esc(o.yFmt ? o.yFmt(t) : t)}</text>`;
  }
  const xt = o.xLog ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000].filter((t) => t <= xhi) : niceTicks(xlo, xhi, Math.max(2, Math.floor(pw / 60)), o.xInt ? 1 : 0);
  for (const t of xt) s += `<text x="${fx(t)}" y="${T + ph + 13}" text-anchor="middle" class="ch-tick">${t}</text>`;
  s += `<line x1="${L}" x2="${L + pw}" y1="${T + ph}" y2="${T + ph}" class="ch-axis"/><line x1="${L}" x2="${L}" y1="${T}" y2="${T + ph}" class="ch-axis"/>`;
  if (pts.length) {
    let d = "";
    pts.forEach((p, i) => {
      const X = fx(p.x).toFixed(1), Y = fy(p.y).toFixed(1);
      if (i === 0) d += `M${o.step ? fx(o.xLog ? 1 : xlo).toFixed(1) + " " + fy(0).toFixed(1) + "L" + X + " " + fy(0).toFixed(1) + "L" : ""}${X} ${Y}`;
      else d += o.step ? `H${X}V${Y}` : `L${X} ${Y}`;
    });
    s += `<path d="${d}" class="ch-line ${o.cls || "l-accent"}"/>`;
    if (o.dots) for (const p of pts) s += `<circle cx="${fx(p.x).toFixed(1)}" cy="${fy(p.y).toFixed(1)}" r="2.5" class="ch-dot"><title>${esc(p.title || "")}</title></circle>`;
  }
  if (o.hline) {
    const y = fy(o.hline.y);
    s += `<g class="ch-cut" data-testid="${o.hline.testid || "hline"}"><line x1="${L}" x2="${L + pw}" y1="${y}" y2="${y}"/><text x="${L + 4}" y="${y - 4}">${esc(o.hline.label)}</text></g>`;
  }
  if (o.mark) {
    const X = fx(o.mark.x), Y = fy(o.mark.y);
    s += `<g class="ch-mark"><circle cx="${X}" cy="${Y}" r="6"/><text x="${Math.min(X + 8, L + pw - 4)}" y="${Math.min(Y + 16, T + ph - 4)}" text-anchor="${X > L + pw * 0.6 ? "end" : "start"}">${esc(o.mark.label)}</text></g>`;
  }
  s += `<text x="${L + pw / 2}" y="${H - 6}" text-anchor="middle" class="ch-title">${esc(o.xTitle)}</text>`;
  s += `<text transform="translate(12 ${T + ph / 2}) rotate(-90)" text-anchor="middle" class="ch-title">${esc(o.yTitle)}</text>`;
  setSVG(box, `${svgOpen(W, H, o.aria || o.yTitle)}${s}</svg>`);
  return box.firstChild;
}
