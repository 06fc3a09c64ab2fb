//go:build !engineonly

package main

// model_local_test.go: --model ollama:… / lmstudio:… and serve --local-models on stores
// fabricated in temp dirs; the GGUF loader stubbed where a model must open.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models/local"
)

// fakeStores writes an Ollama store with smollm2:latest and an LM Studio
// store with one file, and points localStores at them.
func fakeStores(t *testing.T) (ollamaBlob, lmFile string) {
	t.Helper()
	root, lms := t.TempDir(), t.TempDir()
	data := []byte("GGUF\x03\x00\x00\x00fake")
	sum := sha256.Sum256(data)
	ollamaBlob = filepath.Join(root, "blobs", "sha256-"+hex.EncodeToString(sum[:]))
	man, _ := json.Marshal(map[string]any{"schemaVersion": 2, "layers": []map[string]any{
		{"mediaType": local.ModelMediaType, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(data)}}})
	lmFile = filepath.Join(lms, "pub", "repo", "m-q8_0.gguf")
	for p, b := range map[string][]byte{
		ollamaBlob: data,
		filepath.Join(root, "manifests", "registry.ollama.ai", "library", "smollm2", "latest"): man,
		lmFile: data,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := localStores
	localStores = func() local.Stores { return local.Stores{Ollama: root, LMStudio: []string{lms}} }
	t.Cleanup(func() { localStores = old })
	return ollamaBlob, lmFile
}

func TestLocalModelRefs(t *testing.T) {
	fakeStores(t)
	for _, c := range []struct{ ref, want string }{
		{"ollama:smollm2", "ollama:smollm2:latest: "},
		{"lmstudio:pub/repo", "lmstudio:pub/repo/m-q8_0.gguf: "},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"generate", "--model", c.ref, "--prompt", "hi", "--max-tokens", "1"}, &out, &errb)
		// the fake blob is a truncated GGUF: the engine's loader refuses it by what is wrong
		if code == 0 || !strings.Contains(errb.String(), c.want) || !strings.Contains(errb.String(), "gguf: tensor count") {
			t.Errorf("%s: exit %d, stderr %q", c.ref, code, errb.String())
		}
	}
	for _, c := range []struct{ ref, want string }{
		{"ollama:qwen3:0.6b", "not in the store"},
		{"ollama:../x", "not a valid name"},
		{"lmstudio:../../etc/passwd.gguf", "not a valid name"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"generate", "--model", c.ref, "--prompt", "hi"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q", c.ref, code, errb.String())
		}
	}
}

func TestServeLocalModels(t *testing.T) {
	blob, lmFile := fakeStores(t)
	var logs bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logs, nil))

	// Off by default: the stores are not even listed.
	cat, err := buildCatalog(nil, "", "", false, lg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cat.Models()); n != 1 || strings.Contains(logs.String(), "local models") {
		t.Fatalf("%d models without --local-models; log %s", n, logs.String())
	}

	// On, with a file the GGUF loader refuses: listed, logged, not offered.
	cat, err = buildCatalog(nil, "", "", true, lg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cat.Models()); n != 1 || !strings.Contains(logs.String(), "gguf: tensor count") {
		t.Fatalf("%d models; log %s", n, logs.String())
	}

	// On, with a loader: both offered under their references, no path shown.
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	opened := map[string]bool{}
	old := loadGGUF
	loadGGUF = func(path string) (*engine.Model, error) {
		opened[path] = true
		return engine.LoadModel(dir, "")
	}
	t.Cleanup(func() { loadGGUF = old })
	cat, err = buildCatalog(nil, "", "ollama:smollm2:latest", true, lg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range cat.Models() {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "ollama:smollm2:latest") || !strings.Contains(got, "lmstudio:pub/repo/m-q8_0.gguf") {
		t.Errorf("models %q", got)
	}
	if !opened[blob] || !opened[lmFile] {
		t.Errorf("opened %v", opened)
	}
}
