//go:build !engineonly

package main

// bench_long_test.go: bench --depth reports long-context decode against the
// KV cache read floor, and --model's lab run against its bare decode.

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

func TestBenchDepthAndLabRun(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"bench", "--shape", "stories15M", "--model", "default", "--depth", "200", "--rounds", "2",
		"--prompt-tokens", "4", "--gen-tokens", "20", "--probe-bytes", "1048576"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Long) != 2 || len(rep.Lab) != 1 {
		t.Fatalf("want long-context figures for 2 models and one lab run: %s", out.String())
	}
	for _, l := range rep.Long {
		if l.Depth != 200 || l.Rounds != 2 || l.DecodeMs <= 0 || l.KVReadMs <= 0 || l.AttentionVsKVFloor == 0 || l.KVBytes <= 0 {
			t.Errorf("long-context figures incomplete: %+v", l)
		}
	}
	if lab := rep.Lab[0]; lab.GenTokens != 20 || lab.LabMs <= 0 || lab.BareMs <= 0 || lab.LabVsBare <= 0 {
		t.Errorf("lab run figures incomplete: %+v", lab)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"bench", "--shape", "stories15M", "--depth", "300", "--probe-bytes", "0"}, &out, &errb); code != 1 {
		t.Errorf("--depth past the context: exit %d, stderr %q", code, errb.String())
	}
}

// TestBenchKVCache: --kv-cache f16 runs every part on a 16-bit cache and
// counts its bytes at 2 a number; an unknown precision is refused.
func TestBenchKVCache(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"bench", "--shape", "stories15M", "--depth", "100", "--rounds", "1", "--kv-cache", "f16",
		"--prompt-tokens", "4", "--gen-tokens", "8", "--probe-bytes", "1048576"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Machine.KVCache != "f16" || len(rep.Long) != 1 || rep.Long[0].KVCache != "f16" || rep.Long[0].KVBytes != 101*rep.Results[0].KVBytesPerToken/2 {
		t.Errorf("f16 bench: %s", out.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"bench", "--shape", "stories15M", "--kv-cache", "q4", "--probe-bytes", "0"}, &out, &errb); code != 1 {
		t.Errorf("--kv-cache q4: exit %d, stderr %q", code, errb.String())
	}
}
