package local

// local_test.go: Ollama and LM Studio stores fabricated in temp dirs: resolution, listing,
// missing blobs, bad digests, size mismatches, names that would leave the store.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gguf is a stand-in GGUF file: the magic and some bytes.
func gguf(tag string) []byte { return append([]byte("GGUF\x03\x00\x00\x00"), tag...) }

type layer struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

// addOllama writes a blob and a manifest naming it; it returns the blob path.
func addOllama(t *testing.T, root, host, ns, name, tag string, data []byte, edit func(*[]layer)) string {
	t.Helper()
	sum := sha256.Sum256(data)
	hexd := hex.EncodeToString(sum[:])
	blob := filepath.Join(root, "blobs", "sha256-"+hexd)
	must(t, os.MkdirAll(filepath.Dir(blob), 0o755))
	must(t, os.WriteFile(blob, data, 0o644))
	layers := []layer{
		{MediaType: "application/vnd.ollama.image.template", Digest: "sha256:" + strings.Repeat("a", 64), Size: 10},
		{MediaType: ModelMediaType, Digest: "sha256:" + hexd, Size: int64(len(data))},
	}
	if edit != nil {
		edit(&layers)
	}
	man, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json", "layers": layers})
	mp := filepath.Join(root, "manifests", host, ns, name, tag)
	must(t, os.MkdirAll(filepath.Dir(mp), 0o755))
	must(t, os.WriteFile(mp, man, 0o644))
	return blob
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOllama(t *testing.T) {
	root := t.TempDir()
	s := Stores{Ollama: root}
	qwen := addOllama(t, root, defaultHost, "library", "qwen2.5", "0.5b", gguf("qwen"), nil)
	latest := addOllama(t, root, defaultHost, "library", "smollm2", "latest", gguf("smol"), nil)
	user := addOllama(t, root, defaultHost, "someone", "tiny", "q8_0", gguf("tiny"), nil)
	addOllama(t, root, defaultHost, "library", "gone", "latest", gguf("gone"), func(l *[]layer) {
		(*l)[1].Digest = "sha256:" + strings.Repeat("0", 64) // blob never written
	})
	addOllama(t, root, defaultHost, "library", "baddigest", "latest", gguf("bd"), func(l *[]layer) {
		(*l)[1].Digest = "sha256:../../etc/passwd"
	})
	addOllama(t, root, defaultHost, "library", "short", "latest", gguf("short"), func(l *[]layer) { (*l)[1].Size += 100 })
	addOllama(t, root, defaultHost, "library", "nomodel", "latest", gguf("nm"), func(l *[]layer) { *l = (*l)[:1] })
	notGGUF := addOllama(t, root, defaultHost, "library", "notgguf", "latest", []byte("NOPE...."), nil)

	for _, c := range []struct{ ref, path, name string }{
		{"ollama:qwen2.5:0.5b", qwen, "qwen2.5:0.5b"},
		{"ollama:smollm2", latest, "smollm2:latest"},
		{"ollama:library/smollm2:latest", latest, "smollm2:latest"},
		{"ollama:registry.ollama.ai/library/smollm2:latest", latest, "smollm2:latest"},
		{"ollama:someone/tiny:q8_0", user, "someone/tiny:q8_0"},
	} {
		m, err := s.Resolve(c.ref)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		if m.Path != c.path || m.Name != c.name || m.Store != "ollama" || m.Size != int64(len(gguf("qwen"))) && c.name == "qwen2.5:0.5b" {
			t.Errorf("%s: %+v", c.ref, m)
		}
		if m.Ref != OllamaPrefix+c.name {
			t.Errorf("%s: ref %q", c.ref, m.Ref)
		}
	}
	for _, c := range []struct{ ref, want string }{
		{"ollama:absent", "not in the store"},
		{"ollama:qwen2.5:7b", "not in the store"},
		{"ollama:gone", "blob of gone:latest missing"},
		{"ollama:baddigest", "is not sha256:<64 hex digits>"},
		{"ollama:short", "the manifest says"},
		{"ollama:nomodel", "no application/vnd.ollama.image.model layer"},
		{"ollama:notgguf", "not a GGUF file"},
		{"ollama:", "empty model name"},
		{"ollama:../../../etc/passwd", "not a valid name"},
		{"ollama:..", "not a valid name"},
		{"ollama:qwen2.5:../../x", "not a valid name"},
		{"ollama:a/b/c/d", "too many parts"},
		{"ollama:/etc/passwd", "not a valid name"},
		{`ollama:a\..\b`, "not a valid name"},
	} {
		_, err := s.Resolve(c.ref)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.ref, err, c.want)
		}
	}
	if _, err := s.Resolve("ollama:absent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent: %v is not ErrNotFound", err)
	}

	list, probs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "qwen2.5:0.5b smollm2:latest someone/tiny:q8_0" {
		t.Errorf("listed %q", got)
	}
	if len(probs) != 5 {
		t.Errorf("%d problems: %+v", len(probs), probs)
	}
	_ = notGGUF
}

