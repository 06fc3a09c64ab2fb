// Package models ships inferscope's default model inside the binary: a small
// Llama-style model trained by scripts/train on public-domain and
// permissively licensed English text (see default/MODEL_CARD.md), stored in
// the same Hugging Face layout as downloaded models.
package models

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/inferscope/inferscope/engine"
)

//go:embed default/config.json default/model.safetensors default/tokenizer.json default/generation_config.json default/MODEL_CARD.md default/golden.json default/training.json default/loss_curve.svg
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
