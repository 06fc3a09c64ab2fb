#!/usr/bin/python3
"""Render country facts from the npm package countries-list as varied English paragraphs.

Source: npm countries-list 3.4.1 (MIT, Annexare Studio): for every country its name,
capital, continent, languages and currencies. Each paragraph talks about one country in
a random order of phrasings ("The capital of France is Paris.", "Paris is the capital of
France.", "France is a country in Europe.", "People in France speak French.", ...).
Territories without a capital in the package get no capital sentence.

Used by prepare_corpus.py (facts.txt, mixed into training batches by train.py) and by
the capital check (capitals.json: every country with a capital).
"""
import json, os, random

CAPITAL = [
    "The capital of {n} is {c}.",
    "The capital of {n} is {c}.",
    "The capital of {n} is {c}.",
    "{c} is the capital of {n}.",
    "The capital city of {n} is {c}.",
    "{n} has its capital at {c}.",
    "What is the capital of {n}? The capital of {n} is {c}.",
    "{c} is the capital and a large city of {n}.",
    "The government of {n} sits in {c}, the capital.",
]
CONTINENT = [
    "{n} is a country in {k}.",
    "{n} is in {k}.",
    "{n} lies in {k}.",
    "In {k} there is a country called {n}.",
]
LANG = [
    "People in {n} speak {l}.",
    "The language of {n} is {l}.",
    "In {n} people speak {l}.",
]
MONEY = [
    "The currency of {n} is the {m}.",
    "In {n} people pay with the {m}.",
]
CAPITAL_CONT = [
    "{c} is a city in {k}.",
    "{c}, in {n}, is a city in {k}.",
]


def join_list(xs):
    if len(xs) == 1:
        return xs[0]
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def load(pkg):
    """Countries from an unpacked countries-list package dir: list of dicts."""
    countries = json.load(open(os.path.join(pkg, "countries.min.json"), encoding="utf-8"))
    continents = json.load(open(os.path.join(pkg, "continents.min.json"), encoding="utf-8"))
    langs = json.load(open(os.path.join(pkg, "languages.min.json"), encoding="utf-8"))
    curr = json.load(open(os.path.join(pkg, "currencies.min.json"), encoding="utf-8"))
    out = []
    for code, v in sorted(countries.items()):
        out.append({
            "code": code,
            "name": v["name"],
            "capital": v.get("capital", ""),
            "continent": continents.get(v["continent"], ""),
            "languages": [langs[l]["name"] for l in v.get("languages", []) if l in langs],
            "currencies": [curr[m]["name"] for m in v.get("currency", []) if m in curr],
        })
    return out


def paragraph(c, rng):
    n, cap, k = c["name"], c["capital"], c["continent"]
    s = []
    if cap:
        s.append(rng.choice(CAPITAL).format(n=n, c=cap))
        if rng.random() < 0.5:
            s.append(rng.choice(CAPITAL).format(n=n, c=cap))
        if k and rng.random() < 0.3:
            tmpl = CAPITAL_CONT[0] if cap == n else rng.choice(CAPITAL_CONT)
            s.append(tmpl.format(n=n, c=cap, k=k))
    if k:
        s.append(rng.choice(CONTINENT).format(n=n, k=k))
    if c["languages"] and rng.random() < 0.7:
        s.append(rng.choice(LANG).format(n=n, l=join_list(c["languages"])))
    if c["currencies"] and rng.random() < 0.5:
        s.append(rng.choice(MONEY).format(n=n, m=c["currencies"][0]))
    first = s[0]
    rest = s[1:]
    rng.shuffle(rest)
    return " ".join([first] + rest)


def documents(countries, copies, seed):
    """copies paragraphs per country, grouped into documents of 4-8 paragraphs in random order."""
    rng = random.Random(seed)
    paras = [paragraph(c, rng) for _ in range(copies) for c in countries]
    rng.shuffle(paras)
    docs, i = [], 0
    while i < len(paras):
        k = rng.randint(4, 8)
        docs.append("\n".join(paras[i:i + k]))
        i += k
    return docs


if __name__ == "__main__":
    import sys
    cs = load(sys.argv[1])
    for d in documents(cs, 1, 1)[:3]:
        print(d, "\n---")
    print(len(cs), "countries,", sum(1 for c in cs if c["capital"]), "with a capital")
