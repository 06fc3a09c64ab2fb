"""Independent float64 reference of the decoder families inferscope runs.

Each function follows the Hugging Face transformers modeling code of its
model_type (the function or class named in its comment), written from that
code's semantics in numpy, float64 throughout, on the weights as stored
(BF16/F16 widened exactly). Nothing here reads inferscope's Go code.

    llama        LlamaModel / LlamaDecoderLayer / LlamaAttention / LlamaMLP;
                 rope_scaling via modeling_rope_utils (_compute_llama3_parameters,
                 _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters)
    mistral      MistralModel: Llama's block, every layer in the sliding window
    qwen2        Qwen2Attention: bias on q_proj, k_proj, v_proj (not o_proj)
    qwen3        Qwen3Attention: q_norm, k_norm (RMSNorm over head_dim) before RoPE
    phi3         Phi3Attention: fused qkv_proj; Phi3MLP: fused gate_up_proj;
                 partial_rotary_factor; sliding_window
    gemma2       Gemma2Model: (1+w) RMSNorm before and after attention and MLP,
                 embedding × √hidden, GeGLU (gelu_pytorch_tanh), query_pre_attn_scalar,
                 attention and final logit soft-capping, every other layer sliding
    gemma3_text  Gemma3TextModel: Gemma 2's block with q_norm/k_norm, local layers
                 (rope_local_base_freq) and global layers (rope_theta, rope_scaling)

The sliding window follows masking_utils.sliding_window_overlay: a query at
q_idx sees kv_idx > q_idx - sliding_window (and kv_idx <= q_idx).
"""
import math

import numpy as np

# ---------------------------------------------------------------- config

FAMILY_DEFAULTS = {
    # (rms_norm_eps, rope_theta, tie_word_embeddings, head_dim or None): each config class's defaults
    "llama": (1e-6, 10000.0, False, None),         # LlamaConfig
    "mistral": (1e-6, 10000.0, False, None),       # MistralConfig
    "qwen2": (1e-6, 10000.0, False, None),         # Qwen2Config
    "qwen3": (1e-6, 10000.0, False, 128),          # Qwen3Config
    "phi3": (1e-5, 10000.0, False, None),          # Phi3Config
    "gemma2": (1e-6, 10000.0, True, 256),          # Gemma2Config
    "gemma3_text": (1e-6, 1_000_000.0, True, 256),  # Gemma3TextConfig
}


class Cfg:
    """The fields a family's config class derives from config.json."""

    def __init__(self, j):
        t = self.type = j["model_type"]
        eps, theta, tied, hd = FAMILY_DEFAULTS[t]
        self.d = j["hidden_size"]
        self.inter = j["intermediate_size"]
        self.L = j["num_hidden_layers"]
        self.H = j["num_attention_heads"]
        self.KV = j.get("num_key_value_heads") or self.H
        self.hd = j.get("head_dim") or hd or self.d // self.H
        self.V = j["vocab_size"]
        self.eps = j.get("rms_norm_eps", eps)
        self.theta = j.get("rope_theta", theta)
        self.tied = j.get("tie_word_embeddings", tied)
        self.gemma = t in ("gemma2", "gemma3_text")
        self.rope_scaling = j.get("rope_scaling")
        # rotary width: Phi3's partial_rotary_factor (_compute_default_rope_parameters: int(head_dim * factor))
        self.rot = int(self.hd * j.get("partial_rotary_factor", 1.0)) if t == "phi3" else self.hd
        self.max_pos = j["max_position_embeddings"]
        # sliding window per layer
        if t in ("mistral",):
            w = j.get("sliding_window", 4096)
            self.types = ["sliding_attention"] * self.L
        elif t == "phi3":
            w = j.get("sliding_window")
            self.types = ["sliding_attention"] * self.L
        elif t in ("qwen2", "qwen3"):
            w = j.get("sliding_window", 4096) if j.get("use_sliding_window", False) else None
            mwl = j.get("max_window_layers", 28)
            self.types = ["sliding_attention" if w is not None and i >= mwl else "full_attention" for i in range(self.L)]
        elif t == "gemma2":
            w = j.get("sliding_window", 4096)
            self.types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(self.L)]
        elif t == "gemma3_text":
            w = j.get("sliding_window", 4096)
            p = j.get("sliding_window_pattern", 6)
            self.types = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(self.L)]
        else:
            w = None
            self.types = ["full_attention"] * self.L
        if j.get("layer_types") is not None and t != "llama":
            self.types = list(j["layer_types"])
        self.window = w
        # gemma details
        self.qpas = j.get("query_pre_attn_scalar", 256)
        self.local_theta = j.get("rope_local_base_freq", 10000.0)
        if t == "gemma2":
            self.final_cap = j.get("final_logit_softcapping", 30.0)
            self.attn_cap = j.get("attn_logit_softcapping", 50.0)
        elif t == "gemma3_text":
            self.final_cap = j.get("final_logit_softcapping")
            self.attn_cap = None  # Gemma3Attention passes no softcap to the attention function
        else:
            self.final_cap = self.attn_cap = None


