// Package hubtest is a fake Hugging Face hub for tests: it serves a model
// directory with the hub's headers (X-Repo-Commit, ETag, X-Linked-Etag,
// X-Linked-Size), redirects LFS files to a CDN path that honours Range, and
// can cut a transfer short or corrupt it on request.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// FakeHub serves a model directory like the Hugging Face hub: HEAD and GET
// on /{repo}/resolve/{rev}/{file}; LFS files (safetensors) redirect to a
// CDN path with X-Linked-Etag = sha256; others answer directly with a git
// sha1 ETag; every response carries X-Repo-Commit. The CDN honours Range.
type FakeHub struct {
	Files   map[string][]byte
	Commit  string
	Private bool
	// Repos are the repo ids served (none: sshleifer/tiny-gpt2).
	Repos []string
	// CutAfter > 0: the next CDN response stops after this many bytes.
	CutAfter atomic.Int64
	Corrupt  atomic.Bool
	mu       sync.Mutex
	Ranges   []string
	Gets     int
	Bytes    int64
}

// New serves the model files in dir (tiny-gpt2) as repo sshleifer/tiny-gpt2.
func New(t testing.TB, dir string) *FakeHub {
	h := &FakeHub{Files: map[string][]byte{}, Commit: strings.Repeat("ab12", 10)}
	for _, f := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Files[f] = b
	}
	return h
}

func lfs(name string) bool { return strings.HasSuffix(name, ".safetensors") }

func gitSHA1(b []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(b))
	s.Write(b)
	return hex.EncodeToString(s.Sum(nil))
}

func (h *FakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Private && r.Header.Get("Authorization") != "Bearer secret" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		h.serveCDN(w, r, name)
		return
	}
	// /{org}/{name}/resolve/{rev}/{file}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" || !h.serves(parts[0]+"/"+parts[1]) {
		http.Error(w, "Repository not found", http.StatusNotFound)
		return
	}
	b, ok := h.Files[parts[4]]
	if !ok {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", h.Commit)
	if lfs(parts[4]) {
		sum := sha256.Sum256(b)
		w.Header().Set("X-Linked-Etag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
		w.Header().Set("ETag", `W/"lfs-pointer"`)
		http.Redirect(w, r, "/cdn/"+parts[4], http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+gitSHA1(b)+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodGet {
		h.mu.Lock()
		h.Gets++
		h.Bytes += int64(len(b))
		h.mu.Unlock()
		w.Write(b)
	}
}

func (h *FakeHub) serves(repo string) bool {
	if len(h.Repos) == 0 {
		return repo == "sshleifer/tiny-gpt2"
	}
	for _, r := range h.Repos {
		if r == repo {
			return true
		}
	}
	return false
}

func (h *FakeHub) serveCDN(w http.ResponseWriter, r *http.Request, name string) {
	b := append([]byte(nil), h.Files[name]...)
	if h.Corrupt.Load() {
		b[len(b)/2] ^= 0xff
	}
	start := 0
	if rg := r.Header.Get("Range"); rg != "" {
		h.mu.Lock()
		h.Ranges = append(h.Ranges, rg)
		h.mu.Unlock()
		fmt.Sscanf(rg, "bytes=%d-", &start)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(b)-1, len(b)))
		w.Header().Set("Content-Length", strconv.Itoa(len(b)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
	}
	body := b[start:]
	if cut := h.CutAfter.Swap(0); cut > 0 && int(cut) < len(body) {
		w.Write(body[:cut])
		h.mu.Lock()
		h.Gets++
		h.Bytes += cut
		h.mu.Unlock()
		// abort the connection mid-body
		if hj, ok := w.(http.Hijacker); ok {
			w.(http.Flusher).Flush()
			conn, _, _ := hj.Hijack()
			conn.Close()
		}
		return
	}
	h.mu.Lock()
	h.Gets++
	h.Bytes += int64(len(body))
	h.mu.Unlock()
	w.Write(body)
}
