//go:build unix

package engine

// mmap_unix.go: checkpoint files mapped read-only into memory (weights are used in place).

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only. The mapping lives as long as the process
// (the weights a Model holds point into it), so it is never unmapped; its
// pages are the page cache's, read on first touch and shared with every
// other process mapping the same file.
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
		return nil, fmt.Errorf("%s: %d bytes is too large to map", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// e.g. a filesystem without mmap: fall back to reading it
		return os.ReadFile(path)
	}
	return b, nil
}
