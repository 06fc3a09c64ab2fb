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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
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

// ggufArchName is the GGUF architecture a family is written as.
var ggufArchName = map[Arch]string{ArchLlama: "llama", ArchMistral: "llama", ArchQwen2: "qwen2", ArchQwen3: "qwen3",
	ArchPhi3: "phi3", ArchGemma2: "gemma2", ArchGemma3: "gemma3"}

// ggufFromArchModel writes a Hugging Face-layout model of the llama-like
// families as hf_arch_to_gguf.py (llama.cpp's converter) would: llama's q/k
// rows permuted, Gemma's norms with their +1, Phi-3's projections fused,
// llama3 RoPE scaling as rope_freqs; matrices in typ, vectors in F32; a
// byte-level tokenizer (pre-tokenizer llama-bpe for llama, qwen2 for Qwen).
// It needs no ../shared, so these files also seed FuzzLoadGGUF.
func ggufFromArchModel(t testing.TB, m *Model, typ quant.Type) []byte {
	t.Helper()
	c, w := m.Config, &m.Weights
	arch := ggufArchName[c.Arch]
	b := &ggufBuilder{}
	b.str("general.architecture", arch)
	b.str("general.name", "test-"+arch)
	for k, v := range map[string]int{"context_length": c.SeqLen, "embedding_length": c.Dim, "feed_forward_length": c.HiddenDim,
		"block_count": c.NLayers, "attention.head_count": c.NHeads, "attention.head_count_kv": c.NKVHeads,
		"attention.key_length": c.HeadDim, "attention.value_length": c.HeadDim, "rope.dimension_count": c.Rotary()} {
		b.u32(arch+"."+k, uint32(v))
	}
	b.f32(arch+".attention.layer_norm_rms_epsilon", c.NormEps)
	b.f32(arch+".rope.freq_base", float32(c.RopeTheta))
	if c.Window > 0 {
		b.u32(arch+".attention.sliding_window", uint32(c.Window))
	}
	if c.Arch == ArchGemma2 {
		b.f32(arch+".attn_logit_softcapping", float32(c.AttnSoftcap))
	}
	if c.Arch == ArchGemma2 || c.FinalSoftcap != 0 {
		b.f32(arch+".final_logit_softcapping", float32(c.FinalSoftcap))
	}
	if c.RopeScaling.Type == "linear" {
		b.str(arch+".rope.scaling.type", "linear")
		b.f32(arch+".rope.scaling.factor", float32(c.RopeScaling.Factor))
	}
	V, d, hd := c.VocabSize, c.Dim, c.HiddenDim
	toks := append([]string(nil), byteAlphabet()...)
	for len(toks) < V-1 {
		toks = append(toks, fmt.Sprintf("[PAD%d]", len(toks)))
	}
	toks = append(toks, "<|endoftext|>")
	types := make([]int32, V)
	for i := range types {
		types[i] = 1
	}
	types[V-1] = 3
	b.str("tokenizer.ggml.model", "gpt2")
	b.str("tokenizer.ggml.pre", map[string]string{"llama": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2"}[arch]+"")
	b.strs("tokenizer.ggml.tokens", toks)
	b.i32s("tokenizer.ggml.token_type", types)
	b.strs("tokenizer.ggml.merges", nil)
	b.u32("tokenizer.ggml.eos_token_id", uint32(V-1))
	gemma := c.Arch == ArchGemma2 || c.Arch == ArchGemma3
	mat := func(name string, x *Mat) { b.tensor(t, name, typ, x.Dense(), x.Rows, x.Cols) }
	vec := func(name string, v []float32) {
		if gemma && strings.HasSuffix(name, "norm.weight") { // Gemma's (1 + w), folded in
			v = append([]float32(nil), v...)
			for i := range v {
				v[i]++
			}
		}
		b.tensor(t, name, quant.F32, v, 0, len(v))
	}
	cat := func(ms ...*Mat) []float32 {
		var out []float32
		for _, x := range ms {
			out = append(out, x.Dense()...)
		}
		return out
	}
	mat("token_embd.weight", &w.TokenEmbed)
	for l := range w.Layers {
		lw, p := &w.Layers[l], fmt.Sprintf("blk.%d.", l)
		vec(p+"attn_norm.weight", lw.AttnNorm)
		switch {
		case c.Arch == ArchPhi3:
			b.tensor(t, p+"attn_qkv.weight", typ, cat(&lw.Wq, &lw.Wk, &lw.Wv), c.QDim()+2*c.KVDim(), d)
		case ggufArchName[c.Arch] == "llama":
			b.tensor(t, p+"attn_q.weight", typ, permuteQK(lw.Wq.Dense(), c.NHeads, d), c.QDim(), d)
			b.tensor(t, p+"attn_k.weight", typ, permuteQK(lw.Wk.Dense(), c.NKVHeads, d), c.KVDim(), d)
			mat(p+"attn_v.weight", &lw.Wv)
		default:
			mat(p+"attn_q.weight", &lw.Wq)
			mat(p+"attn_k.weight", &lw.Wk)
			mat(p+"attn_v.weight", &lw.Wv)
		}
		if lw.Bq != nil {
			vec(p+"attn_q.bias", lw.Bq)
			vec(p+"attn_k.bias", lw.Bk)
			vec(p+"attn_v.bias", lw.Bv)
		}
		if lw.QNorm != nil {
			vec(p+"attn_q_norm.weight", lw.QNorm)
			vec(p+"attn_k_norm.weight", lw.KNorm)
		}
		mat(p+"attn_output.weight", &lw.Wo)
		if gemma {
			vec(p+"post_attention_norm.weight", lw.PostAttnNorm)
			vec(p+"post_ffw_norm.weight", lw.PostMLPNorm)
		}
		vec(p+"ffn_norm.weight", lw.MLPNorm)
		if c.Arch == ArchPhi3 {
			b.tensor(t, p+"ffn_up.weight", typ, cat(&lw.WGate, &lw.WUp), 2*hd, d)
		} else {
			mat(p+"ffn_gate.weight", &lw.WGate)
			mat(p+"ffn_up.weight", &lw.WUp)
		}
		mat(p+"ffn_down.weight", &lw.WDown)
	}
	vec("output_norm.weight", w.FinalNorm)
	if !c.TiedHead {
		mat("output.weight", &w.Head)
	}
	if c.RopeScaling.Type == "llama3" { // LlamaModel.generate_extra_tensors: default / scaled frequency
		scaled, plain := c.ropeInvFreq(false), (Config{RopeTheta: c.RopeTheta, HeadDim: c.HeadDim}).ropeInvFreq(false)
		f := make([]float32, len(scaled))
		for j := range f {
			f[j] = float32(plain[j] / scaled[j])
		}
		vec("rope_freqs.weight", f)
	}
	return b.bytes()
}

// TestGGUFArchsWrittenHere: the same checkpoints written as GGUF here
// (no ../shared needed): F32 files compute the goldens, Q8_0 files (rows
// of whole blocks) the float64 reference on their weights.
func TestGGUFArchsWrittenHere(t *testing.T) {
	for _, name := range []string{"llama3-rope-f32", "mistral-window-f32", "qwen2-bias-bf16", "qwen3-qknorm-f32",
		"phi3-fused-f32", "gemma2-gguf-f32", "gemma3-gguf-f32"} {
		hf, g := loadArchGolden(t, filepath.Join("testdata/arch", name))
		for _, typ := range []quant.Type{quant.F32, quant.Q8_0} {
			if typ == quant.Q8_0 && hf.Config.Dim%32 != 0 {
				continue
			}
			t.Run(name+"/"+typ.String(), func(t *testing.T) {
				m, err := LoadGGUFBytes(ggufFromArchModel(t, hf, typ), name+".gguf")
				if err != nil {
					t.Fatal(err)
				}
				if m.Config.Arch != hf.Config.Arch {
					t.Errorf("loaded as %s, want %s", m.Config.Arch, hf.Config.Arch)
				}
				if typ == quant.F32 {
					tol := 1e-4
					if g.DType == "BF16" {
						tol = 5e-4
					}
					t.Logf("vs the float64 golden: %.2g", checkGolden(t, m, g, tol))
					return
				}
				t.Logf("vs the float64 reference on the file's weights: %.2g", checkAgainstRef64(t, m, g.Prompt, 20, 1e-3))
			})
		}
	}
}

// TestGGUFArchRefuses: what llama.cpp's files of these architectures
// cannot mean is refused by name, and cut or corrupted files are refused,
// never with a panic.
func TestGGUFArchRefuses(t *testing.T) {
	load := func(name string) *Model {
		m, err := LoadModel(filepath.Join("testdata/arch", name), "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	with := func(name string, edit func(c *Config)) []byte {
		m := load(name)
		c := m.Config
		edit(&c)
		return ggufFromArchModel(t, &Model{Name: m.Name, Config: c, Weights: m.Weights}, quant.F32)
	}
	llama3 := load("llama3-rope-f32").Config.RopeScaling
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"qwen2 window", with("qwen2-bias-bf16", func(c *Config) { c.Window, c.LayerTypes = 4, "ss" }), "qwen2.attention.sliding_window (4) is not supported for qwen2"},
		{"qwen3 rope_freqs", with("qwen3-qknorm-f32", func(c *Config) { c.RopeScaling = llama3 }), "tensor rope_freqs.weight is not supported for qwen3"},
		{"gemma2 partial rope", with("gemma2-gguf-f32", func(c *Config) { c.RotaryDim = 4 }), "gemma2.rope.dimension_count 4 is not the head size 8 (partial RoPE)"},
		{"qwen3 softcap", with("qwen3-qknorm-f32", func(c *Config) { c.FinalSoftcap = 30 }), "qwen3.final_logit_softcapping is not supported for qwen3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadGGUFBytes(tt.file, "bad.gguf")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	for _, name := range []string{"llama3-rope-f32", "qwen2-bias-bf16", "phi3-fused-f32", "gemma3-gguf-f32"} {
		good := ggufFromArchModel(t, load(name), quant.Q8_0)
		if name == "phi3-fused-f32" {
			good = ggufFromArchModel(t, load(name), quant.BF16)
		}
		for cut := 0; cut < len(good); cut += 1 + len(good)/97 {
			if _, err := LoadGGUFBytes(good[:cut], "cut.gguf"); err == nil || strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s cut at %d of %d: %v", name, cut, len(good), err)
			}
		}
		for i := 0; i < 4096 && i < len(good); i += 13 { // flipped header and metadata bytes
			bad := append([]byte(nil), good...)
			bad[i] ^= 0x5a
			if m, err := LoadGGUFBytes(bad, "flip.gguf"); err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s byte %d flipped: %v", name, i, err)
			} else if err == nil {
				if _, err := m.Forward(NewState(m.Config), mustKV(t, m.Config), []int{0, m.Config.VocabSize - 1}, nil); err != nil {
					t.Fatalf("%s byte %d flipped: loads but does not run: %v", name, i, err)
				}
			}
		}
	}
}
