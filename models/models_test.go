package models

// models_test.go: the embedded default model reproduces its training script's logits.

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
)

// TestDefaultModelMatchesTrainingGoldens: the engine reproduces the logits
// the PyTorch training script computed for the shipped weights (1e-4), and
// the Go tokenizer gives the Python tokenizer's ids.
func TestDefaultModelMatchesTrainingGoldens(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Arch != engine.ArchLlama || c.Rope != engine.RopeHalf || c.NKVHeads >= c.NHeads || !c.TiedHead {
		t.Fatalf("default model should be Llama-style with GQA and a tied head: %+v", c)
	}
	b, err := File("golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Prompts []struct {
			Prompt     string    `json:"prompt"`
			IDs        []int     `json:"ids"`
			LastLogits []float64 `json:"last_logits"`
			Argmax     []int     `json:"argmax_per_position"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Prompts) == 0 {
		t.Fatal("no golden prompts")
	}
	for _, p := range g.Prompts {
		toks, err := m.Tokenizer.Encode(p.Prompt, tokenizer.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int, len(toks))
		for i, tk := range toks {
			ids[i] = tk.ID
		}
		if len(ids) != len(p.IDs) {
			t.Fatalf("%q: ids %v, python tokenizer gave %v", p.Prompt, ids, p.IDs)
		}
		for i := range ids {
			if ids[i] != p.IDs[i] {
				t.Fatalf("%q: ids %v, python tokenizer gave %v", p.Prompt, ids, p.IDs)
			}
		}
		st := engine.NewState(c)
		kv, _ := engine.NewKVCache(c, c.SeqLen)
		all, err := m.ForwardAll(st, kv, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		V := c.VocabSize
		last := all[(len(ids)-1)*V:]
		var worst float64
		for i, want := range p.LastLogits {
			worst = math.Max(worst, math.Abs(float64(last[i])-want))
		}
		if worst > 1e-4 {
			t.Errorf("%q: logits differ from the training script by %.3g (tolerance 1e-4)", p.Prompt, worst)
		}
		for pos, want := range p.Argmax {
			row := all[pos*V : (pos+1)*V]
			best := 0
			for i, v := range row {
				if v > row[best] {
					best = i
				}
			}
			if best != want {
				t.Errorf("%q pos %d: argmax %d, torch %d", p.Prompt, pos, best, want)
			}
		}
		t.Logf("%q: %d tokens, largest logit difference vs torch %.3g", p.Prompt, len(ids), worst)
	}
}
