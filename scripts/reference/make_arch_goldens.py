#!/usr/bin/python3
"""Tiny random-weight Hugging Face checkpoints of each decoder family, with
golden logits from the float64 reference (arch_reference.py).

For each family it writes engine/testdata/arch/NAME/: config.json,
model.safetensors (F32 or BF16), a small byte-level BPE tokenizer.json (the
default model's first merges, so the lab can open the checkpoint) and
golden.json: a random prompt, the logits of every prompt position, then 20
greedy steps (each step's token and the logits after feeding it), all from
the reference recomputing the whole sequence (no cache); the Go test runs
them through the engine's KV cache. Prompt plus steps run well past every
sliding window, so the windows slide and their rings wrap.

Also rope_freqs.json: RoPE inverse frequencies of a few rope_scaling
configurations (Llama 3.1 8B's real one among them) for the unit test.

Run with Debian's python3-numpy (go tool -modfile=tools.mod task archgoldens):
    /usr/bin/python3 scripts/reference/make_arch_goldens.py --out engine/testdata/arch
"""
import argparse, json, os, struct, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch_reference as ref  # noqa: E402

VOCAB = 320  # 256 bytes + 63 merges + <|endoftext|>
PROMPT = 9
STEPS = 20

base = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
            max_position_embeddings=64, vocab_size=VOCAB, bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)

MODELS = [
    # Llama 3.1/3.2: rope_scaling llama3, head_dim 16 so that high, medium and low frequencies all occur
    dict(name="llama3-rope-f32", dtype="F32",
         cfg=dict(base, model_type="llama", num_hidden_layers=2, head_dim=16, rope_theta=10000.0, rms_norm_eps=1e-5,
                  max_position_embeddings=128, tie_word_embeddings=True,
                  rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                    original_max_position_embeddings=64))),
    # Qwen2.5: biases on q, k, v; tied; BF16
    dict(name="qwen2-bias-bf16", dtype="BF16",
         cfg=dict(base, model_type="qwen2", num_hidden_layers=2, rope_theta=1000000.0, rms_norm_eps=1e-6,
                  tie_word_embeddings=True, use_sliding_window=False, sliding_window=4, max_window_layers=1)),
    # Qwen3: q/k norms, head_dim 16 with hidden 32 (q width 64)
    dict(name="qwen3-qknorm-f32", dtype="F32",
         cfg=dict(base, model_type="qwen3", num_hidden_layers=2, head_dim=16, rope_theta=1000000.0, rms_norm_eps=1e-6,
                  tie_word_embeddings=False)),
    # Mistral: sliding window 5 on every layer
    dict(name="mistral-window-f32", dtype="F32",
         cfg=dict(base, model_type="mistral", num_hidden_layers=2, rope_theta=10000.0, rms_norm_eps=1e-5,
                  sliding_window=5, tie_word_embeddings=False)),
    # Phi-3: fused qkv_proj and gate_up_proj; Phi-4-mini's partial rotary; a sliding window of 6
    dict(name="phi3-fused-f32", dtype="F32",
         cfg=dict(base, model_type="phi3", num_hidden_layers=2, num_key_value_heads=3, head_dim=16, hidden_size=48,
                  num_attention_heads=3, partial_rotary_factor=0.75, rope_theta=10000.0, rms_norm_eps=1e-5,
                  sliding_window=6, tie_word_embeddings=False)),
    # Gemma 3: local layers (window 4, base 10000) and a global one (base 1e6, linear ×2), q/k norms,
    # query_pre_attn_scalar 24, MQA, final soft-cap
    dict(name="gemma3-local-global-f32", dtype="F32",
         cfg=dict(base, model_type="gemma3_text", num_hidden_layers=3, num_key_value_heads=1, head_dim=16,
                  hidden_activation="gelu_pytorch_tanh", rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  rope_scaling=dict(rope_type="linear", factor=2.0), sliding_window=4, sliding_window_pattern=3,
                  query_pre_attn_scalar=24, final_logit_softcapping=6.0, rms_norm_eps=1e-6, tie_word_embeddings=True)),
    # Gemma 2: alternating local/global, attention and final soft-caps; BF16
    dict(name="gemma2-softcap-bf16", dtype="BF16",
         cfg=dict(base, model_type="gemma2", num_hidden_layers=2, head_dim=8, hidden_activation="gelu_pytorch_tanh",
                  rope_theta=10000.0, sliding_window=4, query_pre_attn_scalar=16, attn_logit_softcapping=2.0,
                  final_logit_softcapping=4.0, rms_norm_eps=1e-6, tie_word_embeddings=True)),
    # The Gemmas as llama.cpp's GGUF can hold them (scripts/gguf/hf_arch_to_gguf.py, engine/gguf_arch.go): no GGUF
    # key for query_pre_attn_scalar (llama.cpp scales by 1/sqrt(head_dim)), Gemma 3's pattern of five sliding
    # layers in six or its local RoPE base (10000)
    dict(name="gemma2-gguf-f32", dtype="F32",
         cfg=dict(base, model_type="gemma2", num_hidden_layers=2, head_dim=8, hidden_activation="gelu_pytorch_tanh",
                  rope_theta=10000.0, sliding_window=4, query_pre_attn_scalar=8, attn_logit_softcapping=2.0,
                  final_logit_softcapping=4.0, rms_norm_eps=1e-6, tie_word_embeddings=True)),
    dict(name="gemma3-gguf-f32", dtype="F32",
         cfg=dict(base, model_type="gemma3_text", num_hidden_layers=6, num_key_value_heads=1, head_dim=16,
                  hidden_activation="gelu_pytorch_tanh", rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  rope_scaling=dict(rope_type="linear", factor=2.0), sliding_window=4, sliding_window_pattern=6,
                  query_pre_attn_scalar=16, final_logit_softcapping=6.0, rms_norm_eps=1e-6, tie_word_embeddings=True)),
]


