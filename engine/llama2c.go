package engine

// llama2c.go: the llama2.c .bin checkpoint loader (and writer, for comparing with run.c).

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Llama2cHeader is the 7×int32 header of a llama2.c checkpoint.
type Llama2cHeader struct {
	Dim, HiddenDim, NLayers, NHeads, NKVHeads, VocabSize, SeqLen int32
}

// ParseLlama2cHeader reads and checks the header of a llama2.c checkpoint of
// fileSize bytes. A negative vocab size means the file has its own classifier
// (untied head). It returns the config and whether the head is shared.
func ParseLlama2cHeader(b []byte, fileSize int64) (Config, error) {
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

// LoadLlama2c reads a llama2.c checkpoint (.bin). The tokenizer, if any, is
// loaded separately (LoadLlama2cTokenizer).
func LoadLlama2c(path string) (m *Model, err error) {
	defer recoverLoad("llama2.c checkpoint "+path, &err)
	raw, err := mapFile(path) // the weights are used in place
	if err != nil {
		return nil, fmt.Errorf("load llama2.c checkpoint: %w", err)
	}
	c, err := ParseLlama2cHeader(raw, int64(len(raw)))
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

// WriteLlama2c writes m in llama2.c's checkpoint format (Llama family,
// RoPE on adjacent pairs). Used to hand the same weights to run.c.
func WriteLlama2c(path string, m *Model) error {
	c := m.Config
	if c.Arch != ArchLlama || c.Rope != RopeAdjacent {
		return fmt.Errorf("write llama2.c: needs a llama model with adjacent-pair RoPE, got %s/%s", c.Arch, c.Rope)
	}
	vocab := int32(c.VocabSize)
	if !c.TiedHead {
		vocab = -vocab
	}
	hdr := []int32{int32(c.Dim), int32(c.HiddenDim), int32(c.NLayers), int32(c.NHeads), int32(c.NKVHeads), vocab, int32(c.SeqLen)}
	floats, ok := llama2cFloats(c)
	if !ok {
		return fmt.Errorf("write llama2.c: the model's sizes overflow")
	}
	buf := make([]byte, 0, 28+4*floats)
	for _, v := range hdr {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
	}
	put := func(s []float32) {
		for _, v := range s {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	w := &m.Weights
	put(w.TokenEmbed.Dense())
	for _, sel := range []func(*LayerWeights) []float32{
		func(l *LayerWeights) []float32 { return l.AttnNorm },
		func(l *LayerWeights) []float32 { return l.Wq.Dense() },
		func(l *LayerWeights) []float32 { return l.Wk.Dense() },
		func(l *LayerWeights) []float32 { return l.Wv.Dense() },
		func(l *LayerWeights) []float32 { return l.Wo.Dense() },
		func(l *LayerWeights) []float32 { return l.MLPNorm },
		func(l *LayerWeights) []float32 { return l.WGate.Dense() },
		func(l *LayerWeights) []float32 { return l.WDown.Dense() },
		func(l *LayerWeights) []float32 { return l.WUp.Dense() },
	} {
		for i := range w.Layers {
			put(sel(&w.Layers[i]))
		}
	}
	put(w.FinalNorm)
	hs := c.HeadDim
	tab := make([]float32, c.SeqLen*hs/2)
	for _, fn := range []func(float64) float64{math.Cos, math.Sin} {
		for p := 0; p < c.SeqLen; p++ {
			for j := 0; j < hs/2; j++ {
				tab[p*hs/2+j] = float32(fn(float64(p) / math.Pow(10000, float64(2*j)/float64(hs))))
			}
		}
		put(tab)
	}
	if !c.TiedHead {
		put(w.Head.Dense())
	}
	return os.WriteFile(path, buf, 0o644)
}
