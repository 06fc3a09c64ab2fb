// Small tokenizer.json variants that exercise the loader's options against
// Hugging Face tokenizers: normalizers (NFC, NFD, NFKC, NFKD), ByteLevel
// add_prefix_space and use_regex, Digits before and after ByteLevel, Split,
// ignore_merges, and the SentencePiece family (Metaspace with every
// prepend_scheme, split on and off, the legacy Prepend+Replace normalizer,
// byte fallback). Every variant is built from the first 1000 merges of
// GPT-2's tokenizer, so the files are small and do not change when the
// default model's tokenizer does.

const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
// Llama 3's pattern (Meta-Llama-3's tokenizer.json) and Qwen 2's (one digit a piece)
const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// GPT-2's byte ↔ printable-character map.
function byteLevelMaps() {
  const b2u = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    b2u[b] = String.fromCodePoint(printable ? b : 256 + n++);
  }
  const u2b = new Map(b2u.map((c, b) => [c, b]));
  return { b2u, u2b };
}

const component = (type, fields = {}) => ({ type, ...fields });

// byteLevelBase: GPT-2's byte alphabet, its first nMerges merges and
// <|endoftext|>, with compact ids.
function byteLevelBase(gpt2, nMerges) {
  const { b2u } = byteLevelMaps();
  const vocab = {};
  let next = 0;
  for (const c of b2u) vocab[c] = next++;
  const merges = [];
  for (const m of gpt2.model.merges.slice(0, nMerges)) {
    const [a, b] = Array.isArray(m) ? m : m.split(" ");
    merges.push([a, b]);
    if (!(a + b in vocab)) vocab[a + b] = next++;
  }
  const eot = next++;
  return {
    vocab, merges,
    added: [{ id: eot, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  };
}

// metaspaceBase: the same merges as text (spaces as ▁), kept where both
// sides are whole UTF-8 characters, plus <unk> <s> </s>, the 256
// <0xNN> byte-fallback pieces and a few non-ASCII characters.
function metaspaceBase(gpt2, nMerges) {
  const { u2b } = byteLevelMaps();
  const dec = new TextDecoder("utf-8", { fatal: true });
  const text = (piece) => {
    try {
      return dec.decode(Uint8Array.from(Array.from(piece), (c) => u2b.get(c))).replaceAll(" ", "▁");
    } catch {
      return null;
    }
  };
  const vocab = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  let next = 3;
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = next++;
  for (let b = 0x21; b < 0x7f; b++) vocab[String.fromCharCode(b)] = next++;
  for (const c of Array.from("▁éèàçñöüßαβγδабвг日本語中文한국😀")) if (!(c in vocab)) vocab[c] = next++;
  const merges = [];
  for (const m of gpt2.model.merges.slice(0, nMerges)) {
    const [a, b] = (Array.isArray(m) ? m : m.split(" ")).map(text);
    if (a === null || b === null || !(a in vocab) || !(b in vocab)) continue;
    merges.push([a, b]);
    if (!(a + b in vocab)) vocab[a + b] = next++;
  }
  const added = ["<unk>", "<s>", "</s>"].map((content, id) => (
    { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  return { vocab, merges, added };
}

// withAdded appends added tokens (given without ids) after base's ids.
function withAdded(base, extra) {
  let next = Math.max(...Object.values(base.vocab), ...base.added.map((a) => a.id)) + 1;
  const added = extra.map((a) => ({ id: next++, single_word: false, lstrip: false, rstrip: false, ...a }));
  return { ...base, added: [...base.added, ...added] };
}

function tokenizerJSON(base, { normalizer = null, pre_tokenizer = null, decoder = null, post_processor = null, model = {} }) {
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: base.added, normalizer, pre_tokenizer, post_processor, decoder,
    model: {
      type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: base.vocab, merges: base.merges, ...model,
    },
  };
}

const byteLevel = (add_prefix_space = false, use_regex = true) => component("ByteLevel", { add_prefix_space, trim_offsets: true, use_regex });
const metaspace = (prepend_scheme, split) => component("Metaspace", { replacement: "▁", prepend_scheme, split });
const msDecoder = component("Metaspace", { replacement: "▁", prepend_scheme: "always", split: true });
const msModel = { byte_fallback: true, unk_token: "<unk>", fuse_unk: true };

// variants returns name → tokenizer.json object.
export function variants(gpt2) {
  const bl = byteLevelBase(gpt2, 1000);
  const ms = metaspaceBase(gpt2, 1000);
  return {
    "bl-nfc-prefix": tokenizerJSON(bl, {
      normalizer: component("NFC"), pre_tokenizer: byteLevel(true), decoder: byteLevel(true),
      post_processor: component("ByteLevel", { add_prefix_space: true, trim_offsets: false, use_regex: true }),
    }),
    // added tokens matched after normalization ("ﬁx" in the text is "fix" after NFKC) and before it
    "bl-nfkc-digits": tokenizerJSON(withAdded(bl, [
      { content: "fix", special: false, normalized: true },
      { content: "<|user|>", special: true, normalized: true },
      { content: "[raw]", special: false, normalized: false },
      { content: "ﬀ", special: false, normalized: true }, // matched as "ff", its NFKC spelling
    ]), {
      normalizer: component("NFKC"),
      pre_tokenizer: component("Sequence", { pretokenizers: [component("Digits", { individual_digits: true }), byteLevel()] }),
      decoder: byteLevel(),
    }),
    "bl-nfd-split": tokenizerJSON(bl, {
      normalizer: component("NFD"),
      pre_tokenizer: component("Sequence", { pretokenizers: [
        component("Split", { pattern: { Regex: GPT2_PATTERN }, behavior: "Isolated", invert: false }), byteLevel(false, false)] }),
      decoder: byteLevel(),
    }),
    "bl-split-prefix-each": tokenizerJSON(bl, {
      pre_tokenizer: component("Sequence", { pretokenizers: [
        component("Split", { pattern: { Regex: GPT2_PATTERN }, behavior: "Isolated", invert: false }), byteLevel(true, false)] }),
      decoder: byteLevel(true),
    }),
    "bl-nfkd-prefix-digits-after": tokenizerJSON(bl, {
      normalizer: component("Sequence", { normalizers: [component("NFKD")] }),
      pre_tokenizer: component("Sequence", { pretokenizers: [byteLevel(true), component("Digits", { individual_digits: false })] }),
      decoder: byteLevel(),
    }),
    // Llama 3 / Qwen 2: their Split, then ByteLevel without its own split (as their tokenizer.json files)
    "bl-llama3-split": tokenizerJSON(bl, {
      pre_tokenizer: component("Sequence", { pretokenizers: [
        component("Split", { pattern: { Regex: LLAMA3_PATTERN }, behavior: "Isolated", invert: false }), byteLevel(false, false)] }),
      decoder: byteLevel(),
    }),
    "bl-qwen2-split": tokenizerJSON(bl, {
      pre_tokenizer: component("Sequence", { pretokenizers: [
        component("Split", { pattern: { Regex: QWEN2_PATTERN }, behavior: "Isolated", invert: false }), byteLevel(false, false)] }),
      decoder: byteLevel(),
    }),
    "bl-noregex-ignore-merges": tokenizerJSON(bl, {
      pre_tokenizer: byteLevel(false, false), decoder: byteLevel(), model: { ignore_merges: true },
    }),
    "ms-first-split-nfkc": tokenizerJSON(ms, {
      normalizer: component("NFKC"), pre_tokenizer: metaspace("first", true), decoder: msDecoder, model: msModel,
    }),
    "ms-always-nosplit": tokenizerJSON(ms, {
      pre_tokenizer: metaspace("always", false), decoder: msDecoder, model: msModel,
    }),
    "ms-never-split": tokenizerJSON(ms, {
      pre_tokenizer: metaspace("never", true), decoder: msDecoder, model: msModel,
    }),
    "ms-legacy": tokenizerJSON(ms, {
      normalizer: component("Sequence", { normalizers: [
        component("Prepend", { prepend: "▁" }), component("Replace", { pattern: { String: " " }, content: "▁" })] }),
      decoder: component("Sequence", { decoders: [
        component("Replace", { pattern: { String: "▁" }, content: " " }), component("ByteFallback"), component("Fuse"),
        component("Strip", { content: " ", start: 1, stop: 0 })] }),
      post_processor: component("TemplateProcessing", {
        single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<s>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } },
      }),
      model: msModel,
    }),
  };
}
