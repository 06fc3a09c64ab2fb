package engine

// llama2c.go: the llama2.c .bin checkpoint loader (the writer, for comparing with run.c, is the
// bench command's: cmd/inferscope/bench_write.go).

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
)

// parseLlama2cHeader reads and checks the header of a llama2.c checkpoint of
// fileSize bytes. A negative vocab size means the file has its own classifier
// (untied head). It returns the config and whether the head is shared.
func parseLlama2cHeader(b []byte, fileSize int64) (Config, error) {
	if len(b) < 28 {
		return Config{}, fmt.Errorf("header: file has %d bytes, a llama2.c header needs 28", len(b))
	}
	var h [7]int32
	for i := range h {
		h[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	tied := h[5] > 0
	vocab := h[5]
	if vocab < 0 {
		vocab = -vocab
	}
	c := Config{
		Arch: ArchLlama, Dim: int(h[0]), HiddenDim: int(h[1]), NLayers: int(h[2]), NHeads: int(h[3]),
		NKVHeads: int(h[4]), VocabSize: int(vocab), SeqLen: int(h[6]), NormEps: 1e-5, RopeTheta: 10000,
		Rope: RopeAdjacent, TiedHead: tied, BOS: 1, EOS: 2,
	}
	if c.NHeads > 0 {
		c.HeadDim = c.Dim / max(c.NHeads, 1)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("header: %w", err)
	}
	if c.Dim%c.NHeads != 0 {
		return Config{}, fmt.Errorf("header: dim %d is not a multiple of n_heads %d", c.Dim, c.NHeads)
	}
	floats, ok := llama2cFloats(c)
	want, ok2 := checkedMul(floats, 4)
	if !ok || !ok2 || want > math.MaxInt64-28 {
		return Config{}, fmt.Errorf("header: sizes (dim %d, hidden %d, layers %d, heads %d, kv_heads %d, vocab %d, seq_len %d) overflow: not a llama2.c checkpoint",
			c.Dim, c.HiddenDim, c.NLayers, c.NHeads, c.NKVHeads, h[5], c.SeqLen)
	}
	want += 28
	if want != fileSize {
		return Config{}, fmt.Errorf("header: sizes say the file has %d bytes (dim %d, hidden %d, layers %d, heads %d, kv_heads %d, vocab %d, seq_len %d), but it has %d",
			want, c.Dim, c.HiddenDim, c.NLayers, c.NHeads, c.NKVHeads, h[5], c.SeqLen, fileSize)
	}
	return c, nil
}

// llama2cFloats is the number of float32s after the header, counted
// without overflow (ok is false if int64 cannot hold it).
func llama2cFloats(c Config) (n int64, ok bool) {
	d, hd, L, kvd, V := c.Dim, c.HiddenDim, c.NLayers, c.KVDim(), c.VocabSize
	var s sizeSum
	s.add(V, d)                // token embeddings
	s.add(L, d)                // attention norms
	s.add(L, d, d)             // wq
	s.add(L, 2, kvd, d)        // wk, wv
	s.add(L, d, d)             // wo
	s.add(L, d)                // mlp norms
	s.add(L, 3, hd, d)         // w1, w2, w3
	s.add(d)                   // final norm
	s.add(c.SeqLen, c.HeadDim) // legacy RoPE tables
	if !c.TiedHead {
		s.add(V, d)
	}
	return s.n, !s.overflow
}

// loadLlama2cWith reads a llama2.c checkpoint (.bin) with read (mapFile:
// the weights are then used in place). The tokenizer, if any, is loaded
// separately (LoadLlama2cTokenizer).
func loadLlama2cWith(path string, read func(string) ([]byte, error)) (m *Model, err error) {
	defer recoverLoad("llama2.c checkpoint "+path, &err)
	raw, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("load llama2.c checkpoint: %w", err)
	}
	c, err := parseLlama2cHeader(raw, int64(len(raw)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := f32View(raw[28:])
	take := func(n int) []float32 { s := f[:n:n]; f = f[n:]; return s }
	d, hd, L, kvd, V := c.Dim, c.HiddenDim, c.NLayers, c.KVDim(), c.VocabSize
	w := Weights{Layers: make([]LayerWeights, L)}
	w.TokenEmbed = NewMat(take(V*d), V, d)
	for l := range L {
		w.Layers[l].AttnNorm = take(d)
	}
	for l := range L {
		w.Layers[l].Wq = NewMat(take(d*d), d, d)
	}
	for l := range L {
		w.Layers[l].Wk = NewMat(take(kvd*d), kvd, d)
	}
	for l := range L {
		w.Layers[l].Wv = NewMat(take(kvd*d), kvd, d)
	}
	for l := range L {
		w.Layers[l].Wo = NewMat(take(d*d), d, d)
	}
	for l := range L {
		w.Layers[l].MLPNorm = take(d)
	}
	for l := range L {
		w.Layers[l].WGate = NewMat(take(hd*d), hd, d)
	}
	for l := range L {
		w.Layers[l].WDown = NewMat(take(d*hd), d, hd)
	}
	for l := range L {
		w.Layers[l].WUp = NewMat(take(hd*d), hd, d)
	}
	w.FinalNorm = take(d)
	take(c.SeqLen * c.HeadDim) // legacy RoPE tables (cos, sin): recomputed instead
	if c.TiedHead {
		w.Head = w.TokenEmbed
	} else {
		w.Head = NewMat(take(V*d), V, d)
	}
	name := filepath.Base(path)
	return &Model{Name: name, Source: path, Config: c, Weights: w}, nil
}
