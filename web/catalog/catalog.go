package catalog

// catalog.go: the adapter from loaded engine models to the contract in
// contract.go — EngineCatalog holds the models, describes each as a
// ModelCard and starts session runs on them. cmd/inferscope fills it.

import (
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/models"
)

// EngineCatalog holds loaded models and implements Catalog; safe for
// concurrent use.
type EngineCatalog struct {
	mu      sync.RWMutex
	models  map[string]*engine.Model
	notes   map[string]string
	docs    map[string]fs.FS
	trained map[string]*Training
	deflt   string
	ordered []string
	sched   schedulers // batching (batching.go)
}

// NewEngineCatalog makes an empty catalog.
func NewEngineCatalog() *EngineCatalog {
	return &EngineCatalog{models: map[string]*engine.Model{}, notes: map[string]string{}, docs: map[string]fs.FS{}, trained: map[string]*Training{}}
}

// Add registers a model under its name; the first added is the default
// unless asDefault is set later.
func (c *EngineCatalog) Add(m *engine.Model, note string, asDefault bool) error {
	if m.Tokenizer == nil {
		return fmt.Errorf("model %s has no tokenizer; the lab needs one", m.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.models[m.Name]; dup {
		return fmt.Errorf("a model named %q is already loaded", m.Name)
	}
	c.models[m.Name] = m
	c.notes[m.Name] = note
	c.ordered = append(c.ordered, m.Name)
	if asDefault || c.deflt == "" {
		c.deflt = m.Name
	}
	m.WeightsChecksum() // compute once now, not in the first run
	return nil
}

// AddDocs gives a loaded model a card page: docs holds MODEL_CARD.md and
// the images it links (served at /models/NAME/card and /models/NAME/FILE);
// trained, if not nil, summarises its training on the card.
func (c *EngineCatalog) AddDocs(name string, docs fs.FS, trained *Training) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.models[name]; !ok {
		return fmt.Errorf("no model named %q is loaded", name)
	}
	if _, err := fs.Stat(docs, "MODEL_CARD.md"); err != nil {
		return fmt.Errorf("model %s: docs without MODEL_CARD.md", name)
	}
	c.docs[name] = docs
	c.trained[name] = trained
	return nil
}

// ModelDocs returns a model's card files, if it has any.
func (c *EngineCatalog) ModelDocs(name string) (fs.FS, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d, ok := c.docs[name]
	return d, ok
}

// card describes a loaded model with what the catalog adds: default, note
// and card page. Callers hold c.mu.
func (c *EngineCatalog) card(m *engine.Model) ModelCard {
	card := ModelCardFor(m)
	card.Default, card.Note = m.Name == c.deflt, c.notes[m.Name]
	if _, ok := c.docs[m.Name]; ok {
		card.CardURL = "/models/" + url.PathEscape(m.Name) + "/card"
		card.Trained = c.trained[m.Name]
	}
	return card
}

// Default is the default model's name.
func (c *EngineCatalog) Default() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.deflt
}

// ModelCardFor describes one model.
func ModelCardFor(m *engine.Model) ModelCard {
	cf := m.Config
	pos := "learned position vectors"
	if cf.Rope != engine.RopeNone {
		pos = "RoPE (" + cf.Rope.String() + ")"
	}
	return ModelCard{Name: m.Name, Arch: string(cf.Arch), Source: DisplaySource(m.Source), Params: m.Weights.NumParams(), WeightsBytes: m.Weights.Bytes(),
		Precision: m.Precision(), Layers: cf.NLayers, Dim: cf.Dim, Heads: cf.NHeads, KVHeads: cf.NKVHeads, HeadDim: cf.HeadDim, HiddenDim: cf.HiddenDim,
		Vocab: cf.VocabSize, Context: cf.SeqLen, KVBytesPerToken: cf.KVBytesPerToken(), Tokenizer: m.Tokenizer.Kind(),
		Position: pos, Checksum: m.WeightsChecksum(), Chat: string(tokenizer.ChatStyleFor(m.Tokenizer)), Shape: modelShape(m),
		EOSID: m.Tokenizer.EOS(), WeightTypes: m.Weights.ByType(), Quantized: m.Weights.DType().IsQuantized(), OriginalsKnown: m.Original != nil}
}

