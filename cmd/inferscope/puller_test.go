//go:build !engineonly

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
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
	"github.com/inferscope/inferscope/web/catalog"
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
	cat := catalog.NewEngineCatalog()
	p := newServerPuller(context.Background(), cat, slog.New(slog.NewTextHandler(io.Discard, nil)), pullAny, 1<<30)
	p.c = &hub.Client{Endpoint: endpoint, CacheDir: t.TempDir(), MaxBytes: 1 << 30}
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

// TestPullerIsAnOperatorChoice: no puller without --allow-pull; with it,
// only the curated models unless =any; errors and status carry no server
// paths; Cached lists curated models only.
func TestPullerIsAnOperatorChoice(t *testing.T) {
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if p := puller(context.Background(), catalog.NewEngineCatalog(), lg, pullOff, 1<<30); p != nil {
		t.Fatal("a puller exists without --allow-pull")
	}
	for arg, want := range map[string]pullMode{"--allow-pull": pullPresets, "--allow-pull=any": pullAny, "--allow-pull=false": pullOff} {
		var f pullFlag
		fs := newFlags("t", "", io.Discard)
		fs.Var(&f, "allow-pull", "")
		if err := fs.Parse([]string{arg}); err != nil || f.mode != want {
			t.Errorf("%s: mode %q err %v, want %q", arg, f.mode, err, want)
		}
	}
	src := filepath.Join("..", "..", "engine", "testdata", "reference", "llama-tied-f32")
	ts := fakeHubFrom(t, src, map[string]string{"tokenizer.json": `{"model":{"type":"Unigram"}}`})
	p := testPuller(t, ts.URL)
	p.mode = pullPresets
	if err := p.Start("org/negative-id"); err == nil || !strings.Contains(err.Error(), "not one of the curated models") || !strings.Contains(err.Error(), "--allow-pull=any") {
		t.Errorf("a non-curated repo in presets mode: %v", err)
	}
	p.mode = pullAny
	if err := p.Start("org/negative-id"); err != nil {
		t.Fatal(err)
	}
	st := waitPull(t, p)
	if st.State != "error" || strings.Contains(st.Error, p.c.CacheDir) || !strings.Contains(st.Error, "<model cache>") {
		t.Errorf("error status leaks or lacks the redacted path: %+v", st)
	}
	if len(st.Cached) != 0 {
		t.Errorf("Cached lists non-curated repos: %v", st.Cached)
	}
}

// TestPullIsCancellable: DELETE /api/pull's Cancel stops a download that
// is in progress.
func TestPullIsCancellable(t *testing.T) {
	src := filepath.Join("..", "..", "engine", "testdata", "reference", "llama-tied-f32")
	h := &hubtest.FakeHub{Files: map[string][]byte{}, Commit: strings.Repeat("cd34", 10), Repos: []string{"org/slow"}}
	for _, f := range []string{"config.json", "model.safetensors"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		h.Files[f] = b
	}
	stalled := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/cdn/") && r.Method == http.MethodGet {
			w.Header().Set("Content-Length", "109984")
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			stalled <- struct{}{}
			<-r.Context().Done() // a download that never finishes
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	p := testPuller(t, ts.URL)
	if err := p.Start("org/slow"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("the download did not start")
	}
	if err := p.Start("org/slow"); err == nil || !strings.Contains(err.Error(), "already downloading") {
		t.Errorf("a second download at once: %v", err)
	}
	if err := p.Cancel(); err != nil {
		t.Fatal(err)
	}
	if st := waitPull(t, p); st.State != "cancelled" {
		t.Errorf("after cancel: %+v", st)
	}
	if err := p.Cancel(); err == nil {
		t.Error("cancel with nothing running succeeded")
	}
}
