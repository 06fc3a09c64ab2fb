//go:build !engineonly

package main

// bench_lengths_test.go: bench runs every prompt and generation length the
// lab accepts (prompt + max_new_tokens up to the model's context), in every
// part of its report, and refuses a longer one with a clear error.

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/models"
)

func TestBenchAcceptsLengthsTheLabAccepts(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctxLen := m.Config.SeqLen // 256
	for _, pg := range [][2]int{{1, ctxLen - 1}, {5, ctxLen - 6}, {128, ctxLen - 128}, {ctxLen - 1, 1}, {ctxLen - 56, 55}} {
		p, g := pg[0], pg[1]
		t.Run(strconv.Itoa(p)+"+"+strconv.Itoa(g), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"bench", "--shape", "", "--model", "default", "--prompt-tokens", strconv.Itoa(p), "--gen-tokens", strconv.Itoa(g),
				"--probe-bytes", "65536", "--paired", "--concurrent", "2", "--rounds", "1"} // one round: the lengths are what is tested
			if code := run(context.Background(), args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var rep benchReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != 1 || rep.Results[0].GenTokens != g || len(rep.Paired) != 1 || len(rep.Generate) != 1 || len(rep.Concurrent) != 1 {
				t.Fatalf("report lacks a part: %s", out.String())
			}
			// generate's own prompt plus g tokens may pass the context: the
			// session then stops at the context, and so does the bare loop
			if n := rep.Generate[0].Tokens; n < 1 || n > g {
				t.Errorf("generate ran %d tokens, want 1 to %d", n, g)
			}
		})
	}
	// without --prompt-tokens, the default prompt gives way to a long
	// generation: --gen-tokens 250 runs with the 6 positions left
	var out, errb bytes.Buffer
	args := []string{"bench", "--shape", "", "--model", "default", "--gen-tokens", strconv.Itoa(ctxLen - 6), "--probe-bytes", "0", "--decode-only"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("--gen-tokens %d without --prompt-tokens: exit %d: %s", ctxLen-6, code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 1 || rep.Results[0].PromptTokens != 6 {
		t.Errorf("--gen-tokens %d without --prompt-tokens: want a 6-token prompt, got %s (%v)", ctxLen-6, out.String(), err)
	}
	out.Reset()
	errb.Reset()
	args = []string{"bench", "--shape", "", "--model", "default", "--prompt-tokens", "200", "--gen-tokens", strconv.Itoa(ctxLen - 199), "--probe-bytes", "0"}
	if code := run(context.Background(), args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "exceeds the context 256") {
		t.Errorf("prompt + gen past the context: exit %d, stderr %q", code, errb.String())
	}
}