def init_weights(cfg, j, rng):
    """Random weights by the names each family's modeling file uses."""
    d, f, L, V, H, KV, hd = cfg.d, cfg.inter, cfg.L, cfg.V, cfg.H, cfg.KV, cfg.hd
    r = lambda *s, std=0.2: (rng.standard_normal(s) * std).astype(np.float32)
    # Gemma stores norm weights as w in (1 + w): centred on 0; the others on 1
    norm = (lambda n: r(n, std=0.1)) if cfg.gemma else (lambda n: 1 + r(n, std=0.1))
    w = {"model.embed_tokens.weight": r(V, d, std=0.5 if not cfg.gemma else 0.15), "model.norm.weight": norm(d)}
    for l in range(L):
        p = "model.layers.%d." % l
        w[p + "input_layernorm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(d)
        if cfg.type == "phi3":
            w[p + "self_attn.qkv_proj.weight"] = r((H + 2 * KV) * hd, d)
            w[p + "mlp.gate_up_proj.weight"] = r(2 * f, d)
        else:
            w[p + "self_attn.q_proj.weight"] = r(H * hd, d)
            w[p + "self_attn.k_proj.weight"] = r(KV * hd, d)
            w[p + "self_attn.v_proj.weight"] = r(KV * hd, d)
            w[p + "mlp.gate_proj.weight"] = r(f, d)
            w[p + "mlp.up_proj.weight"] = r(f, d)
        w[p + "self_attn.o_proj.weight"] = r(d, H * hd)
        w[p + "mlp.down_proj.weight"] = r(d, f)
        if cfg.type == "qwen2":  # Qwen2Attention: bias=True on q, k, v
            for n, m in (("q", H), ("k", KV), ("v", KV)):
                w[p + "self_attn.%s_proj.bias" % n] = r(m * hd, std=0.3)
        if cfg.type in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = norm(hd) if cfg.gemma else 1 + r(hd, std=0.3)
            w[p + "self_attn.k_norm.weight"] = norm(hd) if cfg.gemma else 1 + r(hd, std=0.3)
        if cfg.gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(d)
            w[p + "post_feedforward_layernorm.weight"] = norm(d)
    if not cfg.tied:
        w["lm_head.weight"] = r(V, d, std=0.3)
    return w


def bf16_round(a):
    """float32 → nearest bfloat16 (ties to even), as uint16 bits and as float32 values."""
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtype):
    """Writes tensors in dtype; returns them as the file holds them, as float64."""
    header, off, blobs, held = {}, 0, [], {}
    for name in sorted(tensors):
        t = tensors[name]
        if dtype == "BF16":
            bits, back = bf16_round(t)
            raw = bits.astype("<u2").tobytes()
        else:
            back = t.astype(np.float32)
            raw = back.astype("<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
        held[name] = back.astype(np.float64)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return held


def tiny_tokenizer(default_path):
    """The default model's byte-level BPE cut to VOCAB tokens: its 256 byte tokens, first merges, <|endoftext|>."""
    t = json.load(open(default_path))
    m = t["model"]
    keep = VOCAB - 1
    m["vocab"] = {k: v for k, v in m["vocab"].items() if v < keep}
    m["merges"] = m["merges"][:keep - 256]
    assert len(m["vocab"]) == keep, len(m["vocab"])
    m["vocab"]["<|endoftext|>"] = keep
    t["added_tokens"] = [dict(t["added_tokens"][0], id=keep)]
    return t


def greedy_run(cfg, W, prompt):
    """Prompt logits, then STEPS greedy steps, each by recomputing the whole sequence."""
    ids = list(prompt)
    logits = ref.forward(cfg, W, ids)
    prompt_logits = logits
    last = logits[-1]
    steps, margin = [], np.inf
    for _ in range(STEPS):
        top = np.argsort(last)[::-1]
        margin = min(margin, last[top[0]] - last[top[1]])
        tok = int(top[0])
        ids.append(tok)
        last = ref.forward(cfg, W, ids)[-1]
        steps.append({"token": tok, "logits": last})
    return prompt_logits, steps, margin


def fmt(a):
    return [float("%.9g" % v) for v in a]


def rope_cases():
    """RoPE inverse frequencies for the Go unit test, from the reference formulas."""
    cases = []
    for name, j in [
        ("llama-3.1-8b", dict(model_type="llama", hidden_size=4096, intermediate_size=1, num_hidden_layers=1, num_attention_heads=32,
                              vocab_size=1, max_position_embeddings=131072, rope_theta=500000.0,
                              rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192))),
        ("llama-3.2-1b", dict(model_type="llama", hidden_size=2048, intermediate_size=1, num_hidden_layers=1, num_attention_heads=32,
                              vocab_size=1, max_position_embeddings=131072, rope_theta=500000.0,
                              rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192))),
        ("linear-x4", dict(model_type="llama", hidden_size=512, intermediate_size=1, num_hidden_layers=1, num_attention_heads=8,
                           vocab_size=1, max_position_embeddings=8192, rope_theta=10000.0, rope_scaling=dict(type="linear", factor=4.0))),
        ("dynamic-x2", dict(model_type="llama", hidden_size=512, intermediate_size=1, num_hidden_layers=1, num_attention_heads=8,
                            vocab_size=1, max_position_embeddings=4096, rope_theta=10000.0, rope_scaling=dict(type="dynamic", factor=2.0))),
    ]:
        cases.append({"name": name, "config": j, "inv_freq": [float(repr(v)) for v in ref.inv_freq(ref.Cfg(j))]})
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20260311)
    ap.add_argument("--tokenizer", default=os.path.join(os.path.dirname(__file__), "../../models/default/tokenizer.json"))
    a = ap.parse_args()
    tok = tiny_tokenizer(a.tokenizer)
    os.makedirs(a.out, exist_ok=True)
    for i, spec in enumerate(MODELS):
        j = spec["cfg"]
        cfg = ref.Cfg(j)
        for attempt in range(50):  # a seed whose greedy choices are clear (top-2 gap ≥ 1e-3)
            rng = np.random.default_rng([a.seed, i, attempt])
            w = init_weights(cfg, j, rng)
            prompt = [int(x) for x in rng.integers(0, VOCAB - 1, PROMPT)]
            held = {k: (bf16_round(v)[1] if spec["dtype"] == "BF16" else v).astype(np.float64) for k, v in w.items()}
            pl, steps, margin = greedy_run(cfg, held, prompt)
            if margin >= 1e-3:
                break
        d = os.path.join(a.out, spec["name"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(dict(j, architectures=[{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
                                              "mistral": "MistralForCausalLM", "phi3": "Phi3ForCausalLM", "gemma2": "Gemma2ForCausalLM",
                                              "gemma3_text": "Gemma3ForCausalLM"}[j["model_type"]]]), f, indent=2)
        write_safetensors(os.path.join(d, "model.safetensors"), w, spec["dtype"])
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tok, f, ensure_ascii=False)
        with open(os.path.join(d, "golden.json"), "w") as f:
            json.dump({"model": spec["name"], "model_type": j["model_type"], "dtype": spec["dtype"],
                       "note": "float64 reference (scripts/reference/arch_reference.py); logits of every prompt position, then each greedy step's token and the logits after it",
                       "greedy_margin": float("%.4g" % margin), "prompt": prompt,
                       "prompt_logits": [fmt(r) for r in pl],
                       "steps": [{"token": s["token"], "logits": fmt(s["logits"])} for s in steps]}, f)
        print("wrote", d, "margin %.3g" % margin, "attempt", attempt)
    with open(os.path.join(a.out, "rope_freqs.json"), "w") as f:
        json.dump(rope_cases(), f, indent=1)


if __name__ == "__main__":
    main()
