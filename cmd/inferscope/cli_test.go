package main

// cli_test.go: the CLI's output against testdata goldens, its error messages, and trace's JSON lines.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestCLIGolden runs commands on the embedded default model and compares
// their stdout with testdata/<name>.golden (refresh: go test ./cmd/inferscope -update).
func TestCLIGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"tokenize_table", []string{"tokenize", "--text", "The President said: café 😀 <|endoftext|>"}},
		{"tokenize_json", []string{"tokenize", "--text", "Hello, world!", "--bos", "--json"}},
		{"tokenize_special", []string{"tokenize", "--text", "a<|endoftext|>b", "--allow-special"}},
		{"generate_greedy", []string{"generate", "--prompt", "The President said", "--temperature", "0", "--max-tokens", "24"}},
		{"generate_capital", []string{"generate", "--prompt", "The capital of France is", "--temperature", "0", "--max-tokens", "8"}},
		{"generate_sampled", []string{"generate", "--prompt", "The President said", "--temperature", "0.8", "--top-p", "0.9", "--seed", "7", "--max-tokens", "24"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tt.args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if out.String() != string(want) {
				t.Errorf("output differs from %s (run with -update if intended)\n got:\n%s\nwant:\n%s", path, out.String(), want)
			}
		})
	}
}

func TestCLIErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"tokenize needs text", []string{"tokenize"}, 2, "--text is required"},
		{"bad utf8", []string{"tokenize", "--text", "a\xffb"}, 1, "not valid UTF-8 (bad byte 0xff at offset 1)"},
		{"missing model", []string{"tokenize", "--model", "/nonexistent/model", "--text", "x"}, 1, "/nonexistent/model"},
		{"bad temperature", []string{"generate", "--prompt", "x", "--temperature", "-2"}, 1, "temperature -2 out of range"},
		{"bad top-p", []string{"generate", "--prompt", "x", "--top-p", "0"}, 1, "top_p 0 out of range"},
		{"too many tokens", []string{"generate", "--prompt", "x", "--max-tokens", "100000"}, 1, "max_new_tokens 100000 out of range"},
		{"bad trace format", []string{"trace", "--prompt", "x", "--format", "xml"}, 1, `unknown --format "xml"`},
		{"bench unknown shape", []string{"bench", "--shape", "gpt5"}, 1, `unknown shape "gpt5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d stderr %q; want %d and %q", code, errb.String(), tt.code, tt.want)
			}
		})
	}
}

// TestTraceJSONL: one JSON object per stage, in order, with top-k lists
// carrying id, token, logit and prob, and the greedy choice equal to top-1.
func TestTraceJSONL(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"trace", "--prompt", "The President", "--temperature", "0", "--max-tokens", "3"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var stages []string
	var lastTop map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line is not JSON: %v", err)
		}
		stages = append(stages, ev["stage"].(string))
		if lg, ok := ev["logits"].(map[string]any); ok {
			lastTop = lg["top"].([]any)[0].(map[string]any)
			for _, k := range []string{"id", "token", "logit", "prob"} {
				if _, ok := lastTop[k]; !ok {
					t.Errorf("top-k entry lacks %q", k)
				}
			}
		}
		if sm, ok := ev["sample"].(map[string]any); ok {
			if sm["chosen"].(map[string]any)["id"] != lastTop["id"] {
				t.Errorf("greedy chose %v, top-1 is %v", sm["chosen"], lastTop["id"])
			}
		}
	}
	if got := strings.Join(stages, ","); got != "tokenize,embed,prefill,logits,sample,append,logits,sample,append,logits,sample,append,stop" {
		t.Errorf("stages %s", got)
	}
}
