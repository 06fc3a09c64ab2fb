// Package local finds the GGUF models already on the student's machine, in
// the stores of Ollama and LM Studio, without running either: a reference
// "ollama:NAME[:TAG]" or "lmstudio:PUBLISHER/REPO[/FILE.gguf]" resolves to
// the GGUF file's path, and List says what each store holds.
//
// Ollama keeps a manifest per model (manifests/HOST/NAMESPACE/NAME/TAG, JSON
// in the OCI image manifest shape) whose layer of media type
// application/vnd.ollama.image.model names the GGUF blob by digest
// (blobs/sha256-HEX). LM Studio keeps plain files:
// PUBLISHER/REPO/FILE.gguf under ~/.lmstudio/models (older versions:
// ~/.cache/lm-studio/models).
//
// Names are checked before any path is built from them: no "..", no
// absolute paths, no separators inside a component. Files are opened only to
// read the 4-byte GGUF magic; blobs are not hashed (a multi-GiB read), so a
// blob whose bytes were altered in place is not detected here.
package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Prefixes of model references that name a local store.
const (
	OllamaPrefix   = "ollama:"
	LMStudioPrefix = "lmstudio:"
)

// ModelMediaType is the media type of an Ollama manifest's GGUF layer.
const ModelMediaType = "application/vnd.ollama.image.model"

const (
	defaultHost      = "registry.ollama.ai"
	defaultNamespace = "library"
	defaultTag       = "latest"
	maxManifestBytes = 1 << 20
)

// Stores are the store roots to search. An empty root is not searched.
type Stores struct {
	Ollama   string   // $OLLAMA_MODELS, else ~/.ollama/models
	LMStudio []string // ~/.lmstudio/models, ~/.cache/lm-studio/models
}

// FromEnv is the stores where Ollama and LM Studio keep them for this user:
// $OLLAMA_MODELS (Ollama's own setting) or ~/.ollama/models, and LM
// Studio's ~/.lmstudio/models and ~/.cache/lm-studio/models.
func FromEnv() Stores {
	var s Stores
	home, _ := os.UserHomeDir()
	if d := os.Getenv("OLLAMA_MODELS"); d != "" {
		s.Ollama = d
	} else if home != "" {
		s.Ollama = filepath.Join(home, ".ollama", "models")
	}
	if home != "" {
		s.LMStudio = []string{filepath.Join(home, ".lmstudio", "models"), filepath.Join(home, ".cache", "lm-studio", "models")}
	}
	return s
}

// Model is one GGUF model in a store.
type Model struct {
	Store string `json:"store"` // "ollama" or "lmstudio"
	Ref   string `json:"ref"`   // what --model takes: "ollama:qwen2.5:0.5b", "lmstudio:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf"
	Name  string `json:"name"`  // the store's own name for it
	Size  int64  `json:"size"`  // bytes of the GGUF file
	Path  string `json:"path"`  // the GGUF file (server-side: never shown to visitors)
}

// IsRef reports whether ref names a local store.
func IsRef(ref string) bool {
	return strings.HasPrefix(ref, OllamaPrefix) || strings.HasPrefix(ref, LMStudioPrefix)
}

// ErrNotFound is wrapped by the errors for a model a store does not hold.
var ErrNotFound = errors.New("not in the store")

// Resolve finds the GGUF file a reference names.
func (s Stores) Resolve(ref string) (Model, error) {
	switch {
	case strings.HasPrefix(ref, OllamaPrefix):
		return s.resolveOllama(strings.TrimPrefix(ref, OllamaPrefix))
	case strings.HasPrefix(ref, LMStudioPrefix):
		return s.resolveLMStudio(strings.TrimPrefix(ref, LMStudioPrefix))
	}
	return Model{}, fmt.Errorf("model %q: not a local store reference (want ollama:NAME[:TAG] or lmstudio:PUBLISHER/REPO[/FILE.gguf])", ref)
}