# ---------------------------------------------------------------- RoPE

def default_inv_freq(base, dim):
    """_compute_default_rope_parameters: 1 / base^(arange(0, dim, 2) / dim)."""
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def llama3_inv_freq(inv, rs):
    """_compute_llama3_parameters."""
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wl, high_wl = old / low, old / high
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)
    return np.where(medium, smoothed, out)


def inv_freq(cfg, local=False):
    """The layer's RoPE inverse frequencies: ROPE_INIT_FUNCTIONS[rope_type](config)."""
    if cfg.type == "gemma3_text" and local:
        return default_inv_freq(cfg.local_theta, cfg.rot)  # Gemma3TextModel.rotary_emb_local
    inv = default_inv_freq(cfg.theta, cfg.rot)
    rs = cfg.rope_scaling
    if not rs:
        return inv
    t = rs.get("rope_type", rs.get("type"))
    if t == "llama3":
        return llama3_inv_freq(inv, rs)
    if t == "linear":
        return inv / rs["factor"]  # _compute_linear_scaling_rope_parameters
    if t in ("dynamic", "default"):
        return inv  # _compute_dynamic_ntk_parameters at seq_len <= max_position_embeddings
    raise ValueError("rope type " + str(t))


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def apply_rope(x, pos, inv):
    """apply_rotary_pos_emb (Phi3's with the rotary part only: q_rot, q_pass); x [heads, T, hd]."""
    ang = np.outer(pos, inv)  # [T, rot/2]
    emb = np.concatenate([ang, ang], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    rot = emb.shape[-1]
    xr, xp = x[..., :rot], x[..., rot:]
    return np.concatenate([xr * cos + rotate_half(xr) * sin, xp], axis=-1)


# ---------------------------------------------------------------- blocks

def rms_norm(x, w, eps, plus_one=False):
    """LlamaRMSNorm (x·w) or Gemma3RMSNorm (x·(1+w))."""
    n = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return n * ((1.0 + w) if plus_one else w)


def gelu_tanh(x):
    """ACT2FN['gelu_pytorch_tanh']."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1 + np.exp(-x))


def attention(cfg, q, k, v, window, scaling, softcap):
    """eager_attention_forward with the causal (and sliding) mask; q [H,T,hd], k/v [KV,T,hd]."""
    H, T, _ = q.shape
    rep = H // k.shape[0]
    k, v = np.repeat(k, rep, axis=0), np.repeat(v, rep, axis=0)  # repeat_kv
    s = q @ k.transpose(0, 2, 1) * scaling
    if softcap:
        s = np.tanh(s / softcap) * softcap
    qi, ki = np.arange(T)[:, None], np.arange(T)[None, :]
    allowed = ki <= qi  # causal_mask_function
    if window:
        allowed &= ki > qi - window  # sliding_window_overlay
    s = np.where(allowed, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return p @ v  # [H, T, hd]


def forward(cfg, W, ids):
    """Logits [T, vocab] of every position of ids (the model's forward, no cache)."""
    T, d, H, KV, hd = len(ids), cfg.d, cfg.H, cfg.KV, cfg.hd
    pos = np.arange(T, dtype=np.float64)
    g = cfg.gemma
    x = W["model.embed_tokens.weight"][ids]
    if g:
        x = x * np.float64(np.float32(math.sqrt(d)))  # Gemma3TextScaledWordEmbedding: × hidden_size**0.5 (a float32 tensor)
    lin = lambda h, name: h @ W[name + ".weight"].T + (W[name + ".bias"] if name + ".bias" in W else 0)
    for l in range(cfg.L):
        p = "model.layers.%d." % l
        sliding = cfg.types[l] == "sliding_attention" and cfg.window
        h = rms_norm(x, W[p + "input_layernorm.weight"], cfg.eps, g)
        if cfg.type == "phi3":  # Phi3Attention: qkv_proj, split q | k | v
            qkv = lin(h, p + "self_attn.qkv_proj")
            q, k, v = qkv[:, :H * hd], qkv[:, H * hd:(H + KV) * hd], qkv[:, (H + KV) * hd:]
        else:
            q, k, v = lin(h, p + "self_attn.q_proj"), lin(h, p + "self_attn.k_proj"), lin(h, p + "self_attn.v_proj")
        q = q.reshape(T, H, hd).transpose(1, 0, 2)
        k = k.reshape(T, KV, hd).transpose(1, 0, 2)
        v = v.reshape(T, KV, hd).transpose(1, 0, 2)
        if p + "self_attn.q_norm.weight" in W:  # Qwen3Attention / Gemma3Attention: q_norm, k_norm before RoPE
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], cfg.eps, g)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], cfg.eps, g)
        inv = inv_freq(cfg, local=bool(sliding))
        q, k = apply_rope(q, pos, inv), apply_rope(k, pos, inv)
        scaling = cfg.qpas ** -0.5 if g else hd ** -0.5
        a = attention(cfg, q, k, v, cfg.window if sliding else None, scaling, cfg.attn_cap)
        a = lin(a.transpose(1, 0, 2).reshape(T, H * hd), p + "self_attn.o_proj")
        if g:  # Gemma3DecoderLayer: post_attention_layernorm on the attention output
            a = rms_norm(a, W[p + "post_attention_layernorm.weight"], cfg.eps, True)
            x = x + a
            h = rms_norm(x, W[p + "pre_feedforward_layernorm.weight"], cfg.eps, True)
        else:
            x = x + a
            h = rms_norm(x, W[p + "post_attention_layernorm.weight"], cfg.eps)
        if cfg.type == "phi3":  # Phi3MLP: gate, up = gate_up_proj(x).chunk(2); up * silu(gate)
            gu = lin(h, p + "mlp.gate_up_proj")
            gate, up = gu[:, :cfg.inter], gu[:, cfg.inter:]
        else:
            gate, up = lin(h, p + "mlp.gate_proj"), lin(h, p + "mlp.up_proj")
        m = (gelu_tanh(gate) if g else silu(gate)) * up
        m = lin(m, p + "mlp.down_proj")
        if g:
            m = rms_norm(m, W[p + "post_feedforward_layernorm.weight"], cfg.eps, True)
        x = x + m
    x = rms_norm(x, W["model.norm.weight"], cfg.eps, g)
    head = W["model.embed_tokens.weight"] if cfg.tied else W["lm_head.weight"]
    logits = x @ head.T
    if cfg.final_cap:  # Gemma3ForCausalLM: final_logit_softcapping
        logits = np.tanh(logits / cfg.final_cap) * cfg.final_cap
    return logits
