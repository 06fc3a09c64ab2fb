package engine

// gguf_arch.go: the llama.cpp architectures beyond GPT-2 as GGUF files
// store them — llama (Mistral included), qwen2, qwen3, phi3, gemma2,
// gemma3 — read as llama.cpp reads them (src/llama-model.cpp's
// hyper-parameters, gguf-py's tensor names) into the engine's Config and
// Weights.
//
// What llama.cpp's converter (convert_hf_to_gguf.py) does to the Hugging
// Face checkpoint, and the loader undoes or follows:
//   - llama: q and k rows permuted to adjacent RoPE pairs (see gguf_load.go);
//     Llama 3.1's rope_scaling llama3 as a rope_freqs tensor of per-pair
//     divisors; Mistral converts as llama, its sliding_window dropped (a
//     llama.attention.sliding_window key, which llama.cpp's llama graph
//     ignores, is honoured here: every layer slides, as MistralAttention).
//   - qwen2, qwen3, phi3, gemma2, gemma3: rows as stored, RoPE on the
//     halves of each head (llama.cpp's NEOX rope type, Hugging Face's
//     rotate_half).
//   - phi3: fused attn_qkv (q, k, v rows) and ffn_up (gate rows, then up:
//     ggml_swiglu's halves); rope.dimension_count the partial rotary width.
//     llama.cpp disables Phi-3's sliding window (llama_model_phi3, PR
//     13676); the loader keeps it, as the checkpoint defines it.
//   - gemma2, gemma3: every norm weight stored with its +1 already added
//     (Gemma's (1 + w) RMSNorm), so the norms multiply by w as stored. The
//     score scale is llama.cpp's: 1/√key_length, or 1/√(embedding/heads)
//     for the 27B models (46 layers for Gemma 2, 62 for Gemma 3): GGUF has
//     no query_pre_attn_scalar. Gemma 2 slides every other layer (window
//     4096 unless given), soft-caps 50 and 30 unless given; Gemma 3 five of
//     six when a sliding_window is given, its sliding layers with RoPE base
//     10000 and no scaling.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferscope/inferscope/engine/gguf"
)

// ggufArchOf maps general.architecture to the engine's families.
var ggufArchOf = map[string]Arch{"llama": ArchLlama, "gpt2": ArchGPT2, "qwen2": ArchQwen2, "qwen3": ArchQwen3,
	"phi3": ArchPhi3, "gemma2": ArchGemma2, "gemma3": ArchGemma3}

// ggufArchKeys are the {arch}.… keys the loader reads (or may ignore:
// they do not change the computation). Any other {arch}.… key is refused
// by name: it may change the model in a way the engine would not follow.
var ggufArchKeys = []string{"context_length", "embedding_length", "block_count", "feed_forward_length",
	"attention.head_count", "attention.head_count_kv", "attention.key_length", "attention.value_length",
	"attention.layer_norm_rms_epsilon", "attention.layer_norm_epsilon", "rope.dimension_count", "rope.freq_base",
	"vocab_size", "attention.sliding_window", "attn_logit_softcapping", "final_logit_softcapping",
	"rope.scaling.type", "rope.scaling.factor", "rope.freq_base_swa",
	// informational: the context the model was trained with before scaling
	// (phi3 writes it always), whether it was fine-tuned for the scaling
	"rope.scaling.original_context_length", "rope.scaling.finetuned",
	// zero counts of experts (checked below), a causal flag (checked below)
	"expert_count", "expert_used_count", "attention.causal"}

