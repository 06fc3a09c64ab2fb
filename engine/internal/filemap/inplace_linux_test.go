//go:build linux

package filemap

// inplace_linux_test.go: a file mapped in place stays as it was loaded when
// someone rewrites or truncates it: the lease's break turns the mapping
// into a copy before the writer goes on; a closed mapping's lease is gone.

import (
	"os"
	"testing"
)

func TestInPlaceCopiedBeforeAWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(path string) error
	}{
		{"rewritten", func(path string) error {
			// an open for writing waits until the mapping is a copy
			w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return err
			}
			defer w.Close()
			_, err = w.Write([]byte("not the weights any more"))
			return err
		}},
		{"truncated", func(path string) error { return os.Truncate(path, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, want := testFile(t)
			b, unmap, drop, err := Map(path)
			if err != nil {
				t.Fatal(err)
			}
			defer unmap()
			if !InPlace(b) {
				needLease(t)
			}
			page := os.Getpagesize()
			drop(page) // the first page given back before the write
			leases.mu.Lock()
			before := leases.copies
			leases.mu.Unlock()
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			if InPlace(b) {
				t.Fatal("still mapped in place after the file was written")
			}
			leases.mu.Lock()
			n := leases.copies - before
			leases.mu.Unlock()
			if n != 1 {
				t.Fatalf("%d mappings copied, want 1", n)
			}
			// the bytes are as loaded (a truncated mapping would fault here)
			checkBytes(t, b, want, page, "after the file was "+tc.name)
			// the page given back before the copy is zeros, as in a copy
			for i, x := range b[:page] {
				if x != 0 {
					t.Fatalf("byte %d of the dropped page is %d after the copy, want 0", i, x)
				}
			}
			if got, err := os.ReadFile(path); err != nil || len(got) >= len(want) {
				t.Fatalf("the writer did not go on: the file has %d bytes (%v)", len(got), err)
			}
		})
	}
}

// TestInPlaceCloseReleases: a closed mapping's lease is gone, so a later
// writer does not wait and nothing is copied.
func TestInPlaceCloseReleases(t *testing.T) {
	path, _ := testFile(t)
	b, unmap, _, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	if !InPlace(b) {
		unmap()
		needLease(t)
	}
	if err := unmap(); err != nil {
		t.Fatal(err)
	}
	leases.mu.Lock()
	before := leases.copies
	leases.mu.Unlock()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	leases.mu.Lock()
	defer leases.mu.Unlock()
	if leases.copies != before {
		t.Fatal("a closed mapping was copied")
	}
	for m := range leases.maps {
		if m.closed {
			t.Fatal("a closed mapping is still registered")
		}
	}
}
