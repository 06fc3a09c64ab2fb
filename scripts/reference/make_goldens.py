#!/usr/bin/python3
"""Independent numeric reference for inferscope's engine.

Builds tiny random-weight GPT-2 and Llama models straight from the
architecture definitions (GPT-2: Radford et al. 2019 / HF GPT2Model; Llama:
Touvron et al. 2023 / HF LlamaModel and llama2.c model.py), in PyTorch,
float64 math on float32-rounded weights. Saves each model in the file layout
real checkpoints use (HF directory with config.json + safetensors, sharded or
not, F32/F16/BF16; or a llama2.c .bin) and writes golden.json with, per token
sequence, the residual stream after the embedding and after every block, and
the logits of every position.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/make_goldens.py --out engine/testdata/reference
Nothing here reads inferscope's Go code.
"""
import argparse, json, math, os, struct

import torch

torch.set_default_dtype(torch.float64)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def causal_attention(q, k, v):
    # q: [H, T, hd], k/v: [H, T, hd]
    T, hd = q.shape[1], q.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(hd)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    s = s.masked_fill(mask, float("-inf"))
    return s.softmax(-1) @ v


# ---------------- GPT-2 ----------------

def gpt2_init(cfg, g):
    d, L, V, P = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"], cfg["n_positions"]
    inner = cfg["n_inner"] or 4 * d
    r = lambda *s, std=0.2: (torch.randn(*s, generator=g) * std).float()
    w = {"transformer.wte.weight": r(V, d), "transformer.wpe.weight": r(P, d, std=0.1),
         "transformer.ln_f.weight": 1 + r(d, std=0.1), "transformer.ln_f.bias": r(d, std=0.1)}
    for l in range(L):
        p = f"transformer.h.{l}."
        w[p + "ln_1.weight"] = 1 + r(d, std=0.1); w[p + "ln_1.bias"] = r(d, std=0.1)
        w[p + "attn.c_attn.weight"] = r(d, 3 * d); w[p + "attn.c_attn.bias"] = r(3 * d, std=0.05)  # Conv1D [in, out]
        w[p + "attn.c_proj.weight"] = r(d, d); w[p + "attn.c_proj.bias"] = r(d, std=0.05)
        w[p + "ln_2.weight"] = 1 + r(d, std=0.1); w[p + "ln_2.bias"] = r(d, std=0.1)
        w[p + "mlp.c_fc.weight"] = r(d, inner); w[p + "mlp.c_fc.bias"] = r(inner, std=0.05)
        w[p + "mlp.c_proj.weight"] = r(inner, d); w[p + "mlp.c_proj.bias"] = r(d, std=0.05)
    return w


def gpt2_forward(cfg, w, ids):
    W = {k: v.double() for k, v in w.items()}
    d, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    hd = d // H
    T = len(ids)
    x = W["transformer.wte.weight"][ids] + W["transformer.wpe.weight"][:T]
    hidden = [x.clone()]
    for l in range(cfg["n_layer"]):
        p = f"transformer.h.{l}."
        h = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.view(T, H, hd).transpose(0, 1) for t in (q, k, v))
        a = causal_attention(q, k, v).transpose(0, 1).reshape(T, d)
        x = x + a @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        h = gelu_new(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + h @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        hidden.append(x.clone())
    x = layer_norm(x, W["transformer.ln_f.weight"], W["transformer.ln_f.bias"], eps)
    return hidden, x @ W["transformer.wte.weight"].t()


# ---------------- Llama ----------------

def llama_init(cfg, g):
    d, L, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = d // H
    f = cfg["intermediate_size"]
    r = lambda *s, std=0.2: (torch.randn(*s, generator=g) * std).float()
    w = {"model.embed_tokens.weight": r(V, d, std=0.5), "model.norm.weight": 1 + r(d, std=0.1)}
    for l in range(L):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = 1 + r(d, std=0.1)
        w[p + "self_attn.q_proj.weight"] = r(H * hd, d)
        w[p + "self_attn.k_proj.weight"] = r(KV * hd, d)
        w[p + "self_attn.v_proj.weight"] = r(KV * hd, d)
        w[p + "self_attn.o_proj.weight"] = r(d, H * hd)
        w[p + "post_attention_layernorm.weight"] = 1 + r(d, std=0.1)
        w[p + "mlp.gate_proj.weight"] = r(f, d)
        w[p + "mlp.up_proj.weight"] = r(f, d)
        w[p + "mlp.down_proj.weight"] = r(d, f)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = r(V, d, std=0.3)
    return w


def rope_rotate_half(x, pos, theta):
    # x: [H, T, hd]; HF Llama: pairs (j, j + hd/2)
    hd = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.outer(pos, inv)
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def rope_adjacent(x, pos, theta):
    # llama2.c / Meta: pairs (2j, 2j+1) as complex numbers
    hd = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.outer(pos, inv)
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], hd // 2, 2).contiguous())
    return torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)).reshape(x.shape)


