package engine

// hf_arch.go: the decoder families of Hugging Face directories beyond
// GPT-2 — llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3_text — read
// from config.json with each transformers config class's defaults, and
// their weights by each modeling file's names.

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// decoderFamily is what a model_type's config class defaults to and how
// its weights are laid out.
type decoderFamily struct {
	arch     Arch
	eps      float64 // rms_norm_eps default
	theta    float64 // rope_theta default
	tied     bool    // tie_word_embeddings default
	headDim  int     // head_dim default (0: hidden_size / num_attention_heads)
	act      string  // the activation the family's MLP needs
	gemma    bool    // (1+w) RMSNorm, pre- and post-norms, √hidden embedding scale, GeGLU
	qkNorm   bool    // q_norm, k_norm (Qwen3Attention, Gemma3Attention)
	qkvBias  bool    // q, k, v biases always (Qwen2Attention)
	fused    bool    // qkv_proj and gate_up_proj (Phi3Attention, Phi3MLP)
	biasable bool    // attention_bias puts biases on q, k, v and o
}

var decoderFamilies = map[string]decoderFamily{
	// LlamaConfig
	"llama": {arch: ArchLlama, eps: 1e-6, theta: 10000, act: "silu", biasable: true},
	// MistralConfig (sliding_window defaults to 4096)
	"mistral": {arch: ArchMistral, eps: 1e-6, theta: 10000, act: "silu"},
	// Qwen2Config: Qwen2Attention has bias=True on q, k, v and none on o
	"qwen2": {arch: ArchQwen2, eps: 1e-6, theta: 10000, act: "silu", qkvBias: true},
	// Qwen3Config: head_dim 128; Qwen3Attention q_norm/k_norm
	"qwen3": {arch: ArchQwen3, eps: 1e-6, theta: 10000, headDim: 128, act: "silu", qkNorm: true, biasable: true},
	// Phi3Config: rms_norm_eps 1e-5, fused projections
	"phi3": {arch: ArchPhi3, eps: 1e-5, theta: 10000, act: "silu", fused: true},
	// Gemma2Config: head_dim 256, tied, soft-capping 50 / 30 by default
	"gemma2": {arch: ArchGemma2, eps: 1e-6, theta: 10000, tied: true, headDim: 256, act: "gelu_pytorch_tanh", gemma: true, biasable: true},
	// Gemma3TextConfig: head_dim 256, rope_theta 1e6 (global), tied
	"gemma3_text": {arch: ArchGemma3, eps: 1e-6, theta: 1e6, tied: true, headDim: 256, act: "gelu_pytorch_tanh", gemma: true, qkNorm: true, biasable: true},
}

// hfArchConfig is the part of config.json the decoder families add to hfConfig.
type hfArchConfig struct {
	SlidingWindow             json.RawMessage `json:"sliding_window"` // absent, null or a number
	UseSlidingWindow          bool            `json:"use_sliding_window"`
	MaxWindowLayers           *int            `json:"max_window_layers"`
	LayerTypes                []string        `json:"layer_types"`
	SlidingWindowPattern      int             `json:"sliding_window_pattern"`
	QueryPreAttnScalar        float64         `json:"query_pre_attn_scalar"`
	RopeLocalBaseFreq         float64         `json:"rope_local_base_freq"`
	RopeParameters            map[string]any  `json:"rope_parameters"`
	FinalLogitSoftcapping     json.RawMessage `json:"final_logit_softcapping"`
	AttnLogitSoftcapping      json.RawMessage `json:"attn_logit_softcapping"`
	HiddenActivation          string          `json:"hidden_activation"`
	PartialRotaryFactor       *float64        `json:"partial_rotary_factor"`
	UseBidirectionalAttention bool            `json:"use_bidirectional_attention"`
}

// optNumber reads a config value that may be absent (def), null (0: none)
// or a number.
func optNumber(raw json.RawMessage, def float64) (float64, error) {
	s := strings.TrimSpace(string(raw))
	switch s {
	case "":
		return def, nil
	case "null":
		return 0, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("%s is not a number", s)
	}
	return v, nil
}

