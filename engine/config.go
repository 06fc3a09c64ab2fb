// Package engine is inferscope's pure-Go Transformer: it loads real
// checkpoints (llama2.c .bin, Hugging Face safetensors directories) and runs
// the forward pass with a KV cache, reporting the real intermediate values
// through optional hooks. It knows nothing of HTTP. Tokenizers live in
// engine/tokenizer; the step-through run the lab drives (stages, sampling,
// events) in engine/session.
//
// Layout follows llama2.c's run.c: a Config, read-only Weights shared by all
// sessions, and per-run State (scratch buffers) plus a KVCache. One file per
// stage: embed.go, attention.go, mlp.go, forward.go, kvcache.go, trace.go.
//
// config.go: the model's shape (Config) and its checks.
package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Arch is a model family.
type Arch string

const (
	ArchLlama   Arch = "llama"       // RMSNorm, RoPE, SwiGLU, grouped-query attention
	ArchGPT2    Arch = "gpt2"        // LayerNorm, learned positions, GELU, biases
	ArchMistral Arch = "mistral"     // Llama with a sliding attention window
	ArchQwen2   Arch = "qwen2"       // Llama with biases on q, k and v
	ArchQwen3   Arch = "qwen3"       // Llama with RMSNorm on each head's q and k
	ArchPhi3    Arch = "phi3"        // Llama with fused qkv_proj and gate_up_proj
	ArchGemma2  Arch = "gemma2"      // (1+w) RMSNorm before and after each sub-block, GeGLU, soft-capping
	ArchGemma3  Arch = "gemma3_text" // Gemma 2's block with q/k norms, local and global layers
)

// archs are the families the engine runs, in the order errors list them.
var archs = []Arch{ArchLlama, ArchGPT2, ArchMistral, ArchQwen2, ArchQwen3, ArchPhi3, ArchGemma2, ArchGemma3}

// MLPKind is the feed-forward block's form.
type MLPKind uint8

const (
	MLPSwiGLU MLPKind = iota // down(silu(gate x) ⊙ up x): Llama, Mistral, Qwen, Phi-3
	MLPGELU                  // c_proj(gelu_tanh(c_fc x + b) + b): GPT-2
	MLPGeGLU                 // down(gelu_tanh(gate x) ⊙ up x): Gemma
)

func (k MLPKind) String() string {
	switch k {
	case MLPGELU:
		return "GELU"
	case MLPGeGLU:
		return "GeGLU"
	}
	return "SwiGLU"
}

// RopeStyle says how RoPE pairs the dimensions of a head.
type RopeStyle int

const (
	RopeNone     RopeStyle = iota // learned absolute positions (GPT-2)
	RopeAdjacent                  // pairs (2j, 2j+1): llama2.c / Meta checkpoints
	RopeHalf                      // pairs (j, j+hd/2), "rotate half": Hugging Face Llama
)

func (r RopeStyle) String() string {
	switch r {
	case RopeAdjacent:
		return "rope-adjacent"
	case RopeHalf:
		return "rope-rotate-half"
	}
	return "learned-positions"
}

// Config is a model's shape and conventions.
type Config struct {
	Arch      Arch
	Dim       int     // residual stream width
	HiddenDim int     // MLP inner width
	NLayers   int     // Transformer blocks
	NHeads    int     // query heads
	NKVHeads  int     // key/value heads (< NHeads: grouped-query attention)
	HeadDim   int     // per-head width (usually Dim/NHeads)
	VocabSize int     // vocabulary entries
	SeqLen    int     // context limit in positions
	NormEps   float32 // RMSNorm / LayerNorm epsilon
	RopeTheta float64 // RoPE base (10000 for most models)
	Rope      RopeStyle
	TiedHead  bool // LM head shares the token-embedding matrix
	BOS, EOS  int  // special token ids; -1 when the model has none

	// Family details beyond Llama's (hf.go fills them from config.json; the
	// zero value of each is Llama's behaviour). Config stays comparable
	// (==), so per-layer facts are a string.

	// MLP is the gated MLP's form (SwiGLU or GeGLU); GPT-2's is known by
	// its family (MLPForm).
	MLP MLPKind
	// NormPlusOne: RMSNorm scales by (1 + weight) (Gemma3RMSNorm, Gemma2RMSNorm).
	NormPlusOne bool
	// QKNorm: an RMSNorm over each head's query and key before RoPE
	// (Qwen3Attention, Gemma3Attention: q_norm, k_norm).
	QKNorm bool
	// EmbedScale multiplies the token embedding (Gemma: √hidden_size,
	// Gemma3TextScaledWordEmbedding); 0 means none.
	EmbedScale float32
	// QueryScale replaces 1/√head_dim as the score scale when > 0 (Gemma:
	// query_pre_attn_scalar^−½).
	QueryScale float64
	// Window is the sliding window of the local layers: a query there sees
	// at most Window keys, its own included (masking_utils'
	// sliding_window_overlay: kv_idx > q_idx − sliding_window); 0 none.
	Window int
	// LayerTypes has one byte per layer when Window > 0: 's' a sliding
	// (local) layer, 'f' a full-attention (global) one.
	LayerTypes string
	// RopeLocalTheta is the RoPE base of the sliding layers when they have
	// their own (Gemma 3's rope_local_base_freq); 0: RopeTheta.
	RopeLocalTheta float64
	// RopeScaling reshapes the global layers' RoPE frequencies (rope_scaling).
	RopeScaling RopeScaling
	// RotaryDim is how many of a head's dimensions RoPE rotates
	// (partial_rotary_factor × head_dim); 0: all of them.
	RotaryDim int
	// AttnSoftcap and FinalSoftcap are tanh soft-caps, cap·tanh(x/cap), on
	// the attention scores and on the logits; 0 none.
	AttnSoftcap, FinalSoftcap float64
}

