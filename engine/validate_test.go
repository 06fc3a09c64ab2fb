package engine

// validate_test.go: the loaders refuse impossible sizes before allocating.

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadersRefuseImpossibleSizes: sizes at their extremes are refused
// with an error before anything large is allocated, and never panic.
func TestLoadersRefuseImpossibleSizes(t *testing.T) {
	editConfig := func(f func(map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, "config.json")
			b, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(b, &m)
			f(m)
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}
	}
	writeTok := func(vocab string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			tj := `{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},` +
				`"model":{"type":"BPE","vocab":` + vocab + `,"merges":[]}}`
			os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tj), 0o644)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"a million layers", editConfig(func(m map[string]any) { m["num_hidden_layers"] = 1048576.0 }),
			[]string{"config.json", "layers 1048576", "does not match the weights"}},
		{"every size at the limit", editConfig(func(m map[string]any) {
			for _, k := range []string{"hidden_size", "intermediate_size", "num_hidden_layers", "vocab_size", "max_position_embeddings"} {
				m[k] = float64(1 << 20)
			}
			m["num_attention_heads"], m["num_key_value_heads"] = 4.0, 4.0
		}), []string{"config.json", "needs more weights than int64 can count"}},
		{"negative rope_theta", editConfig(func(m map[string]any) { m["rope_theta"] = -10000.0 }),
			[]string{"config.json", "rope_theta -10000 must be a positive number"}},
		{"negative id in a Metaspace vocab", writeTok(`{"<unk>":0,"▁":1,"a":-7}`), []string{"tokenizer.json", `"a" has id -7`}},
		{"huge id in a Metaspace vocab", writeTok(`{"<unk>":0,"▁":9223372036854775807}`), []string{"tokenizer.json", "ids must be 0 to"}},
		{"bos beyond the vocabulary is ignored, not indexed", editConfig(func(m map[string]any) {
			m["bos_token_id"], m["eos_token_id"] = 1e18, -5.0
			m["num_hidden_layers"] = 1048576.0
		}), []string{"does not match the weights"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata/reference", "llama-tied-f32"))
			tt.damage(t, dir)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := LoadModel(dir, "")
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("load succeeded on an impossible model")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("refusing the model allocated %d MiB first", grew>>20)
			}
		})
	}
}

// TestLlama2cHeaderOverflow: a header whose sizes overflow int64 is refused
// even when the file size equals the wrapped-around product.
func TestLlama2cHeaderOverflow(t *testing.T) {
	const big = 1 << 20
	h := []int32{big, big, big, big >> 10, big >> 10, big, big}
	var b []byte
	for _, x := range h {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	// what int64 arithmetic without checks makes of these sizes
	d, hd, L, V, S := int64(big), int64(big), int64(big), int64(big), int64(big)
	kvd, headDim := d, d/(big>>10)
	wrapped := 28 + 4*(V*d+L*d+L*d*d+2*L*kvd*d+L*d*d+L*d+3*L*hd*d+d+S*headDim)
	for _, size := range []int64{wrapped, 36, math.MaxInt64} {
		if _, err := parseLlama2cHeader(b, size); err == nil || !strings.Contains(err.Error(), "overflow") {
			t.Errorf("file size %d: err %v, want an overflow error", size, err)
		}
	}
	p := filepath.Join(t.TempDir(), "model.bin")
	os.WriteFile(p, append(b, 0, 0, 0, 0, 0, 0, 0, 0), 0o644) // 36 bytes
	if _, err := LoadModel(p, ""); err == nil {
		t.Error("a 36-byte checkpoint loaded")
	}
}

// TestRecoverLoad: a panic inside a loader becomes an error naming the file.
func TestRecoverLoad(t *testing.T) {
	f := func() (err error) {
		defer recoverLoad("model /x", &err)
		var s []int
		_ = s[-1+len(s)]
		return nil
	}
	if err := f(); err == nil || !strings.Contains(err.Error(), "load model /x") {
		t.Errorf("err %v", err)
	}
}

func TestExpectedParamsMatchesLoadedModels(t *testing.T) {
	for _, name := range []string{"llama-tied-f32", "llama-gqa-untied-bf16", "gpt2-small-f32"} {
		m, err := LoadModel(filepath.Join("testdata/reference", name), "")
		if err != nil {
			t.Fatal(err)
		}
		n, ok := m.Config.expectedParams()
		if !ok || n != m.Weights.NumParams() {
			t.Errorf("%s: expected %d (ok %v), loaded %d", name, n, ok, m.Weights.NumParams())
		}
	}
}

// FuzzHFConfig loads a real small model with a fuzzed config.json: sizes
// and ids at any value give a model or an error, never a panic or a huge
// allocation.
func FuzzHFConfig(f *testing.F) {
	f.Add(int64(32), int64(80), int64(2), int64(4), int64(4), int64(101), int64(64), int64(1))
	f.Add(int64(1<<20), int64(1<<20), int64(1<<20), int64(1), int64(1), int64(1<<20), int64(1<<20), int64(-1))
	f.Add(int64(-1), int64(0), int64(math.MaxInt64), int64(math.MinInt64), int64(3), int64(7), int64(1<<62), int64(1<<40))
	src := filepath.Join("testdata/reference", "llama-tied-f32")
	st, _ := os.ReadFile(filepath.Join(src, "model.safetensors"))
	f.Fuzz(func(t *testing.T, dim, hidden, layers, heads, kvHeads, vocab, ctx, bos int64) {
		cfg := map[string]any{"model_type": "llama", "hidden_size": dim, "intermediate_size": hidden, "num_hidden_layers": layers,
			"num_attention_heads": heads, "num_key_value_heads": kvHeads, "vocab_size": vocab, "max_position_embeddings": ctx,
			"bos_token_id": bos, "tie_word_embeddings": true}
		dir := t.TempDir()
		b, _ := json.Marshal(cfg)
		os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
		os.WriteFile(filepath.Join(dir, "model.safetensors"), st, 0o644)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := LoadModel(dir, "")
		runtime.ReadMemStats(&after)
		if err == nil && m.Config.Validate() != nil {
			t.Fatalf("accepted invalid config %+v", m.Config)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Fatalf("config %s allocated %d MiB", b, grew>>20)
		}
	})
}
