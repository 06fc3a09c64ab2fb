package engine

// quantcompare_test.go: CompareWeights measures every precision on the same
// greedy decode: the reference against itself moves no logit, its tokens are
// a plain greedy loop's, and a later round starts from the prompt again,
// sliding-window rings included.

import (
	"fmt"
	"path/filepath"
	"testing"
)

func TestCompareWeights(t *testing.T) {
	for _, dir := range []string{"llama3-rope-f32", "mistral-window-f32", "gemma2-softcap-bf16"} {
		t.Run(dir, func(t *testing.T) {
			m, err := LoadModel(filepath.Join("testdata", "arch", dir), "")
			if err != nil {
				t.Fatal(err)
			}
			prompt, steps := []int{1, 17, 42, 99, 5, 7}, 20 // past the tiny windows
			ref := m.WithWeights(F32)
			cmp, err := CompareWeights([]*Model{ref, m.WithWeights(Q8_0)}, []string{"f32", "q8_0"}, prompt, steps, 2)
			if err != nil {
				t.Fatal(err)
			}
			// a plain greedy loop on the reference
			st := NewState(ref.Config)
			kv, err := NewKVCache(ref.Config, len(prompt)+steps)
			if err != nil {
				t.Fatal(err)
			}
			logits, err := ref.Forward(st, kv, prompt, nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			for range steps {
				tok := argmaxLogit(logits)
				want = append(want, tok)
				if logits, err = ref.Forward(st, kv, []int{tok}, nil); err != nil {
					t.Fatal(err)
				}
			}
			r := cmp.Runs[0]
			if r.MaxAbsDelta != 0 || fmt.Sprint(r.Tokens) != fmt.Sprint(want) || len(r.RoundsTPS) != 2 || r.TokensPerSec <= 0 {
				t.Errorf("reference run %+v; want Δ 0, tokens %v, 2 rounds", r, want)
			}
			if q := cmp.Runs[1]; q.BytesPerParam >= r.BytesPerParam || len(q.Tokens) != steps {
				t.Errorf("q8_0 run %+v", q)
			}
		})
	}
}
