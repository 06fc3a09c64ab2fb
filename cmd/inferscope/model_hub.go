//go:build !engineonly

package main

// model_hub.go: model references that are hub repo ids ("owner/name"),
// resolved in the Hugging Face cache (pulled by inferscope or by Python tools).

import (
	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/hub"
)

func init() {
	hubRef = func(ref, tokenizer string) (*engine.Model, bool, error) {
		if hub.ValidRepo(ref) != nil {
			return nil, false, nil
		}
		dir, err := hub.FromEnv().Resolve(ref, "")
		if err != nil {
			return nil, true, err
		}
		m, err := engine.LoadModel(dir, tokenizer)
		if err != nil {
			return nil, true, err
		}
		m.Name, m.Source = ref, "hf-cache:"+ref // no server path in what visitors see
		return m, true, nil
	}
}
