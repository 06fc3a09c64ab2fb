// core.js: what every page's script shares — the websocket client (from
// protocol.js), page data and the one source of sampling defaults, URL
// settings, number formatting, token text (pieces, byte chips, the ␣
// legend), plain-English stop reasons and errors, colors and small DOM
// helpers. A native ES module.

export function pageData(id = "lab-data") {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : {};
}

// samplingDefaults is the server's session.DefaultSampling() plus the
// lab's prompt and token count, as every page receives them in its data
// block; no page keeps its own copy.
export function samplingDefaults(data) {
  const d = (data && data.defaults) || {};
  return { prompt: d.prompt, temperature: d.temperature, top_k: d.top_k, top_p: d.top_p, min_p: d.min_p, seed: d.seed, max_new_tokens: d.max_new_tokens };
}

// The websocket client (Client, with request ids and replies matched by
// id), the shared reconnect Backoff, the server's limits from its welcome
// and the error sentences live in protocol.js; pages reach them here.
export { Client, Backoff, serverLimits, openSessions, connectText, errorText } from "./protocol.js";

// ---------- numbers ----------
export function fmt(x, digits = 3) {
  if (x === undefined || x === null || Number.isNaN(+x)) return "–";
  return Number(x).toFixed(digits);
}
export function pct(x, digits = 1) { return fmt(100 * x, digits) + "%"; }
export function bytes(n) {
  if (n >= 1 << 30) return fmt(n / (1 << 30), 2) + " GiB";
  if (n >= 1 << 20) return fmt(n / (1 << 20), 2) + " MiB";
  if (n >= 1 << 10) return fmt(n / (1 << 10), 1) + " KiB";
  return n + " B";
}
export function count(n) {
  if (n >= 1e9) return fmt(n / 1e9, 2) + "B";
  if (n >= 1e6) return fmt(n / 1e6, 2) + "M";
  if (n >= 1e3) return fmt(n / 1e3, 1) + "K";
  return String(n);
}
// ms formats a duration in milliseconds with sensible digits.
export function ms(x) { return x >= 100 ? fmt(x, 0) : x >= 10 ? fmt(x, 1) : fmt(x, 2); }

// ---------- token text ----------
// visible shows whitespace: space ␣, tab ⇥, newline ↵.
export function visible(s) {
  if (s === undefined || s === null) return "";
  return String(s).replace(/ /g, "\u2423").replace(/\t/g, "\u21e5").replace(/\r/g, "\u240d").replace(/\n/g, "\u21b5");
}

// GPT-2's byte-level BPE spells each byte as a printable character; this
// is its inverse (character code → byte).
let byteDecoder = null;
function gpt2ByteDecoder() {
  if (byteDecoder) return byteDecoder;
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  byteDecoder = new Map();
  bs.forEach((b, i) => byteDecoder.set(cs[i], b));
  return byteDecoder;
}

// pieceBytes returns the bytes a vocabulary piece stands for when its text
// is not whole characters: "<0xC3>" (SentencePiece byte fallback) or a
// byte-level BPE spelling ("Ã" → 0xC3). null when unknown.
export function pieceBytes(piece) {
  if (!piece) return null;
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
  if (m) return [parseInt(m[1], 16)];
  const dec = gpt2ByteDecoder(), out = [];
  for (const ch of piece) {
    const b = dec.get(ch.codePointAt(0));
    if (b === undefined) return null;
    out.push(b);
  }
  return out;
}
export function hexByte(b) { return "<" + b.toString(16).toUpperCase().padStart(2, "0") + ">"; }

// isPartial reports whether a token's text is not whole characters.
export function isPartial(tok) {
  return !!tok.partial || (tok.text !== undefined && /\ufffd/.test(tok.text)) || (tok.text === "" && !!(tok.token || tok.piece));
}

