// Seeded random test strings for the tokenizer goldens: short runs drawn from
// pools that stress pre-tokenization and normalization — every Unicode
// White_Space character plus look-alikes that are not (U+FEFF, U+180E,
// U+200B), contractions, digits of several scripts, letters of many
// scripts (precomposed and decomposed), combining marks, compatibility
// characters (ligatures, fullwidth, superscripts) and emoji sequences.
// Only characters assigned since Unicode 9 or earlier are used, so the
// Unicode tables of Go, Rust and Oniguruma agree on them.

// mulberry32: a small, well-known 32-bit PRNG; the same seed gives the
// same strings on every machine.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const chars = (s) => Array.from(s);
const range = (lo, hi) => {
  const out = [];
  for (let c = lo; c <= hi; c++) out.push(String.fromCodePoint(c));
  return out;
};

const pools = [
  // [weight, items]
  [10, chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")],
  [6, ["the", " the", " and", "ing", " of", "Hello", " world", "Once", " upon", " a", " time", " Lily", "tion", " was"]],
  [6, [" ", " ", " ", "  ", "   "]],
  [5, chars("0123456789")],
  [2, ["12", "345", "2026", "3.14", "1,000", "-7"]],
  [4, chars("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~")],
  [3, ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "n't", "'", "''"]],
  // every White_Space character, and characters that are not White_Space
  // although some regex flavours treat them as space
  [6, ["\t", "\n", "\u000b", "\f", "\r", "\r\n", "\n\n", "\u0085", "\u00a0", "\u1680",
    ...range(0x2000, 0x200a), "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]],
  [3, ["\ufeff", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\u001c", "\u001f", "\u0000", "\u007f"]],
  [4, chars("éèêëàâäçñöüßøåæœÉÀÇÑÖÜ")],
  [3, ["e\u0301", "a\u0300", "o\u0308", "n\u0303", "c\u0327", "A\u030a", "u\u0308\u0301", "\u0301", "\u0308", "\u20d7"]],
  [3, chars("αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΩάέήίόύώ")],
  [3, chars("абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЁЖ")],
  [3, chars("日本語中文文本漢字東京大学人山水火")],
  [2, chars("ひらがなカタカナーッ")],
  [2, ["한국어", "문장", "입니다", "\u1100\u1161", "\u1112\u1161\u11ab"]],
  [2, chars("العربيةمرحبا")],
  [2, chars("हिन्दीनमस्ते")],
  [1, chars("שלוםעברית")],
  [1, chars("ไทยภาษา")],
  [2, chars("٠١٢٣٤٥٦٧٨٩०१२३")],
  [2, chars("²³¹½¼¾ⅫⅣ①⑵")],
  [2, chars("ﬁﬂﬀＡＢＣａｂｃ０１２！？㎏㎞™℃ℌſ")],
  [3, ["😀", "🎉", "👍", "👍🏽", "🚀", "❤️", "👨‍👩‍👧‍👦", "🇫🇷", "☃", "✓", "→", "€", "£", "¥", "©", "®", "°", "±", "×", "÷", "•", "…", "—", "–", "«", "»", "“", "”", "‘", "’"]],
  [1, ["<|endoftext|>", "<s>", "</s>", "<unk>", "▁", "Ġ", "Ċ"]],
];
const total = pools.reduce((s, [w]) => s + w, 0);

function pick(r) {
  let x = r() * total;
  for (const [w, items] of pools) {
    if (x < w) return items[Math.floor(r() * items.length)];
    x -= w;
  }
  return "a";
}

// randomStrings returns n strings of 1 to maxParts pool draws each.
export function randomStrings(seed, n, maxParts = 24) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const parts = 1 + Math.floor(r() * maxParts);
    let s = "";
    for (let j = 0; j < parts; j++) s += pick(r);
    out.push(s);
  }
  return out;
}
