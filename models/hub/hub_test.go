package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
)

// fakeHub serves a model directory like the Hugging Face hub: HEAD and GET
// on /{repo}/resolve/{rev}/{file}; LFS files (safetensors) redirect to a
// CDN path with X-Linked-Etag = sha256; others answer directly with a git
// sha1 ETag; every response carries X-Repo-Commit. The CDN honours Range.
type fakeHub struct {
	files   map[string][]byte
	commit  string
	private bool
	// cutAfter > 0: the next CDN response stops after this many bytes.
	cutAfter atomic.Int64
	corrupt  atomic.Bool
	mu       sync.Mutex
	ranges   []string
	gets     int
	bytes    int64
}

func newFakeHub(t *testing.T) *fakeHub {
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	h := &fakeHub{files: map[string][]byte{}, commit: strings.Repeat("ab12", 10)}
	for _, f := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		h.files[f] = b
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

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.private && r.Header.Get("Authorization") != "Bearer secret" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		h.serveCDN(w, r, name)
		return
	}
	// /{org}/{name}/resolve/{rev}/{file}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" || parts[0]+"/"+parts[1] != "sshleifer/tiny-gpt2" {
		http.Error(w, "Repository not found", http.StatusNotFound)
		return
	}
	b, ok := h.files[parts[4]]
	if !ok {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", h.commit)
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
		h.gets++
		h.bytes += int64(len(b))
		h.mu.Unlock()
		w.Write(b)
	}
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request, name string) {
	b := append([]byte(nil), h.files[name]...)
	if h.corrupt.Load() {
		b[len(b)/2] ^= 0xff
	}
	start := 0
	if rg := r.Header.Get("Range"); rg != "" {
		h.mu.Lock()
		h.ranges = append(h.ranges, rg)
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
	if cut := h.cutAfter.Swap(0); cut > 0 && int(cut) < len(body) {
		w.Write(body[:cut])
		h.mu.Lock()
		h.gets++
		h.bytes += cut
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
	h.gets++
	h.bytes += int64(len(body))
	h.mu.Unlock()
	w.Write(body)
}

func client(t *testing.T, url string) (*Client, *[]Progress) {
	var ps []Progress
	var mu sync.Mutex
	return &Client{Endpoint: url, CacheDir: t.TempDir(), OnProgress: func(p Progress) { mu.Lock(); ps = append(ps, p); mu.Unlock() }}, &ps
}

func TestPullIntoHFCacheLayout(t *testing.T) {
	h := newFakeHub(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, ps := client(t, ts.URL)
	snap, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(c.CacheDir, "models--sshleifer--tiny-gpt2")
	if snap != filepath.Join(repoDir, "snapshots", h.commit) {
		t.Errorf("snapshot %s", snap)
	}
	if b, _ := os.ReadFile(filepath.Join(repoDir, "refs", "main")); string(b) != h.commit {
		t.Errorf("refs/main = %q", b)
	}
	sum := sha256.Sum256(h.files["model.safetensors"])
	if target, err := os.Readlink(filepath.Join(snap, "model.safetensors")); err != nil || target != "../../blobs/"+hex.EncodeToString(sum[:]) {
		t.Errorf("snapshot link %q %v", target, err)
	}
	// the engine loads the cached snapshot, found by name with no network
	dir, err := c.Resolve("sshleifer/tiny-gpt2", "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.LoadModel(dir, "")
	if err != nil || m.Config.VocabSize != 50257 || m.Tokenizer == nil {
		t.Fatalf("load pulled model: %v", err)
	}
	if len(*ps) == 0 {
		t.Error("no progress reported")
	}
	// a second pull downloads nothing
	before := h.gets
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", nil); err != nil {
		t.Fatal(err)
	}
	if h.gets != before {
		t.Errorf("second pull made %d downloads", h.gets-before)
	}
	if got := c.Cached(); len(got) != 1 || got[0] != "sshleifer/tiny-gpt2" {
		t.Errorf("cached %v", got)
	}
}

func TestPullResumesAfterCutConnection(t *testing.T) {
	h := newFakeHub(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := client(t, ts.URL)
	h.cutAfter.Store(100_000)
	_, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"model.safetensors"})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "run pull again to resume") {
		t.Fatalf("cut connection: err %v", err)
	}
	snapFile := filepath.Join(c.RepoDir("sshleifer/tiny-gpt2"), "snapshots", h.commit, "model.safetensors")
	if _, err := os.Stat(snapFile); err == nil {
		t.Fatal("a half-written file is in the snapshot")
	}
	h.bytes = 0
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"model.safetensors"}); err != nil {
		t.Fatal(err)
	}
	if len(h.ranges) != 1 || h.ranges[0] != "bytes=100000-" {
		t.Errorf("resume sent ranges %v", h.ranges)
	}
	if want := int64(len(h.files["model.safetensors"]) - 100_000); h.bytes != want {
		t.Errorf("resume transferred %d bytes, want %d", h.bytes, want)
	}
	b, _ := os.ReadFile(snapFile)
	if string(b) != string(h.files["model.safetensors"]) {
		t.Error("resumed file differs")
	}
}

func TestPullRejectsCorruptBlob(t *testing.T) {
	h := newFakeHub(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := client(t, ts.URL)
	h.corrupt.Store(true)
	_, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"model.safetensors"})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("corrupt blob: %v", err)
	}
	blobs, _ := os.ReadDir(filepath.Join(c.RepoDir("sshleifer/tiny-gpt2"), "blobs"))
	if len(blobs) != 0 {
		t.Errorf("cache keeps %d files after a corrupt download", len(blobs))
	}
}

func TestPullErrors(t *testing.T) {
	h := newFakeHub(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	tests := []struct {
		name, repo, want string
		private          bool
		token            string
	}{
		{"unknown repo", "nobody/nothing", "not found (HTTP 404)", false, ""},
		{"gated without token", "sshleifer/tiny-gpt2", "set HF_TOKEN", true, ""},
		{"path traversal", "../../etc", "not a valid model id", false, ""},
		{"bad chars", "a/b/c", "not a valid model id", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.private = tt.private
			c, _ := client(t, ts.URL)
			c.Token = tt.token
			_, err := c.Pull(context.Background(), tt.repo, "", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	h.private = true
	c, _ := client(t, ts.URL)
	c.Token = "secret"
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"config.json"}); err != nil {
		t.Fatalf("with token: %v", err)
	}
}
