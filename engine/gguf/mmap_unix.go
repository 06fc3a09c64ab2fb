//go:build unix

package gguf

// mmap_unix.go: a file read once into private, read-only memory (a copy of
// engine/mmap_unix.go's mapFile, with a way to give the memory back).

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// mapFile reads path into an anonymous mapping of its size, then makes it
// read-only (a write to the weights faults). The memory is the process's
// own, outside the Go heap (the collector never scans or counts it).
//
// It is a copy, not a mapping of the file: a mapped file that is
// truncated or overwritten on disk while the server runs takes its pages
// away, and the next read of a weight is a SIGBUS that kills the process.
// A copy cannot change under the reader. unmap releases it; dropHead(n)
// gives back the whole pages of its first n bytes (they read as zeros after).
func mapFile(path string) (b []byte, unmap func() error, dropHead func(n int), err error) {
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
	b, err = syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		b, err = os.ReadFile(path) // no anonymous mappings here: the Go heap then
		return b, nil, nil, err
	}
	if _, err := io.ReadFull(f, b); err != nil {
		syscall.Munmap(b)
		return nil, nil, nil, fmt.Errorf("%s: reading %d bytes: %w (did the file change while it was read?)", path, size, err)
	}
	if err := syscall.Mprotect(b, syscall.PROT_READ); err != nil {
		syscall.Munmap(b)
		return nil, nil, nil, err
	}
	dropHead = func(n int) {
		if n = min(n, len(b)) &^ (os.Getpagesize() - 1); n > 0 {
			syscall.Madvise(b[:n], syscall.MADV_DONTNEED) // a private anonymous mapping: zeros after
		}
	}
	return b, func() error { return syscall.Munmap(b) }, dropHead, nil
}
