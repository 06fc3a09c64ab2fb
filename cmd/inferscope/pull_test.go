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

// TestPullListInstructModels: pull --list names the small instruct models
// with the architecture each needs and the gated licences, and each pulls
// from the fake hub (serving tiny-gpt2's files under their ids); a gated one
// needs HF_TOKEN.
func TestPullListInstructModels(t *testing.T) {
	var out, errb bytes.Buffer
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", "")
	if code := run(context.Background(), []string{"pull", "--list"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	line := func(repo string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, repo+" ") {
				return l
			}
		}
		t.Fatalf("pull --list lacks %s:\n%s", repo, out.String())
		return ""
	}
	for repo, want := range map[string][]string{
		"Qwen/Qwen2.5-0.5B-Instruct":          {"qwen2", "Apache-2.0"},
		"Qwen/Qwen3-0.6B":                     {"qwen3", "Apache-2.0"},
		"HuggingFaceTB/SmolLM2-360M-Instruct": {"llama", "Apache-2.0"},
		"meta-llama/Llama-3.2-1B-Instruct":    {"llama", "Llama 3.2 Community License (gated*)"},
		"google/gemma-3-270m-it":              {"gemma3_text", "Gemma Terms of Use (gated*)"},
	} {
		l := line(repo)
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("%s: line %q lacks %q", repo, l, w)
			}
		}
	}
	if !strings.Contains(out.String(), "set HF_TOKEN") {
		t.Errorf("no HF_TOKEN note:\n%s", out.String())
	}

	h := hubtest.New(t, testenv.SharedDir(t, "models/tiny-gpt2"))
	h.Repos = []string{"Qwen/Qwen3-0.6B", "google/gemma-3-270m-it"}
	ts := httptest.NewServer(h)
	defer ts.Close()
	t.Setenv("HF_ENDPOINT", ts.URL)
	t.Setenv("HF_TOKEN", "")
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"pull", "Qwen/Qwen3-0.6B"}, &out, &errb); code != 0 {
		t.Fatalf("pull: exit %d: %s", code, errb.String())
	}
	h.Private = true // gated: the fake hub wants "Bearer secret"
	errb.Reset()
	if code := run(context.Background(), []string{"pull", "google/gemma-3-270m-it"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "set HF_TOKEN") {
		t.Fatalf("gated without token: exit %d: %s", code, errb.String())
	}
	t.Setenv("HF_TOKEN", "secret")
	errb.Reset()
	if code := run(context.Background(), []string{"pull", "google/gemma-3-270m-it"}, &out, &errb); code != 0 {
		t.Fatalf("gated with token: exit %d: %s", code, errb.String())
	}
}