// parseDecoderConfig reads a decoder family's config.json (h: the common
// fields, x: the family ones).
func parseDecoderConfig(h *hfConfig, x *hfArchConfig) (Config, hfLayout, error) {
	f := decoderFamilies[h.ModelType]
	lay := hfLayout{fam: f}
	c := Config{Arch: f.arch, Dim: h.HiddenSize, HiddenDim: h.IntermediateSize, NLayers: h.NumHiddenLayers,
		NHeads: h.NumAttentionHeads, NKVHeads: h.NumKeyValueHeads, HeadDim: h.HeadDim, VocabSize: h.VocabSize,
		SeqLen: h.MaxPositions, NormEps: float32(h.RMSNormEps), RopeTheta: h.RopeTheta, Rope: RopeHalf}
	if c.NKVHeads == 0 {
		c.NKVHeads = c.NHeads
	}
	if c.HeadDim == 0 {
		c.HeadDim = f.headDim
		if c.HeadDim == 0 && c.NHeads > 0 {
			c.HeadDim = c.Dim / c.NHeads
		}
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = f.theta
	}
	if c.NormEps == 0 {
		c.NormEps = float32(f.eps)
	}
	c.TiedHead = f.tied
	if h.TieWordEmbeddings != nil {
		c.TiedHead = *h.TieWordEmbeddings
	}
	act := h.HiddenAct
	if x.HiddenActivation != "" { // Gemma's name for it
		act = x.HiddenActivation
	}
	if act != "" && act != f.act {
		return c, lay, fmt.Errorf("%s %q is not supported for %s (want %s)", map[bool]string{true: "hidden_activation", false: "hidden_act"}[x.HiddenActivation != ""], act, h.ModelType, f.act)
	}
	if h.MLPBias {
		return c, lay, fmt.Errorf("mlp_bias is not supported")
	}
	if x.UseBidirectionalAttention {
		return c, lay, fmt.Errorf("use_bidirectional_attention (an embedding model) is not supported: the engine runs causal language models")
	}
	lay.qkvBias = f.qkvBias || f.biasable && h.AttentionBias
	lay.oBias = f.biasable && h.AttentionBias
	if f.gemma {
		c.MLP, c.NormPlusOne = MLPGeGLU, true
		// Gemma3TextModel: embed_scale = hidden_size**0.5 (a float32 tensor)
		c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
		q := x.QueryPreAttnScalar
		if q == 0 {
			q = 256 // Gemma2Config, Gemma3TextConfig
		}
		if !(q > 0) {
			return c, lay, fmt.Errorf("query_pre_attn_scalar %g must be positive", q)
		}
		c.QueryScale = math.Pow(q, -0.5) // Gemma3Attention.scaling = query_pre_attn_scalar**-0.5
	}
	c.QKNorm = f.qkNorm
	if err := parseWindow(&c, h, x); err != nil {
		return c, lay, err
	}
	if err := parseRope(&c, h, x); err != nil {
		return c, lay, err
	}
	var err error
	switch c.Arch {
	case ArchGemma2:
		// Gemma2Config: final_logit_softcapping 30.0, attn_logit_softcapping
		// 50.0; Gemma2Attention passes softcap to the attention
		if c.FinalSoftcap, err = optNumber(x.FinalLogitSoftcapping, 30); err == nil {
			c.AttnSoftcap, err = optNumber(x.AttnLogitSoftcapping, 50)
		}
	case ArchGemma3:
		// Gemma3ForCausalLM caps the logits when final_logit_softcapping is
		// set; Gemma3Attention passes no softcap to the attention, so
		// attn_logit_softcapping, though a config field, changes nothing
		c.FinalSoftcap, err = optNumber(x.FinalLogitSoftcapping, 0)
	}
	if err != nil {
		return c, lay, fmt.Errorf("soft-capping: %v", err)
	}
	if c.Arch == ArchPhi3 && x.PartialRotaryFactor != nil && *x.PartialRotaryFactor != 1 {
		// _compute_default_rope_parameters: dim = int(head_dim * partial_rotary_factor)
		p := *x.PartialRotaryFactor
		if !(p > 0 && p <= 1) {
			return c, lay, fmt.Errorf("partial_rotary_factor %g must be in (0, 1]", p)
		}
		c.RotaryDim = int(float64(c.HeadDim) * p)
	}
	return c, lay, nil
}

