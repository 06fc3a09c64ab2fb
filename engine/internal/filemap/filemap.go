// Package filemap gives a loader a checkpoint file's bytes, read-only, for
// the weights to be used where they lie: the file mapped in place under a
// read lease where the system allows one (inplace_linux.go), otherwise a
// private copy in memory of the process's own (copy_unix.go, copy_other.go).
//
// Mapped in place, a model's memory is the pages its passes read, shared
// with the page cache (and with any other process that maps the file), not
// a second copy of the whole file beside the page cache's. A mapping alone
// would let a file that is truncated or rewritten on disk take the weights
// away (a SIGBUS that kills the server) or change them under a running
// model; the lease closes that: the mapping becomes a private copy before
// any writer may go on. Where no lease can be taken, the file is copied at
// load, which no change on disk can reach either.
package filemap

// UseInPlace lets Map map files in place where it can; tests turn it off
// to run the copy.
var UseInPlace = true

// Map returns the bytes of the file at path, read-only (a write to them
// faults where the system can protect memory): in place under a read lease
// where one can be taken, otherwise a private copy. unmap releases them
// (nil where there is nothing to release); dropHead(n) gives back the
// whole pages of the first n bytes (nil where it cannot): a copy's read as
// zeros after, a file's leave the page table (they stay in the page cache)
// and read as zeros too if the mapping later becomes a copy.
func Map(path string) (b []byte, unmap func() error, dropHead func(n int), err error) {
	if b, unmap, dropHead, ok, err := mapInPlace(path); ok || err != nil {
		return b, unmap, dropHead, err
	}
	return readCopy(path)
}

// InPlace reports whether b, bytes Map returned, is the file's pages mapped
// in place under a read lease now: false for a copy, once a writer's open
// has made the mapping a copy, and where the lease had to be let go without
// one (no memory to copy into: a message on standard error says so).
func InPlace(b []byte) bool { return inPlace(b) }
