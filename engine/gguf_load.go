package engine

// gguf_load.go: LoadGGUF: a llama.cpp GGUF file (llama, gpt2, and the
// architectures of gguf_arch.go: qwen2, qwen3, phi3, gemma2, gemma3; F32,
// F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K tensors) as a
// Model, its weight matrices used in place in the file's memory, its
// tokenizer built from the tokenizer.ggml.* metadata.
//
// Llama's q and k projections: llama.cpp's converters permute their rows
// (convert_hf_to_gguf.py's LlamaModel.permute) so that RoPE rotates
// adjacent pairs (2j, 2j+1) of each head, as Meta's and llama2.c's
// checkpoints do, instead of Hugging Face's pairs (j, j+head_dim/2). The
// loader keeps the rows as stored and runs RoPE on adjacent pairs
// (RopeAdjacent): queries and keys come out in the permuted order within
// each head, both the same way, so every q·k, attention weight and logit
// is the Hugging Face model's (up to the order of the sums in q·k).

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/inferscope/inferscope/engine/gguf"
	"github.com/inferscope/inferscope/engine/internal/filemap"
	"github.com/inferscope/inferscope/engine/quant"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// GGUFMeta is what a GGUF file says beside its tensors that the engine
// keeps: the special tokens, the chat template and how the tensors are
// stored.
type GGUFMeta struct {
	Architecture string // general.architecture
	Name         string // general.name ("" when absent)
	// TokenizerModel and TokenizerPre are tokenizer.ggml.model and .pre.
	TokenizerModel, TokenizerPre string
	// Special token ids (tokenizer.ggml.*_token_id); −1 when absent.
	BOS, EOS, UNK, PAD, SEP, EOT int
	// AddBOS and AddEOS are tokenizer.ggml.add_bos_token / add_eos_token; nil when absent.
	AddBOS, AddEOS *bool
	ChatTemplate   string         // tokenizer.chat_template ("" when absent)
	TensorTypes    map[string]int // ggml type name → number of tensors stored in it

	// mapped is the file's memory as gguf.Open mapped it (nil for
	// LoadGGUFBytes); the parsed File itself is let go after the load.
	mapped []byte
}

// WeightsInPlace reports whether the file is mapped in place (its pages
// shared with the page cache under a read lease: package filemap), not
// read into a private copy.
func (g *GGUFMeta) WeightsInPlace() bool { return g != nil && filemap.InPlace(g.mapped) }

// ggufArchs are the architectures LoadGGUF runs.
const ggufArchs = "llama, gpt2, qwen2, qwen3, phi3, gemma2, gemma3"

