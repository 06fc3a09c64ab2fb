package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models/hub"
	"github.com/inferscope/inferscope/models/hub/hubtest"
	"github.com/inferscope/inferscope/web"
)

// fakeHubFrom serves the files of an engine reference model directory,
// with extra files added or replaced.
func fakeHubFrom(t *testing.T, src string, extra map[string]string) *httptest.Server {
	t.Helper()
	h := &hubtest.FakeHub{Files: map[string][]byte{}, Commit: strings.Repeat("cd34", 10), Repos: []string{"org/negative-id", "org/panics"}}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "golden.json" {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		h.Files[e.Name()] = b
	}
	for k, v := range extra {
		h.Files[k] = []byte(v)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func testPuller(t *testing.T, endpoint string) *serverPuller {
	t.Helper()
	cat := web.NewEngineCatalog()
	p := newServerPuller(context.Background(), cat, slog.New(slog.NewTextHandler(io.Discard, nil)))
	p.c = &hub.Client{Endpoint: endpoint, CacheDir: t.TempDir()}
	return p
}

func waitPull(t *testing.T, p *serverPuller) web.PullStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st := p.Status(); st.State != "running" {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the pull did not finish in 20 s")
	return web.PullStatus{}
}

// TestPulledRepoCannotEndTheServer: a repo whose tokenizer.json has a
// negative id, or whose loading panics, ends as a pull error; the process
// and the puller carry on.
func TestPulledRepoCannotEndTheServer(t *testing.T) {
	src := filepath.Join("..", "..", "engine", "testdata", "reference", "llama-tied-f32")
	badTok := `{"pre_tokenizer":{"type":"Metaspace","replacement":"▁"},"model":{"type":"BPE","vocab":{"<unk>":0,"▁":1,"a":-7},"merges":[]}}`
	ts := fakeHubFrom(t, src, map[string]string{"tokenizer.json": badTok})
	p := testPuller(t, ts.URL)
	if err := p.Start("org/negative-id"); err != nil {
		t.Fatal(err)
	}
	st := waitPull(t, p)
	if st.State != "error" || !strings.Contains(st.Error, `"a" has id -7`) {
		t.Errorf("negative id: status %+v", st)
	}
	p.load = func(string) (*engine.Model, error) { panic("index out of range [-7]") }
	if err := p.Start("org/panics"); err != nil {
		t.Fatal(err)
	}
	st = waitPull(t, p)
	if st.State != "error" || !strings.Contains(st.Error, "damaged or unsupported") {
		t.Errorf("panicking loader: status %+v", st)
	}
}
