//go:build !engineonly

package main

// engineonly_test.go: the engine-only build (-tags engineonly) links no web
// stack, and its commands print exactly what the full binary prints.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEngineOnlyBuild(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the engine-only binary: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-tags", "engineonly", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		for _, bad := range []string{"net/http", "inferscope/web", "inferscope/internal/serve", "inferscope/models/hub", "prometheus", "nats-io", "goldmark", "labstack/echo"} {
			if d == bad || strings.HasSuffix(d, bad) || strings.Contains(d, bad+"/") || strings.Contains(d, "/"+bad) {
				t.Errorf("engine-only build links %s (matches %q)", d, bad)
			}
		}
	}
	if len(deps) > 150 {
		t.Errorf("engine-only build links %d packages; the engine and its CLI need about 110", len(deps))
	}

	bin := filepath.Join(t.TempDir(), "inferscope-engine")
	if b, err := exec.Command(goBin, "build", "-tags", "engineonly", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags engineonly: %v\n%s", err, b)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "generate_capital.golden"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string // exact, when set
		stderrIn string
	}{
		{"generate as the full binary", []string{"generate", "--prompt", "The capital of France is", "--temperature", "0", "--max-tokens", "8"}, 0, string(golden), ""},
		{"no command", nil, 2, "", "engine-only build"},
		{"serve", []string{"serve"}, 2, "", "engine-only build"},
		{"pull", []string{"pull", "gpt2"}, 2, "", `unknown command "pull"`},
		{"bench concurrent", []string{"bench", "--shape", "stories15M", "--concurrent", "2"}, 1, "", "leaves out: use the full inferscope binary"},
		{"hub id is a path here", []string{"generate", "--model", "owner/repo", "--prompt", "a"}, 1, "", "owner/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var so, se bytes.Buffer
			cmd := exec.Command(bin, tt.args...)
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, se.String())
			}
			if tt.stdout != "" && so.String() != tt.stdout {
				t.Errorf("stdout differs from the full binary's golden:\n got %q\nwant %q", so.String(), tt.stdout)
			}
			if !strings.Contains(se.String(), tt.stderrIn) {
				t.Errorf("stderr %q does not contain %q", se.String(), tt.stderrIn)
			}
		})
	}
}