func TestOllamaFromEnv(t *testing.T) {
	t.Setenv("OLLAMA_MODELS", "/x/models")
	t.Setenv("HOME", "/home/student")
	s := FromEnv()
	if s.Ollama != "/x/models" || len(s.LMStudio) != 2 || s.LMStudio[0] != "/home/student/.lmstudio/models" {
		t.Errorf("%+v", s)
	}
	t.Setenv("OLLAMA_MODELS", "")
	if s := FromEnv(); s.Ollama != "/home/student/.ollama/models" {
		t.Errorf("%+v", s)
	}
}

func TestLMStudio(t *testing.T) {
	newer, older := t.TempDir(), t.TempDir()
	s := Stores{LMStudio: []string{newer, older}}
	write := func(root, rel string, data []byte) string {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, data, 0o644))
		return p
	}
	q8 := write(newer, "Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf", gguf("q8"))
	write(newer, "Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf", gguf("q4"))
	one := write(older, "lmstudio-community/SmolLM2-360M-Instruct-GGUF/SmolLM2-360M-Instruct-Q8_0.gguf", gguf("s"))
	write(older, "lmstudio-community/SmolLM2-360M-Instruct-GGUF/mmproj-model-f16.gguf", gguf("proj"))
	write(newer, "bad/repo/broken.gguf", []byte("not gguf"))
	write(newer, "bad/repo/README.md", []byte("x"))

	for _, c := range []struct{ ref, path, name string }{
		{"lmstudio:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf", q8, "Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf"},
		{"lmstudio:lmstudio-community/SmolLM2-360M-Instruct-GGUF", one, "lmstudio-community/SmolLM2-360M-Instruct-GGUF/SmolLM2-360M-Instruct-Q8_0.gguf"},
	} {
		m, err := s.Resolve(c.ref)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		if m.Path != c.path || m.Name != c.name || m.Ref != LMStudioPrefix+c.name {
			t.Errorf("%s: %+v", c.ref, m)
		}
	}
	for _, c := range []struct{ ref, want string }{
		{"lmstudio:Qwen/Qwen2.5-0.5B-Instruct-GGUF", "holds 2 GGUF files, name one"},
		{"lmstudio:Qwen/absent", "not in the store"},
		{"lmstudio:bad/repo/broken.gguf", "not a GGUF file"},
		{"lmstudio:bad/repo/README.md", "not a .gguf"},
		{"lmstudio:../../etc/passwd.gguf", "not a valid name"},
		{"lmstudio:Qwen/../../x.gguf", "not a valid name"},
		{"lmstudio:/etc/x.gguf", "relative to the store"},
		{"lmstudio:Qwen", "want PUBLISHER/REPO"},
		{"lmstudio:a/b/c/d.gguf", "want PUBLISHER/REPO"},
		{`lmstudio:a\b/c`, "relative to the store"},
	} {
		_, err := s.Resolve(c.ref)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.ref, err, c.want)
		}
	}
	list, probs, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || len(probs) != 1 || !strings.Contains(probs[0].Err, "not a GGUF") {
		t.Fatalf("list %+v, problems %+v", list, probs)
	}
	for _, m := range list {
		if strings.Contains(m.Name, "mmproj") || m.Size == 0 {
			t.Errorf("listed %+v", m)
		}
	}
}

func TestResolveOther(t *testing.T) {
	if IsRef("Qwen/Qwen2.5") || !IsRef("ollama:x") || !IsRef("lmstudio:a/b") {
		t.Error("IsRef")
	}
	if _, err := (Stores{}).Resolve("hf:x"); err == nil {
		t.Error("hf: accepted")
	}
	if _, err := (Stores{}).Resolve("ollama:x"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("no store: %v", err)
	}
	// Stores that do not exist hold nothing.
	list, probs, err := Stores{Ollama: "/nonexistent/o", LMStudio: []string{"/nonexistent/l"}}.List()
	if err != nil || len(list) != 0 || len(probs) != 0 {
		t.Errorf("%v %v %v", list, probs, err)
	}
}