// tokenLabel is how a token is shown: its text with visible whitespace, a
// special token's name, or its bytes as <C3> chips for part of a character.
// bytes (optional) are the token's bytes when the caller knows them.
export function tokenLabel(tok, bytes) {
  const piece = tok.piece !== undefined ? tok.piece : tok.token;
  if (tok.special) return piece;
  if (isPartial(tok)) {
    const b = bytes || tok.bytes || pieceBytes(piece);
    return b ? b.map(hexByte).join("") : piece;
  }
  const t = visible(tok.text);
  return t || visible(piece || "");
}

// ---------- words ----------
// stopReason says in plain English why a run stopped (the codes stay in
// data-reason attributes and the protocol).
export function stopReason(reason, generated) {
  const n = generated === undefined ? "" : " after " + generated + (generated === 1 ? " token" : " tokens");
  switch (reason) {
    case "eos": return "the model chose its end-of-text token" + n;
    case "stop_string": return "a stop string appeared in the text" + n;
    case "max_new_tokens": return "it reached the max new tokens setting" + n;
    case "context_full": return "the context is full: the model cannot attend to more positions" + n;
    case "cancelled": return "you stopped the run" + n;
  }
  return "the run ended" + n;
}

// ---------- colors ----------
// cssVar reads a color from the stylesheet. Values are cached until the
// color scheme changes: getComputedStyle after DOM writes would force a
// style recalculation of the whole page at every draw.
const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");
const varCache = new Map();
darkQuery.addEventListener("change", () => varCache.clear());
export function cssVar(name) {
  let v = varCache.get(name);
  if (v === undefined) {
    v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    varCache.set(name, v);
  }
  return v;
}
export function isDark() { return darkQuery.matches; }
// heat maps a value in [-m, m] to a diverging blue–white–red color.
export function heat(v, m, dark = isDark()) {
  const t = m > 0 ? Math.max(-1, Math.min(1, v / m)) : 0;
  const base = dark ? [29, 32, 39] : [255, 255, 255];
  const c = t >= 0 ? [200, 60, 50] : [40, 90, 200], a = Math.abs(t);
  return "rgb(" + [0, 1, 2].map((i) => Math.round(base[i] + (c[i] - base[i]) * a)).join(",") + ")";
}
// seq maps [0,1] to a sequential color (attention, probabilities).
export function seq(v, dark = isDark()) {
  const base = dark ? [29, 32, 39] : [255, 255, 255], top = dark ? [126, 166, 255] : [36, 86, 200];
  const a = Math.max(0, Math.min(1, v));
  return "rgb(" + [0, 1, 2].map((i) => Math.round(base[i] + (top[i] - base[i]) * a)).join(",") + ")";
}

// ---------- DOM ----------
export function el(tag, attrs, children) {
  const e = document.createElement(tag);
  if (attrs) for (const k of Object.keys(attrs)) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children || []) if (c !== null && c !== undefined && c !== false) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}
export function clear(e) { e.replaceChildren(); return e; }
export const $ = (id) => document.getElementById(id);

// ---------- settings ⇄ URL, so an instructor can share a setup ----------
const urlKeys = { model: "model", prompt: "prompt", chat: "chat", system: "system", temperature: "t", top_k: "k", top_p: "p", min_p: "minp",
  seed: "seed", max_new_tokens: "n", stop: "stop", speed: "speed" };
export function readURL() {
  const q = new URLSearchParams(location.search), out = {};
  for (const k of Object.keys(urlKeys)) if (q.has(urlKeys[k])) out[k] = q.get(urlKeys[k]);
  return out;
}
export function writeURL(settings) {
  const q = new URLSearchParams();
  for (const k of Object.keys(urlKeys)) {
    const v = settings[k];
    if (v !== undefined && v !== null && v !== "" && v !== false) q.set(urlKeys[k], v === true ? "1" : String(v));
  }
  const url = location.pathname + "?" + q.toString();
  history.replaceState(null, "", url);
  return location.origin + url;
}

// samplingPayload turns form strings into the protocol's sampling object.
export function samplingPayload(s) {
  return { temperature: parseFloat(s.temperature), top_k: parseInt(s.top_k, 10) || 0, top_p: parseFloat(s.top_p),
    min_p: parseFloat(s.min_p) || 0, seed: parseInt(s.seed, 10) || 0 };
}
