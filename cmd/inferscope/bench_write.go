package main

// bench_write.go: bench --write-llama2c and --write-hf: random-weight
// checkpoints in llama2.c's and Hugging Face's formats, so run.c and
// PyTorch can run the very weights inferscope benches (the writers live
// here, with their only user, not in the engine, which only reads models).

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/inferscope/inferscope/engine"
)

// writeLlama2cBench writes stories15M random weights in llama2.c format plus
// a 32000-entry tokenizer.bin so llama2.c's run.c can run the same model.
func writeLlama2cBench(path string, stdout io.Writer) error {
	m, err := engine.RandomModel("stories15M", engine.Shapes["stories15M"], 1)
	if err != nil {
		return err
	}
	if err := writeLlama2c(path, m); err != nil {
		return err
	}
	tokPath := filepath.Join(filepath.Dir(path), "tokenizer.bin")
	var b []byte
	b = appendI32(b, 16)
	for i := 0; i < m.Config.VocabSize; i++ {
		var p string
		switch {
		case i == 0:
			p = "<unk>"
		case i == 1:
			p = "\n<s>\n"
		case i == 2:
			p = "\n</s>\n"
		case i < 259:
			p = fmt.Sprintf("<0x%02X>", i-3)
		default:
			p = fmt.Sprintf(" w%d", i)
		}
		b = appendF32(b, float32(-i))
		b = appendI32(b, int32(len(p)))
		b = append(b, p...)
	}
	if err := os.WriteFile(tokPath, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) and %s\n", path, 28+4*m.Weights.NumParams(), tokPath)
	return nil
}