// ggufArchConfig fills the architecture-specific part of c from the
// metadata: head size, RoPE, norms, windows, soft-caps.
func ggufArchConfig(f *gguf.File, hp *gguf.HyperParams, arch string, c *Config) error {
	key := func(k string) string { return arch + "." + k }
	for _, kv := range f.KV {
		k, ok := strings.CutPrefix(kv.Key, arch+".")
		if !ok {
			continue
		}
		if !slices.Contains(ggufArchKeys, k) {
			return fmt.Errorf("%s (%s) is not supported", kv.Key, kv.Value)
		}
	}
	for _, k := range []string{"expert_count", "expert_used_count"} {
		if v, ok := f.Get(key(k)); ok && !isZero(v) {
			return fmt.Errorf("%s (%s) is not supported", key(k), v)
		}
	}
	if v, ok := f.Get(key("attention.causal")); ok {
		if b, isBool := v.Bool(); !isBool || !b {
			return fmt.Errorf("%s (%s) is not supported: the engine runs causal language models", key("attention.causal"), v)
		}
	}
	if hp.KeyLength != 0 {
		c.HeadDim = hp.KeyLength
	}
	if hp.ValueLength != 0 && hp.ValueLength != c.HeadDim {
		return fmt.Errorf("%s %d differs from the key length %d: not supported", key("attention.value_length"), hp.ValueLength, c.HeadDim)
	}
	if r := hp.RopeDimensionCount; r != 0 && r != c.HeadDim {
		if c.Arch != ArchPhi3 || r > c.HeadDim || r%2 != 0 {
			return fmt.Errorf("%s %d is not the head size %d (partial RoPE): not supported for %s", key("rope.dimension_count"), r, c.HeadDim, arch)
		}
		c.RotaryDim = r // Phi-4-mini's partial_rotary_factor
	}
	c.NormEps, c.RopeTheta = float32(hp.RMSEpsilon), hp.RopeFreqBase
	if c.NormEps == 0 {
		c.NormEps = 1e-5 // llama.cpp's default (llama_hparams.f_norm_rms_eps)
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000 // llama.cpp's default rope_freq_base_train
	}
	c.Rope = RopeHalf // LLAMA_ROPE_TYPE_NEOX
	if c.Arch == ArchLlama {
		c.Rope = RopeAdjacent // LLAMA_ROPE_TYPE_NORM on the permuted rows
	}
	switch s, _, err := ggufString(f, key("rope.scaling.type")); {
	case err != nil:
		return err
	case s == "" || s == "none":
	case s == "linear":
		factor, _, err := ggufFloat(f, key("rope.scaling.factor"))
		if err != nil {
			return err
		}
		if factor != 0 && factor != 1 { // llama.cpp: freq_scale = 1/factor (0: none)
			c.RopeScaling = RopeScaling{Type: "linear", Factor: factor}
		}
	default:
		return fmt.Errorf("%s %q is not supported (none, linear)", key("rope.scaling.type"), s)
	}
	if base, ok, err := ggufFloat(f, key("rope.freq_base_swa")); err != nil {
		return err
	} else if ok && c.Arch != ArchGemma3 {
		return fmt.Errorf("%s (%g) is not supported for %s", key("rope.freq_base_swa"), base, arch)
	}
	softcap := func(k string, def float64) (float64, error) {
		x, ok, err := ggufFloat(f, key(k))
		if !ok || err != nil {
			return def, err
		}
		if !(x >= 0) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%s is %g, must be a positive number or 0", key(k), x)
		}
		return x, nil
	}
	for _, k := range []string{"attn_logit_softcapping", "final_logit_softcapping"} {
		if _, ok := f.Get(key(k)); ok && c.Arch != ArchGemma2 && c.Arch != ArchGemma3 {
			return fmt.Errorf("%s is not supported for %s", key(k), arch)
		}
	}
	window := hp.SlidingWindow
	every := func(period int) string { // llama_hparams::set_swa_pattern: layer il slides unless il%period == period−1
		b := make([]byte, c.NLayers)
		for l := range b {
			b[l] = "sf"[btoi(l%period == period-1)]
		}
		return string(b)
	}
	var err error
	switch c.Arch {
	case ArchLlama:
		if window > 0 { // Mistral's sliding window on every layer
			c.Arch, c.LayerTypes = ArchMistral, strings.Repeat("s", c.NLayers)
		}
	case ArchPhi3:
		if window > 0 {
			c.LayerTypes = strings.Repeat("s", c.NLayers)
		}
	case ArchQwen2, ArchQwen3:
		c.QKNorm = c.Arch == ArchQwen3 // attn_q_norm, attn_k_norm
		if window > 0 {
			return fmt.Errorf("%s (%d) is not supported for %s (llama.cpp runs none)", key("attention.sliding_window"), window, arch)
		}
	case ArchGemma2, ArchGemma3:
		c.MLP = MLPGeGLU
		c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
		c.QueryScale = 1 / math.Sqrt(float64(c.HeadDim))
		if c.Arch == ArchGemma2 && c.NLayers == 46 || c.Arch == ArchGemma3 && c.NLayers == 62 { // the 27B models
			c.QueryScale = 1 / math.Sqrt(float64(c.Dim/c.NHeads))
		}
		if c.Arch == ArchGemma2 {
			if _, ok := f.Get(key("attention.sliding_window")); !ok {
				window = 4096 // "default value of gemma 2"
			}
			if c.AttnSoftcap, err = softcap("attn_logit_softcapping", 50); err != nil {
				return err
			}
			if c.FinalSoftcap, err = softcap("final_logit_softcapping", 30); err != nil {
				return err
			}
			if window > 0 {
				c.LayerTypes = every(2)
			}
		} else {
			c.QKNorm = true
			// llama.cpp's iswa Gemma 3 graph applies no final soft-cap; a file
			// that has one comes from a checkpoint that does (Gemma3ForCausalLM)
			if c.FinalSoftcap, err = softcap("final_logit_softcapping", 0); err != nil {
				return err
			}
			if window > 0 {
				c.LayerTypes = every(6)
				c.RopeLocalTheta = 10000 // rope_freq_base_train_swa
				if base, ok, _ := ggufFloat(f, key("rope.freq_base_swa")); ok {
					c.RopeLocalTheta = base
				}
			}
		}
	}
	if c.LayerTypes != "" {
		c.Window = window
		if !strings.Contains(c.LayerTypes, "s") {
			c.Window, c.LayerTypes = 0, ""
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ggufString(f *gguf.File, k string) (string, bool, error) {
	v, ok := f.Get(k)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.Str()
	if !isStr {
		return "", true, fmt.Errorf("%s is %s, not a string", k, v)
	}
	return s, true, nil
}

func ggufFloat(f *gguf.File, k string) (float64, bool, error) {
	v, ok := f.Get(k)
	if !ok {
		return 0, false, nil
	}
	x, isFloat := v.Float()
	if !isFloat || x != x {
		return 0, true, fmt.Errorf("%s is %s, not a number", k, v)
	}
	return x, true, nil
}

// decoder fetches the weights of llama.cpp's llama-like architectures:
// token_embd, blk.N.{attn_norm, attn_q/k/v (or attn_qkv), their optional
// biases, attn_q_norm/attn_k_norm, attn_output, post_attention_norm,
// ffn_norm, ffn_gate/ffn_up (or a fused ffn_up), ffn_down, post_ffw_norm},
// output_norm, output (absent: tied), rope_freqs.
func (g *ggufTensors) decoder(c *Config) Weights {
	d, hd, qd, kvd, V, h := c.Dim, c.HiddenDim, c.QDim(), c.KVDim(), c.VocabSize, c.HeadDim
	fused := c.Arch == ArchPhi3
	gemma := c.Arch == ArchGemma2 || c.Arch == ArchGemma3
	w := Weights{TokenEmbed: g.mat("token_embd.weight", V, d), Layers: make([]LayerWeights, c.NLayers)}
	optVec := func(name string, n int) []float32 {
		if _, ok := g.f.Tensor(name); !ok {
			return nil
		}
		return g.vec(name, n)
	}
	for l := range w.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		lw := &w.Layers[l]
		lw.AttnNorm = g.vec(p+"attn_norm.weight", d)
		if fused { // llm_build_phi3: Q, K, V are the fused output's first qd, next kvd, last kvd rows
			qkv := g.mat(p+"attn_qkv.weight", qd+2*kvd, d)
			if g.err != nil {
				return w
			}
			lw.Wq, lw.Wk, lw.Wv = rowsOf(qkv, 0, qd), rowsOf(qkv, qd, qd+kvd), rowsOf(qkv, qd+kvd, qd+2*kvd)
		} else {
			lw.Wq = g.mat(p+"attn_q.weight", qd, d)
			lw.Wk = g.mat(p+"attn_k.weight", kvd, d)
			lw.Wv = g.mat(p+"attn_v.weight", kvd, d)
		}
		if !fused && !gemma { // llama.cpp: optional on llama, qwen2, qwen3 (Qwen2 always has them)
			lw.Bq, lw.Bk, lw.Bv = optVec(p+"attn_q.bias", qd), optVec(p+"attn_k.bias", kvd), optVec(p+"attn_v.bias", kvd)
			if (lw.Bq == nil) != (lw.Bk == nil) || (lw.Bq == nil) != (lw.Bv == nil) {
				if g.err == nil {
					g.err = fmt.Errorf("layer %d has biases on some of q, k, v but not all: not supported", l)
				}
			}
			lw.Bo = optVec(p+"attn_output.bias", d)
		}
		if c.QKNorm {
			lw.QNorm = g.vec(p+"attn_q_norm.weight", h)
			lw.KNorm = g.vec(p+"attn_k_norm.weight", h)
		}
		lw.Wo = g.mat(p+"attn_output.weight", d, qd)
		if gemma {
			lw.PostAttnNorm = g.vec(p+"post_attention_norm.weight", d)
			lw.PostMLPNorm = g.vec(p+"post_ffw_norm.weight", d)
		}
		lw.MLPNorm = g.vec(p+"ffn_norm.weight", d)
		if fused { // ggml_swiglu on the fused output: silu(first half) ⊙ second half
			gu := g.mat(p+"ffn_up.weight", 2*hd, d)
			if g.err != nil {
				return w
			}
			lw.WGate, lw.WUp = rowsOf(gu, 0, hd), rowsOf(gu, hd, 2*hd)
		} else {
			lw.WGate = g.mat(p+"ffn_gate.weight", hd, d)
			lw.WUp = g.mat(p+"ffn_up.weight", hd, d)
		}
		lw.WDown = g.mat(p+"ffn_down.weight", d, hd)
	}
	w.FinalNorm = g.vec("output_norm.weight", d)
	w.Head = w.TokenEmbed
	if !c.TiedHead {
		w.Head = g.mat("output.weight", V, d)
	}
	if _, ok := g.f.Tensor("rope_freqs.weight"); ok && g.err == nil {
		// LlamaModel.generate_extra_tensors: Llama 3.1's rope_scaling llama3
		// as the divisor of each pair's frequency
		if c.Arch != ArchLlama && c.Arch != ArchMistral {
			g.err = fmt.Errorf("tensor rope_freqs.weight is not supported for %s", c.Arch)
			return w
		}
		if c.RopeScaling.Type != "" {
			g.err = fmt.Errorf("tensor rope_freqs.weight and rope.scaling.type %s together: not supported", c.RopeScaling.Type)
			return w
		}
		if f := g.vec("rope_freqs.weight", c.Rotary()/2); f != nil {
			c.RopeScaling = RopeFreqFactors(f)
		}
	}
	return w
}
