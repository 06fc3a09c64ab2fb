//go:build !unix

package filemap

// copy_other.go: where mmap is not available, the file is read into the Go
// heap once.

import "os"

func readCopy(path string) ([]byte, func() error, func(int), error) {
	b, err := os.ReadFile(path)
	return b, nil, nil, err
}
