#!/usr/bin/python3
"""hf_arch_to_gguf.py: a Hugging Face directory of a decoder family beyond GPT-2 and plain Llama as a GGUF file,
written as llama.cpp's convert_hf_to_gguf.py writes it (its conversion/{llama,qwen,phi,gemma}.py classes and
TextModel.set_gguf_parameters: the same keys, tensor names, permutations and +1 on Gemma's norms).

usage: python3 scripts/gguf/hf_arch_to_gguf.py HF_DIR OUT.gguf [f32|f16|bf16] [--keep-sliding-window]

model_type       GGUF arch  what the converter does
llama, mistral   llama      q/k rows permuted (LlamaModel.permute); rope_scaling llama3 -> rope_freqs tensor
                            (LlamaModel.generate_extra_tensors), linear -> rope.scaling.type/factor; Mistral's
                            sliding_window is dropped (llama.cpp's llama graph has none) unless --keep-sliding-window
qwen2            qwen2      q/k/v biases; use_sliding_window is refused (llama.cpp's qwen2 has no window)
qwen3            qwen3      attn_q_norm/attn_k_norm
phi3             phi3       fused attn_qkv and ffn_up (gate rows then up) as stored; rope.dimension_count =
                            int(partial_rotary_factor * hidden) // heads; attention.sliding_window (0 if none);
                            longrope scaling is refused
gemma2           gemma2     norm weights + 1; attn/final soft-caps, sliding_window; no output tensor
gemma3_text      gemma3     norm weights + 1; final soft-cap when set; sliding_window; rope linear scaling

llama.cpp has no GGUF key for Gemma's query_pre_attn_scalar, the sliding pattern (Gemma 2: every other layer,
Gemma 3: five of six) or Gemma 3's local RoPE base (10000): a checkpoint whose values differ from what llama.cpp
assumes is refused rather than written as a different model. The tokenizer is the directory's byte-level BPE
(tokenizer.json) with tokenizer.ggml.pre by family (llama-bpe, qwen2, else gpt-2: the tiny checkpoints' tokenizer is GPT-2's kind), except Phi-3's: a synthetic
SentencePiece vocabulary (llama.cpp opens phi3 files only with one; its converter reads tokenizer.model).

Needs Python 3.10+, numpy (Debian: python3-numpy, run with /usr/bin/python3) and llama.cpp's gguf-py and
hf_to_gguf.py from ../shared/peers/llama.cpp (or $LLAMA_CPP_PEER).
"""
import json, math, os, sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEER = os.environ.get("LLAMA_CPP_PEER") or os.path.join(ROOT, "..", "shared", "peers", "llama.cpp")
sys.path.insert(0, PEER)
import hf_to_gguf as peer  # noqa: E402  (imports gguf from PEER/gguf-py)
import numpy as np  # noqa: E402

gguf = peer.gguf
ARCH = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "phi3": "phi3", "gemma2": "gemma2",
        "gemma3_text": "gemma3"}
