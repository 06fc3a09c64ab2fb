package engine

// mapfile.go: checkpoint files' bytes for the loaders, where the weights
// are used in place.

import "github.com/inferscope/inferscope/engine/internal/filemap"

// mapFile returns the bytes of the checkpoint file at path, read-only (a
// write to the weights faults): the file mapped in place under a read
// lease where one can be taken, otherwise a private copy (package
// filemap). Either way a file truncated or rewritten on disk later cannot
// reach them: a writer's open first turns the mapping into a copy. They
// live as long as the process (the weights a Model holds point into them).
func mapFile(path string) ([]byte, error) {
	b, _, _, err := filemap.Map(path)
	return b, err
}