def llama_forward(cfg, w, ids, rope):
    W = {k: v.double() for k, v in w.items()}
    d, H, KV, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["rms_norm_eps"]
    hd = d // H
    T = len(ids)
    pos = torch.arange(T, dtype=torch.float64)
    x = W["model.embed_tokens.weight"][ids]
    hidden = [x.clone()]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = (h @ W[p + "self_attn.q_proj.weight"].t()).view(T, H, hd).transpose(0, 1)
        k = (h @ W[p + "self_attn.k_proj.weight"].t()).view(T, KV, hd).transpose(0, 1)
        v = (h @ W[p + "self_attn.v_proj.weight"].t()).view(T, KV, hd).transpose(0, 1)
        q, k = rope(q, pos, cfg["rope_theta"]), rope(k, pos, cfg["rope_theta"])
        k = k.repeat_interleave(H // KV, dim=0)
        v = v.repeat_interleave(H // KV, dim=0)
        a = causal_attention(q, k, v).transpose(0, 1).reshape(T, H * hd)
        x = x + a @ W[p + "self_attn.o_proj.weight"].t()
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = h @ W[p + "mlp.gate_proj.weight"].t()
        x = x + (gate * torch.sigmoid(gate) * (h @ W[p + "mlp.up_proj.weight"].t())) @ W[p + "mlp.down_proj.weight"].t()
        hidden.append(x.clone())
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else W["lm_head.weight"]
    return hidden, x @ head.t()


# ---------------- file formats ----------------

def to_dtype_bytes(t, dtype):
    t = t.detach().contiguous()
    if dtype == "F32":
        return t.float().numpy().astype("<f4").tobytes(), t.float()
    if dtype == "F16":
        h = t.half()
        return h.numpy().astype("<f2").tobytes(), h.float()
    if dtype == "BF16":
        b = t.bfloat16()
        raw = b.view(torch.int16).numpy().astype("<i2").tobytes()
        return raw, b.float()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    """Writes tensors; returns them as the file holds them (rounded to dtype)."""
    header, off, blobs, held = {}, 0, [], {}
    for name in sorted(tensors):
        raw, back = to_dtype_bytes(tensors[name], dtype)
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
        held[name] = back
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return held


def save_hf(dirpath, cfg, w, dtype, shards):
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if shards == 1:
        return write_safetensors(os.path.join(dirpath, "model.safetensors"), w, dtype)
    names = sorted(w)
    held, wm = {}, {}
    for s in range(shards):
        part = names[s::shards]
        fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        held.update(write_safetensors(os.path.join(dirpath, fn), {n: w[n] for n in part}, dtype))
        for n in part:
            wm[n] = fn
    with open(os.path.join(dirpath, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": wm}, f, indent=2)
    return held


def save_llama2c(path, cfg, w):
    """llama2.c .bin: 7 int32 header then float32 arrays (negative vocab = untied head)."""
    d, L, V, S = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["max_position_embeddings"]
    hd = d // cfg["num_attention_heads"]
    vocab = V if cfg["tie_word_embeddings"] else -V
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", d, cfg["intermediate_size"], L, cfg["num_attention_heads"], cfg["num_key_value_heads"], vocab, S))
        put = lambda t: f.write(t.float().contiguous().numpy().astype("<f4").tobytes())
        put(w["model.embed_tokens.weight"])
        for key in ["input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                    "post_attention_layernorm", "mlp.gate_proj", "mlp.down_proj", "mlp.up_proj"]:
            for l in range(L):
                put(w[f"model.layers.{l}.{key}.weight"])
        put(w["model.norm.weight"])
        pos = torch.arange(S, dtype=torch.float64)
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        ang = torch.outer(pos, inv)
        put(ang.cos())
        put(ang.sin())
        if not cfg["tie_word_embeddings"]:
            put(w["lm_head.weight"])


MODELS = [
    dict(name="gpt2-small-f32", kind="gpt2", dtype="F32", shards=1,
         cfg=dict(model_type="gpt2", n_embd=32, n_layer=2, n_head=4, n_positions=64, n_inner=None, vocab_size=97, layer_norm_epsilon=1e-5, activation_function="gelu_new")),
    dict(name="gpt2-sharded-inner", kind="gpt2", dtype="F32", shards=2,
         cfg=dict(model_type="gpt2", n_embd=48, n_layer=3, n_head=3, n_positions=40, n_inner=100, vocab_size=120, layer_norm_epsilon=1e-5, activation_function="gelu_new")),
    dict(name="llama-tied-f32", kind="llama", dtype="F32", shards=1,
         cfg=dict(model_type="llama", hidden_size=32, intermediate_size=80, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                  max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0, vocab_size=101, tie_word_embeddings=True)),
    dict(name="llama-gqa-untied-bf16", kind="llama", dtype="BF16", shards=1,
         cfg=dict(model_type="llama", hidden_size=48, intermediate_size=96, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2,
                  max_position_embeddings=48, rms_norm_eps=1e-6, rope_theta=10000.0, vocab_size=130, tie_word_embeddings=False)),
    dict(name="llama-mqa-f16-theta", kind="llama", dtype="F16", shards=2,
         cfg=dict(model_type="llama", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                  max_position_embeddings=32, rms_norm_eps=1e-5, rope_theta=500000.0, vocab_size=90, tie_word_embeddings=False)),
    dict(name="llama2c-gqa-untied", kind="llama2c", dtype="F32", shards=1,
         cfg=dict(model_type="llama", hidden_size=32, intermediate_size=72, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=32, rms_norm_eps=1e-5, rope_theta=10000.0, vocab_size=77, tie_word_embeddings=False)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    a = ap.parse_args()
    for i, spec in enumerate(MODELS):
        g = torch.Generator().manual_seed(a.seed + i)
        cfg = spec["cfg"]
        d = os.path.join(a.out, spec["name"])
        os.makedirs(d, exist_ok=True)
        if spec["kind"] == "gpt2":
            w = gpt2_init(cfg, g)
            held = save_hf(d, cfg, w, spec["dtype"], spec["shards"])
            fwd = lambda ids: gpt2_forward(cfg, held, ids)
            ctx = cfg["n_positions"]
        elif spec["kind"] == "llama":
            w = llama_init(cfg, g)
            held = save_hf(d, cfg, w, spec["dtype"], spec["shards"])
            fwd = lambda ids: llama_forward(cfg, held, ids, rope_rotate_half)
            ctx = cfg["max_position_embeddings"]
        else:
            w = llama_init(cfg, g)
            save_llama2c(os.path.join(d, "model.bin"), cfg, w)
            fwd = lambda ids: llama_forward(cfg, w, ids, rope_adjacent)
            ctx = cfg["max_position_embeddings"]
        seqs = []
        for T in (1, 7, min(19, ctx)):
            ids = torch.randint(0, cfg["vocab_size"], (T,), generator=g).tolist()
            hidden, logits = fwd(ids)
            seqs.append({"ids": ids, "hidden": [h.tolist() for h in hidden], "logits": logits.tolist()})
        with open(os.path.join(d, "golden.json"), "w") as f:
            json.dump({"model": spec["name"], "format": spec["kind"], "dtype": spec["dtype"], "shards": spec["shards"],
                       "note": "hidden[0] = embedding output, hidden[l+1] = residual stream after block l; logits per position",
                       "sequences": seqs}, f)
        print("wrote", d)


if __name__ == "__main__":
    main()
