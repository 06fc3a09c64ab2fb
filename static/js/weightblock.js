// weightblock.js: the model view's block display for a quantized model —
// pick a matrix, layer, row and block; the engine answers (weight_block)
// with the block's stored integers, its scale(s), the K types' sub-block
// scales and mins, the float values they stand for and, when the model was
// quantized at load, the original weights and the error of each value. A
// native ES module: new WeightBlockView(box, {onAsk}) inside the model view.
import { el, clear } from "./core.js";

const MATRICES = [["wq", "attention query (Wq)"], ["wk", "attention key (Wk)"], ["wv", "attention value (Wv)"], ["wo", "attention output (Wo)"],
  ["gate", "MLP gate"], ["up", "MLP up"], ["down", "MLP down"], ["embed", "token embedding table"], ["head", "unembedding (head)"]];

// sig writes a float with 4 significant digits (weights are small numbers).
export function sig(x, d = 4) {
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e4 ? String(+x.toPrecision(d)) : x.toExponential(d - 1);
}

export class WeightBlockView {
  constructor(root, opts) {
    this.root = root;
    this.opts = opts;
    this.card = null;
  }

  setModel(card) {
    this.card = card;
    const box = clear(this.root);
    box.hidden = !card || !card.quantized;
    if (box.hidden) return;
    const q = (card.weight_types || []).find((t) => t.type === card.precision) || {};
    box.append(el("h3", { class: "h3", text: "Quantized weights: one block up close" }),
      el("p", { class: "small muted", text: "This model's matrices are stored as " + card.precision.toUpperCase() + " (" + sig(q.bytes_per_param || 0) +
        " bytes per weight instead of float32's 4): small integers in blocks, each block with its own scale. Pick a block to see what is stored and the numbers it stands for." +
        (card.originals_known ? " This model was quantized when it loaded, so the original weights are known and each value's error is shown." : " This model's file was already quantized: the original weights are not known.") }));
    const form = el("form", { class: "mv-block-form small", "data-testid": "mv-block-form" });
    const sel = el("select", { id: "mv-block-matrix", "data-testid": "mv-block-matrix" }, MATRICES.map(([v, t]) => el("option", { value: v, text: t })));
    const num = (id, label, max) => {
      const i = el("input", { id, type: "number", min: "0", max: String(max), value: "0", class: "mv-num", "data-testid": id });
      return [el("label", { for: id, text: label }), i];
    };
    const [ll, li] = num("mv-block-layer", "layer", card.layers - 1), [rl, ri] = num("mv-block-row", "row", 1e6), [bl, bi] = num("mv-block-index", "block", 1e6);
    const go = el("button", { type: "submit", class: "btn", "data-testid": "mv-block-show", text: "Show block" });
    form.append(el("label", { for: "mv-block-matrix", text: "matrix" }), sel, ll, li, rl, ri, bl, bi, go);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.ask({ model: card.name, matrix: sel.value, layer: +li.value | 0, row: +ri.value | 0, block: +bi.value | 0 });
    });
    this.out = el("div", { class: "mv-block-out", "data-testid": "mv-block-out", "aria-live": "polite" });
    box.append(form, this.out);
  }

  ask(req) { if (this.opts.onAsk) this.opts.onAsk(req); }
  error(msg) { if (this.out) clear(this.out).append(el("p", { class: "error small", "data-testid": "mv-block-error", text: msg })); }

  // show draws the engine's answer.
  show(b) {
    const box = clear(this.out), hasOrig = !!b.original;
    box.dataset.type = b.type;
    box.dataset.matrix = b.matrix;
    box.dataset.row = b.row;
    box.dataset.block = b.block;
    const where = (b.matrix === "embed" || b.matrix === "head" ? b.matrix : b.matrix + " of block " + b.layer) + ", row " + b.row + ", block " + b.block + " of " + b.blocks +
      " (columns " + b.first_col + "–" + (b.first_col + b.block_size - 1) + " of " + b.cols + ")";
    box.append(el("h4", { class: "h4", text: b.type + " block: " + where }),
      el("p", { class: "small", "data-testid": "mv-block-formula", text: b.block_size + " weights in " + b.block_bytes + " bytes (" + sig(b.bits_per_value) + " bits per weight). " + b.formula + "." }));
    const defs = [["d (block scale, fp16)", b.d, "d"]];
    if (b.sub_mins) defs.push(["dmin (scale of the mins, fp16)", b.dmin, "dmin"]);
    box.append(el("dl", { class: "lp-defs small", "data-testid": "mv-block-scales" }, defs.flatMap(([k, v, key]) => [el("dt", { text: k }), el("dd", { "data-key": key, "data-v": String(v), text: sig(v, 6) })])));
    if (b.sub_scales) {
      const t = el("table", { class: "mv-lens-table", "data-testid": "mv-block-subs" });
      t.append(el("caption", { text: "Sub-blocks of " + b.sub_size + " values: each stores its own scale" + (b.sub_mins ? " and min (6-bit integers, 0–63)" : " (a signed 8-bit integer)") }));
      const head = ["sub-block", "scale (stored)", "d × scale"].concat(b.sub_mins ? ["min (stored)", "dmin × min"] : []);
      t.append(el("tr", {}, head.map((h) => el("th", { scope: "col", text: h }))));
      b.sub_scales.forEach((s, j) => {
        const cells = [j, s, sig(Math.fround(b.d * s))].concat(b.sub_mins ? [b.sub_mins[j], sig(Math.fround(b.dmin * b.sub_mins[j]))] : []);
        t.append(el("tr", { "data-sub": String(j) }, cells.map((c, k) => el(k ? "td" : "th", k ? { text: String(c) } : { scope: "row", text: String(c) }))));
      });
      box.append(el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Sub-block scales" }, [t]));
    }
    if (hasOrig) {
      box.append(el("p", { class: "small", "data-testid": "mv-block-error-summary", "data-max": String(b.max_abs_error), "data-rms": String(b.rms_error),
        text: "Error (original − stored value) over the block: largest " + sig(b.max_abs_error, 3) + ", root mean square " + sig(b.rms_error, 3) +
          ", against weights of root mean square " + sig(b.rms_original, 3) + " (" + (100 * b.rms_error / b.rms_original).toFixed(1) + "%). The originals were " + b.original_dtype + "." }));
    } else {
      box.append(el("p", { class: "small", "data-testid": "mv-block-no-original", text: b.original_note }));
    }
    const t = el("table", { class: "mv-lens-table mv-block-values", "data-testid": "mv-block-values" });
    t.append(el("caption", { text: "Each weight of the block: the integer stored, the value it stands for" + (hasOrig ? ", the original and the error" : "") }));
    const head = ["column"].concat(b.sub_size ? ["sub-block"] : [], ["stored integer", "value"], hasOrig ? ["original", "error"] : []);
    t.append(el("tr", {}, head.map((h) => el("th", { scope: "col", text: h }))));
    b.values.forEach((v, i) => {
      const a = { "data-i": String(i), "data-q": String(b.quants[i]), "data-v": String(v) };
      const cells = [String(b.first_col + i)].concat(b.sub_size ? [String(Math.floor(i / b.sub_size))] : [], [String(b.quants[i]), sig(v, 6)]);
      if (hasOrig) { a["data-o"] = String(b.original[i]); a["data-e"] = String(b.error[i]); cells.push(sig(b.original[i], 6), sig(b.error[i], 3)); }
      t.append(el("tr", a, cells.map((c, k) => el(k ? "td" : "th", k ? { text: c } : { scope: "row", text: c }))));
    });
    box.append(el("div", { class: "table-wrap mv-block-scroll", tabindex: "0", role: "region", "aria-label": "Values of the block" }, [t]));
  }
}
