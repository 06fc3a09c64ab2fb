package engine

// hf.go: the Hugging Face directory loader: config.json, safetensors weights, the tokenizer beside
// them.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/inferscope/inferscope/engine/tokenizer"
)

// hfConfig is the subset of a Hugging Face config.json the engine reads.
type hfConfig struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures"`
	// Llama family (and the other decoder families, whose own fields hf_arch.go reads)
	HiddenSize        int            `json:"hidden_size"`
	IntermediateSize  int            `json:"intermediate_size"`
	NumHiddenLayers   int            `json:"num_hidden_layers"`
	NumAttentionHeads int            `json:"num_attention_heads"`
	NumKeyValueHeads  int            `json:"num_key_value_heads"`
	HeadDim           int            `json:"head_dim"`
	MaxPositions      int            `json:"max_position_embeddings"`
	RMSNormEps        float64        `json:"rms_norm_eps"`
	RopeTheta         float64        `json:"rope_theta"`
	RopeScaling       map[string]any `json:"rope_scaling"`
	TieWordEmbeddings *bool          `json:"tie_word_embeddings"`
	HiddenAct         string         `json:"hidden_act"`
	AttentionBias     bool           `json:"attention_bias"`
	MLPBias           bool           `json:"mlp_bias"`
	// GPT-2 family
	NEmbd      int     `json:"n_embd"`
	NLayer     int     `json:"n_layer"`
	NHead      int     `json:"n_head"`
	NPositions int     `json:"n_positions"`
	NInner     *int    `json:"n_inner"`
	LNEps      float64 `json:"layer_norm_epsilon"`
	Activation string  `json:"activation_function"`
	// both
	VocabSize int `json:"vocab_size"`
	BOS       any `json:"bos_token_id"`
	EOS       any `json:"eos_token_id"`
}

func tokenID(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case []any:
		if len(x) > 0 {
			return tokenID(x[0])
		}
	}
	return -1
}

// parseHFConfig turns config.json bytes into a Config.
func parseHFConfig(b []byte) (Config, error) {
	c, _, err := parseHFConfigLayout(b)
	return c, err
}