// component is one name component: what Ollama allows in a host,
// namespace, model name or tag (and LM Studio's publisher, repo and file
// names) — never "." or "..", never a separator.
var component = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$`)

func checkComponent(what, c string) error {
	if !component.MatchString(c) || c == "." || c == ".." || strings.Contains(c, "..") {
		return fmt.Errorf("%s %q is not a valid name (letters, digits, '.', '_', '-', '+'; no '..')", what, c)
	}
	return nil
}

// ollamaName splits [HOST/][NAMESPACE/]NAME[:TAG].
type ollamaName struct{ host, namespace, name, tag string }

func parseOllamaName(s string) (ollamaName, error) {
	n := ollamaName{host: defaultHost, namespace: defaultNamespace, tag: defaultTag}
	if s == "" {
		return n, errors.New("ollama: empty model name (want ollama:NAME[:TAG], e.g. ollama:qwen2.5:0.5b)")
	}
	path := s
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.Contains(s[i:], "/") {
		path, n.tag = s[:i], s[i+1:]
	}
	parts := strings.Split(path, "/")
	for _, c := range parts {
		if err := checkComponent("ollama: name part", c); err != nil {
			return n, err
		}
	}
	switch len(parts) {
	case 1:
		n.name = parts[0]
	case 2:
		n.namespace, n.name = parts[0], parts[1]
	case 3:
		n.host, n.namespace, n.name = parts[0], parts[1], parts[2]
	default:
		return n, fmt.Errorf("ollama: model name %q has too many parts (want [HOST/][NAMESPACE/]NAME[:TAG])", s)
	}
	for _, c := range []struct{ what, v string }{{"host", n.host}, {"namespace", n.namespace}, {"model name", n.name}, {"tag", n.tag}} {
		if err := checkComponent("ollama: "+c.what, c.v); err != nil {
			return n, err
		}
	}
	return n, nil
}

// String is the name as Ollama shows it: the default host and namespace
// left out.
func (n ollamaName) String() string {
	s := n.name + ":" + n.tag
	if n.namespace != defaultNamespace || n.host != defaultHost {
		s = n.namespace + "/" + s
	}
	if n.host != defaultHost {
		s = n.host + "/" + s
	}
	return s
}

type manifest struct {
	SchemaVersion int `json:"schemaVersion"`
	Layers        []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

var digestPattern = regexp.MustCompile(`^sha256:([0-9a-f]{64})$`)

func (s Stores) resolveOllama(name string) (Model, error) {
	n, err := parseOllamaName(name)
	if err != nil {
		return Model{}, err
	}
	if s.Ollama == "" {
		return Model{}, errors.New("ollama: no store (set OLLAMA_MODELS or HOME)")
	}
	mpath := filepath.Join(s.Ollama, "manifests", n.host, n.namespace, n.name, n.tag)
	if _, err := os.Stat(mpath); errors.Is(err, fs.ErrNotExist) {
		return Model{}, fmt.Errorf("ollama: %s is %w %s (pull it with `ollama pull %s`)", n, ErrNotFound, s.Ollama, n)
	}
	return s.ollamaModel(n, mpath)
}

// ollamaModel reads the manifest at mpath and finds its GGUF blob.
func (s Stores) ollamaModel(n ollamaName, mpath string) (Model, error) {
	f, err := os.Open(mpath)
	if err != nil {
		return Model{}, fmt.Errorf("ollama: %s: %w", n, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return Model{}, fmt.Errorf("ollama: %s: read the manifest: %w", n, err)
	}
	if len(b) > maxManifestBytes {
		return Model{}, fmt.Errorf("ollama: %s: the manifest is over %d bytes", n, maxManifestBytes)
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		return Model{}, fmt.Errorf("ollama: %s: the manifest is not valid JSON: %v", n, err)
	}
	var found []int
	for i, l := range man.Layers {
		if l.MediaType == ModelMediaType {
			found = append(found, i)
		}
	}
	// Vision models add a projector as a second model layer; the first is
	// the language model.
	if len(found) == 0 {
		return Model{}, fmt.Errorf("ollama: %s: the manifest has no %s layer", n, ModelMediaType)
	}
	l := man.Layers[found[0]]
	d := digestPattern.FindStringSubmatch(l.Digest)
	if d == nil {
		return Model{}, fmt.Errorf("ollama: %s: the model layer's digest %q is not sha256:<64 hex digits>", n, l.Digest)
	}
	blob := filepath.Join(s.Ollama, "blobs", "sha256-"+d[1])
	size, err := checkGGUF(blob)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Model{}, fmt.Errorf("ollama: blob of %s missing: %s (the store is incomplete: `ollama pull %s` again): %w", n, blob, n, err)
		}
		return Model{}, fmt.Errorf("ollama: %s: %w", n, err)
	}
	if l.Size > 0 && size != l.Size {
		return Model{}, fmt.Errorf("ollama: %s: blob %s is %d bytes, the manifest says %d (a partial download?)", n, blob, size, l.Size)
	}
	return Model{Store: "ollama", Ref: OllamaPrefix + n.String(), Name: n.String(), Size: size, Path: blob}, nil
}

// checkGGUF checks that path is a regular file starting with the GGUF magic
// and returns its size.
func checkGGUF(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", path)
	}
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return 0, fmt.Errorf("%s is not a GGUF file (no GGUF magic)", path)
	}
	return st.Size(), nil
}

// lmstudioParts checks an LM Studio reference: PUBLISHER/REPO or
// PUBLISHER/REPO/FILE.gguf, each a plain component.
func lmstudioParts(p string) ([]string, error) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return nil, fmt.Errorf("lmstudio: %q: want PUBLISHER/REPO[/FILE.gguf], relative to the store", p)
	}
	parts := strings.Split(p, "/")
	for _, c := range parts {
		if err := checkComponent("lmstudio: name part", c); err != nil {
			return nil, err
		}
	}
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("lmstudio: %q: want PUBLISHER/REPO[/FILE.gguf]", p)
	}
	if len(parts) == 3 && !strings.HasSuffix(strings.ToLower(parts[2]), ".gguf") {
		return nil, fmt.Errorf("lmstudio: %q: the file is not a .gguf", p)
	}
	return parts, nil
}

func (s Stores) resolveLMStudio(p string) (Model, error) {
	parts, err := lmstudioParts(p)
	if err != nil {
		return Model{}, err
	}
	for _, root := range s.LMStudio {
		if root == "" {
			continue
		}
		dir := filepath.Join(root, parts[0], parts[1])
		var file string
		if len(parts) == 3 {
			file = filepath.Join(dir, parts[2])
			if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		} else {
			ggufs, err := ggufFiles(dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Model{}, fmt.Errorf("lmstudio: %w", err)
			}
			switch len(ggufs) {
			case 0:
				continue
			case 1:
				file = filepath.Join(dir, ggufs[0])
				parts = append(parts, ggufs[0])
			default:
				return Model{}, fmt.Errorf("lmstudio: %s holds %d GGUF files, name one: %s", p, len(ggufs), strings.Join(prefixAll(p+"/", ggufs), ", "))
			}
		}
		size, err := checkGGUF(file)
		if err != nil {
			return Model{}, fmt.Errorf("lmstudio: %w", err)
		}
		name := strings.Join(parts, "/")
		return Model{Store: "lmstudio", Ref: LMStudioPrefix + name, Name: name, Size: size, Path: file}, nil
	}
	return Model{}, fmt.Errorf("lmstudio: %s is %w %s", p, ErrNotFound, strings.Join(s.LMStudio, " or "))
}

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = p + x
	}
	return out
}

// ggufFiles lists dir's .gguf files, less vision projectors (mmproj-*),
// which are not language models.
func ggufFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(n), ".gguf") || strings.HasPrefix(strings.ToLower(n), "mmproj") || !component.MatchString(n) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Problem is a store entry that could not be listed, and why.
type Problem struct {
	Name string `json:"name"`
	Err  string `json:"error"`
}

// List says what the stores hold: every Ollama manifest whose GGUF blob is
// there, and every LM Studio PUBLISHER/REPO/FILE.gguf. Entries that do not
// resolve (a missing blob, a bad digest) are returned as problems; a store
// that does not exist holds nothing.
func (s Stores) List() ([]Model, []Problem, error) {
	var out []Model
	var probs []Problem
	if s.Ollama != "" {
		m, p, err := s.listOllama()
		if err != nil {
			return nil, nil, err
		}
		out, probs = append(out, m...), append(probs, p...)
	}
	seen := map[string]bool{}
	for _, root := range s.LMStudio {
		if root == "" {
			continue
		}
		m, p, err := listLMStudio(root)
		if err != nil {
			return nil, nil, err
		}
		for _, x := range m {
			if !seen[x.Ref] { // the newer root wins
				seen[x.Ref] = true
				out = append(out, x)
			}
		}
		probs = append(probs, p...)
	}
	return out, probs, nil
}

// maxListed bounds a listing (a store is a few dozen models).
const maxListed = 4096

func (s Stores) listOllama() ([]Model, []Problem, error) {
	root := filepath.Join(s.Ollama, "manifests")
	var out []Model
	var probs []Problem
	hosts, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ollama: %w", err)
	}
	for _, h := range hosts {
		for _, ns := range subdirs(filepath.Join(root, h.Name())) {
			for _, name := range subdirs(filepath.Join(root, h.Name(), ns)) {
				tags, _ := os.ReadDir(filepath.Join(root, h.Name(), ns, name))
				for _, t := range tags {
					if t.IsDir() || len(out)+len(probs) >= maxListed {
						continue
					}
					n := ollamaName{host: h.Name(), namespace: ns, name: name, tag: t.Name()}
					if _, err := parseOllamaName(n.host + "/" + n.namespace + "/" + n.name + ":" + n.tag); err != nil {
						probs = append(probs, Problem{Name: n.String(), Err: err.Error()})
						continue
					}
					m, err := s.ollamaModel(n, filepath.Join(root, n.host, n.namespace, n.name, n.tag))
					if err != nil {
						probs = append(probs, Problem{Name: n.String(), Err: err.Error()})
						continue
					}
					out = append(out, m)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs, nil
}

func subdirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func listLMStudio(root string) ([]Model, []Problem, error) {
	pubs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lmstudio: %w", err)
	}
	var out []Model
	var probs []Problem
	for _, p := range pubs {
		if !p.IsDir() {
			continue
		}
		for _, repo := range subdirs(filepath.Join(root, p.Name())) {
			files, _ := ggufFiles(filepath.Join(root, p.Name(), repo))
			for _, f := range files {
				if len(out)+len(probs) >= maxListed {
					break
				}
				name := p.Name() + "/" + repo + "/" + f
				if _, err := lmstudioParts(name); err != nil {
					probs = append(probs, Problem{Name: name, Err: err.Error()})
					continue
				}
				path := filepath.Join(root, p.Name(), repo, f)
				size, err := checkGGUF(path)
				if err != nil {
					probs = append(probs, Problem{Name: name, Err: err.Error()})
					continue
				}
				out = append(out, Model{Store: "lmstudio", Ref: LMStudioPrefix + name, Name: name, Size: size, Path: path})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs, nil
}
