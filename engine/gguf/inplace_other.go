//go:build unix && !linux

package gguf

// inplace_other.go: no read leases here (they are Linux's), so a GGUF file
// is always read into a private copy (mmap_unix.go).

func mapInPlace(string) ([]byte, func() error, func(int), bool, error) {
	return nil, nil, nil, false, nil
}

func inPlace([]byte) bool { return false }
