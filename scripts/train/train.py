#!/usr/bin/python3
"""Train inferscope's default model: a small Llama-style LM (RMSNorm, rotate-half
RoPE, SwiGLU, grouped-query attention, tied head) with its own byte-level BPE.

Reproducible recipe (seeded; see README.md in this folder):
    /usr/bin/python3 scripts/train/train.py --corpus corpus --out models/default --minutes 80

Writes, in Hugging Face layout: config.json, model.safetensors, tokenizer.json,
generation_config.json; plus training.json (loss curve, timings, corpus stats)
and golden.json (token ids and float32 logits for a few prompts) which Go tests
check the engine against.
"""
import argparse, copy, shutil, json, math, os, struct, sys, time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, h, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.h, self.kv, self.hd = h, kv, d // h
        self.q_proj = nn.Linear(d, h * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv * self.hd, bias=False)
        self.o_proj = nn.Linear(h * self.hd, d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        if x.is_cuda:  # fused kernel on a GPU; the explicit form below is what golden.json is computed with
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o_proj(y.transpose(1, 2).reshape(B, T, self.h * self.hd))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        att = att.masked_fill(mask[:T, :T], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, self.h * self.hd)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, f = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = MLP(c)
        self.drop = nn.Dropout(c.get("dropout", 0.0))  # training only; the saved model has none

    def forward(self, x, cos, sin, mask):
        x = x + self.drop(self.self_attn(self.input_layernorm(x), cos, sin, mask))
        return x + self.drop(self.mlp(self.post_attention_layernorm(x)))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Block(c) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        hd = c["hidden_size"] // c["num_attention_heads"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
        t = torch.arange(c["max_position_embeddings"]).float()
        fr = torch.outer(t, inv)
        emb = torch.cat((fr, fr), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        T = c["max_position_embeddings"]
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1), persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)
        for blk in self.layers:  # scaled init for residual projections
            nn.init.normal_(blk.self_attn.o_proj.weight, std=0.02 / math.sqrt(2 * c["num_hidden_layers"]))
            nn.init.normal_(blk.mlp.down_proj.weight, std=0.02 / math.sqrt(2 * c["num_hidden_layers"]))

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed_tokens(idx)
        cos, sin = self.cos[:T], self.sin[:T]
        for blk in self.layers:
            x = blk(x, cos, sin, self.mask)
        return self.norm(x) @ self.embed_tokens.weight.t()  # tied head


