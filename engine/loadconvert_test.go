package engine

// loadconvert_test.go: LoadModelAs(BF16) gives the weights and logits of
// LoadModel + WithWeights(BF16) bit for bit (HF Llama and GPT-2 with its
// fused Conv1D, llama2.c); the loaded model survives its file being cut
// short on disk; and the float32 file does not stay resident.

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestLoadModelAsBF16(t *testing.T) {
	for _, name := range []string{"llama-tied-f32", "gpt2-small-f32", "llama-gqa-untied-bf16", "llama2c-gqa-untied"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("testdata/reference", name)
			path := src
			if _, err := os.Stat(filepath.Join(src, "model.bin")); err == nil {
				path = filepath.Join(src, "model.bin")
			}
			// a copy: the test cuts the file short after loading
			dir := t.TempDir()
			entries, _ := os.ReadDir(src)
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cp := filepath.Join(dir, strings.TrimPrefix(path, src))
			ref, err := LoadModel(path, "")
			if err != nil {
				t.Fatal(err)
			}
			want := ref.WithWeights(BF16)
			got, err := LoadModelAs(cp, "", BF16)
			if err != nil {
				t.Fatal(err)
			}
			if got.Precision() != want.Precision() || got.WeightsChecksum() != want.WeightsChecksum() {
				t.Fatalf("LoadModelAs: %s %v, LoadModel+WithWeights: %s %v", got.Precision(), got.WeightsChecksum(), want.Precision(), want.WeightsChecksum())
			}
			logits := func(m *Model) []float32 {
				kv, _ := NewKVCache(m.Config, 8)
				l, err := m.Forward(NewState(m.Config), kv, []int{1, 2, 3, 4}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), l...)
			}
			wl := logits(want)
			for _, e := range entries { // the files emptied on disk: the loaded model reads none of them
				if strings.HasSuffix(e.Name(), ".safetensors") || strings.HasSuffix(e.Name(), ".bin") {
					if err := os.Truncate(filepath.Join(dir, e.Name()), 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			gl := logits(got)
			for i := range wl {
				if math.Float32bits(gl[i]) != math.Float32bits(wl[i]) {
					t.Fatalf("logit %d: %v, want %v", i, gl[i], wl[i])
				}
			}
		})
	}
}

// TestLoadModelAsResident: loading a float32 checkpoint as BF16 leaves
// about the BF16 weights resident, not the float32 file besides (what
// LoadModel followed by WithWeights keeps).
func TestLoadModelAsResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	c := Config{Arch: ArchLlama, Dim: 256, HiddenDim: 768, NLayers: 8, NHeads: 4, NKVHeads: 2, HeadDim: 64, VocabSize: 8000, SeqLen: 64,
		NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf}
	m, err := RandomModel("rss", c, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeHFDir(t, dir, m)
	alignSafetensors(t, filepath.Join(dir, "model.safetensors"))
	st, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	wantSum := m.WithWeights(BF16).WeightsChecksum()
	m = nil
	runtime.GC()
	debug.FreeOSMemory()
	before := residentBytes(t)
	got, err := LoadModelAs(dir, "", BF16)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	grew := residentBytes(t) - before
	f32 := st.Size()
	t.Logf("float32 file %d MB; resident grew %d MB loading it as BF16 (%d MB of weights)", f32>>20, grew>>20, got.Weights.Bytes()>>20)
	if grew > f32*3/4 { // float32 + BF16 kept would be 1.5× the file
		t.Errorf("resident memory grew %d bytes loading a %d-byte float32 file as BF16: the float32 pages stayed", grew, f32)
	}
	if got.WeightsChecksum() != wantSum {
		t.Errorf("weights differ from WithWeights(BF16)'s")
	}
}

// alignSafetensors pads the header of a safetensors file with spaces so
// that its data starts 8-byte aligned, as Hugging Face's writer does (the
// float32 tensors are then used in place, not copied).
func alignSafetensors(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint64(b))
	pad := (8 - (8+n)%8) % 8
	out := binary.LittleEndian.AppendUint64(nil, uint64(n+pad))
	out = append(out, b[8:8+n]...)
	out = append(out, bytes.Repeat([]byte(" "), pad)...)
	out = append(out, b[8+n:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func residentBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
