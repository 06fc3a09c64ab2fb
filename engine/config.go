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
)

// Arch is a model family.
type Arch string

const (
	ArchLlama Arch = "llama" // RMSNorm, RoPE, SwiGLU, grouped-query attention
	ArchGPT2  Arch = "gpt2"  // LayerNorm, learned positions, GELU, biases
)

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
	if c.Arch != ArchLlama && c.Arch != ArchGPT2 {
		return fmt.Errorf("config: unknown architecture %q (supported: llama, gpt2)", c.Arch)
	}
	if c.NHeads%c.NKVHeads != 0 {
		return fmt.Errorf("config: n_heads %d is not a multiple of n_kv_heads %d", c.NHeads, c.NKVHeads)
	}
	if c.Rope != RopeNone && c.HeadDim%2 != 0 {
		return fmt.Errorf("config: head_dim %d must be even for RoPE", c.HeadDim)
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