PRE = {"llama": "llama-bpe", "mistral": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2"}


def die(msg):
    sys.exit(f"hf_arch_to_gguf.py: {msg}")


def permute(a, nh):  # LlamaModel.permute: HF's rotate-half q/k rows -> adjacent pairs
    return a.reshape(nh, 2, a.shape[0] // nh // 2, *a.shape[1:]).swapaxes(1, 2).reshape(a.shape)


def llama3_factors(cfg, rs, hd):
    """LlamaModel.generate_extra_tensors (float32 frequencies, as torch computes them there)."""
    base = cfg.get("rope_theta", 10000.0)
    freqs = 1.0 / (np.float32(base) ** (np.arange(0, hd, 2, dtype=np.float32) / np.float32(hd)))
    factor, low, high = rs.get("factor", 8.0), rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    # convert_hf_to_gguf.py reads original_max_position_embeddings from the top level of the config (transformers
    # v5 hoists it there); transformers v4 configs keep it in rope_scaling, where _compute_llama3_parameters reads it
    old = rs.get("original_max_position_embeddings", cfg.get("original_max_position_embeddings", 8192))
    lw, hw = old / low, old / high
    out = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < hw:
            out.append(1.0)
        elif wl > lw:
            out.append(factor)
        else:
            s = (old / wl - low) / (high - low)
            out.append(1 / ((1 - s) / factor + s))
    return np.array(out, dtype=np.float32)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    keep_window = "--keep-sliding-window" in sys.argv[1:]
    if len(args) not in (2, 3) or (len(args) == 3 and args[2] not in peer.OUTTYPES):
        die("usage: hf_arch_to_gguf.py HF_DIR OUT.gguf [f32|f16|bf16] [--keep-sliding-window]")
    src, out = args[0], args[1]
    outtype = args[2] if len(args) == 3 else "f32"
    qtype, ftype = peer.OUTTYPES[outtype]
    cfg = json.load(open(os.path.join(src, "config.json")))
    mt = cfg.get("model_type")
    if mt not in ARCH:
        die(f"model_type {mt!r} is not supported ({', '.join(ARCH)}; gpt2 and plain llama: hf_to_gguf.py)")
    arch = ARCH[mt]
    T = peer.read_safetensors(os.path.join(src, "model.safetensors"))
    d, H, V, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["num_hidden_layers"]
    KV = cfg.get("num_key_value_heads") or H
    hd = cfg.get("head_dim") or d // H
    gemma = arch in ("gemma2", "gemma3")
    rs = cfg.get("rope_scaling") or {}
    rtype = rs.get("rope_type", rs.get("type"))

    w = gguf.GGUFWriter(out, arch)
    # TextModel.set_gguf_parameters
    w.add_block_count(L)
    w.add_context_length(cfg.get("max_position_embeddings", 131072 if gemma else 4096))
    w.add_embedding_length(d)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-6 if gemma else 1e-5))
    theta = cfg.get("rope_theta", 1e6 if arch == "gemma3" else 10000.0)
    w.add_rope_freq_base(theta)
    if "head_dim" in cfg or gemma:
        w.add_key_length(hd)
        w.add_value_length(hd)
    extra = []
    if rtype in (None, "default"):
        pass
    elif rtype == "linear" and arch != "phi3":
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rs["factor"])
    elif rtype == "llama3" and arch == "llama":
        extra.append(("rope_freqs.weight", llama3_factors(cfg, rs, hd)))
    else:
        die(f"rope_scaling {rtype!r} is not supported for {mt} here")

    if arch == "llama":  # LlamaModel.set_gguf_parameters
        w.add_vocab_size(V)
        w.add_rope_dimension_count(hd)
        if mt == "mistral" and cfg.get("sliding_window") and keep_window:
            w.add_sliding_window(cfg["sliding_window"])
    elif arch == "qwen2":
        if cfg.get("use_sliding_window"):
            die("use_sliding_window: llama.cpp's qwen2 has no sliding window")
    elif arch == "phi3":  # Phi3MiniModel.set_gguf_parameters
        rot = cfg.get("partial_rotary_factor", 1.0)
        w.add_rope_dimension_count(int(rot * d) // H)
        w.add_rope_scaling_orig_ctx_len(cfg.get("original_max_position_embeddings", cfg["max_position_embeddings"]))
        w.add_sliding_window(cfg.get("sliding_window") or 0)
    elif gemma:
        q = cfg.get("query_pre_attn_scalar", 256)
        want = d // H if (arch == "gemma2" and L == 46 or arch == "gemma3" and L == 62) else hd
        if q != want:
            die(f"query_pre_attn_scalar {q}: llama.cpp scales the scores by 1/sqrt({want}) for this shape; refusing "
                "to write a different model")
        if arch == "gemma2":
            w.add_attn_logit_softcapping(cfg.get("attn_logit_softcapping", 50.0))
            w.add_final_logit_softcapping(cfg.get("final_logit_softcapping", 30.0))
            w.add_sliding_window(cfg.get("sliding_window", 4096))
            if cfg.get("layer_types"):
                die("layer_types: llama.cpp's gemma2 slides every other layer")
        else:
            assert cfg.get("attn_logit_softcapping") is None
            if cfg.get("final_logit_softcapping"):
                w.add_final_logit_softcapping(cfg["final_logit_softcapping"])
            if cfg.get("sliding_window_pattern", 6) != 6 or cfg.get("layer_types"):
                die("sliding_window_pattern/layer_types: llama.cpp's gemma3 slides five layers of six")
            if cfg.get("rope_local_base_freq", 10000.0) != 10000.0:
                die("rope_local_base_freq: llama.cpp's gemma3 uses 10000 on its sliding layers")
            if cfg.get("sliding_window_pattern") != 1:
                w.add_sliding_window(cfg.get("sliding_window", 4096))

    eos = peer.first_id(cfg.get("eos_token_id"), V - 1)
    if arch == "phi3":
        # llama.cpp opens Phi-3 files only with a SentencePiece vocabulary (Phi3MiniModel.set_vocab reads
        # tokenizer.model; with a byte-level BPE one llama.cpp's vocabulary load fails): a synthetic one of
        # V tokens (<unk>, <s>, </s>, the 256 byte tokens, ...) as hf_to_gguf.py writes for Llama
        toks, types = ["<unk>", "<s>", "</s>"], [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
        toks += [f"<0x{i:02X}>" for i in range(256)]
        types += [gguf.TokenType.BYTE] * 256
        chat = ["<|endoftext|>", "<|assistant|>", "<|end|>", "<|system|>", "<|user|>"]
        while len(toks) < V - len(chat):
            toks.append(f"\u2581w{len(toks)}")
            types.append(gguf.TokenType.NORMAL)
        toks += chat
        types += [gguf.TokenType.CONTROL] * len(chat)
        w.add_tokenizer_model("llama"); w.add_token_list(toks[:V])
        w.add_token_scores([-float(i) for i in range(V)]); w.add_token_types(types[:V])
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
    else:
        got = peer.hf_bpe(src)
        if not got or got[3]:
            die("want a byte-level BPE tokenizer.json in the directory")
        peer.add_gpt2_style_vocab(w, src, V, eos, PRE.get(mt, "gpt-2"))
        w.add_bos_token_id(peer.first_id(cfg.get("bos_token_id"), eos))
        w.add_eos_token_id(eos)

    sub = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
           "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.qkv_proj": "attn_qkv",
           "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm", "mlp.gate_proj": "ffn_gate",
           "mlp.up_proj": "ffn_up", "mlp.gate_up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    if gemma:  # gguf-py's tensor_mapping for Gemma 2/3
        sub.update({"post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
                    "post_feedforward_layernorm": "post_ffw_norm"})
    else:
        sub["post_attention_layernorm"] = "ffn_norm"
    tied = cfg.get("tie_word_embeddings", gemma)
    tensors = []
    for n, a in T.items():
        if n == "model.embed_tokens.weight":
            g = "token_embd.weight"
        elif n == "model.norm.weight":
            g = "output_norm.weight"
        elif n == "lm_head.weight":
            if tied or arch == "gemma2":
                continue
            g = "output.weight"
        elif n.startswith("model.layers."):
            _, _, l, rest = n.split(".", 3)
            part, kind = rest.rsplit(".", 1)
            if part not in sub:
                die(f"unexpected tensor {n!r}")
            g = f"blk.{l}.{sub[part]}.{kind}"
            if arch == "llama" and part == "self_attn.q_proj":
                a = permute(a, H)
            if arch == "llama" and part == "self_attn.k_proj":
                a = permute(a, KV)
        else:
            die(f"unexpected tensor {n!r}")
        if gemma and n.endswith("norm.weight"):
            a = a + np.float32(1)  # Gemma2Model/Gemma3Model.modify_tensors: (1 + w) folded in
        tensors.append((g, a))
    tensors += extra
    w.add_name(os.path.basename(os.path.normpath(src)))
    w.add_file_type(ftype)
    for g, a in tensors:
        a = np.ascontiguousarray(a, dtype=np.float32)
        if a.ndim == 1 or qtype == peer.QT.F32:
            data, t = a, peer.QT.F32
        elif qtype == peer.QT.F16:
            data, t = a.astype(np.float16), peer.QT.F16
        else:
            data, t = gguf.quants.quantize(a, peer.QT.BF16), peer.QT.BF16
        w.add_tensor(g, data, raw_dtype=t)
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
    print(f"wrote {out} ({mt} as {arch}, {len(tensors)} tensors, {outtype})")


if __name__ == "__main__":
    main()
