package gguf

// release_test.go: ReleaseMetadata gives back the metadata's whole pages
// and leaves the parsed values and the tensor data as they were, in both
// of Open's kinds of memory (mapped in place, a private copy).

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/internal/filemap"
	"github.com/inferscope/inferscope/engine/quant"
)

// metadataFile writes a GGUF file with ~18 KB of metadata (whole pages
// before the data) and one tensor of the bytes 0, 1, …, 31; it returns the
// path and the metadata string.
func metadataFile(t *testing.T) (string, string) {
	t.Helper()
	long := strings.Repeat("metadata ", 2000)
	b := new(builder).header(3, 1, 2)
	b.kvU32("general.alignment", 32)
	b.str("test.long").u32(uint32(String)).str(long)
	b.tensor("blk.0.attn_q.weight", quant.F32, 0, 4, 2)
	raw := b.data(32, 32)
	for i := range 32 {
		raw[len(raw)-32+i] = byte(i)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, long
}

func TestReleaseMetadata(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inPlace bool
	}{{"copy", false}, {"in place", true}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old bool) { filemap.UseInPlace = old }(filemap.UseInPlace)
			filemap.UseInPlace = tc.inPlace
			path, long := metadataFile(t)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// where no lease can be taken the in-place case runs as a copy and
			// checks that (the lease itself is filemap's to test)
			if !tc.inPlace && f.InPlace() {
				t.Fatal("mapped in place with filemap.UseInPlace off")
			}
			f.ReleaseMetadata()
			if v, _ := f.Get("test.long"); func() string { s, _ := v.Str(); return s }() != long {
				t.Fatal("a parsed string changed after ReleaseMetadata")
			}
			checkTensorBytes(t, f, "after ReleaseMetadata")
			if runtime.GOOS != "linux" || f.drop == nil {
				return
			}
			page := os.Getpagesize()
			if f.DataOffset < 2*page {
				t.Fatalf("data at %d: the test needs two whole pages of metadata", f.DataOffset)
			}
			if f.InPlace() {
				return // the pages left the page table: filemap's TestMapAndDropHead
			}
			// the pages before the data read as zeros: they went back
			for i, x := range f.data[:page] {
				if x != 0 {
					t.Fatalf("byte %d of the released metadata is %d, want 0 (not given back)", i, x)
				}
			}
		})
	}
}

// checkTensorBytes fails unless the test tensor holds 0, 1, …, 31.
func checkTensorBytes(t *testing.T, f *File, when string) {
	t.Helper()
	ti, ok := f.Tensor("blk.0.attn_q.weight")
	if !ok {
		t.Fatal("no test tensor")
	}
	for i, x := range ti.Data {
		if x != byte(i) {
			t.Fatalf("tensor byte %d is %d %s, want %d", i, x, when, i)
		}
	}
}
