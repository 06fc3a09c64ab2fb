package engine

// model.go: Model: a loaded checkpoint (shape, weights, tokenizer) and its weights' precision.

import "github.com/inferscope/inferscope/engine/tokenizer"

// Model is a loaded checkpoint: its shape, its read-only weights and, when
// the files carry one, its tokenizer. Safe for concurrent use by many
// Sessions, each with its own State and KVCache.
type Model struct {
	Name      string
	Source    string // file or directory it was loaded from
	Config    Config
	Weights   Weights
	Tokenizer tokenizer.Tokenizer // nil when loaded without one
	GGUF      *GGUFMeta           // a GGUF file's metadata (special ids, chat template); nil for other formats
	// Original is the float weights a model quantized at load (Quantized)
	// was made from, so a block can be shown beside the values it stands
	// for (weightblock.go); nil for weights loaded as they are stored.
	Original *Weights

	checksum checksum // of Weights, computed on first use (checksum.go)
}

// Precision is how the model's weight matrices are stored and read: "f32",
// "bf16" or a block type ("q8_0", …; a GGUF file's first layer's Wq when
// it mixes types): activations, norms and the KV cache are always float32.
func (m *Model) Precision() string { return m.Weights.DType().String() }

// WithWeights returns the model with its weight matrices in precision d: m
// itself when they already are, else a new Model (same name, config and
// tokenizer) whose matrices are rounded to bfloat16 (half the bytes per
// decode step) or widened to float32, or quantized to Q8_0, Q4_0 or Q4_K
// (Quantized). m is not changed.
func (m *Model) WithWeights(d DType) *Model {
	if m.Weights.DType() == d {
		return m
	}
	if d == Q8_0 || d == Q4_0 || d == Q4_K {
		if q, err := m.Quantized(d); err == nil {
			return q
		}
	}
	var w Weights
	if d == F32 {
		w = m.Weights.toF32()
	} else {
		w = m.Weights.toBF16()
	}
	return &Model{Name: m.Name, Source: m.Source, Config: m.Config, Weights: w, Tokenizer: m.Tokenizer, GGUF: m.GGUF}
}