// writeLlama2c writes m in llama2.c's checkpoint format (Llama family,
// RoPE on adjacent pairs): the 7×int32 header (a negative vocab size for
// an untied head), then every tensor as float32 in run.c's order, the
// legacy RoPE tables included.
func writeLlama2c(path string, m *engine.Model) error {
	c := m.Config
	if c.Arch != engine.ArchLlama || c.Rope != engine.RopeAdjacent {
		return fmt.Errorf("write llama2.c: needs a llama model with adjacent-pair RoPE, got %s/%s", c.Arch, c.Rope)
	}
	vocab := int32(c.VocabSize)
	if !c.TiedHead {
		vocab = -vocab
	}
	hdr := []int32{int32(c.Dim), int32(c.HiddenDim), int32(c.NLayers), int32(c.NHeads), int32(c.NKVHeads), vocab, int32(c.SeqLen)}
	buf := make([]byte, 0, 28+4*(m.Weights.NumParams()+int64(c.SeqLen*c.HeadDim)))
	for _, v := range hdr {
		buf = appendI32(buf, v)
	}
	put := func(s []float32) {
		for _, v := range s {
			buf = appendF32(buf, v)
		}
	}
	w := &m.Weights
	put(w.TokenEmbed.Dense())
	for _, sel := range []func(*engine.LayerWeights) []float32{
		func(l *engine.LayerWeights) []float32 { return l.AttnNorm },
		func(l *engine.LayerWeights) []float32 { return l.Wq.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.Wk.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.Wv.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.Wo.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.MLPNorm },
		func(l *engine.LayerWeights) []float32 { return l.WGate.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.WDown.Dense() },
		func(l *engine.LayerWeights) []float32 { return l.WUp.Dense() },
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

// writeHFBench writes shape name with seeded random weights as a Hugging Face
// directory, so loading and RSS can be measured on a full-size checkpoint
// without downloading one.
func writeHFBench(dir, name string, stdout io.Writer) error {
	m, err := engine.RandomModel(name, engine.Shapes[name], 1)
	if err != nil {
		return err
	}
	if err := writeHF(dir, m); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%s, %d parameters, random weights)\n", dir, name, m.Weights.NumParams())
	return nil
}

// writeHF writes m as a Hugging Face directory (config.json,
// model.safetensors in F32), in each family's own layout (GPT-2's Conv1D
// matrices [in][out] and fused c_attn).
func writeHF(dir string, m *engine.Model) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c, w := m.Config, &m.Weights
	tensors := map[string][]float32{}
	shapes := map[string][]int{}
	put := func(n string, v []float32, shape ...int) { tensors[n], shapes[n] = v, shape }
	var cfg map[string]any
	switch c.Arch {
	case engine.ArchGPT2:
		cfg = map[string]any{"model_type": "gpt2", "n_embd": c.Dim, "n_layer": c.NLayers, "n_head": c.NHeads,
			"n_positions": c.SeqLen, "vocab_size": c.VocabSize, "layer_norm_epsilon": c.NormEps,
			"activation_function": "gelu_new", "n_inner": c.HiddenDim, "bos_token_id": c.BOS, "eos_token_id": c.EOS}
		d := c.Dim
		put("wte.weight", w.TokenEmbed.Dense(), c.VocabSize, d)
		put("wpe.weight", w.PosEmbed, c.SeqLen, d)
		for l := range w.Layers {
			lw := &w.Layers[l]
			p := fmt.Sprintf("h.%d.", l)
			put(p+"ln_1.weight", lw.AttnNorm, d)
			put(p+"ln_1.bias", lw.AttnNormBias, d)
			qkv := append(append(append([]float32(nil), lw.Wq.Dense()...), lw.Wk.Dense()...), lw.Wv.Dense()...)
			put(p+"attn.c_attn.weight", transposed(qkv, 3*d, d), d, 3*d)
			put(p+"attn.c_attn.bias", append(append(append([]float32(nil), lw.Bq...), lw.Bk...), lw.Bv...), 3*d)
			put(p+"attn.c_proj.weight", transposed(lw.Wo.Dense(), d, d), d, d)
			put(p+"attn.c_proj.bias", lw.Bo, d)
			put(p+"ln_2.weight", lw.MLPNorm, d)
			put(p+"ln_2.bias", lw.MLPNormBias, d)
			put(p+"mlp.c_fc.weight", transposed(lw.WUp.Dense(), c.HiddenDim, d), d, c.HiddenDim)
			put(p+"mlp.c_fc.bias", lw.BUp, c.HiddenDim)
			put(p+"mlp.c_proj.weight", transposed(lw.WDown.Dense(), d, c.HiddenDim), c.HiddenDim, d)
			put(p+"mlp.c_proj.bias", lw.BDown, d)
		}
		put("ln_f.weight", w.FinalNorm, d)
		put("ln_f.bias", w.FinalNormBias, d)
	case engine.ArchLlama:
		cfg = map[string]any{"model_type": "llama", "hidden_size": c.Dim, "intermediate_size": c.HiddenDim,
			"num_hidden_layers": c.NLayers, "num_attention_heads": c.NHeads, "num_key_value_heads": c.NKVHeads,
			"max_position_embeddings": c.SeqLen, "vocab_size": c.VocabSize, "rms_norm_eps": c.NormEps,
			"rope_theta": c.RopeTheta, "tie_word_embeddings": c.TiedHead, "bos_token_id": c.BOS, "eos_token_id": c.EOS}
		put("model.embed_tokens.weight", w.TokenEmbed.Dense(), c.VocabSize, c.Dim)
		for l := range w.Layers {
			lw := &w.Layers[l]
			p := fmt.Sprintf("model.layers.%d.", l)
			put(p+"input_layernorm.weight", lw.AttnNorm, c.Dim)
			put(p+"post_attention_layernorm.weight", lw.MLPNorm, c.Dim)
			for n, mat := range map[string]*engine.Mat{"self_attn.q_proj": &lw.Wq, "self_attn.k_proj": &lw.Wk,
				"self_attn.v_proj": &lw.Wv, "self_attn.o_proj": &lw.Wo, "mlp.gate_proj": &lw.WGate,
				"mlp.up_proj": &lw.WUp, "mlp.down_proj": &lw.WDown} {
				put(p+n+".weight", mat.Dense(), mat.Rows, mat.Cols)
			}
		}
		put("model.norm.weight", w.FinalNorm, c.Dim)
		if !c.TiedHead {
			put("lm_head.weight", w.Head.Dense(), c.VocabSize, c.Dim)
		}
	default:
		return fmt.Errorf("write hf: no layout for architecture %s", c.Arch)
	}
	cb, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cb, 0o644); err != nil {
		return err
	}
	return writeSafetensors(filepath.Join(dir, "model.safetensors"), tensors, shapes)
}

// transposed returns the [c][r] transpose of row-major [r][c] m.
func transposed(m []float32, r, c int) []float32 {
	out := make([]float32, len(m))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = m[i*c+j]
		}
	}
	return out
}

// writeSafetensors writes float32 tensors in safetensors format (sorted by
// name, header padded to 8 bytes).
func writeSafetensors(path string, tensors map[string][]float32, shapes map[string][]int) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, n := range names {
		sz := int64(4 * len(tensors[n]))
		hdr[n] = map[string]any{"dtype": "F32", "shape": shapes[n], "data_offsets": []int64{off, off + sz}}
		off += sz
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	buf = append(buf, hj...)
	for _, n := range names {
		for _, v := range tensors[n] {
			buf = appendF32(buf, v)
		}
	}
	return os.WriteFile(path, buf, 0o644)
}
