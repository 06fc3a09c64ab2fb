package main

// bench_write_test.go: the checkpoints bench --write-llama2c and --write-hf
// write load back in the engine as the same model: the same config and
// logits (bit for bit where the stored layout is the same).

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

func TestBenchWritersRoundTrip(t *testing.T) {
	llama := engine.Config{Arch: engine.ArchLlama, Dim: 32, HiddenDim: 64, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 8,
		VocabSize: 50, SeqLen: 16, NormEps: 1e-5, RopeTheta: 10000, Rope: engine.RopeAdjacent, TiedHead: true, BOS: 1, EOS: 2}
	untied := llama
	untied.TiedHead = false
	half := llama
	half.Rope = engine.RopeHalf
	gpt2 := engine.Config{Arch: engine.ArchGPT2, Dim: 32, HiddenDim: 64, NLayers: 2, NHeads: 2, NKVHeads: 2, HeadDim: 16,
		VocabSize: 50, SeqLen: 16, NormEps: 1e-5, Rope: engine.RopeNone, TiedHead: true, BOS: 0, EOS: 0}
	logits := func(m *engine.Model) []uint32 {
		st := engine.NewState(m.Config)
		kv, err := engine.NewKVCache(m.Config, m.Config.SeqLen)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := m.ForwardAll(st, kv, []int{1, 7, 3, 49, 0, 12}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]uint32, len(lg))
		for i, v := range lg {
			out[i] = math.Float32bits(v)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		c    engine.Config
		l2c  bool // also as llama2.c (adjacent-pair RoPE only)
	}{{"llama", llama, true}, {"llama-untied", untied, true}, {"llama-rope-half", half, false}, {"gpt2", gpt2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := engine.RandomModel(tc.name, tc.c, 4)
			if err != nil {
				t.Fatal(err)
			}
			want := logits(m)
			dir := t.TempDir()
			if err := writeHF(filepath.Join(dir, "hf"), m); err != nil {
				t.Fatal(err)
			}
			hf, err := engine.LoadModel(filepath.Join(dir, "hf"), "")
			if err != nil {
				t.Fatal(err)
			}
			// a Llama checkpoint in HF layout is read with rotate-half RoPE
			// (an adjacent-pair model written so is another, equally random
			// model), and GPT-2's matrices as stored, [in][out] (other sums)
			wantC := m.Config
			if wantC.Arch == engine.ArchLlama {
				wantC.Rope = engine.RopeHalf
			}
			if hf.Config != wantC {
				t.Errorf("HF directory: config %+v, want %+v", hf.Config, wantC)
			}
			got := logits(hf)
			switch {
			case tc.c.Rope == engine.RopeHalf && !slices.Equal(got, want):
				t.Error("HF directory: logits differ from the written model's")
			case tc.c.Arch == engine.ArchGPT2:
				for i := range got {
					if d := math.Abs(float64(math.Float32frombits(got[i]) - math.Float32frombits(want[i]))); d > 1e-4 {
						t.Fatalf("HF directory: logit %d differs by %g", i, d)
					}
				}
			}
			bin := filepath.Join(dir, "m.bin")
			err = writeLlama2c(bin, m)
			if !tc.l2c {
				if err == nil {
					t.Error("llama2.c written for a model it cannot hold")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l2c, err := engine.LoadModel(bin, "")
			if err != nil {
				t.Fatal(err)
			}
			if l2c.Config != m.Config || l2c.WeightsChecksum() != m.WeightsChecksum() || !slices.Equal(logits(l2c), want) {
				t.Errorf("llama2.c: config %+v, or weights or logits differ from the written model's", l2c.Config)
			}
		})
	}
}
