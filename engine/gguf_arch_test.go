package engine

// gguf_arch_test.go: the decoder families' tiny checkpoints (testdata/arch)
// as GGUF files written the way llama.cpp's converter writes them
// (scripts/gguf/hf_arch_to_gguf.py with llama.cpp's gguf-py; llama-quantize
// for the block types): F32 files compute the float64 goldens (≤ 1e-4,
// 5e-4 for a BF16 checkpoint) at every prompt position and through 20
// cached greedy steps, greedy tokens equal; BF16 files what the Hugging
// Face directory computes in BF16 (≤ 5e-4 of the logit scale); every file,
// Q8_0 and Q4_0 included, what the float64 reference computes on its own
// dequantized weights (≤ 1e-3), quantized ones batching bit for bit.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/internal/testenv"
)

// archGGUF converts testdata/arch/name with hf_arch_to_gguf.py (extra
// flags after the type) and, for a block type, llama-quantize.
func archGGUF(t *testing.T, dir, name, typ string, flags ...string) string {
	t.Helper()
	peer := testenv.SharedDir(t, "peers/llama.cpp")
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		testenv.Unavailable(t, "%s with numpy (apt-get install python3-numpy) to run hf_arch_to_gguf.py: %v", py, err)
	}
	outType := typ
	if typ != "f32" && typ != "bf16" && typ != "f16" {
		outType = "f32"
	}
	f := filepath.Join(dir, name+"-"+outType+strings.Join(flags, "")+".gguf")
	if _, err := os.Stat(f); err != nil {
		args := append([]string{"../scripts/gguf/hf_arch_to_gguf.py", filepath.Join("testdata/arch", name), f, outType}, flags...)
		cmd := exec.Command(py, args...)
		cmd.Env = append(os.Environ(), "LLAMA_CPP_PEER="+peer)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hf_arch_to_gguf.py %s %s: %v\n%s", name, outType, err, b)
		}
	}
	if outType == typ {
		return f
	}
	q := filepath.Join(dir, name+"-"+typ+".gguf")
	if b, err := exec.Command(filepath.Join(peer, "bin", "llama-quantize"), f, q, strings.ToUpper(typ), "1").CombinedOutput(); err != nil {
		t.Fatalf("llama-quantize %s %s: %v\n%s", name, typ, err, b)
	}
	return q
}

// checkGolden runs g's prompt and greedy steps through m's KV cache and
// returns the largest |Δlogit| against the float64 golden.
func checkGolden(t *testing.T, m *Model, g archGolden, tol float64) float64 {
	t.Helper()
	V := m.Config.VocabSize
	st := NewState(m.Config)
	kv, err := NewKVCache(m.Config, len(g.Prompt)+len(g.Steps))
	if err != nil {
		t.Fatal(err)
	}
	logits, err := m.ForwardAll(st, kv, g.Prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for p, want := range g.PromptLogits {
		worst = max(worst, maxAbsDiff(logits[p*V:(p+1)*V], want))
	}
	last := append([]float32(nil), logits[(len(g.Prompt)-1)*V:]...)
	for i, step := range g.Steps {
		if tok := argmax(last); tok != step.Token {
			t.Fatalf("step %d: greedy token %d, reference %d", i, tok, step.Token)
		}
		out, err := m.Forward(st, kv, []int{step.Token}, nil)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, maxAbsDiff(out, step.Logits))
		last = append(last[:0], out...)
	}
	if worst > tol {
		t.Errorf("logits differ from the float64 golden by %.3g (tolerance %g)", worst, tol)
	}
	return worst
}

