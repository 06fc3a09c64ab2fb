package main

// model.go: resolving a --model reference (default, HF cache repo id, directory, .bin) to a loaded
// model.

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/models/local"
)

// modelFlags are the flags every model-using command shares.
type modelFlags struct {
	model     *string
	tokenizer *string
	weights   *string
}

func addModelFlags(fs *flag.FlagSet) modelFlags {
	return modelFlags{
		model:     fs.String("model", "default", `model: "default" (embedded), a Hugging Face model directory, a llama2.c .bin file, or a model in Ollama's or LM Studio's store: ollama:NAME[:TAG], lmstudio:PUBLISHER/REPO[/FILE.gguf]`),
		tokenizer: fs.String("tokenizer", "", "tokenizer file (llama2.c tokenizer.bin or tokenizer.json); default: the model's own"),
		weights:   fs.String("weights", "", "weight precision to run: f32, bf16 (half the bytes per token), or q8_0 / q4_0 / q4_k (quantized at load, as llama.cpp's quantizer writes them; q4_k's 256-value blocks fall back to q8_0 for rows they do not divide); default: as stored"),
	}
}

// loadAny loads the model; it may lack a tokenizer.
func (f modelFlags) loadAny() (*engine.Model, error) {
	var dt engine.DType
	convert := false
	if f.weights != nil {
		var err error
		if dt, convert, err = parseWeightsDType(*f.weights); err != nil {
			return nil, err
		}
	}
	if convert && dt == engine.BF16 && isModelPath(*f.model) {
		// converted matrix by matrix as the file is read: the float32 file
		// is never resident beside the BF16 weights
		return engine.LoadModelAs(*f.model, *f.tokenizer, dt)
	}
	m, err := loadModelRef(*f.model, *f.tokenizer)
	if err == nil && convert {
		m = m.WithWeights(dt)
	}
	return m, err
}

// isModelPath reports whether loadModelRef would load ref as a path.
func isModelPath(ref string) bool {
	if ref == "" || ref == "default" || ref == models.DefaultName || local.IsRef(ref) {
		return false
	}
	_, err := os.Stat(ref)
	return err == nil
}

// hubRef loads a hub repo id from the Hugging Face cache, reporting ok=false
// when ref is not a valid repo id; model_hub.go sets it, and the engine-only
// build (-tags engineonly), which has no hub client, leaves it nil.
var hubRef func(ref, tokenizer string) (m *engine.Model, ok bool, err error)

// loadModelRef loads "default", a local store's model (ollama:…, lmstudio:…), a path,
// or a hub repo id found in the Hugging Face cache (pulled by inferscope or by Python tools).
func loadModelRef(ref, tokenizer string) (*engine.Model, error) {
	if ref == "" || ref == "default" || ref == models.DefaultName {
		return models.Default()
	}
	if local.IsRef(ref) {
		return loadLocalRef(ref)
	}
	if _, err := os.Stat(ref); err != nil && hubRef != nil && strings.Contains(ref, "/") {
		if m, ok, err := hubRef(ref, tokenizer); ok {
			return m, err
		}
	}
	return engine.LoadModel(ref, tokenizer)
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

// parseWeightsDType reads a --weights value: "f32", "bf16", "q8_0",
// "q4_0", "q4_k" or "" (as stored); convert reports whether the model is to be
// converted (WithWeights: q8_0, q4_0 and q4_k quantize its matrices at load).
func parseWeightsDType(s string) (d engine.DType, convert bool, err error) {
	switch s {
	case "", "auto":
		return engine.F32, false, nil
	case "f32", "fp32", "float32":
		return engine.F32, true, nil
	case "bf16", "bfloat16":
		return engine.BF16, true, nil
	case "q8_0", "Q8_0":
		return engine.Q8_0, true, nil
	case "q4_0", "Q4_0":
		return engine.Q4_0, true, nil
	case "q4_k", "Q4_K":
		return engine.Q4_K, true, nil
	}
	return engine.F32, false, fmt.Errorf("weights precision %q not supported (allowed: f32, bf16, q8_0, q4_0, q4_k)", s)
}