def save_safetensors(path, tensors):
    header, off, blobs = {}, 0, []
    for name in sorted(tensors):
        a = tensors[name].detach().cpu().contiguous().float().numpy().astype("<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(t["shape"]).copy()
    return out


def state_for_hf(model):
    out = {}
    for k, v in model.state_dict().items():
        out["model." + k] = v
    return out


GOLDEN_PROMPTS = ["The President said", "Once upon a time", "In the morning the", "The capital of France is"]


def write_outputs(model, cfg, enc, out, info):
    model = copy.deepcopy(model).cpu().float()  # golden logits in plain CPU float32, as the engine computes
    model.eval()
    save_safetensors(os.path.join(out, "model.safetensors"), state_for_hf(model))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    golden = []
    with torch.no_grad():
        for p in GOLDEN_PROMPTS:
            ids = enc.encode(p)
            logits = model(torch.tensor([ids]))[0]
            golden.append({"prompt": p, "ids": ids, "last_logits": [float(x) for x in logits[-1]],
                           "argmax_per_position": [int(x) for x in logits.argmax(-1)]})
    with open(os.path.join(out, "golden.json"), "w") as f:
        json.dump({"note": "float32 logits of the torch model at save time", "prompts": golden}, f)
    with open(os.path.join(out, "training.json"), "w") as f:
        json.dump(info, f, indent=2)


@torch.no_grad()
def evaluate(model, val, T, batches, rng, dev="cpu"):
    model.eval()
    losses = []
    for _ in range(batches):
        ix = rng.integers(0, len(val) - T - 1, 16)
        x = torch.from_numpy(np.stack([val[i:i + T] for i in ix]).astype(np.int64)).to(dev)
        y = torch.from_numpy(np.stack([val[i + 1:i + T + 1] for i in ix]).astype(np.int64)).to(dev)
        losses.append(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
    model.train()
    return float(np.mean(losses))


@torch.no_grad()
def capital_accuracy(model, capitals, dev="cpu"):
    """Share of countries whose greedy continuation of "The capital of X is" spells the capital, and
    whether France's does. Greedy decoding spells the target exactly when, given the target's own
    prefix, every next-token argmax is the target token, so one teacher-forced forward pass per
    country decides it; rows are right-padded (a causal model's earlier positions never see padding)."""
    model.eval()
    rows = [p + t for p, t in capitals]
    n = max(len(r) for r in rows)
    x = torch.tensor([r + [0] * (n - len(r)) for r in rows], device=dev)
    oks = []
    for i in range(0, len(rows), 64):
        am = model(x[i:i + 64]).argmax(-1).tolist()
        for j, (p, t) in enumerate(capitals[i:i + 64]):
            oks.append(all(am[j][len(p) - 1 + k] == t[k] for k in range(len(t))))
    model.train()
    return sum(oks) / len(capitals), oks


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"CPU ({torch.get_num_threads()} torch threads)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True, help="dir with train.txt and val.txt from prepare_corpus.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=80)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--resume", help="continue from this finished run's directory (tokenizer, weights, curve)")
    ap.add_argument("--facts-frac", type=float, default=0.06,
                    help="share of training rows drawn from facts.txt (country facts) instead of the prose corpus")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda on a machine with a GPU")
    ap.add_argument("--dropout", type=float, default=0.0, help="residual dropout while training (none in the saved model)")
    ap.add_argument("--eval-seconds", type=float, default=300, help="seconds between validation evaluations")
    ap.add_argument("--keep-best", action="store_true",
                    help="save at each evaluation whose validation loss is the lowest so far (not every 10 minutes)")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        torch.set_float32_matmul_precision("high")  # TF32 while training; golden.json is computed on the CPU
    else:
        torch.set_num_threads(1)  # OPENBLAS_NUM_THREADS=2 does the parallel work
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    train_text = open(os.path.join(a.corpus, "train.txt"), encoding="utf-8").read()
    val_text = open(os.path.join(a.corpus, "val.txt"), encoding="utf-8").read()
    train_docs = train_text.split("\n" + bpe.EOT + "\n")
    facts_path = os.path.join(a.corpus, "facts.txt")
    facts_text = open(facts_path, encoding="utf-8").read() if a.facts_frac > 0 and os.path.exists(facts_path) else ""
    facts_docs = facts_text.split("\n" + bpe.EOT + "\n") if facts_text else []
    # The tokenizer sees the facts at the share the model will: facts_frac of the characters.
    want = a.facts_frac / (1 - a.facts_frac) * len(train_text) if facts_docs else 0
    tok_facts, n = [], 0
    for d in facts_docs:
        if n >= want:
            break
        tok_facts.append(d)
        n += len(d)
    prev = None
    if a.resume:
        # Continue a finished run: same tokenizer and weights, a fresh optimizer
        # and a new (shorter, lower) learning-rate schedule; the curve goes on.
        vocab, merges = bpe.from_tokenizer_json(json.load(open(os.path.join(a.resume, "tokenizer.json"), encoding="utf-8")))
        prev = json.load(open(os.path.join(a.resume, "training.json")))
        for k in ("vocab", "dim", "layers", "heads", "kv_heads", "hidden", "ctx"):
            setattr(a, k, prev["args"][k])  # the shape is the finished run's
    else:
        vocab, merges = bpe.train(train_docs + tok_facts, a.vocab)
    with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(bpe.to_tokenizer_json(vocab, merges), f, ensure_ascii=False)
    enc = bpe.Encoder(vocab, merges)
    train_ids = np.array(enc.encode(train_text), dtype=np.int16)
    val_ids = np.array(enc.encode(val_text), dtype=np.int16)
    facts_ids = np.array(enc.encode(facts_text), dtype=np.int16) if facts_text else None
    capitals, france = [], None
    cap_path = os.path.join(a.corpus, "capitals.json")
    if os.path.exists(cap_path):
        shutil.copy(cap_path, os.path.join(a.out, "capitals.json"))  # the engine's own check reads it there
        for c in json.load(open(cap_path, encoding="utf-8")):
            p = enc.encode(f"The capital of {c['country']} is")
            full = enc.encode(f"The capital of {c['country']} is {c['capital']}")
            if full[:len(p)] == p:
                if c["country"] == "France":
                    france = len(capitals)
                capitals.append((p, full[len(p):]))
    t_tok = time.time() - t0
    print(f"tokenizer: {len(vocab)+1} tokens, train {len(train_ids)} tokens, val {len(val_ids)} tokens, {t_tok:.0f}s", flush=True)
    eot = len(vocab)
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": a.dim, "intermediate_size": a.hidden, "num_hidden_layers": a.layers,
        "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads,
        "max_position_embeddings": a.ctx, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "vocab_size": a.vocab, "tie_word_embeddings": True, "hidden_act": "silu",
        "bos_token_id": eot, "eos_token_id": eot, "torch_dtype": "float32",
    }
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": eot, "eos_token_id": eot, "do_sample": True, "temperature": 0.8, "top_p": 0.9}, f, indent=2)
    model = Llama(dict(cfg, dropout=a.dropout))
    if prev:
        st = load_safetensors(os.path.join(a.resume, "model.safetensors"))
        model.load_state_dict({k[len("model."):]: torch.from_numpy(v) for k, v in st.items()})
    model.to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    n_emb = model.embed_tokens.weight.numel()
    print(f"params {n_params} (non-embedding {n_params - n_emb})", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(a.seed)
    erng_seed = a.seed + 1
    budget = a.minutes * 60
    start = time.time()
    curve, step, tokens, last_eval, last_save = [], 0, 0, 0.0, time.time()
    m0 = s0 = t0k = 0  # minutes, steps and tokens of the run this one continues
    if prev:
        curve = list(prev["curve"])
        m0, s0, t0k = prev["train_minutes"], prev["steps"], prev["tokens_seen"]
        for p in curve:
            p.setdefault("phase", 1)
        print(f"resuming after {m0} minutes, {t0k} tokens, val loss {prev['final_val_loss']}", flush=True)
    info = {}
    best = float("inf")
    T = a.ctx
    while True:
        el = time.time() - start
        frac = min(el / budget, 1.0)
        warm = 50 if prev else 200
        lr = a.lr * min(1.0, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        rows = []
        for _ in range(a.batch):
            src = facts_ids if facts_ids is not None and rng.random() < a.facts_frac else train_ids
            i = int(rng.integers(0, len(src) - T - 1))
            rows.append(src[i:i + T + 1])
        xy = torch.from_numpy(np.stack(rows).astype(np.int64)).to(dev, non_blocking=True)
        x, y = xy[:, :-1], xy[:, 1:]
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += a.batch * T
        done = el >= budget
        improved = False
        if el - last_eval >= a.eval_seconds or done or (step == 1 and not prev):
            vl = evaluate(model, val_ids, T, 40, np.random.default_rng(erng_seed), dev)
            curve.append({"minutes": round(m0 + el / 60, 2), "step": s0 + step, "tokens": t0k + tokens, "train_loss": round(loss.item(), 4), "val_loss": round(vl, 4)})
            if prev:
                curve[-1]["phase"] = 2
            if capitals:
                acc, oks = capital_accuracy(model, capitals, dev)
                curve[-1]["capital_accuracy"] = round(acc, 4)
                if france is not None:
                    curve[-1]["france"] = oks[france]
            print(json.dumps(curve[-1]), f"tok/s {tokens / max(el, 1e-9):.0f}", flush=True)
            last_eval = el
            # With --keep-best the kept weights are the lowest validation loss among evaluations
            # that also continue "The capital of France is" with " Paris" (the lesson's example).
            improved = vl < best and curve[-1].get("france", True) is not False
            if improved:
                best = vl
        if (improved or (done and not info)) if a.keep_best else (time.time() - last_save >= 600 or done):
            info = {
                "seed": a.seed, "args": prev["args"] if prev else vars(a), "params": n_params, "non_embedding_params": n_params - n_emb,
                "train_tokens_in_corpus": int(len(train_ids)), "val_tokens_in_corpus": int(len(val_ids)),
                "tokens_seen": t0k + tokens, "steps": s0 + step, "train_minutes": round(m0 + el / 60, 2),
                "tokenizer_seconds": prev["tokenizer_seconds"] if prev else round(t_tok, 1),
                "tokens_per_second": round((t0k + tokens) / max(m0 * 60 + el, 1e-9)),
                "final_val_loss": curve[-1]["val_loss"], "curve": list(curve), "device": device_name(dev),
                "dropout": a.dropout, "keep_best": a.keep_best, "schedule_minutes": a.minutes, "facts_frac": a.facts_frac,
                "facts_tokens_in_corpus": int(len(facts_ids)) if facts_ids is not None else 0, "torch": torch.__version__,
            }
            if prev:
                info["phases"] = [{"minutes": m0, "lr": prev["args"]["lr"], "warmup_steps": 200},
                                  {"minutes": round(el / 60, 2), "lr": a.lr, "warmup_steps": 50, "resumed_from_val_loss": prev["final_val_loss"]}]
            write_outputs(model, cfg, enc, a.out, info)
            last_save = time.time()
            print("saved", a.out, flush=True)
        if done:
            if a.keep_best and info:
                # The weights are the best evaluation's; the curve goes on to the end of the schedule.
                info["run_curve"] = curve
                info["run_minutes"] = round(m0 + el / 60, 2)
                info["run_tokens_seen"] = t0k + tokens
                with open(os.path.join(a.out, "training.json"), "w") as f:
                    json.dump(info, f, indent=2)
            break


if __name__ == "__main__":
    main()