// WeightBlock takes apart one block of a loaded model's weight matrix
// ("" = the default model): engine.Model.WeightBlock.
func (c *EngineCatalog) WeightBlock(model string, r engine.WeightBlockRequest) (*engine.WeightBlock, error) {
	m, err := c.Model(model)
	if err != nil {
		return nil, err
	}
	return m.WeightBlock(r)
}

// modelShape describes m's structure for the model view.
func modelShape(m *engine.Model) ModelShape {
	c := m.Config
	s := ModelShape{Norm: "RMSNorm", MLP: c.MLPForm().String(), Rope: c.Rope != engine.RopeNone, Params: m.Weights.PartParams(),
		Family: string(c.Arch), QKNorm: c.QKNorm, Window: c.Window, RopeScaling: c.RopeScaling.String(), RopeLocalTheta: c.RopeLocalTheta,
		RotaryDims: c.RotaryDim, EmbedScale: c.EmbedScale, AttnScale: c.AttnScale(), AttnSoftcap: c.AttnSoftcap, FinalSoftcap: c.FinalSoftcap}
	switch {
	case c.Arch == engine.ArchGPT2:
		s.Norm = "LayerNorm"
	case c.NormPlusOne:
		s.Norm = "RMSNorm (1+w)"
	}
	if s.Rope {
		s.RopeTheta = c.RopeTheta
	}
	if c.Arch == engine.ArchPhi3 {
		s.Fused = "qkv_proj,gate_up_proj"
	}
	if len(m.Weights.Layers) > 0 {
		l := &m.Weights.Layers[0]
		s.PostNorms = l.PostAttnNorm != nil
		var b []string
		for i, v := range [][]float32{l.Bq, l.Bk, l.Bv, l.Bo} {
			if v != nil {
				b = append(b, []string{"q", "k", "v", "o"}[i])
			}
		}
		s.Bias = strings.Join(b, ",")
	}
	if c.Window > 0 {
		s.Local = make([]bool, c.NLayers)
		for l := range s.Local {
			s.Local[l] = c.Sliding(l)
		}
	}
	return s
}

// DisplaySource is where a model came from, as visitors may see it: a
// file system path is cut to its last element (no server paths leak).
func DisplaySource(src string) string {
	if filepath.IsAbs(src) || strings.ContainsAny(src, `/\`) && !strings.Contains(src, ":") {
		return filepath.Base(filepath.Clean(src))
	}
	return src
}

// Models implements Catalog: the default first, then in load order.
func (c *EngineCatalog) Models() []ModelCard {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := append([]string(nil), c.ordered...)
	sort.SliceStable(names, func(i, j int) bool { return names[i] == c.deflt && names[j] != c.deflt })
	out := make([]ModelCard, 0, len(names))
	for _, n := range names {
		out = append(out, c.card(c.models[n]))
	}
	return out
}

// Model returns a loaded model by name ("" = the default).
func (c *EngineCatalog) Model(name string) (*engine.Model, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if name == "" {
		name = c.deflt
	}
	m, ok := c.models[name]
	if !ok {
		return nil, fmt.Errorf("unknown model %q (loaded: %s)", name, strings.Join(c.ordered, ", "))
	}
	return m, nil
}

// NewRun implements Catalog: a session on the named model and its card.
func (c *EngineCatalog) NewRun(name string, cfg session.Config) (Run, error) {
	m, err := c.Model(name)
	if err != nil {
		return Run{}, err
	}
	s, err := session.New(m, cfg)
	if err != nil {
		return Run{}, err
	}
	c.schedule(m, s)
	c.mu.RLock()
	card := c.card(m)
	c.mu.RUnlock()
	return Run{Runner: s, Model: card}, nil
}

// DefaultCatalog is a catalog holding only the embedded default model
// (tests and tools).
func DefaultCatalog() (*EngineCatalog, error) {
	m, err := models.Default()
	if err != nil {
		return nil, err
	}
	cat := NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		return nil, err
	}
	return cat, nil
}
