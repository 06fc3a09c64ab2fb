package filemap

// filemap_test.go: both kinds of Map's memory hold the file's bytes, and
// dropHead gives back the first pages: a copy's read as zeros, a mapped
// file's leave the page table.

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

// testFile writes four pages and a bit of the bytes i·7 mod 251 and
// returns its path and contents.
func testFile(t *testing.T) (string, []byte) {
	t.Helper()
	want := make([]byte, 4*os.Getpagesize()+100)
	for i := range want {
		want[i] = byte(i * 7 % 251)
	}
	path := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// checkBytes fails unless b[from:] equals want[from:].
func checkBytes(t *testing.T, b, want []byte, from int, when string) {
	t.Helper()
	if len(b) != len(want) {
		t.Fatalf("%d bytes %s, want %d", len(b), when, len(want))
	}
	for i := from; i < len(want); i++ {
		if b[i] != want[i] {
			t.Fatalf("byte %d is %d %s, want %d", i, b[i], when, want[i])
		}
	}
}

func TestMapAndDropHead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inPlace bool
	}{{"copy", false}, {"in place", true}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old bool) { UseInPlace = old }(UseInPlace)
			UseInPlace = tc.inPlace
			path, want := testFile(t)
			b, unmap, drop, err := Map(path)
			if err != nil {
				t.Fatal(err)
			}
			if unmap != nil {
				defer unmap()
			}
			switch {
			case tc.inPlace && !InPlace(b):
				needLease(t)
			case !tc.inPlace && InPlace(b):
				t.Fatal("mapped in place with UseInPlace off")
			}
			checkBytes(t, b, want, 0, "as mapped")
			if drop == nil {
				if runtime.GOOS == "linux" {
					t.Fatal("no dropHead on Linux")
				}
				return
			}
			page := os.Getpagesize()
			drop(2*page + 10) // whole pages only: two
			checkBytes(t, b, want, 2*page, "after dropHead")
			if tc.inPlace {
				// the file's pages left this process's page table (they
				// stay in the page cache: reading one would map it again)
				for p := 0; p < 2*page; p += page {
					if present(t, &b[p]) {
						t.Fatalf("the page at byte %d is still mapped after dropHead", p)
					}
				}
				return
			}
			for i, x := range b[:2*page] {
				if x != 0 {
					t.Fatalf("byte %d of a dropped page is %d, want 0 (not given back)", i, x)
				}
			}
		})
	}
}

func TestMapMissingFile(t *testing.T) {
	if _, _, _, err := Map(filepath.Join(t.TempDir(), "none.bin")); err == nil || !os.IsNotExist(err) {
		t.Fatalf("Map of a missing file: %v, want a not-exist error", err)
	}
}

// needLease fails under CI, and skips elsewhere, when Map could not take a
// read lease (not the file's owner without CAP_LEASE, a file system
// without leases, not Linux): the copy path then runs, which the copy
// cases cover.
func needLease(t *testing.T) {
	t.Helper()
	if os.Getenv("CI") == "true" && runtime.GOOS == "linux" {
		t.Fatal("Map could not take a read lease on a file in the test's temporary directory (CI runs as root on a local file system, where it can)")
	}
	t.Skip("system: no read lease on the test's temporary file (see /proc/sys/fs/leases-enable); the copy path is tested instead")
}

// present reports whether the page holding p is in this process's page
// table (/proc/self/pagemap bit 63).
func present(t *testing.T, p *byte) bool {
	t.Helper()
	fh, err := os.Open("/proc/self/pagemap")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs on Linux, which has /proc/self/pagemap: %v", err)
		}
		t.Skipf("system: no page map to check the page table with: %v", err)
	}
	defer fh.Close()
	var e [8]byte
	off := int64(uintptr(unsafe.Pointer(p))/uintptr(os.Getpagesize())) * 8
	if _, err := fh.ReadAt(e[:], off); err != nil {
		t.Fatalf("pagemap: %v", err)
	}
	return binary.LittleEndian.Uint64(e[:])>>63 != 0
}
