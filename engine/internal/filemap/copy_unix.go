//go:build unix

package filemap

// copy_unix.go: a file read once into an anonymous mapping, then made
// read-only: Map's private copy where no lease can be taken.

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readCopy reads path into an anonymous mapping of its size, then makes it
// read-only (a write to the weights faults). The memory is the process's
// own, outside the Go heap (the collector never scans or counts it), and
// no change to the file on disk can reach it.
func readCopy(path string) (b []byte, unmap func() error, dropHead func(n int), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil, nil, nil
	}
	if size != int64(int(size)) || size < 0 {
		return nil, nil, nil, fmt.Errorf("%s: %d bytes is too large to load", path, size)
	}
	b, err = unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		b, err = os.ReadFile(path) // no anonymous mappings here: the Go heap then
		return b, nil, nil, err
	}
	if _, err := io.ReadFull(f, b); err != nil {
		unix.Munmap(b)
		return nil, nil, nil, fmt.Errorf("%s: reading %d bytes: %w (did the file change while it was read?)", path, size, err)
	}
	if err := unix.Mprotect(b, unix.PROT_READ); err != nil {
		unix.Munmap(b)
		return nil, nil, nil, err
	}
	dropHead = func(n int) {
		if n = min(n, len(b)) &^ (os.Getpagesize() - 1); n > 0 {
			unix.Madvise(b[:n], unix.MADV_DONTNEED) // a private anonymous mapping: zeros after
		}
	}
	return b, func() error { return unix.Munmap(b) }, dropHead, nil
}
