package gguf

// release_test.go: ReleaseMetadata gives back the metadata's whole pages
// and leaves the parsed values and the tensor data as they were.

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

func TestReleaseMetadata(t *testing.T) {
	long := strings.Repeat("metadata ", 2000) // ~18 KB: whole pages before the data
	b := new(builder).header(3, 1, 2)
	b.kvU32("general.alignment", 32)
	b.str("test.long").u32(uint32(String)).str(long)
	b.tensor("blk.0.attn_q.weight", quant.F32, 0, 4, 2)
	raw := b.data(32, 32)
	for i := range 32 { // the tensor's bytes: 0, 1, …, 31
		raw[len(raw)-32+i] = byte(i)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.ReleaseMetadata()
	if v, _ := f.Get("test.long"); func() string { s, _ := v.Str(); return s }() != long {
		t.Fatal("a parsed string changed after ReleaseMetadata")
	}
	ti, _ := f.Tensor("blk.0.attn_q.weight")
	for i, x := range ti.Data {
		if x != byte(i) {
			t.Fatalf("tensor byte %d is %d after ReleaseMetadata, want %d", i, x, i)
		}
	}
	if runtime.GOOS == "linux" && f.drop != nil {
		// the pages before the data read as zeros: they went back
		page := os.Getpagesize()
		if f.DataOffset < 2*page {
			t.Fatalf("data at %d: the test needs two whole pages of metadata", f.DataOffset)
		}
		for i, x := range f.data[:page] {
			if x != 0 {
				t.Fatalf("byte %d of the released metadata is %d, want 0 (not given back)", i, x)
			}
		}
	}
}
