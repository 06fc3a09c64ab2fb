package main

// model_local.go: model references to the stores of Ollama and LM Studio on this machine
// ("ollama:NAME[:TAG]", "lmstudio:PUBLISHER/REPO[/FILE.gguf]"), resolved by models/local to a GGUF
// file and opened by the engine's GGUF loader; serve --local-models offers every model they hold.

import (
	"fmt"
	"log/slog"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/local"
)

// loadGGUF opens a GGUF file as a model: the one place the local stores
// reach the engine's GGUF loader; tests replace it.
var loadGGUF = engine.LoadGGUF

// localStores is where the stores are looked for; tests replace it.
var localStores = local.FromEnv

// loadLocalRef resolves an ollama: or lmstudio: reference and opens its
// GGUF file. The model is named by its reference, so no server path
// reaches what visitors see.
func loadLocalRef(ref string) (*engine.Model, error) {
	lm, err := localStores().Resolve(ref)
	if err != nil {
		return nil, err
	}
	return openLocal(lm)
}

func openLocal(lm local.Model) (*engine.Model, error) {
	m, err := loadGGUF(lm.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lm.Ref, err)
	}
	m.Name, m.Source = lm.Ref, lm.Ref
	return m, nil
}

// localModels lists the stores' models for serve --local-models and opens
// each: a model that does not open is logged and left out, so one broken
// entry does not stop the server.
func localModels(lg *slog.Logger) []*engine.Model {
	st := localStores()
	list, probs, err := st.List()
	if err != nil {
		lg.Warn("local models: cannot list the stores", "err", err)
		return nil
	}
	for _, p := range probs {
		lg.Warn("local models: entry skipped", "name", p.Name, "err", p.Err)
	}
	var out []*engine.Model
	for _, lm := range list {
		m, err := openLocal(lm)
		if err != nil {
			lg.Warn("local models: not offered", "ref", lm.Ref, "bytes", lm.Size, "err", err)
			continue
		}
		out = append(out, m)
	}
	lg.Info("local models", "ollama", st.Ollama, "lmstudio", st.LMStudio, "found", len(list), "offered", len(out))
	return out
}
