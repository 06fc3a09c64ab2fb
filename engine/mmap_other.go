//go:build !unix

package engine

// mmap_other.go: where mmap is not available, a checkpoint file is read into memory once.

import "os"

func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }
