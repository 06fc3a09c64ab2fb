package hub

// hub_test.go: hub pulls into the HF cache layout, resume after a cut connection, corrupt blobs and errors.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models/hub/hubtest"
)

func client(t *testing.T, url string) (*Client, *[]Progress) {
	var ps []Progress
	var mu sync.Mutex
	return &Client{Endpoint: url, CacheDir: t.TempDir(), OnProgress: func(p Progress) { mu.Lock(); ps = append(ps, p); mu.Unlock() }}, &ps
}

func TestPullIntoHFCacheLayout(t *testing.T) {
	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, ps := client(t, ts.URL)
	snap, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(c.CacheDir, "models--sshleifer--tiny-gpt2")
	if snap != filepath.Join(repoDir, "snapshots", h.Commit) {
		t.Errorf("snapshot %s", snap)
	}
	if b, _ := os.ReadFile(filepath.Join(repoDir, "refs", "main")); string(b) != h.Commit {
		t.Errorf("refs/main = %q", b)
	}
	sum := sha256.Sum256(h.Files["model.safetensors"])
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
	before := h.Gets
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", nil); err != nil {
		t.Fatal(err)
	}
	if h.Gets != before {
		t.Errorf("second pull made %d downloads", h.Gets-before)
	}
	if got := c.Cached(); len(got) != 1 || got[0] != "sshleifer/tiny-gpt2" {
		t.Errorf("cached %v", got)
	}
}

func TestPullResumesAfterCutConnection(t *testing.T) {
	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := client(t, ts.URL)
	h.CutAfter.Store(100_000)
	_, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"model.safetensors"})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "run pull again to resume") {
		t.Fatalf("cut connection: err %v", err)
	}
	snapFile := filepath.Join(c.RepoDir("sshleifer/tiny-gpt2"), "snapshots", h.Commit, "model.safetensors")
	if _, err := os.Stat(snapFile); err == nil {
		t.Fatal("a half-written file is in the snapshot")
	}
	h.Bytes = 0
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"model.safetensors"}); err != nil {
		t.Fatal(err)
	}
	if len(h.Ranges) != 1 || h.Ranges[0] != "bytes=100000-" {
		t.Errorf("resume sent ranges %v", h.Ranges)
	}
	if want := int64(len(h.Files["model.safetensors"]) - 100_000); h.Bytes != want {
		t.Errorf("resume transferred %d bytes, want %d", h.Bytes, want)
	}
	b, _ := os.ReadFile(snapFile)
	if string(b) != string(h.Files["model.safetensors"]) {
		t.Error("resumed file differs")
	}
}

func TestPullRejectsCorruptBlob(t *testing.T) {
	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := client(t, ts.URL)
	h.Corrupt.Store(true)
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
	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
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
			h.Private = tt.private
			c, _ := client(t, ts.URL)
			c.Token = tt.token
			_, err := c.Pull(context.Background(), tt.repo, "", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	h.Private = true
	c, _ := client(t, ts.URL)
	c.Token = "secret"
	if _, err := c.Pull(context.Background(), "sshleifer/tiny-gpt2", "", []string{"config.json"}); err != nil {
		t.Fatalf("with token: %v", err)
	}
}
