//go:build linux

package filemap

// inplace_linux_test.go: a file mapped in place stays as it was loaded when
// someone rewrites or truncates it: the lease's break turns the mapping
// into a copy before the writer goes on; a closed mapping's lease is gone.

import (
	"fmt"
	"os"
	"testing"
	"time"
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

// TestInPlaceCopyUnderReaders: threads reading the mapping while a writer
// truncates the file see the loaded bytes in every pass: the copy replaces
// the file's pages in one step (a hole would read zeros or fault).
func TestInPlaceCopyUnderReaders(t *testing.T) {
	path, want := testFile(t)
	b, unmap, _, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if !InPlace(b) {
		needLease(t)
	}
	sum := func(p []byte) (s uint64) {
		for _, x := range p {
			s = s*31 + uint64(x)
		}
		return s
	}
	wantSum := sum(want)
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			passes := 0
			for {
				select {
				case <-stop:
					if passes == 0 {
						errs <- fmt.Errorf("no pass finished")
						return
					}
					errs <- nil
					return
				default:
				}
				if got := sum(b); got != wantSum {
					errs <- fmt.Errorf("pass %d read other bytes", passes)
					return
				}
				passes++
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	close(stop)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if InPlace(b) {
		t.Fatal("still mapped in place after the truncate")
	}
}
