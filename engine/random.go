package engine

// random.go: named model shapes with seeded random weights, for benchmarks.

import (
	"fmt"
	"math/rand/v2"
)

// Shapes are named model shapes for benchmarks with synthetic weights.
var Shapes = map[string]Config{
	"stories15M": {Arch: ArchLlama, Dim: 288, HiddenDim: 768, NLayers: 6, NHeads: 6, NKVHeads: 6, HeadDim: 48,
		VocabSize: 32000, SeqLen: 256, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeAdjacent, TiedHead: true, BOS: 1, EOS: 2},
	"gpt2-124M": {Arch: ArchGPT2, Dim: 768, HiddenDim: 3072, NLayers: 12, NHeads: 12, NKVHeads: 12, HeadDim: 64,
		VocabSize: 50257, SeqLen: 1024, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 50256, EOS: 50256},
	"smollm2-135M": {Arch: ArchLlama, Dim: 576, HiddenDim: 1536, NLayers: 30, NHeads: 9, NKVHeads: 3, HeadDim: 64,
		VocabSize: 49152, SeqLen: 8192, NormEps: 1e-5, RopeTheta: 100000, Rope: RopeHalf, TiedHead: true, BOS: 1, EOS: 2},
}

// RandomModel builds a model of shape c with seeded random weights (for
// benchmarks and tests; it has no tokenizer).
func RandomModel(name string, c Config, seed uint64) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("random model %s: %w", name, err)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	mat := func(n int, std float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64()) * std
		}
		return s
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	d, hd, qd, kvd, V := c.Dim, c.HiddenDim, c.QDim(), c.KVDim(), c.VocabSize
	w := Weights{TokenEmbed: NewMat(mat(V*d, 0.02), V, d), Layers: make([]LayerWeights, c.NLayers), FinalNorm: ones(d)}
	gpt2 := c.Arch == ArchGPT2
	if gpt2 {
		w.PosEmbed = mat(c.SeqLen*d, 0.01)
		w.FinalNormBias = make([]float32, d)
	}
	for l := range w.Layers {
		lw := &w.Layers[l]
		lw.AttnNorm, lw.MLPNorm = ones(d), ones(d)
		lw.Wq, lw.Wk, lw.Wv, lw.Wo = NewMat(mat(qd*d, 0.02), qd, d), NewMat(mat(kvd*d, 0.02), kvd, d), NewMat(mat(kvd*d, 0.02), kvd, d), NewMat(mat(d*qd, 0.02), d, qd)
		lw.WUp, lw.WDown = NewMat(mat(hd*d, 0.02), hd, d), NewMat(mat(d*hd, 0.02), d, hd)
		if gpt2 {
			lw.AttnNormBias, lw.MLPNormBias = make([]float32, d), make([]float32, d)
			lw.Bq, lw.Bk, lw.Bv, lw.Bo = make([]float32, qd), make([]float32, kvd), make([]float32, kvd), make([]float32, d)
			lw.BUp, lw.BDown = make([]float32, hd), make([]float32, d)
		} else {
			lw.WGate = NewMat(mat(hd*d, 0.02), hd, d)
		}
	}
	if c.TiedHead {
		w.Head = w.TokenEmbed
	} else {
		w.Head = NewMat(mat(V*d, 0.02), V, d)
	}
	return &Model{Name: name, Source: "random:" + name, Config: c, Weights: w}, nil
}
