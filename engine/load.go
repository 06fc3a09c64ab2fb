package engine

import (
	"fmt"
	"os"
	"path/filepath"
)

// LoadModel loads a model from a Hugging Face directory or a llama2.c .bin
// file. For a .bin, tokenizerPath names its tokenizer.bin; empty means
// "tokenizer.bin" beside the checkpoint, if present.
func LoadModel(path, tokenizerPath string) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	var m *Model
	if st.IsDir() {
		m, err = LoadHFDir(path)
	} else {
		m, err = LoadLlama2c(path)
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
		tk, err := LoadTokenizerFile(tokenizerPath, m.Config.VocabSize)
		if err != nil {
			return nil, err
		}
		m.Tokenizer = tk
	}
	return m, nil
}

// LoadTokenizerFile loads a tokenizer from a file: tokenizer.json, a
// directory's files, or llama2.c's tokenizer.bin (which needs vocabSize).
func LoadTokenizerFile(path string, vocabSize int) (Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	if st.IsDir() {
		tk, err := LoadTokenizerDir(path)
		if err == nil && tk == nil {
			err = fmt.Errorf("%s: no tokenizer.json or vocab.json + merges.txt", path)
		}
		return tk, err
	}
	if filepath.Ext(path) == ".json" {
		return LoadTokenizerJSON(path)
	}
	return LoadLlama2cTokenizer(path, vocabSize)
}
