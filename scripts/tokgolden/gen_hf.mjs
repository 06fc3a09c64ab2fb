// Generates engine/testdata/tokenizer/hf_*.json: token ids from Hugging Face
// tokenizers (the Rust library transformers uses, through its npm binding)
// for the hand cases in cases.mjs plus seeded random strings (random.mjs),
// for
//
//   - GPT-2's tokenizer (../shared/models/tiny-gpt2/tokenizer.json), with
//     js-tiktoken's ids recorded where they differ (the second opinion);
//   - the default model's tokenizer (models/default/tokenizer.json);
//   - small variants (variants.mjs), written beside the goldens as
//     variants/NAME.tokenizer.json.
//
// Each golden records the sha256 of the tokenizer.json it came from, so the
// Go test can tell a stale golden from a tokenizer bug. Run from the
// repository root through scripts/tokgolden/regen.sh, which installs the
// pinned packages first:
//
//   bash scripts/tokgolden/regen.sh            # everything
//   bash scripts/tokgolden/regen.sh default    # only the default model's golden
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { createRequire } from "node:module";
import { getEncoding } from "js-tiktoken";
import { cases } from "./cases.mjs";
import { randomStrings } from "./random.mjs";
import { variants } from "./variants.mjs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");
const hfVersion = require("tokenizers/package.json").version;

const OUT = "engine/testdata/tokenizer";
const REGEN = "bash scripts/tokgolden/regen.sh";

// Hand cases beyond cases.mjs: the characters where regex flavours differ
// on \s, and the options the variants switch on.
const extra = [
  "a \u0085b", "a \ufeffb", "a\u0085\u0085b", "\u0085", "\ufeff", " \ufeff", "x\u2028y", "x \u2029 y", "\u180e", "a\u180e b",
  "a\u00a0b", "a \u00a0 b", "\u3000\u3000x", "tab\t\tx", "\r\n\r\nx", "x\u000b\fy", "x \u1680y", "x\u202f\u205fy",
  "1234567890", " 12 345", "x2y3z", "٣٤٥ ²³ ½", "Ⅻ and ①", "ﬁne ﬂour", "ＡＢＣ１２３", "㎏ ㎞ ™",
  "e\u0301t\u00e9", "A\u030angstro\u0308m", "\u1100\u1161\u11a8 한", "\u0301start", "café", "cafe\u0301",
  " ", "  ", "a", " a", "  a", "a ", "\n", "\na", "Hello", " Hello", "<s>Hello</s> world", "<unk>", "▁hello ▁ ▁▁x",
  "hello<|endoftext|>world", "<|endoftext|><|endoftext|>", " <|endoftext|> x",
  "ﬁx it", "prefix fix", "<|user|>hi", "＜|user|＞hi", "a [raw] b", "[raw][raw]", "off ﬀ ﬃ",
  // Llama 3's and Qwen 2's pattern: case-insensitive contractions, one non-letter before letters, digits by
  // three, punctuation with its newlines, whitespace through its last newline
  "'S 'LL 'Ve 'rE 'D 'm", "x  \n\n  y", "a\n \nb", " \t\n", "$$$\n\nabc", "!!\r\n\r\n", " !!\n x",
  "1234567 12345678", "(abc) [x]y", "\tword \u00a0word", "..., ...\n", "\n\n\tx", "x \r y\r\n\r\n z",
];

const sha256 = (b) => crypto.createHash("sha256").update(b).digest("hex");

async function encodeAll(tk, texts, addSpecialTokens = false) {
  const out = [];
  for (const text of texts) {
    const enc = await tk.encode(text, null, { addSpecialTokens });
    out.push(Array.from(enc.getIds()));
  }
  return out;
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// write emits one case per line so diffs stay readable.
function write(file, header, rows) {
  const lines = rows.map((r) => " " + JSON.stringify(r));
  const head = JSON.stringify(header, null, 1).replace(/\n}$/, "");
  fs.writeFileSync(file, `${head},\n "cases": [\n${lines.join(",\n")}\n ]\n}\n`);
}

async function golden({ name, tokenizerPath, json, seed, n, second, part }) {
  const tk = Tokenizer.fromString(json);
  const texts = [...cases, ...extra, ...randomStrings(seed, n)];
  const ids = await encodeAll(tk, texts);
  // with the post-processor's special tokens (a TemplateProcessing BOS), recorded where they differ
  const withSpecial = await encodeAll(tk, texts, true);
  let disagree = 0;
  const rows = texts.map((text, i) => {
    const row = { text, ids: ids[i] };
    if (!same(withSpecial[i], ids[i])) row.ids_add_special = withSpecial[i];
    if (second) {
      const other = second(text);
      if (!same(other, ids[i])) {
        row.js_tiktoken = other;
        disagree++;
      }
    }
    return row;
  });
  const file = path.join(OUT, `hf_${name}.json`);
  write(file, {
    generator: "scripts/tokgolden/gen_hf.mjs",
    regenerate: `${REGEN} ${part}`,
    reference: `Hugging Face tokenizers ${hfVersion} (Rust, npm binding), encode(text, addSpecialTokens: false)`,
    tokenizer: tokenizerPath,
    tokenizer_sha256: sha256(json),
    hand_cases: cases.length + extra.length,
    random: { generator: "scripts/tokgolden/random.mjs", seed, n },
    ...(second ? { second_opinion: "js-tiktoken 1.0.21 (gpt2); its ids are recorded as js_tiktoken where they differ", second_opinion_disagrees: disagree } : {}),
  }, rows);
  console.log(`${file}: ${rows.length} cases${second ? `, js-tiktoken differs on ${disagree}` : ""}`);
}

const only = process.argv[2] || "all";
if (!["all", "default", "gpt2", "variants"].includes(only)) {
  console.error("usage: node gen_hf.mjs [all|default|gpt2|variants]  (run from the repository root)");
  process.exit(2);
}
const gpt2Path = "../shared/models/tiny-gpt2/tokenizer.json";
const needGPT2 = only === "all" || only === "gpt2" || only === "variants";
if (needGPT2 && !fs.existsSync(gpt2Path)) {
  console.error(`${gpt2Path} not found: the GPT-2 golden and the variants need ../shared beside the repository`);
  process.exit(1);
}
if (only === "all" || only === "default") {
  const p = "models/default/tokenizer.json";
  await golden({ name: "default", tokenizerPath: p, json: fs.readFileSync(p, "utf8"), seed: 16, n: 3000, part: "default" });
}
if (only === "all" || only === "gpt2") {
  const tik = getEncoding("gpt2");
  await golden({
    name: "tiny-gpt2", tokenizerPath: gpt2Path, json: fs.readFileSync(gpt2Path, "utf8"), seed: 15, n: 3000, part: "gpt2",
    second: (text) => Array.from(tik.encode(text, "all")),
  });
}
if (only === "all" || only === "variants") {
  const dir = path.join(OUT, "variants");
  fs.mkdirSync(dir, { recursive: true });
  // each variant's seed comes from its name, so adding one leaves the others' strings alone
  const seedOf = (name) => Array.from(name).reduce((h, c) => (Math.imul(h, 31) + c.codePointAt(0)) >>> 0, 100);
  for (const [name, tj] of Object.entries(variants(JSON.parse(fs.readFileSync(gpt2Path, "utf8"))))) {
    const json = JSON.stringify(tj) + "\n";
    const p = path.join(dir, `${name}.tokenizer.json`);
    fs.writeFileSync(p, json);
    await golden({ name: `variant_${name}`, tokenizerPath: p, json, seed: seedOf(name), n: 400, part: "variants" });
  }
}
