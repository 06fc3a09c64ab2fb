//go:build !unix

package gguf

// mmap_other.go: where mmap is not available, the file is read into memory once.

import "os"

func mapFile(path string) ([]byte, func() error, func(int), error) {
	b, err := os.ReadFile(path)
	return b, nil, nil, err
}

func inPlace([]byte) bool { return false }
