#!/usr/bin/python3
"""A small byte-level BPE trainer and encoder (GPT-2 style), written from the
algorithm's description: pre-split text with GPT-2's regex, start from the 256
byte symbols, repeatedly merge the most frequent adjacent pair. Output is a
Hugging Face tokenizer.json (model BPE, ByteLevel pre-tokenizer and decoder),
which inferscope's Go tokenizer reads like any downloaded one.
"""
import heapq, json, collections
import regex

GPT2_PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
EOT = "<|endoftext|>"


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def pretokenize(text):
    return GPT2_PAT.findall(text)


def train(text_iter, vocab_size):
    """Returns (vocab: list of bytes, merges: list of (a_id, b_id))."""
    counts = collections.Counter()
    for text in text_iter:
        counts.update(pretokenize(text))
    words = [list(w.encode("utf-8")) for w in counts]
    freqs = [counts[w] for w in counts]
    vocab = [bytes([b]) for b in range(256)]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freqs[i]
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    n_merges = vocab_size - 256 - 1  # one id is kept for <|endoftext|>
    while len(merges) < n_merges and heap:
        negc, p = heapq.heappop(heap)
        if pair_count.get(p, 0) != -negc or -negc <= 0:
            continue
        new_id = len(vocab)
        vocab.append(vocab[p[0]] + vocab[p[1]])
        merges.append(p)
        changed = set()
        for i in list(where[p]):
            w, f = words[i], freqs[i]
            for a, b in zip(w, w[1:]):
                pair_count[(a, b)] -= f
                changed.add((a, b))
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == p[0] and w[j + 1] == p[1]:
                    out.append(new_id); j += 2
                else:
                    out.append(w[j]); j += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pair_count[(a, b)] += f
                where[(a, b)].add(i)
                changed.add((a, b))
        del where[p]
        pair_count.pop(p, None)
        for q in changed:
            c = pair_count.get(q, 0)
            if c > 0:
                heapq.heappush(heap, (-c, q))
            else:
                pair_count.pop(q, None)
    return vocab, merges


def piece(b):
    return "".join(B2U[x] for x in b)


def to_tokenizer_json(vocab, merges):
    v = {piece(b): i for i, b in enumerate(vocab)}
    eot_id = len(vocab)
    v[EOT] = eot_id
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": eot_id, "content": EOT, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": v, "merges": [piece(vocab[a]) + " " + piece(vocab[b]) for a, b in merges]},
    }


def from_tokenizer_json(tj):
    """Inverse of to_tokenizer_json: (vocab, merges) from a tokenizer.json dict."""
    u2b = {u: b for b, u in B2U.items()}
    by_id = {i: p for p, i in tj["model"]["vocab"].items() if p != EOT}
    vocab = [bytes(u2b[ch] for ch in by_id[i]) for i in range(len(by_id))]
    ids = {p: i for i, p in by_id.items()}
    merges = []
    for m in tj["model"]["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        merges.append((ids[a], ids[b]))
    return vocab, merges


class Encoder:
    """Encodes text with a trained vocab/merges (lowest merge rank first)."""

    def __init__(self, vocab, merges):
        self.rank = {p: r for r, p in enumerate(merges)}
        self.merged = {p: 256 + r for r, p in enumerate(merges)}
        self.eot = len(vocab)
        self.cache = {}

    def encode_word(self, w):
        ids = self.cache.get(w)
        if ids is not None:
            return ids
        ids = list(w.encode("utf-8"))
        while len(ids) > 1:
            best, bi = None, -1
            for k in range(len(ids) - 1):
                r = self.rank.get((ids[k], ids[k + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, k
            if best is None:
                break
            p = (ids[bi], ids[bi + 1])
            ids = ids[:bi] + [self.merged[p]] + ids[bi + 2:]
        self.cache[w] = ids
        return ids

    def encode(self, text):
        out = []
        for part_i, part in enumerate(text.split(EOT)):
            if part_i:
                out.append(self.eot)
            for w in pretokenize(part):
                out.extend(self.encode_word(w))
        return out
