package main

import (
	"flag"
	"fmt"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
)

// modelFlags are the flags every model-using command shares.
type modelFlags struct {
	model     *string
	tokenizer *string
}

func addModelFlags(fs *flag.FlagSet) modelFlags {
	return modelFlags{
		model:     fs.String("model", "default", `model: "default" (embedded), a Hugging Face model directory, or a llama2.c .bin file`),
		tokenizer: fs.String("tokenizer", "", "tokenizer file (llama2.c tokenizer.bin or tokenizer.json); default: the model's own"),
	}
}

// loadAny loads the model; it may lack a tokenizer.
func (f modelFlags) loadAny() (*engine.Model, error) {
	if *f.model == "" || *f.model == "default" {
		return models.Default()
	}
	return engine.LoadModel(*f.model, *f.tokenizer)
}

// load loads the model and insists on a tokenizer.
func (f modelFlags) load() (*engine.Model, error) {
	m, err := f.loadAny()
	if err != nil {
		return nil, err
	}
	if m.Tokenizer == nil {
		return nil, fmt.Errorf("model %s has no tokenizer: pass --tokenizer", *f.model)
	}
	return m, nil
}
