package engine

// arch_config_test.go: config.json of the decoder families read with each
// transformers config class's defaults, and what the engine refuses by name.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func archConfig(t *testing.T, kv map[string]any) (Config, error) {
	t.Helper()
	j := map[string]any{"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 6, "num_attention_heads": 4,
		"num_key_value_heads": 2, "max_position_embeddings": 256, "vocab_size": 100}
	for k, v := range kv {
		j[k] = v
	}
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return parseHFConfig(b)
}

func TestArchConfigDefaults(t *testing.T) {
	cases := []struct {
		name string
		kv   map[string]any
		want func(c Config) string // "" when right
	}{
		{"mistral window default 4096", map[string]any{"model_type": "mistral"}, func(c Config) string {
			if c.Window != 4096 || c.LayerTypes != "ssssss" || c.HeadDim != 16 || c.NormEps != 1e-6 || c.TiedHead {
				return "want window 4096 on every layer, head_dim 16, eps 1e-6, untied"
			}
			return ""
		}},
		{"mistral window null", map[string]any{"model_type": "mistral", "sliding_window": nil}, func(c Config) string {
			if c.Window != 0 || c.LayerTypes != "" {
				return "want no window"
			}
			return ""
		}},
		{"qwen2 window off unless use_sliding_window", map[string]any{"model_type": "qwen2", "sliding_window": 32}, func(c Config) string {
			if c.Window != 0 {
				return "want no window"
			}
			return ""
		}},
		{"qwen2 window from max_window_layers", map[string]any{"model_type": "qwen2", "use_sliding_window": true, "sliding_window": 32, "max_window_layers": 4}, func(c Config) string {
			if c.Window != 32 || c.LayerTypes != "ffffss" {
				return "want layers 4, 5 sliding"
			}
			return ""
		}},
		{"qwen3 head_dim default 128", map[string]any{"model_type": "qwen3"}, func(c Config) string {
			if c.HeadDim != 128 || !c.QKNorm || c.QDim() != 512 {
				return "want head_dim 128 (independent of hidden 64), q/k norms"
			}
			return ""
		}},
		{"phi3 partial rotary", map[string]any{"model_type": "phi3", "partial_rotary_factor": 0.75}, func(c Config) string {
			if c.Rotary() != 12 || c.NormEps != 1e-5 || c.Window != 0 {
				return "want 12 of 16 dims rotated, eps 1e-5, no window"
			}
			return ""
		}},
		{"gemma3 pattern and bases", map[string]any{"model_type": "gemma3_text", "head_dim": 16, "sliding_window": 8}, func(c Config) string {
			if c.LayerTypes != "sssssf" || c.RopeTheta != 1e6 || c.RopeLocalTheta != 10000 || !c.NormPlusOne || c.MLP != MLPGeGLU ||
				c.EmbedScale != 8 || c.AttnScale() != 1.0/16 || !c.TiedHead || c.FinalSoftcap != 0 || c.AttnSoftcap != 0 {
				return "want 5 local : 1 global, bases 1e6/1e4, (1+w) norms, GeGLU, ×8 embedding, scale 256^-½, tied, no soft-caps"
			}
			return ""
		}},
		{"gemma3 layer_types and rope_parameters", map[string]any{"model_type": "gemma3_text", "head_dim": 16,
			"layer_types": []string{"full_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"},
			"rope_parameters": map[string]any{"full_attention": map[string]any{"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
				"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 1e4}}}, func(c Config) string {
			if c.LayerTypes != "fsfssf" || c.RopeScaling.Type != "linear" || c.RopeScaling.Factor != 8 || c.RopeLocalTheta != 1e4 {
				return "want the listed layer types and the per-type RoPE"
			}
			return ""
		}},
		{"gemma2 soft-caps default", map[string]any{"model_type": "gemma2", "head_dim": 16}, func(c Config) string {
			if c.AttnSoftcap != 50 || c.FinalSoftcap != 30 || c.LayerTypes != "sfsfsf" || c.QKNorm {
				return "want soft-caps 50/30, alternating layers, no q/k norms"
			}
			return ""
		}},
		{"llama3 rope_scaling", map[string]any{"model_type": "llama", "rope_scaling": map[string]any{"rope_type": "llama3", "factor": 32.0,
			"low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}, func(c Config) string {
			if c.RopeScaling != (RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMax: 8192}) {
				return "want the llama3 parameters"
			}
			return ""
		}},
	}
	for _, tc := range cases {
		c, err := archConfig(t, tc.kv)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if msg := tc.want(c); msg != "" {
			t.Errorf("%s: %s; got %+v", tc.name, msg, c)
		}
	}
}

func TestArchConfigRefused(t *testing.T) {
	cases := []struct {
		kv   map[string]any
		want string
	}{
		{map[string]any{"model_type": "llama", "rope_scaling": map[string]any{"rope_type": "yarn", "factor": 4.0}}, `rope_scaling type "yarn" is not supported`},
		{map[string]any{"model_type": "phi3", "rope_scaling": map[string]any{"type": "longrope", "short_factor": []float64{1}}}, `rope_scaling type "longrope" is not supported`},
		{map[string]any{"model_type": "llama", "rope_scaling": map[string]any{"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 128}}, "dynamic with original_max_position_embeddings 128"},
		{map[string]any{"model_type": "llama", "rope_scaling": map[string]any{"rope_type": "llama3", "factor": 8.0}}, "rope_scaling llama3"},
		{map[string]any{"model_type": "gemma3"}, "multimodal"},
		{map[string]any{"model_type": "llama", "mlp_bias": true}, "mlp_bias is not supported"},
		{map[string]any{"model_type": "gemma3_text", "hidden_activation": "gelu"}, `hidden_activation "gelu" is not supported`},
		{map[string]any{"model_type": "gemma3_text", "use_bidirectional_attention": true}, "use_bidirectional_attention"},
		{map[string]any{"model_type": "mistral", "layer_types": []string{"chunked_attention"}}, "layer_types has 1 entries for 6 layers"},
		{map[string]any{"model_type": "mamba"}, "supported: llama, gpt2, mistral, qwen2, qwen3, phi3, gemma2, gemma3_text"},
	}
	for _, tc := range cases {
		_, err := archConfig(t, tc.kv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.kv, err, tc.want)
		}
	}
}

// FuzzArchConfig: any config.json bytes, seeded with the families'
// checkpoints: parsing never panics, and what it accepts validates.
func FuzzArchConfig(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/arch/*/config.json")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseHFConfig(b)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("accepted a config Validate refuses: %v", verr)
			}
			_ = c.ropeInvFreq(false)
			_ = c.ropeInvFreq(true)
		}
	})
}
