package main

// weights_test.go: --weights q8_0|q4_0|q4_k quantizes a model's matrices at load.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestWeightsQuantizedAtLoad(t *testing.T) {
	bytesOf := map[string]int64{}
	for _, w := range []string{"f32", "q8_0", "q4_0"} {
		var out, errb bytes.Buffer
		args := []string{"bench", "--shape", "stories15M", "--weights", w, "--prompt-tokens", "4", "--gen-tokens", "2", "--probe-bytes", "0"}
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("--weights %s: exit %d: %s", w, code, errb.String())
		}
		var rep struct {
			Results []benchResult `json:"results"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 1 {
			t.Fatalf("--weights %s: %v\n%s", w, err, out.String())
		}
		r := rep.Results[0]
		if r.WeightsPrecision != w || r.DecodeTokensPerSec <= 0 {
			t.Errorf("--weights %s: precision %q, decode %v tok/s", w, r.WeightsPrecision, r.DecodeTokensPerSec)
		}
		bytesOf[w] = r.WeightsBytes
	}
	// Q8_0: 34 bytes per 32 weights, Q4_0: 18 (norms stay float32)
	if f := float64(bytesOf["f32"]); float64(bytesOf["q8_0"]) > f*0.27 || float64(bytesOf["q4_0"]) > f*0.15 {
		t.Errorf("weight bytes %v", bytesOf)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bench", "--shape", "stories15M", "--weights", "q5_k"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "allowed: f32, bf16, q8_0, q4_0, q4_k") {
		t.Errorf("--weights q5_k: exit %d, %q", code, errb.String())
	}
}

// TestWeightsQ4_KAtLoad: --weights q4_k on the default model (rows of 256
// and 704 values: Q4_K where 256 divides them, Q8_0 for the MLP's down
// projection) runs and reads fewer bytes than Q8_0.
func TestWeightsQ4_KAtLoad(t *testing.T) {
	bytesOf := map[string]int64{}
	for _, w := range []string{"q8_0", "q4_k"} {
		var out, errb bytes.Buffer
		args := []string{"bench", "--shape", "", "--model", "default", "--weights", w, "--prompt-tokens", "4", "--gen-tokens", "2", "--probe-bytes", "0"}
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("--weights %s: exit %d: %s", w, code, errb.String())
		}
		var rep struct {
			Results []benchResult `json:"results"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 1 {
			t.Fatalf("--weights %s: %v\n%s", w, err, out.String())
		}
		r := rep.Results[0]
		if r.WeightsPrecision != w || r.DecodeTokensPerSec <= 0 {
			t.Errorf("--weights %s: precision %q, decode %v tok/s", w, r.WeightsPrecision, r.DecodeTokensPerSec)
		}
		bytesOf[w] = r.WeightsBytes
	}
	if bytesOf["q4_k"] >= bytesOf["q8_0"]*7/10 {
		t.Errorf("weight bytes %v: q4_k should take well under q8_0's", bytesOf)
	}
}