// TestGGUFArchs: every family's checkpoint llama.cpp can hold, through
// GGUF. (gemma2-softcap-bf16 and gemma3-local-global-f32 cannot:
// GGUF has no query_pre_attn_scalar, and gemma3-local-global's three-layer
// pattern is not llama.cpp's; their -gguf- siblings can.)
func TestGGUFArchs(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		dir, arch string
		flags     []string
		types     []string
	}{
		{"llama3-rope-f32", "llama", nil, []string{"f32", "bf16", "q8_0"}},
		{"mistral-window-f32", "mistral", []string{"--keep-sliding-window"}, []string{"f32", "bf16"}},
		{"qwen2-bias-bf16", "qwen2", nil, []string{"f32", "bf16", "q8_0"}},
		{"qwen3-qknorm-f32", "qwen3", nil, []string{"f32", "bf16", "q4_0"}},
		{"phi3-fused-f32", "phi3", nil, []string{"f32", "bf16"}}, // rows of 48: no block type fits
		{"gemma2-gguf-f32", "gemma2", nil, []string{"f32", "bf16", "q8_0"}},
		{"gemma3-gguf-f32", "gemma3_text", nil, []string{"f32", "bf16", "q4_0"}},
	}
	for _, tc := range cases {
		dir := filepath.Join("testdata/arch", tc.dir)
		hf, g := loadArchGolden(t, dir)
		for _, typ := range tc.types {
			t.Run(tc.dir+"/"+typ, func(t *testing.T) {
				path := archGGUF(t, tmp, tc.dir, typ, tc.flags...)
				m, err := LoadModel(path, "")
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Config.Arch) != tc.arch {
					t.Fatalf("loaded as %s, want %s", m.Config.Arch, tc.arch)
				}
				c, h := m.Config, hf.Config
				if c.Window != h.Window || c.LayerTypes != h.LayerTypes || c.QKNorm != h.QKNorm || c.Rotary() != h.Rotary() ||
					c.AttnSoftcap != h.AttnSoftcap || c.FinalSoftcap != h.FinalSoftcap || c.AttnScale() != h.AttnScale() ||
					c.TiedHead != h.TiedHead || c.RopeLocalTheta != h.RopeLocalTheta {
					t.Errorf("config %+v\nHugging Face's %+v", c, h)
				}
				switch typ {
				case "f32":
					tol := 1e-4
					if g.DType == "BF16" {
						tol = 5e-4
					}
					t.Logf("vs the float64 golden: %.2g (%s)", checkGolden(t, m, g, tol), m.Config.RopeScaling)
				case "bf16":
					worst, same := compareModels(t, hf.WithWeights(BF16), m, g.Prompt, 20)
					t.Logf("vs the Hugging Face directory in BF16: %.2g", worst)
					if worst > 5e-4 || !same {
						t.Errorf("logits differ by %.3g of their scale (tol 5e-4); greedy tokens equal: %v", worst, same)
					}
					if g.DType == "BF16" {
						t.Logf("vs the float64 golden: %.2g", checkGolden(t, m, g, 5e-4))
					}
				}
				e := checkAgainstRef64(t, m, g.Prompt, 20, 1e-3)
				t.Logf("vs the float64 reference on the file's weights: %.2g; tensor types %v", e, m.GGUF.TensorTypes)
				if typ[0] == 'q' {
					checkBatchBitIdentical(t, m)
				}
			})
		}
	}
}

// TestGGUFMistralWindowDropped: llama.cpp's converter writes Mistral as
// llama without its sliding window; such a file runs full attention, as
// llama.cpp runs it: the Hugging Face model with the window removed.
func TestGGUFMistralWindowDropped(t *testing.T) {
	path := archGGUF(t, t.TempDir(), "mistral-window-f32", "f32")
	m, err := LoadModel(path, "")
	if err != nil {
		t.Fatal(err)
	}
	hf, g := loadArchGolden(t, "testdata/arch/mistral-window-f32")
	if m.Config.Arch != ArchLlama || m.Config.Window != 0 {
		t.Fatalf("arch %s, window %d", m.Config.Arch, m.Config.Window)
	}
	c := hf.Config
	c.Window, c.LayerTypes, c.Arch = 0, "", ArchLlama
	worst, same := compareModels(t, &Model{Name: hf.Name, Config: c, Weights: hf.Weights}, m, g.Prompt, 20)
	if worst > 1e-5 || !same {
		t.Errorf("vs the windowless Hugging Face model: %.3g of the logit scale; greedy tokens equal: %v", worst, same)
	}
}
