package gguf

// release_test.go: ReleaseMetadata gives back the metadata's whole pages
// and leaves the parsed values and the tensor data as they were, in both
// of Open's kinds of memory (mapped in place, a private copy).

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

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
			defer func(old bool) { useInPlace = old }(useInPlace)
			useInPlace = tc.inPlace
			path, long := metadataFile(t)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if tc.inPlace && !f.InPlace() {
				needLease(t)
			}
			if !tc.inPlace && f.InPlace() {
				t.Fatal("mapped in place with useInPlace off")
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
			if tc.inPlace {
				// the file's pages left this process's page table (they stay
				// in the page cache: reading them would map them again)
				for p := 0; p+page <= f.DataOffset; p += page {
					if present(t, &f.data[p]) {
						t.Fatalf("page at byte %d of the released metadata is still mapped", p)
					}
				}
				return
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

// needLease fails under CI, and skips elsewhere, when Open could not take
// a read lease (not the file's owner without CAP_LEASE, a file system
// without leases): the copy path then runs, which other tests cover.
func needLease(t *testing.T) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal("Open could not take a read lease on a file in the test's temporary directory (CI runs as root on a local file system, where it can)")
	}
	t.Skip("system: no read lease on the test's temporary file (see /proc/sys/fs/leases-enable); the copy path is tested instead")
}

// present reports whether the page holding p is in this process's page
// table (/proc/self/pagemap bit 63).
func present(t *testing.T, p *byte) bool {
	t.Helper()
	fh, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("system: %v", err)
	}
	defer fh.Close()
	var e [8]byte
	off := int64(uintptr(unsafe.Pointer(p))/uintptr(os.Getpagesize())) * 8
	if _, err := fh.ReadAt(e[:], off); err != nil {
		t.Fatalf("pagemap: %v", err)
	}
	return binary.LittleEndian.Uint64(e[:])>>63 != 0
}