// parseWindow sets the sliding window and which layers use it, as each
// config class does: Mistral and Phi-3 slide every layer (MistralConfig's
// sliding_window defaults to 4096, Phi3Config's to none); Qwen2/Qwen3 only
// with use_sliding_window, from layer max_window_layers on; Gemma 2 every
// other layer and Gemma 3 five of six (sliding_window_pattern), unless
// config.json lists layer_types.
func parseWindow(c *Config, h *hfConfig, x *hfArchConfig) error {
	def := 0.0
	switch c.Arch {
	case ArchMistral, ArchQwen2, ArchQwen3, ArchGemma2, ArchGemma3:
		def = 4096
	}
	w, err := optNumber(x.SlidingWindow, def)
	if err != nil {
		return fmt.Errorf("sliding_window: %v", err)
	}
	if (c.Arch == ArchQwen2 || c.Arch == ArchQwen3) && !x.UseSlidingWindow {
		w = 0 // Qwen2Config: sliding_window if use_sliding_window else None
	}
	if c.Arch == ArchLlama || w == 0 || c.NLayers <= 0 || c.NLayers > 1<<20 {
		return nil // (a layer count out of range is Validate's to refuse)
	}
	if w < 1 || w > 1<<30 || w != math.Trunc(w) {
		return fmt.Errorf("sliding_window %g must be a positive whole number", w)
	}
	n := c.NLayers
	types := make([]byte, n)
	for l := range types {
		slide := true // Mistral, Phi-3
		switch c.Arch {
		case ArchQwen2, ArchQwen3:
			mw := 28 // Qwen2Config max_window_layers
			if x.MaxWindowLayers != nil {
				mw = *x.MaxWindowLayers
			}
			slide = l >= mw
		case ArchGemma2:
			slide = (l+1)%2 != 0
		case ArchGemma3:
			p := x.SlidingWindowPattern
			if p == 0 {
				p = 6
			}
			slide = (l+1)%p != 0
		}
		types[l] = map[bool]byte{true: 's', false: 'f'}[slide]
	}
	if x.LayerTypes != nil {
		if len(x.LayerTypes) != n {
			return fmt.Errorf("layer_types has %d entries for %d layers", len(x.LayerTypes), n)
		}
		for l, t := range x.LayerTypes {
			switch t {
			case "sliding_attention":
				types[l] = 's'
			case "full_attention":
				types[l] = 'f'
			default:
				return fmt.Errorf("layer_types[%d] %q is not supported (sliding_attention or full_attention)", l, t)
			}
		}
	}
	c.Window, c.LayerTypes = int(w), string(types)
	if !strings.Contains(c.LayerTypes, "s") {
		c.Window, c.LayerTypes = 0, ""
	}
	return nil
}

// parseRope reads rope_scaling (or transformers v5's rope_parameters) into
// c: the global layers' scaling, and Gemma 3's local base
// (rope_local_base_freq, or rope_parameters' sliding_attention entry).
func parseRope(c *Config, h *hfConfig, x *hfArchConfig) error {
	if c.Arch == ArchGemma3 {
		c.RopeLocalTheta = x.RopeLocalBaseFreq
		if c.RopeLocalTheta == 0 {
			c.RopeLocalTheta = 10000 // Gemma3TextConfig rope_local_base_freq
		}
	}
	scaling := h.RopeScaling
	if rp := x.RopeParameters; rp != nil {
		full, perType := rp["full_attention"].(map[string]any), false
		if full != nil {
			perType = true
			if loc, ok := rp["sliding_attention"].(map[string]any); ok {
				if t := ropeType(loc); t != "" && t != "default" {
					return fmt.Errorf("rope_parameters sliding_attention rope_type %q is not supported (default only)", t)
				}
				if v, ok := loc["rope_theta"].(float64); ok {
					c.RopeLocalTheta = v
				}
			}
			rp = full
		}
		if v, ok := rp["rope_theta"].(float64); ok {
			c.RopeTheta = v
		}
		if perType || scaling == nil {
			scaling = rp
		}
	}
	if scaling == nil {
		return nil
	}
	t := ropeType(scaling)
	num := func(k string) float64 { v, _ := scaling[k].(float64); return v }
	switch t {
	case "", "default":
		return nil
	case "linear", "dynamic", "llama3":
		c.RopeScaling = RopeScaling{Type: t, Factor: num("factor"), LowFreqFactor: num("low_freq_factor"),
			HighFreqFactor: num("high_freq_factor"), OriginalMax: int(num("original_max_position_embeddings"))}
		return nil
	}
	return fmt.Errorf("rope_scaling type %q is not supported (supported: llama3, linear, dynamic)", t)
}

// ropeType is a rope_scaling's rope_type (or its older name, type).
func ropeType(m map[string]any) string {
	if t, ok := m["rope_type"].(string); ok {
		return t
	}
	t, _ := m["type"].(string)
	return t
}