// MLPForm is the feed-forward block's form: GPT-2's GELU MLP, else MLP.
func (c Config) MLPForm() MLPKind {
	if c.Arch == ArchGPT2 {
		return MLPGELU
	}
	return c.MLP
}

// Sliding reports whether layer l attends through the sliding window.
func (c Config) Sliding(l int) bool {
	return c.Window > 0 && l < len(c.LayerTypes) && c.LayerTypes[l] == 's'
}

// LocalLayers counts the sliding-window layers.
func (c Config) LocalLayers() int {
	n := 0
	for l := range c.NLayers {
		if c.Sliding(l) {
			n++
		}
	}
	return n
}

// AttnScale is what q·k is multiplied by before the softmax: 1/√head_dim,
// or Gemma's query_pre_attn_scalar^−½ (Gemma3Attention.scaling).
func (c Config) AttnScale() float32 {
	if c.QueryScale > 0 {
		return float32(c.QueryScale)
	}
	return float32(1 / math.Sqrt(float64(c.HeadDim)))
}

// Rotary is how many dimensions of each head RoPE rotates.
func (c Config) Rotary() int {
	if c.RotaryDim > 0 {
		return c.RotaryDim
	}
	return c.HeadDim
}

// KVDim is the width of one position's keys (or values) in one layer.
func (c Config) KVDim() int { return c.NKVHeads * c.HeadDim }

// QDim is the width of all query heads together.
func (c Config) QDim() int { return c.NHeads * c.HeadDim }

// KVBytesPerToken is what one more position costs in the cache:
// 2 (K and V) × layers × kv_heads × head_dim × 4 bytes (float32).
func (c Config) KVBytesPerToken() int64 {
	return 2 * int64(c.NLayers) * int64(c.NKVHeads) * int64(c.HeadDim) * 4
}

// Validate rejects shapes the engine cannot run, naming the bad field.
func (c Config) Validate() error {
	pos := []struct {
		name string
		v    int
	}{{"dim", c.Dim}, {"hidden_dim", c.HiddenDim}, {"n_layers", c.NLayers}, {"n_heads", c.NHeads},
		{"n_kv_heads", c.NKVHeads}, {"head_dim", c.HeadDim}, {"vocab_size", c.VocabSize}, {"seq_len", c.SeqLen}}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("config: %s is %d, must be positive", p.name, p.v)
		}
		if p.v > 1<<20 {
			return fmt.Errorf("config: %s is %d, larger than the engine's limit %d", p.name, p.v, 1<<20)
		}
	}
	if !slices.Contains(archs, c.Arch) {
		return fmt.Errorf("config: unknown architecture %q (supported: %s)", c.Arch, archList())
	}
	if c.NHeads%c.NKVHeads != 0 {
		return fmt.Errorf("config: n_heads %d is not a multiple of n_kv_heads %d", c.NHeads, c.NKVHeads)
	}
	if c.Rope != RopeNone && c.HeadDim%2 != 0 {
		return fmt.Errorf("config: head_dim %d must be even for RoPE", c.HeadDim)
	}
	if c.RotaryDim < 0 || c.RotaryDim > c.HeadDim || c.RotaryDim%2 != 0 {
		return fmt.Errorf("config: rotary dimensions %d must be even and at most head_dim %d", c.RotaryDim, c.HeadDim)
	}
	if c.Window < 0 || c.Window > 0 && len(c.LayerTypes) != c.NLayers {
		return fmt.Errorf("config: sliding window %d needs a layer type for each of the %d layers, got %d", c.Window, c.NLayers, len(c.LayerTypes))
	}
	if strings.Trim(c.LayerTypes, "sf") != "" {
		return fmt.Errorf("config: layer types %q: each must be s (sliding) or f (full)", c.LayerTypes)
	}
	for _, v := range []float64{c.QueryScale, c.RopeLocalTheta, c.AttnSoftcap, c.FinalSoftcap, float64(c.EmbedScale)} {
		if v < 0 || math.IsInf(v, 0) || v != v {
			return fmt.Errorf("config: a scale, softcap or RoPE base is %g, must be a positive number or 0 (none)", v)
		}
	}
	if err := c.RopeScaling.validate(c); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.Arch == ArchGPT2 && c.NKVHeads != c.NHeads {
		return fmt.Errorf("config: gpt2 needs n_kv_heads == n_heads, got %d and %d", c.NKVHeads, c.NHeads)
	}
	if !(c.NormEps > 0) || math.IsInf(float64(c.NormEps), 0) {
		return fmt.Errorf("config: norm epsilon %g must be a positive number", c.NormEps)
	}
	if c.Rope != RopeNone && (!(c.RopeTheta > 0) || math.IsInf(c.RopeTheta, 0)) {
		return fmt.Errorf("config: rope_theta %g must be a positive number", c.RopeTheta)
	}
	return nil
}

// archList names the supported families for errors.
func archList() string {
	names := make([]string, len(archs))
	for i, a := range archs {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}
