//go:build unix

package gguf

// mmap_unix.go: a GGUF file's memory: mapped in place under a read lease
// where the system allows one (inplace_linux.go), otherwise read once into
// private, read-only memory (a copy of engine/mmap_unix.go's mapFile, with
// a way to give the memory back).

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps path in place where a read lease keeps the file from
// changing under the mapping (inplace_linux.go). Otherwise it reads path
// into an anonymous mapping of its size, then makes it read-only (a write
// to the weights faults). That memory is the process's own, outside the Go
// heap (the collector never scans or counts it).
//
// Without a lease it is a copy, not a mapping of the file: a mapped file
// that is truncated or overwritten on disk while the server runs takes its
// pages away, and the next read of a weight is a SIGBUS that kills the
// process. A copy cannot change under the reader. unmap releases either;
// dropHead(n) gives back the whole pages of the first n bytes (a copy's
// read as zeros after; a file's are read again from the page cache if
// touched).
func mapFile(path string) (b []byte, unmap func() error, dropHead func(n int), err error) {
	if b, unmap, dropHead, ok, err := mapInPlace(path); ok || err != nil {
		return b, unmap, dropHead, err
	}
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
