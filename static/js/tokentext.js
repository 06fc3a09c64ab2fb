// tokentext.js: how a token is shown: its text with visible whitespace,
// a special token's name, or its bytes as <C3> chips when it is part of a
// character (SentencePiece byte fallback or GPT-2's byte-level spelling).

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
