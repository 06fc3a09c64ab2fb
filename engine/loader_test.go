package engine

// loader_test.go: loaders: real files load, corrupt and truncated files fail with clear errors; header fuzz targets.

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/testenv"
)

func TestTinyGPT2Loads(t *testing.T) {
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	m, err := LoadModel(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Arch != ArchGPT2 || c.Dim != 2 || c.NLayers != 2 || c.NHeads != 2 || c.VocabSize != 50257 || c.SeqLen != 1024 {
		t.Fatalf("config %+v", c)
	}
	if m.Weights.NumParams() != 102714 {
		t.Errorf("params %d, PROVENANCE.md says 102,714", m.Weights.NumParams())
	}
	if m.Tokenizer == nil || m.Tokenizer.VocabSize() != 50257 {
		t.Fatalf("tokenizer not loaded")
	}
	toks, err := m.Tokenizer.Encode("Hello world", tokenizer.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := tokenIDs(toks); !equalInts(ids, []int{15496, 995}) {
		t.Errorf("Hello world → %v, want [15496 995]", ids)
	}
	st := NewState(c)
	kv, _ := NewKVCache(c, 32)
	logits, err := m.Forward(st, kv, tokenIDs(toks), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d is %v", i, v)
		}
	}
}

// writeTensors writes a small F32 safetensors file from a header spec.
func rawSafetensors(header string, data []byte) []byte {
	h := []byte(header)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), data...)
}

func TestSafetensorsHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"too short", []byte{1, 2, 3}, "too short"},
		{"length past end", binary.LittleEndian.AppendUint64(nil, 1000), "runs past the end"},
		{"huge length", binary.LittleEndian.AppendUint64(nil, 1<<40), "exceeds"},
		{"not json", rawSafetensors("nope", nil), "not a JSON object"},
		{"unknown dtype", rawSafetensors(`{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}`, []byte{0}), `tensor "a": unsupported dtype "I8"`},
		{"shape vs bytes", rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), `tensor "a": shape [2] of F32 needs 8 bytes`},
		{"offsets outside", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, nil), "outside the 0-byte data section"},
		{"overlap", rawSafetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`, make([]byte, 8)), "overlap"},
		{"negative dim", rawSafetensors(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), "bad dimension"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseSafetensorsHeader(tt.file, int64(len(tt.file)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// copyDir copies a reference model directory so a test can damage it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestCorruptModelFiles(t *testing.T) {
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
	tests := []struct {
		name   string
		src    string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"truncated safetensors", "llama-tied-f32", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-100], 0o644)
		}, []string{"model.safetensors", "data_offsets", "outside"}},
		{"wrong shape in config", "llama-tied-f32", editConfig(func(m map[string]any) { m["intermediate_size"] = 81.0 }),
			[]string{"model.safetensors", `"model.layers.0.mlp.gate_proj.weight"`, "has shape [80 32], the config needs [81 32]"}},
		{"unknown architecture", "llama-tied-f32", editConfig(func(m map[string]any) { m["model_type"] = "mamba" }),
			[]string{"config.json", `unknown architecture model_type "mamba"`}},
		{"missing tensor", "gpt2-small-f32", editConfig(func(m map[string]any) { m["n_layer"] = 3.0 }),
			[]string{"model.safetensors", `missing tensor "transformer.h.2.ln_1.weight"`}},
		{"heads do not divide", "llama-tied-f32", editConfig(func(m map[string]any) { m["num_key_value_heads"] = 3.0 }),
			[]string{"config.json", "n_heads 4 is not a multiple of n_kv_heads 3"}},
		{"no weights", "llama-tied-f32", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) },
			[]string{"no model.safetensors"}},
		{"unknown dtype", "llama-tied-f32", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors")
			b, _ := os.ReadFile(p)
			s := strings.Replace(string(b), `"dtype": "F32"`, `"dtype": "I32"`, 1)
			os.WriteFile(p, []byte(s), 0o644)
		}, []string{"model.safetensors", `unsupported dtype "I32"`}},
		{"llama2c header lies", "llama2c-gqa-untied", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.bin")
			b, _ := os.ReadFile(p)
			binary.LittleEndian.PutUint32(b[4:], 73) // hidden_dim
			os.WriteFile(p, b, 0o644)
		}, []string{"model.bin", "header", "sizes say the file has"}},
		{"llama2c truncated", "llama2c-gqa-untied", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.bin")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-4], 0o644)
		}, []string{"model.bin", "but it has"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata/reference", tt.src))
			tt.damage(t, dir)
			path := dir
			if strings.HasPrefix(tt.src, "llama2c") {
				path = filepath.Join(dir, "model.bin")
			}
			_, err := LoadModel(path, "")
			if err == nil {
				t.Fatal("load succeeded on a damaged model")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawSafetensors(`{"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		infos, start, err := parseSafetensorsHeader(b, int64(len(b)))
		if err != nil {
			return
		}
		for name, ti := range infos {
			if start+ti.Offset[1] > int64(len(b)) {
				t.Fatalf("tensor %q accepted past the end of the file", name)
			}
		}
	})
}

func FuzzLlama2cHeader(f *testing.F) {
	hdr := func(v ...int32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	f.Add(hdr(64, 172, 5, 8, 4, 512, 512), int64(1056540))
	f.Add(hdr(32, 72, 2, 4, 2, -77, 32), int64(1000))
	f.Add(hdr(0, 0, 0, 0, 0, 0, 0), int64(28))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		c, err := parseLlama2cHeader(b, size)
		if err != nil {
			return
		}
		n, ok := llama2cFloats(c)
		if c.Validate() != nil || !ok || 28+4*n != size {
			t.Fatalf("accepted inconsistent header %+v for size %d", c, size)
		}
	})
}
