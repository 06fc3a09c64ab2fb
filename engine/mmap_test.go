package engine

// mmap_test.go: mapped checkpoints are used in place (views, no transposed copies) and fuzzed files never panic the loaders.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestViewsAlias: aligned little-endian bytes are reinterpreted, not copied.
func TestViewsAlias(t *testing.T) {
	if !littleEndian {
		t.Skip("big-endian machine: file bytes are always converted here, by design")
	}
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[8:], 0x3f800000) // 1.0
	f := f32View(b)
	if len(f) != 16 || f[2] != 1 || unsafe.Pointer(&f[0]) != unsafe.Pointer(&b[0]) {
		t.Fatalf("f32View copied or misread: len %d, f[2] = %g", len(f), f[2])
	}
	u := u16View(b)
	if len(u) != 32 || u[5] != 0x3f80 || unsafe.Pointer(&u[0]) != unsafe.Pointer(&b[0]) {
		t.Fatalf("u16View copied or misread: len %d, u[5] = %#x", len(u), u[5])
	}
	// misaligned: a correct copy
	c := make([]byte, 64)
	binary.LittleEndian.PutUint32(c[10:], 0x3f800000)
	g := f32View(c[6:38])
	if len(g) != 8 || g[1] != 1 || unsafe.Pointer(&g[0]) == unsafe.Pointer(&c[6]) {
		t.Fatalf("misaligned f32View: len %d, g[1] = %g", len(g), g[1])
	}
}

// TestLoadersKeepStoredLayout: GPT-2's Conv1D matrices are used as stored
// ([in][out] views, q/k/v three column ranges of one c_attn array), BF16
// checkpoints stay BF16, and weight bytes count what is stored.
func TestLoadersKeepStoredLayout(t *testing.T) {
	g, err := LoadModel("testdata/reference/gpt2-small-f32", "")
	if err != nil {
		t.Fatal(err)
	}
	l := &g.Weights.Layers[0]
	d := g.Config.Dim
	if !l.Wq.InOut || l.Wk.Off != d || l.Wv.Off != 2*d || l.Wq.Ld != 3*d || &l.Wq.F32[0] != &l.Wv.F32[0] {
		t.Errorf("c_attn is not used in place: Wq %+v", struct{ InOut, Ld, Off int }{b2i(l.Wq.InOut), l.Wq.Ld, l.Wq.Off})
	}
	if !l.WUp.InOut || !l.WDown.InOut || !l.Wo.InOut {
		t.Error("Conv1D matrices were transposed at load")
	}
	b, err := LoadModel("testdata/reference/llama-gqa-untied-bf16", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Precision() != "bf16" || b.Weights.Layers[0].Wq.BF16 == nil {
		t.Errorf("a BF16 checkpoint runs as %s", b.Precision())
	}
	if got, want := b.Weights.Bytes(), 2*b.Weights.NumParams(); got >= want+4*int64(b.Config.Dim)*int64(2*b.Config.NLayers+1) || got <= want {
		t.Errorf("BF16 weights count %d bytes for %d parameters", got, b.Weights.NumParams())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzMappedCheckpoints writes fuzzed bytes as a llama2.c .bin and as the
// model.safetensors of a small GPT-2 / Llama directory and loads them
// through the mapped paths: an error or a model, never a panic; a model that
// loads runs one forward step.
func FuzzMappedCheckpoints(f *testing.F) {
	dirs := []string{"gpt2-small-f32", "llama-gqa-untied-bf16", "llama-tied-f32", "llama2c-gqa-untied"}
	for i, dir := range dirs {
		name := "model.safetensors"
		if strings.HasPrefix(dir, "llama2c") {
			name = "model.bin"
		}
		b, err := os.ReadFile(filepath.Join("testdata/reference", dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i)) // which: the config of dirs[i]; 3 = a .bin
	}
	f.Add([]byte{}, uint8(0))
	configs := map[uint8]string{}
	for i, dir := range dirs[:3] {
		b, err := os.ReadFile(filepath.Join("testdata/reference", dir, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		configs[uint8(i)] = string(b)
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		tmp := t.TempDir()
		var path string
		if len(b) >= 4 && bytes.Equal(b[:4], []byte{0x40, 0, 0, 0}) || which >= 3 { // a llama2.c header (dim 64) or by choice
			path = filepath.Join(tmp, "model.bin")
			os.WriteFile(path, b, 0o644)
		} else {
			os.WriteFile(filepath.Join(tmp, "config.json"), []byte(configs[which%3]), 0o644)
			os.WriteFile(filepath.Join(tmp, "model.safetensors"), b, 0o644)
			path = tmp
		}
		m, err := LoadModel(path, "")
		if err != nil {
			return
		}
		st := NewState(m.Config)
		kv, err := NewKVCache(m.Config, min(m.Config.SeqLen, 4))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Forward(st, kv, []int{0, m.Config.VocabSize - 1}, nil); err != nil {
			t.Fatalf("forward on a loaded model: %v", err)
		}
	})
}
