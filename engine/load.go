package engine

// load.go: LoadModel: a path to a model, whichever format it is.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferscope/inferscope/engine/tokenizer"
)

// LoadModel loads a model from a Hugging Face directory, a GGUF file
// (gguf_load.go) or a llama2.c .bin file. For a .bin, tokenizerPath names its tokenizer.bin; empty means
// "tokenizer.bin" beside the checkpoint, if present.
func LoadModel(path, tokenizerPath string) (_ *Model, err error) {
	defer recoverLoad("model "+path, &err)
	return loadModelWith(path, tokenizerPath, mapFile)
}

// loadModelWith is LoadModel reading a Hugging Face directory's shards or
// a llama2.c file with read (mapFile, or loadconvert.go's mapping).
func loadModelWith(path, tokenizerPath string, read func(path string) ([]byte, error)) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	var m *Model
	if st.IsDir() {
		m, err = loadHF(os.DirFS(path), path, func(name string) ([]byte, error) { return read(filepath.Join(path, name)) })
	} else if isGGUF(path) {
		m, err = LoadGGUF(path)
	} else {
		m, err = loadLlama2cWith(path, read)
		if tokenizerPath == "" {
			if p := filepath.Join(filepath.Dir(path), "tokenizer.bin"); fileExists(p) {
				tokenizerPath = p
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if tokenizerPath != "" { // an explicit tokenizer replaces the directory's own
		tk, err := tokenizer.LoadTokenizerFile(tokenizerPath, m.Config.VocabSize)
		if err != nil {
			return nil, err
		}
		m.Tokenizer = tk
	}
	return m, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
