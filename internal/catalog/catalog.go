// Package catalog is the server's set of loaded models: it turns engine
// models into web.ModelCards and web.Runners. cmd/inferscope wires it.
package catalog

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/web"
)

// Catalog holds loaded models; safe for concurrent use.
type Catalog struct {
	mu      sync.RWMutex
	models  map[string]*engine.Model
	notes   map[string]string
	deflt   string
	ordered []string
}

// New makes an empty catalog.
func New() *Catalog {
	return &Catalog{models: map[string]*engine.Model{}, notes: map[string]string{}}
}

// Add registers a model under its name; the first added is the default
// unless asDefault is set later.
func (c *Catalog) Add(m *engine.Model, note string, asDefault bool) error {
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

// Default is the default model's name.
func (c *Catalog) Default() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.deflt
}

// Card describes one model.
func Card(m *engine.Model) web.ModelCard {
	cf := m.Config
	pos := "learned position vectors"
	if cf.Rope != engine.RopeNone {
		pos = "RoPE (" + cf.Rope.String() + ")"
	}
	return web.ModelCard{Name: m.Name, Arch: string(cf.Arch), Source: m.Source, Params: m.Weights.NumParams(), WeightsBytes: m.Weights.Bytes(),
		Layers: cf.NLayers, Dim: cf.Dim, Heads: cf.NHeads, KVHeads: cf.NKVHeads, HeadDim: cf.HeadDim, HiddenDim: cf.HiddenDim,
		Vocab: cf.VocabSize, Context: cf.SeqLen, KVBytesPerToken: cf.KVBytesPerToken(), Tokenizer: m.Tokenizer.Kind(),
		Position: pos, Checksum: m.WeightsChecksum(), Chat: string(tokenizer.ChatStyleFor(m.Tokenizer))}
}

// Models implements web.Catalog: the default first, then in load order.
func (c *Catalog) Models() []web.ModelCard {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := append([]string(nil), c.ordered...)
	sort.SliceStable(names, func(i, j int) bool { return names[i] == c.deflt && names[j] != c.deflt })
	out := make([]web.ModelCard, 0, len(names))
	for _, n := range names {
		card := Card(c.models[n])
		card.Default = n == c.deflt
		card.Note = c.notes[n]
		out = append(out, card)
	}
	return out
}

// Model returns a loaded model by name ("" = the default).
func (c *Catalog) Model(name string) (*engine.Model, error) {
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

// NewRun implements web.Catalog.
func (c *Catalog) NewRun(name string, cfg session.Config) (web.Runner, error) {
	m, err := c.Model(name)
	if err != nil {
		return nil, err
	}
	return session.New(m, cfg)
}
