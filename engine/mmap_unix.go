//go:build unix

package engine

// mmap_unix.go: checkpoint files read once into private, read-only memory
// (weights are used in place there).

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile reads path into an anonymous mapping of its size, then makes it
// read-only (a write to the weights faults). The memory is the process's
// own, outside the Go heap (the collector never scans or counts it), and
// lives as long as the process (the weights a Model holds point into it).
//
// It is a copy, not a mapping of the file: a mapped file that is
// truncated or overwritten on disk while the server runs (`cp` over it
// truncates first) takes its pages away, and the next read of a weight is
// a SIGBUS that kills the process, every session and room with it. A copy
// cannot change under the engine: the server keeps computing with the
// weights it loaded until it loads them again.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil
	}
	if size != int64(int(size)) || size < 0 {
		return nil, fmt.Errorf("%s: %d bytes is too large to load", path, size)
	}
	b, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return os.ReadFile(path) // no anonymous mappings here: the Go heap then
	}
	if _, err := io.ReadFull(f, b); err != nil {
		unix.Munmap(b)
		return nil, fmt.Errorf("%s: reading %d bytes: %w (did the file change while it was read?)", path, size, err)
	}
	if err := unix.Mprotect(b, unix.PROT_READ); err != nil {
		unix.Munmap(b)
		return nil, err
	}
	return b, nil
}
