//go:build !engineonly

package main

// pull_test.go: the pull command against a fake hub.

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/testenv"
	"github.com/inferscope/inferscope/models/hub/hubtest"
)

// TestPullCommand: pull from a fake hub into $HF_HOME, then use the model
// by its repo id with no network.
func TestPullCommand(t *testing.T) {
	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
	ts := httptest.NewServer(h)
	defer ts.Close()
	t.Setenv("HF_ENDPOINT", ts.URL)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", "")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"pull", "sshleifer/tiny-gpt2"}, &out, &errb); code != 0 {
		t.Fatalf("pull: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"model.safetensors", "ETA", "ready: sshleifer/tiny-gpt2, gpt2, 2 layers"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("pull output lacks %q:\n%s", want, errb.String())
		}
	}
	ts.Close() // no network from here on
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"tokenize", "--model", "sshleifer/tiny-gpt2", "--text", "Hello world", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("tokenize with the pulled model: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"id": 15496`) {
		t.Errorf("tokenize output %s", out.String())
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"tokenize", "--model", "nobody/missing", "--text", "x"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "run 'inferscope pull nobody/missing'") {
		t.Errorf("missing model: exit %d %s", code, errb.String())
	}
	code = run(context.Background(), []string{"pull"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "pull needs a repo id") {
		t.Errorf("pull without repo: exit %d %s", code, errb.String())
	}
}