// parseHFConfigLayout is parseHFConfig with how the family's weights are
// laid out (decoder families; GPT-2's loader knows its own).
func parseHFConfigLayout(b []byte) (Config, hfLayout, error) {
	var h hfConfig
	var x hfArchConfig
	if err := json.Unmarshal(b, &h); err != nil {
		return Config{}, hfLayout{}, fmt.Errorf("config.json: %v", err)
	}
	var c Config
	var lay hfLayout
	switch h.ModelType {
	case "gpt2":
		if h.Activation != "" && h.Activation != "gelu_new" && h.Activation != "gelu_pytorch_tanh" {
			return Config{}, lay, fmt.Errorf("config.json: activation_function %q is not supported (want gelu_new)", h.Activation)
		}
		inner := 4 * h.NEmbd
		if h.NInner != nil {
			inner = *h.NInner
		}
		c = Config{Arch: ArchGPT2, Dim: h.NEmbd, HiddenDim: inner, NLayers: h.NLayer, NHeads: h.NHead, NKVHeads: h.NHead,
			VocabSize: h.VocabSize, SeqLen: h.NPositions, NormEps: float32(h.LNEps), Rope: RopeNone, TiedHead: true}
		if c.NHeads > 0 {
			c.HeadDim = c.Dim / c.NHeads
		}
		if c.NormEps == 0 {
			c.NormEps = 1e-5
		}
	case "":
		return Config{}, lay, fmt.Errorf("config.json: no model_type (supported: %s)", archList())
	case "gemma3":
		return Config{}, lay, fmt.Errorf("config.json: model_type gemma3 is Gemma 3's multimodal checkpoint (text_config inside): not supported; the text-only ones (gemma3_text: 270m, 1b) are")
	default:
		if _, ok := decoderFamilies[h.ModelType]; !ok {
			return Config{}, lay, fmt.Errorf("config.json: unknown architecture model_type %q (supported: %s)", h.ModelType, archList())
		}
		if err := json.Unmarshal(b, &x); err != nil {
			return Config{}, lay, fmt.Errorf("config.json: %v", err)
		}
		var err error
		if c, lay, err = parseDecoderConfig(&h, &x); err != nil {
			return Config{}, lay, fmt.Errorf("config.json: %s: %w", h.ModelType, err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, lay, fmt.Errorf("config.json: %w", err)
	}
	c.BOS, c.EOS = validTokenID(tokenID(h.BOS), c.VocabSize), validTokenID(tokenID(h.EOS), c.VocabSize)
	return c, lay, nil
}

// tensorSource finds tensors across one or more safetensors shards.
type tensorSource struct {
	files  map[string]*safetensorsFile // by tensor name
	prefix string                      // "transformer." for HF GPT-2, "" for the original checkpoints
	used   map[string]bool
}

// openTensorSource finds the shards in fsys and reads each with read
// (mapFile for a directory on disk: the tensors are then used in place).
func openTensorSource(fsys fs.FS, dir string, read func(name string) ([]byte, error)) (*tensorSource, error) {
	src := &tensorSource{files: map[string]*safetensorsFile{}, used: map[string]bool{}}
	single := "model.safetensors"
	index := "model.safetensors.index.json"
	var paths []string
	if _, err := fs.Stat(fsys, single); err == nil {
		paths = []string{single}
	} else if b, err := fs.ReadFile(fsys, index); err == nil {
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(b, &idx); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, index), err)
		}
		seen := map[string]bool{}
		for _, f := range idx.WeightMap {
			if strings.Contains(f, "/") || strings.Contains(f, `\`) || strings.HasPrefix(f, ".") {
				return nil, fmt.Errorf("%s: shard name %q is not a plain file name", filepath.Join(dir, index), f)
			}
			if !seen[f] {
				seen[f] = true
				paths = append(paths, f)
			}
		}
		sort.Strings(paths)
		if len(paths) == 0 {
			return nil, fmt.Errorf("%s: weight_map is empty", filepath.Join(dir, index))
		}
	} else {
		return nil, fmt.Errorf("%s: no model.safetensors or model.safetensors.index.json", dir)
	}
	for _, p := range paths {
		b, err := read(p)
		if err != nil {
			return nil, fmt.Errorf("load model: %w", err)
		}
		f, err := newSafetensors(filepath.Join(dir, p), b)
		if err != nil {
			return nil, err
		}
		for name := range f.Tensors {
			src.files[name] = f
		}
	}
	return src, nil
}

// get returns tensor name (with the source's prefix) converted to float32,
// checking its shape.
func (s *tensorSource) get(name string, shape ...int) ([]float32, error) {
	full := s.prefix + name
	f, ok := s.files[full]
	if !ok {
		var where []string
		for _, ff := range s.files {
			where = append(where, ff.Path)
			break
		}
		return nil, fmt.Errorf("%s: missing tensor %q", strings.Join(where, ","), full)
	}
	ti := f.Tensors[full]
	if !slices.Equal(ti.Shape, shape) {
		return nil, fmt.Errorf("%s: tensor %q has shape %v, the config needs %v", f.Path, full, ti.Shape, shape)
	}
	s.used[full] = true
	v, _, err := f.Float32(full)
	return v, err
}

// dataBytes is the tensor data the shards hold, in bytes.
func (s *tensorSource) dataBytes() int64 {
	seen := map[*safetensorsFile]bool{}
	var n int64
	for _, f := range s.files {
		if !seen[f] {
			seen[f] = true
			n += int64(len(f.data))
		}
	}
	return n
}

// mat returns tensor name as a Mat without converting F32 or BF16 data. An
// [in][out] tensor (inOut) of shape [r][c] is a c-output × r-input Mat; in
// BF16 it is transposed into a new [out][in] array (the BF16 kernels read
// only that layout).
func (s *tensorSource) mat(name string, inOut bool, r, c int) (Mat, error) {
	full := s.prefix + name
	f, ok := s.files[full]
	if !ok {
		return Mat{}, fmt.Errorf("%s: missing tensor %q", s.anyPath(), full)
	}
	ti := f.Tensors[full]
	if !slices.Equal(ti.Shape, []int{r, c}) {
		return Mat{}, fmt.Errorf("%s: tensor %q has shape %v, the config needs %v", f.Path, full, ti.Shape, []int{r, c})
	}
	s.used[full] = true
	b := f.data[ti.Offset[0]:ti.Offset[1]]
	m := Mat{Rows: r, Cols: c, Ld: c}
	if inOut {
		m = Mat{Rows: c, Cols: r, InOut: true, Ld: c}
	}
	switch ti.DType {
	case "F32":
		m.F32 = f32View(b)
	case "BF16":
		m.DType, m.BF16 = BF16, u16View(b)
		if inOut {
			m = m.toBF16()
		}
	default:
		v, _, err := f.Float32(full)
		if err != nil {
			return Mat{}, err
		}
		m.F32 = v
	}
	return m, nil
}

func (s *tensorSource) anyPath() string {
	for _, f := range s.files {
		return f.Path
	}
	return ""
}

func (s *tensorSource) has(name string) bool { _, ok := s.files[s.prefix+name]; return ok }

// LoadHFDir loads a Hugging Face model directory: config.json, weights from
// model.safetensors (or shards listed in model.safetensors.index.json), and
// the tokenizer from tokenizer.json or vocab.json + merges.txt.
func LoadHFDir(dir string) (*Model, error) {
	return loadHF(os.DirFS(dir), dir, func(name string) ([]byte, error) { return mapFile(filepath.Join(dir, name)) })
}

// LoadHF loads a Hugging Face model from the root of fsys (a directory, or
// files embedded in the binary); dir names it in errors.
func LoadHF(fsys fs.FS, dir string) (*Model, error) {
	return loadHF(fsys, dir, func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) })
}

func loadHF(fsys fs.FS, dir string, read func(name string) ([]byte, error)) (_ *Model, err error) {
	defer recoverLoad("model "+dir, &err)
	cb, err := fs.ReadFile(fsys, "config.json")
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	c, lay, err := parseHFConfigLayout(cb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	src, err := openTensorSource(fsys, dir, read)
	if err != nil {
		return nil, err
	}
	if err := checkWeightBytes(c, src.dataBytes()); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var w Weights
	if c.Arch == ArchGPT2 {
		w, err = loadHFGPT2(src, &c)
	} else {
		w, err = loadHFDecoder(src, c, lay)
	}
	if err != nil {
		return nil, err
	}
	m := &Model{Name: filepath.Base(filepath.Clean(dir)), Source: dir, Config: c, Weights: w}
	tok, err := tokenizer.LoadFS(fsys, dir)
	if err != nil {
		return nil, err
	}
	m.Tokenizer = tok
	if tok != nil && tok.VocabSize() > c.VocabSize {
		return nil, fmt.Errorf("%s: tokenizer has %d tokens but the model's vocab_size is %d", dir, tok.VocabSize(), c.VocabSize)
	}
	return m, nil
}

func loadHFGPT2(s *tensorSource, c *Config) (Weights, error) {
	if s.has("transformer.wte.weight") {
		s.prefix = "transformer."
	}
	d, hd, V := c.Dim, c.HiddenDim, c.VocabSize
	var w Weights
	g := &getter{src: s}
	first := g.get
	w.TokenEmbed = g.mat("wte.weight", V, d)
	w.PosEmbed = first("wpe.weight", c.SeqLen, d)
	w.Layers = make([]LayerWeights, c.NLayers)
	for l := range w.Layers {
		p := fmt.Sprintf("h.%d.", l)
		lw := &w.Layers[l]
		lw.AttnNorm = first(p+"ln_1.weight", d)
		lw.AttnNormBias = first(p+"ln_1.bias", d)
		cattn := g.matInOut(p+"attn.c_attn.weight", d, 3*d) // Conv1D: [in][out], used as stored
		battn := first(p+"attn.c_attn.bias", 3*d)
		lw.Wo = g.matInOut(p+"attn.c_proj.weight", d, d)
		lw.Bo = first(p+"attn.c_proj.bias", d)
		lw.MLPNorm = first(p+"ln_2.weight", d)
		lw.MLPNormBias = first(p+"ln_2.bias", d)
		lw.WUp = g.matInOut(p+"mlp.c_fc.weight", d, hd)
		lw.BUp = first(p+"mlp.c_fc.bias", hd)
		lw.WDown = g.matInOut(p+"mlp.c_proj.weight", hd, d)
		lw.BDown = first(p+"mlp.c_proj.bias", d)
		if g.err != nil {
			return w, g.err
		}
		// c_attn's outputs 0..d-1 are q, then k, then v: three views of it
		// (columns of the [in][out] array, or rows once transposed for BF16)
		for i, m := range []*Mat{&lw.Wq, &lw.Wk, &lw.Wv} {
			*m = cattn
			m.Rows = d
			if cattn.InOut {
				m.Off = i * d
			} else {
				m.BF16 = cattn.BF16[i*d*d : (i+1)*d*d]
			}
		}
		lw.Bq, lw.Bk, lw.Bv = battn[:d:d], battn[d:2*d:2*d], battn[2*d:]
	}
	w.FinalNorm = first("ln_f.weight", d)
	w.FinalNormBias = first("ln_f.bias", d)
	w.Head = w.TokenEmbed
	if g.err == nil && s.has("lm_head.weight") {
		// Some exports write the head out separately; use it as stored.
		if head := g.mat("lm_head.weight", V, d); g.err == nil {
			w.Head = head
			c.TiedHead = false
		}
	}
	return w, g.err
}

// getter fetches tensors until the first error, which it keeps.
type getter struct {
	src *tensorSource
	err error
}

func (g *getter) get(name string, shape ...int) []float32 {
	if g.err != nil {
		return nil
	}
	var v []float32
	v, g.err = g.src.get(name, shape...)
	return v
}

// mat fetches an [out][in] matrix stored as PyTorch's nn.Linear does, in
// its stored precision: F32 and BF16 are used in place, F16 is widened.
func (g *getter) mat(name string, rows, cols int) Mat {
	if g.err != nil {
		return Mat{}
	}
	var m Mat
	m, g.err = g.src.mat(name, false, rows, cols)
	return m
}

// matInOut fetches a GPT-2 Conv1D weight stored [in][out] (shape [rows][cols]
// on disk, used as a cols-output × rows-input Mat).
func (g *getter) matInOut(name string, in, out int) Mat {
	if g.err != nil {
		return Mat{}
	}
	var m Mat
	m, g.err = g.src.mat(name, true, in, out)
	return m
}
