package engine

// weights.go: the weights: per-layer parameter slices, checksum, parameter count.

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// LayerWeights are one Transformer block's parameters, all float32, matrices
// row-major as [out][in] (GPT-2's Conv1D [in][out] is transposed at load).
// Bias and norm-bias slices are nil where the family has none (Llama).
type LayerWeights struct {
	AttnNorm, AttnNormBias []float32 // [dim]
	Wq, Bq                 []float32 // [n_heads*head_dim][dim], [n_heads*head_dim]
	Wk, Bk                 []float32 // [kv_dim][dim], [kv_dim]
	Wv, Bv                 []float32 // [kv_dim][dim], [kv_dim]
	Wo, Bo                 []float32 // [dim][n_heads*head_dim], [dim]
	MLPNorm, MLPNormBias   []float32 // [dim]
	WGate                  []float32 // [hidden][dim]  Llama W1 (SiLU branch); nil for GPT-2
	WUp, BUp               []float32 // [hidden][dim]  Llama W3; GPT-2 c_fc
	WDown, BDown           []float32 // [dim][hidden]  Llama W2; GPT-2 mlp.c_proj
}

// Weights are a model's parameters. They are never written after load and
// are shared by every Session.
type Weights struct {
	TokenEmbed               []float32 // [vocab][dim]
	PosEmbed                 []float32 // [seq_len][dim] (GPT-2 only)
	Layers                   []LayerWeights
	FinalNorm, FinalNormBias []float32 // [dim]
	Head                     []float32 // [vocab][dim]; the same slice as TokenEmbed when tied
}

// Checksum is a SHA-256 over every parameter, in a fixed order: the app shows
// it before and after a run to prove that inference never changes weights.
func (w *Weights) Checksum() [32]byte {
	h := sha256.New()
	buf := make([]byte, 4*4096)
	put := func(s []float32) {
		for len(s) > 0 {
			n := min(len(s), 4096)
			for i, v := range s[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			h.Write(buf[:4*n])
			s = s[n:]
		}
	}
	put(w.TokenEmbed)
	put(w.PosEmbed)
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, s := range [][]float32{l.AttnNorm, l.AttnNormBias, l.Wq, l.Bq, l.Wk, l.Bk, l.Wv, l.Bv, l.Wo, l.Bo,
			l.MLPNorm, l.MLPNormBias, l.WGate, l.WUp, l.BUp, l.WDown, l.BDown} {
			put(s)
		}
	}
	put(w.FinalNorm)
	put(w.FinalNormBias)
	put(w.Head)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// NumParams counts distinct parameters (a tied head is counted once).
func (w *Weights) NumParams() int64 {
	n := int64(len(w.TokenEmbed) + len(w.PosEmbed) + len(w.FinalNorm) + len(w.FinalNormBias))
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, s := range [][]float32{l.AttnNorm, l.AttnNormBias, l.Wq, l.Bq, l.Wk, l.Bk, l.Wv, l.Bv, l.Wo, l.Bo,
			l.MLPNorm, l.MLPNormBias, l.WGate, l.WUp, l.BUp, l.WDown, l.BDown} {
			n += int64(len(s))
		}
	}
	if len(w.Head) > 0 && (len(w.TokenEmbed) == 0 || &w.Head[0] != &w.TokenEmbed[0]) {
		n += int64(len(w.Head))
	}
	return n
}

// Bytes is the memory the float32 parameters occupy.
func (w *Weights) Bytes() int64 { return 4 * w.NumParams() }
