package hub

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/models/hub/hubtest"
)

func smallHub(t *testing.T) *hubtest.FakeHub {
	t.Helper()
	h := &hubtest.FakeHub{Files: map[string][]byte{}, Commit: strings.Repeat("ef56", 10), Repos: []string{"org/small"}}
	src := filepath.Join("..", "..", "engine", "testdata", "reference", "llama-tied-f32")
	for _, f := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Files[f] = b
	}
	return h
}

// TestPullSizeCap: a repo larger than MaxBytes by the hub's listed sizes is
// refused before any weights are downloaded, naming both sizes.
func TestPullSizeCap(t *testing.T) {
	h := smallHub(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c := &Client{Endpoint: ts.URL, CacheDir: t.TempDir(), MaxBytes: 50 << 10}
	_, err := c.Pull(context.Background(), "org/small", "", nil)
	if err == nil || !strings.Contains(err.Error(), "org/small is 0.1 MiB to download; this server's limit is 0.0 MiB") {
		t.Fatalf("err %v", err)
	}
	if h.Bytes > 4096 {
		t.Errorf("%d bytes were downloaded before refusing", h.Bytes)
	}
	c.MaxBytes = 1 << 20
	if _, err := c.Pull(context.Background(), "org/small", "", nil); err != nil {
		t.Fatalf("within the cap: %v", err)
	}
}

func TestPullRefusesWhenDiskIsFull(t *testing.T) {
	free, ok := diskFree(t.TempDir())
	if !ok {
		t.Skip("free space cannot be told on this system")
	}
	c := &Client{CacheDir: t.TempDir()}
	plan := []planned{{"model.safetensors", &meta{size: free, etag: strings.Repeat("0", 64)}}}
	err := c.checkSize("org/huge", plan)
	if err == nil || !strings.Contains(err.Error(), "free some space first") {
		t.Errorf("a pull as large as the free space: %v", err)
	}
	if err := c.checkSize("org/small", []planned{{"config.json", &meta{size: 100, etag: strings.Repeat("1", 40)}}}); err != nil {
		t.Errorf("a 100-byte pull: %v", err)
	}
}