// hfLayout is how a decoder family's weights are named and shaped.
type hfLayout struct {
	fam            decoderFamily
	qkvBias, oBias bool
}

// loadHFDecoder loads the weights of a llama-like family: LlamaForCausalLM's
// names (model.embed_tokens, model.layers.N.{input_layernorm, self_attn.*,
// post_attention_layernorm, mlp.*}, model.norm, lm_head), with Phi-3's fused
// self_attn.qkv_proj and mlp.gate_up_proj, Qwen's and Gemma's q_norm and
// k_norm, and Gemma's four norms (post_attention_layernorm there is the
// attention output's norm; pre_feedforward_layernorm the MLP's input's).
func loadHFDecoder(s *tensorSource, c Config, lay hfLayout) (Weights, error) {
	d, hd, qd, kvd, V, h := c.Dim, c.HiddenDim, c.QDim(), c.KVDim(), c.VocabSize, c.HeadDim
	f := lay.fam
	var w Weights
	g := &getter{src: s}
	first := g.get
	w.TokenEmbed = g.mat("model.embed_tokens.weight", V, d)
	w.Layers = make([]LayerWeights, c.NLayers)
	for l := range w.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		lw := &w.Layers[l]
		lw.AttnNorm = first(p+"input_layernorm.weight", d)
		if f.fused { // Phi3Attention: qkv = qkv_proj(x); q, k, v its first qd, next kvd, last kvd outputs
			qkv := g.mat(p+"self_attn.qkv_proj.weight", qd+2*kvd, d)
			lw.Wq, lw.Wk, lw.Wv = rowView(qkv, 0, qd), rowView(qkv, qd, kvd), rowView(qkv, qd+kvd, kvd)
		} else {
			lw.Wq = g.mat(p+"self_attn.q_proj.weight", qd, d)
			lw.Wk = g.mat(p+"self_attn.k_proj.weight", kvd, d)
			lw.Wv = g.mat(p+"self_attn.v_proj.weight", kvd, d)
		}
		if lay.qkvBias {
			lw.Bq = first(p+"self_attn.q_proj.bias", qd)
			lw.Bk = first(p+"self_attn.k_proj.bias", kvd)
			lw.Bv = first(p+"self_attn.v_proj.bias", kvd)
		}
		lw.Wo = g.mat(p+"self_attn.o_proj.weight", d, qd)
		if lay.oBias {
			lw.Bo = first(p+"self_attn.o_proj.bias", d)
		}
		if f.qkNorm {
			lw.QNorm = first(p+"self_attn.q_norm.weight", h)
			lw.KNorm = first(p+"self_attn.k_norm.weight", h)
		}
		if f.gemma {
			lw.PostAttnNorm = first(p+"post_attention_layernorm.weight", d)
			lw.MLPNorm = first(p+"pre_feedforward_layernorm.weight", d)
			lw.PostMLPNorm = first(p+"post_feedforward_layernorm.weight", d)
		} else {
			lw.MLPNorm = first(p+"post_attention_layernorm.weight", d)
		}
		if f.fused { // Phi3MLP: gate, up = gate_up_proj(x).chunk(2)
			gu := g.mat(p+"mlp.gate_up_proj.weight", 2*hd, d)
			lw.WGate, lw.WUp = rowView(gu, 0, hd), rowView(gu, hd, hd)
		} else {
			lw.WGate = g.mat(p+"mlp.gate_proj.weight", hd, d)
			lw.WUp = g.mat(p+"mlp.up_proj.weight", hd, d)
		}
		lw.WDown = g.mat(p+"mlp.down_proj.weight", d, hd)
	}
	w.FinalNorm = first("model.norm.weight", d)
	if c.TiedHead {
		w.Head = w.TokenEmbed
	} else {
		w.Head = g.mat("lm_head.weight", V, d)
	}
	return w, g.err
}

// rowView is rows r0..r0+n-1 of an [out][in] matrix, sharing its storage
// (one projection of a fused one).
func rowView(m Mat, r0, n int) Mat {
	if m.Empty() {
		return Mat{}
	}
	v := m
	v.Rows = n
	a, b := r0*m.Ld, (r0+n)*m.Ld
	if m.DType == BF16 {
		v.BF16 = m.BF16[a:b:b]
	} else {
		v.F32 = m.F32[a:b:b]
	}
	return v
}
