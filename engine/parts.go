package engine

// parts.go: the parameter count of each part of the model (embedding
// table, positions, one block's attention, MLP and norms, final norm,
// unembedding), as the model view labels them.

// PartParams counts the parameters of each part, from the loaded weights.
type PartParams struct {
	Embedding   int64 `json:"embedding"`   // token-embedding table, vocab × dim
	Positions   int64 `json:"positions"`   // learned position table (GPT-2); 0 with RoPE
	Attention   int64 `json:"attention"`   // one block's Wq, Wk, Wv, Wo, biases and q/k norms
	MLP         int64 `json:"mlp"`         // one block's MLP matrices and biases
	BlockNorms  int64 `json:"block_norms"` // one block's norms' gains (and biases): two, or Gemma's four
	Blocks      int64 `json:"blocks"`      // every block together
	FinalNorm   int64 `json:"final_norm"`
	Unembedding int64 `json:"unembedding"` // LM head; 0 when tied to the embedding table
	Tied        bool  `json:"tied"`
}

// PartParams counts w's parameters by part (block counts are block 0's;
// every block has the same shape).
func (w *Weights) PartParams() PartParams {
	var p PartParams
	vec := func(vs ...[]float32) (n int64) {
		for _, v := range vs {
			n += int64(len(v))
		}
		return n
	}
	p.Embedding = int64(w.TokenEmbed.Len())
	p.Positions = vec(w.PosEmbed)
	if len(w.Layers) > 0 {
		l := &w.Layers[0]
		p.Attention = int64(l.Wq.Len()+l.Wk.Len()+l.Wv.Len()+l.Wo.Len()) + vec(l.Bq, l.Bk, l.Bv, l.Bo, l.QNorm, l.KNorm)
		p.MLP = int64(l.WGate.Len()+l.WUp.Len()+l.WDown.Len()) + vec(l.BUp, l.BDown)
		p.BlockNorms = vec(l.AttnNorm, l.AttnNormBias, l.MLPNorm, l.MLPNormBias, l.PostAttnNorm, l.PostMLPNorm)
	}
	p.Blocks = int64(len(w.Layers)) * (p.Attention + p.MLP + p.BlockNorms)
	p.FinalNorm = vec(w.FinalNorm, w.FinalNormBias)
	p.Tied = w.Head.same(&w.TokenEmbed)
	if !p.Tied {
		p.Unembedding = int64(w.Head.Len())
	}
	return p
}