// LoadGGUF loads a GGUF file. The file is mapped in place, read-only, under
// a read lease (gguf.Open): its pages are shared with the page cache and
// only those the passes read are resident, and an open for writing or a
// truncate by anyone first turns the mapping into a private copy, so a file
// changed on disk cannot change the weights under a running model. Where
// no lease can be taken it is read once into private, read-only memory
// (package filemap, as for the other loaders). Every matrix is used there
// as stored: F32 and BF16 with the engine's float kernels, F16
// and the block types (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) with package quant's,
// dequantizing blocks on the fly. Norm weights, biases and GPT-2's
// position table are float32 (widened at load if stored otherwise).
func LoadGGUF(path string) (_ *Model, err error) {
	defer recoverLoad("model "+path, &err)
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := modelFromGGUF(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.ReleaseMetadata() // parsed: the weights point into the data section only
	m.GGUF.mapped = f.Bytes()
	// The parse's Go values (the File, its key/values, the merges: ~1 MB
	// for a GPT-2 vocabulary) are garbage now, and a collection alone would
	// keep their pages resident: the KV cache that comes next is a fresh
	// large allocation that does not reuse them. Collect and give the free
	// pages back once, at load (about a millisecond: the weights are in the
	// mapping, not on the heap).
	debug.FreeOSMemory()
	return m, nil
}

// LoadGGUFBytes is LoadGGUF for a file already in memory (b is kept: the
// weights point into it); name labels the model and its errors.
func LoadGGUFBytes(b []byte, name string) (_ *Model, err error) {
	defer recoverLoad("model "+name, &err)
	f, err := gguf.Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m, err := modelFromGGUF(f, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// isGGUF reports whether path names a GGUF file: a .gguf name, or a file
// that starts with the magic.
func isGGUF(path string) bool {
	if strings.EqualFold(filepath.Ext(path), ".gguf") {
		return true
	}
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	var magic [4]byte
	n, _ := fh.Read(magic[:])
	return n == 4 && string(magic[:]) == "GGUF"
}

func modelFromGGUF(f *gguf.File, path string) (*Model, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	family, ok := ggufArchOf[arch]
	if !ok {
		return nil, fmt.Errorf("GGUF architecture %q is not supported (supported: %s)", arch, ggufArchs)
	}
	hp, err := f.HyperParams()
	if err != nil {
		return nil, err
	}
	if family == ArchGPT2 {
		if err := refuseGGUFKeys(f, arch); err != nil {
			return nil, err
		}
	}
	g := &ggufTensors{f: f, used: map[string]bool{}}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("no 2-D tensor token_embd.weight")
	}
	vocab := int(emb.Dims[1])
	if hp.VocabSize != 0 && hp.VocabSize != vocab {
		return nil, fmt.Errorf("%s.vocab_size is %d but token_embd.weight has %d rows", arch, hp.VocabSize, vocab)
	}
	_, hasHead := f.Tensor("output.weight")
	c := Config{Arch: family, Dim: hp.EmbeddingLength, HiddenDim: hp.FeedForwardLength, NLayers: hp.BlockCount,
		NHeads: hp.HeadCount, NKVHeads: hp.HeadCountKV, VocabSize: vocab, SeqLen: hp.ContextLength, TiedHead: !hasHead}
	if c.Dim > 0 && c.NHeads > 0 {
		c.HeadDim = c.Dim / c.NHeads
	}
	if c.Arch == ArchGPT2 {
		if c.HiddenDim == 0 {
			c.HiddenDim = 4 * c.Dim
		}
		c.NKVHeads, c.NormEps, c.Rope = c.NHeads, float32(hp.LayerNormEpsilon), RopeNone
		if c.NormEps == 0 {
			c.NormEps = 1e-5
		}
		if pe, ok := f.Tensor("position_embd.weight"); ok && len(pe.Dims) == 2 && c.SeqLen == 0 {
			c.SeqLen = int(pe.Dims[1])
		}
	} else if err := ggufArchConfig(f, hp, arch, &c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("GGUF metadata: %w", err)
	}
	var w Weights
	if c.Arch == ArchGPT2 {
		w = g.gpt2(c)
	} else {
		w = g.decoder(&c) // a rope_freqs tensor sets c.RopeScaling
		if g.err == nil {
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("GGUF metadata: %w", err)
			}
		}
	}
	if g.err != nil {
		return nil, g.err
	}
	if err := g.allUsed(arch); err != nil {
		return nil, err
	}
	meta := &GGUFMeta{Architecture: arch, TensorTypes: map[string]int{}, BOS: -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1, EOT: -1}
	if v, ok := f.Get("general.name"); ok {
		meta.Name, _ = v.Str()
	}
	for _, t := range f.Tensors {
		meta.TensorTypes[t.Type.String()]++
	}
	m := &Model{Name: modelName(meta.Name, path), Source: path, Config: c, Weights: w, GGUF: meta}
	if _, ok := f.Get("tokenizer.ggml.model"); ok {
		tm, err := f.Tokenizer()
		if err != nil {
			return nil, err
		}
		if tm.Tokens.Len() > c.VocabSize {
			return nil, fmt.Errorf("the tokenizer has %d tokens but token_embd.weight only %d rows", tm.Tokens.Len(), c.VocabSize)
		}
		tk, err := tokenizer.FromGGUF(tm)
		if err != nil {
			return nil, err
		}
		if tm.ChatTemplate != "" {
			// chat mode renders the file's own template (tokenizer/chat_template.go)
			if err := tokenizer.UseChatTemplate(tk, tm.ChatTemplate, "GGUF tokenizer.chat_template"); err != nil {
				return nil, err
			}
		}
		m.Tokenizer = tk
		meta.TokenizerModel, meta.TokenizerPre = tm.Model, tm.Pre
		meta.BOS, meta.EOS, meta.UNK, meta.PAD, meta.SEP, meta.EOT = tm.BOS, tm.EOS, tm.UNK, tm.PAD, tm.SEP, tm.EOT
		meta.AddBOS, meta.AddEOS, meta.ChatTemplate = tm.AddBOS, tm.AddEOS, tm.ChatTemplate
		m.Config.BOS, m.Config.EOS = validTokenID(tm.BOS, c.VocabSize), validTokenID(tm.EOS, c.VocabSize)
	} else {
		m.Config.BOS, m.Config.EOS = -1, -1
	}
	return m, nil
}

// modelName is general.name, else the file's name without .gguf.
func modelName(name, path string) string {
	if name != "" {
		return name
	}
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// refuseGGUFKeys refuses metadata that changes GPT-2's computation in ways
// the engine does not implement, by name (the other architectures check
// every {arch}.… key: ggufArchConfig).
func refuseGGUFKeys(f *gguf.File, arch string) error {
	if v, ok := f.Get(arch + ".rope.scaling.type"); ok {
		if s, _ := v.Str(); s != "" && s != "none" {
			return fmt.Errorf("%s.rope.scaling.type %q is not supported", arch, s)
		}
	}
	for _, k := range []string{"expert_count", "attention.sliding_window", "attn_logit_softcapping", "final_logit_softcapping"} {
		if v, ok := f.Get(arch + "." + k); ok && !isZero(v) {
			return fmt.Errorf("%s.%s (%s) is not supported", arch, k, v)
		}
	}
	return nil
}

func isZero(v gguf.Value) bool {
	if n, ok := v.Uint(); ok {
		return n == 0
	}
	if n, ok := v.Int(); ok {
		return n == 0
	}
	x, ok := v.Float()
	return ok && x == 0
}

// ggufTensors fetches a file's tensors by name, checking each one's shape,
// until the first error, which it keeps.
type ggufTensors struct {
	f    *gguf.File
	used map[string]bool
	err  error
}

func (g *ggufTensors) tensor(name string, dims ...int) *gguf.TensorInfo {
	if g.err != nil {
		return nil
	}
	t, ok := g.f.Tensor(name)
	if !ok {
		g.err = fmt.Errorf("missing tensor %s", name)
		return nil
	}
	want := make([]uint64, len(dims))
	for i, d := range dims {
		want[i] = uint64(d)
	}
	if !slices.Equal(t.Dims, want) {
		g.err = fmt.Errorf("tensor %s has dims %v (innermost first), the metadata needs %v", name, t.Dims, want)
		return nil
	}
	g.used[name] = true
	return t
}

// mat returns a rows × cols matrix (ggml dims [cols, rows]) as stored.
func (g *ggufTensors) mat(name string, rows, cols int) Mat {
	t := g.tensor(name, cols, rows)
	if t == nil {
		return Mat{}
	}
	switch t.Type {
	case quant.F32:
		return Mat{Rows: rows, Cols: cols, Ld: cols, F32: f32View(t.Data)}
	case quant.BF16:
		return Mat{Rows: rows, Cols: cols, DType: BF16, Ld: cols, BF16: u16View(t.Data)}
	}
	q, err := t.Matrix()
	if err == nil {
		var m Mat
		if m, err = QuantMat(q); err == nil {
			return m
		}
	}
	g.err = err
	return Mat{}
}

// vec returns a float32 tensor of the given dims (a norm's weights, a
// bias, a position table): in place when stored as F32, else widened.
func (g *ggufTensors) vec(name string, dims ...int) []float32 {
	t := g.tensor(name, dims...)
	if t == nil {
		return nil
	}
	if t.Type == quant.F32 {
		return f32View(t.Data)
	}
	out := make([]float32, t.Elements())
	if err := quant.Dequantize(t.Type, out, t.Data); err != nil {
		g.err = fmt.Errorf("tensor %s: %w", name, err)
		return nil
	}
	return out
}

// allUsed refuses a file with tensors the engine would ignore (biases the
// architecture has no place for, rope_freqs, …): running without them
// would compute another model.
func (g *ggufTensors) allUsed(arch string) error {
	for _, t := range g.f.Tensors {
		if !g.used[t.Name] {
			return fmt.Errorf("tensor %s is not part of the %s architecture the engine runs: not supported", t.Name, arch)
		}
	}
	return nil
}

func (g *ggufTensors) gpt2(c Config) Weights {
	d, hd, V := c.Dim, c.HiddenDim, c.VocabSize
	w := Weights{TokenEmbed: g.mat("token_embd.weight", V, d), PosEmbed: g.vec("position_embd.weight", d, c.SeqLen),
		Layers: make([]LayerWeights, c.NLayers)}
	for l := range w.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		lw := &w.Layers[l]
		lw.AttnNorm, lw.AttnNormBias = g.vec(p+"attn_norm.weight", d), g.vec(p+"attn_norm.bias", d)
		qkv := g.mat(p+"attn_qkv.weight", 3*d, d) // q, k, v stacked: rows 0..d−1 are q
		b := g.vec(p+"attn_qkv.bias", 3*d)
		lw.Wo, lw.Bo = g.mat(p+"attn_output.weight", d, d), g.vec(p+"attn_output.bias", d)
		lw.MLPNorm, lw.MLPNormBias = g.vec(p+"ffn_norm.weight", d), g.vec(p+"ffn_norm.bias", d)
		lw.WUp, lw.BUp = g.mat(p+"ffn_up.weight", hd, d), g.vec(p+"ffn_up.bias", hd)
		lw.WDown, lw.BDown = g.mat(p+"ffn_down.weight", d, hd), g.vec(p+"ffn_down.bias", d)
		if g.err != nil {
			return w
		}
		for i, m := range []*Mat{&lw.Wq, &lw.Wk, &lw.Wv} {
			*m = rowsOf(qkv, i*d, (i+1)*d)
		}
		lw.Bq, lw.Bk, lw.Bv = b[:d:d], b[d:2*d:2*d], b[2*d:]
	}
	w.FinalNorm, w.FinalNormBias = g.vec("output_norm.weight", d), g.vec("output_norm.bias", d)
	w.Head = w.TokenEmbed
	if !c.TiedHead {
		w.Head = g.mat("output.weight", V, d)
	}
	return w
}

// rowsOf is rows lo..hi−1 of an [out][in] matrix, sharing its storage.
func rowsOf(m Mat, lo, hi int) Mat {
	switch {
	case m.Q != nil:
		return quantRows(m, lo, hi)
	case m.DType == BF16:
		m.BF16 = m.BF16[lo*m.Ld : hi*m.Ld]
	default:
		m.F32 = m.F32[lo*m.Ld : hi*m.Ld]
	}
	m.Rows = hi - lo
	return m
}
