// Package models ships inferscope's default model inside the binary: a small
// Llama-style model trained by scripts/train on public-domain and
// permissively licensed English text (see default/MODEL_CARD.md), stored in
// the same Hugging Face layout as downloaded models.
package models

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/inferscope/inferscope/engine"
)

//go:embed default/config.json default/model.safetensors default/tokenizer.json default/generation_config.json default/MODEL_CARD.md default/golden.json default/training.json default/loss_curve.svg default/capitals_eval.json
var files embed.FS

// DefaultName is the default model's name in the UI and CLI.
const DefaultName = "inferscope-default"

var (
	once  sync.Once
	model *engine.Model
	err   error
)

// Default returns the embedded model, loaded once and shared (its weights
// are read-only).
func Default() (*engine.Model, error) {
	once.Do(func() {
		sub, e := fs.Sub(files, "default")
		if e != nil {
			err = e
			return
		}
		model, err = engine.LoadHF(sub, "embedded:"+DefaultName)
		if err == nil {
			model.Name = DefaultName
		}
	})
	return model, err
}

// Docs holds the default model's card page: MODEL_CARD.md and the images
// it links.
func Docs() fs.FS {
	sub, err := fs.Sub(files, "default")
	if err != nil {
		panic(err) // "default" is a valid path; fs.Sub fails only on invalid ones
	}
	return sub
}

// File returns one of the embedded files (MODEL_CARD.md, golden.json, training.json, ...).
func File(name string) ([]byte, error) { return files.ReadFile("default/" + name) }

// Trained summarises the default model's training and what it knows, from
// its training.json and capitals_eval.json.
type Trained struct {
	Corpus        string
	Tokens        int64   // training tokens seen
	Minutes       float64 // training wall time
	Hardware      string
	ValLoss       float64 // final held-out loss, nats per token
	CapitalsRight int
	CapitalsTotal int
}

// Training reads the default model's training summary.
func Training() (Trained, error) {
	var t struct {
		Tokens  int64   `json:"tokens_seen"`
		Minutes float64 `json:"train_minutes"`
		ValLoss float64 `json:"final_val_loss"`
		Device  string  `json:"device"` // "NVIDIA H200", "CPU (1 torch threads)"; absent before GPU training
	}
	var c CapitalEval
	for name, v := range map[string]any{"training.json": &t, "capitals_eval.json": &c} {
		b, err := File(name)
		if err != nil {
			return Trained{}, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return Trained{}, fmt.Errorf("default model %s: %w", name, err)
		}
	}
	return Trained{
		Corpus: "the Brown Corpus, US State of the Union addresses and sentences about the world's countries",
		Tokens: t.Tokens, Minutes: t.Minutes, Hardware: hardware(t.Device), ValLoss: t.ValLoss,
		CapitalsRight: c.Right, CapitalsTotal: c.Total,
	}, nil
}

// hardware says in words where training.json's run trained: a GPU by its
// name, else the 2-core machine the CPU recipe is written for.
func hardware(device string) string {
	if device == "" || strings.HasPrefix(device, "CPU") {
		return "2 CPU cores"
	}
	return "one " + device + " GPU"
}
