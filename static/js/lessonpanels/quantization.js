// quantization.js: the "Quantization: smaller weights, faster decode"
// panel — the lesson server's default model in F32 (as loaded), BF16,
// Q8_0 and Q4_K, measured on this machine now by the server
// (/api/quantization, engine.CompareWeights): bytes per parameter, weight
// bytes read per decode step, greedy decode speed (median of interleaved
// rounds of wall-clock time), the largest logit change against F32 and
// whether the greedy next token and text change.
import * as IS from "../core.js";
import { register } from "./registry.js";
import { mount, wrapTable } from "./util.js";

const LABEL = { f32: "F32", bf16: "BF16", q8_0: "Q8_0", q4_k: "Q4_K" };
const label = (p) => LABEL[p] || p.toUpperCase();
const rate = (x) => IS.fmt(x, x >= 100 ? 0 : 1);
const sig = (x) => x === 0 ? "0" : Math.abs(x) >= 1e-3 ? String(+x.toPrecision(3)) : x.toExponential(2);

register("quantization", async (o, out, sec, api) => {
  const root = mount(out), steps = parseInt(o.tokens || "32", 10), rounds = parseInt(o.runs || "3", 10);
  const status = IS.el("p", { class: "small muted", "data-testid": "quant-status", text: "Quantizing this model's weights and decoding with each precision, " + rounds + " rounds…" });
  root.append(status);
  const q = new URLSearchParams({ prompt: o.prompt || "", steps: String(steps), rounds: String(rounds) });
  const r = await fetch("/api/quantization?" + q, { cache: "no-store" });
  const v = await r.json();
  if (!root.alive()) return;
  if (!r.ok) { status.textContent = "The measurement failed: " + (v.error || r.status); status.className = "error small"; return; }
  status.remove();
  const runs = v.runs, ref = runs[0], small = runs[runs.length - 1];
  const fastest = runs.reduce((a, b) => (b.tokens_per_s > a.tokens_per_s ? b : a));
  const t = IS.el("table", { class: "lesson-table", "data-testid": "quant-table" });
  t.append(IS.el("tr", {}, ["weights", "bytes per parameter", "weights in memory", "weights read per token", "decode (tokens/s)", "max |Δ logit| vs " + label(ref.precision), "greedy next token", "greedy text (" + v.steps + " tokens)"].map((h) => IS.el("th", { scope: "col", text: h }))));
  for (const x of runs) {
    const isRef = x === ref;
    t.append(IS.el("tr", { "data-precision": x.precision, "data-bpp": String(x.bytes_per_param), "data-weights": String(x.weights_bytes), "data-read": String(x.read_bytes_per_token),
      "data-tps": String(x.tokens_per_s), "data-delta": String(x.max_abs_delta_logit), "data-next": String(x.next_token), "data-same-next": String(x.same_next), "data-same-text": String(x.same_text), "data-first-diff": String(x.first_diff) }, [
      IS.el("th", { scope: "row", text: label(x.precision) + (x.layers !== x.precision ? " (layers " + label(x.layers) + ")" : "") }),
      IS.el("td", { text: String(+x.bytes_per_param.toFixed(4)) }),
      IS.el("td", { text: IS.bytes(x.weights_bytes) }),
      IS.el("td", { text: IS.bytes(x.read_bytes_per_token) }),
      IS.el("td", { text: rate(x.tokens_per_s), title: "rounds: " + x.rounds_tokens_per_s.map(rate).join(", ") }),
      IS.el("td", { text: isRef ? "reference" : sig(x.max_abs_delta_logit) }),
      IS.el("td", { text: isRef ? "reference" : x.same_next ? "same" : "changed" }),
      IS.el("td", { text: isRef ? "reference" : x.same_text ? "same" : "differs from token " + (x.first_diff + 1) })]));
  }
  root.append(wrapTable(t));
  const speedup = small.tokens_per_s / ref.tokens_per_s, bytesRatio = ref.read_bytes_per_token / small.read_bytes_per_token;
  root.append(IS.el("p", { class: "small muted", "data-testid": "quant-timing", text: "Decode speed: " + v.timing + "; " + v.rounds + " rounds of " + v.steps + " steps after a prompt of " + v.prompt_tokens +
    " tokens, measured " + (v.measured_ago_ms ? IS.fmt(v.measured_ago_ms / 1000, 1) + " s ago (shared with everyone who opened it meanwhile)" : "just now") + " on this machine, while it does whatever else it is doing." }));
  const verdict = speedup >= 0.8 * bytesRatio ? "close to the ratio of the bytes read, as a model bound by reading memory should be"
    : speedup > 1.15 ? "faster, but by less than the ratio of the bytes read: this model's weights are small enough to sit in the processor's caches, so a step is not only reading memory"
      : "about the same or slower: this model's weights are small enough to sit in the processor's caches, so a step's time is mostly fixed costs and arithmetic (unpacking each block's integers and scales costs work that plain floats do not need), not reading memory";
  api.setLive(sec, "quant.choices", runs.map((x) => label(x.precision)));
  api.setLive(sec, "quant.fastest", label(fastest.precision));
  api.setLive(sec, "quant.small_text", small.same_text ? "the same" : "different");
  api.setLive(sec, "quant.ref_name", label(ref.precision));
  api.setLive(sec, "quant.small_name", label(small.precision));
  api.setLive(sec, "quant.ref_bpp", String(+ref.bytes_per_param.toFixed(4)));
  api.setLive(sec, "quant.small_bpp", String(+small.bytes_per_param.toFixed(4)));
  api.setLive(sec, "quant.ref_read", IS.bytes(ref.read_bytes_per_token));
  api.setLive(sec, "quant.small_read", IS.bytes(small.read_bytes_per_token));
  api.setLive(sec, "quant.bytes_ratio", IS.fmt(bytesRatio, 2));
  api.setLive(sec, "quant.ref_tps", rate(ref.tokens_per_s));
  api.setLive(sec, "quant.small_tps", rate(small.tokens_per_s));
  api.setLive(sec, "quant.speedup", IS.fmt(speedup, 2));
  api.setLive(sec, "quant.verdict", verdict);
  api.setLive(sec, "quant.small_delta", sig(small.max_abs_delta_logit));
  api.setLive(sec, "quant.ref_range", sig(ref.logit_range));
  api.setLive(sec, "quant.small_next", small.same_next ? "stayed the same" : "changed");
  root.dataset.ready = "1";
  api.setLive(sec, "quant.small_text_words", small.same_text ? "stayed the same for all " + v.steps + " tokens" : "first differed at token " + (small.first_diff + 1) + " of " + v.steps);
});
