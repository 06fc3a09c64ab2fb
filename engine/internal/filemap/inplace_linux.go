//go:build linux

package filemap

// inplace_linux.go: a checkpoint file mapped in place from the page cache, kept
// from changing under the reader by a read lease: before anyone may open
// the file for writing or truncate it, the mapping becomes a private copy.
//
// Mapped in place, a model's memory is the pages its passes read (a 65-token
// run of a GPT-2 GGUF file reads 65 of the 1024 rows of its position
// table), shared
// with the page cache and with other processes that map the same file,
// instead of a private copy of the whole file. But a mapped file that is
// truncated on disk takes its pages away (the next read of a weight is a
// SIGBUS that kills the process), and one rewritten in place changes the
// weights under a running model. A read lease (fcntl F_SETLEASE, F_RDLCK)
// closes both holes: the kernel makes an open for writing, or a truncate,
// by anyone wait (up to /proc/sys/fs/lease-break-time seconds, 45 by
// default) and sends this process SIGIO; the watcher then copies the
// mapping into memory of the process's own, moves the copy over the
// mapping's addresses in one step (mremap), and releases the lease, so the
// writer goes on and the weights stay as they were loaded.
//
// A lease needs the file's owner (or CAP_LEASE), a local file system, and
// no writer holding the file open; where it cannot be taken, Map reads the
// file into a private copy (copy_unix.go).

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// leasedMap is one file mapped in place under a read lease.
type leasedMap struct {
	f       *os.File // open while the lease is held
	b       []byte
	dropped int  // whole pages at the start given back (zeros once copied)
	copied  bool // the mapping is a private copy now: no file, no lease
	// unleased: the lease was let go without a copy (no memory for one):
	// still the file's pages, no longer kept from changing
	unleased bool
	closed   bool
}

// leases are the files mapped in place; mu also orders a copy against a
// drop or an unmap. copies counts the mappings turned into copies (tests).
var leases struct {
	mu     sync.Mutex
	maps   map[*leasedMap]bool
	watch  sync.Once
	copies int // mappings turned into copies (tests)
}

// mapInPlace maps path in place under a read lease. ok is false (and err
// nil) where no lease can be taken: the caller then copies the file.
func mapInPlace(path string) (b []byte, unmap func() error, drop func(int), ok bool, err error) {
	if !UseInPlace {
		return nil, nil, nil, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, false, err
	}
	fd := uintptr(f.Fd())
	leases.watch.Do(startWatcher)
	if _, err := unix.FcntlInt(fd, unix.F_SETOWN, os.Getpid()); err != nil {
		f.Close()
		return nil, nil, nil, false, nil
	}
	if _, err := unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		f.Close() // not the owner, a remote file system, or open for writing now
		return nil, nil, nil, false, nil
	}
	fail := func(err error) ([]byte, func() error, func(int), bool, error) {
		unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
		f.Close()
		return nil, nil, nil, false, err
	}
	// the size under the lease: nobody can change it from here on
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	size := st.Size()
	if size == 0 || !st.Mode().IsRegular() {
		return fail(nil) // nothing to map: the copy path reads it
	}
	if size != int64(int(size)) || size < 0 {
		return fail(fmt.Errorf("%s: %d bytes is too large to load", path, size))
	}
	b, err = unix.Mmap(int(fd), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fail(nil)
	}
	m := &leasedMap{f: f, b: b}
	leases.mu.Lock()
	if leases.maps == nil {
		leases.maps = map[*leasedMap]bool{}
	}
	leases.maps[m] = true
	leases.mu.Unlock()
	// a break that came between the lease and the registration found no
	// map to copy: look once more now that it is registered
	checkLeases()
	return b, m.unmap, m.drop, true, nil
}

// startWatcher routes SIGIO (the lease-break notice) to checkLeases.
func startWatcher() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGIO)
	go func() {
		for range ch {
			checkLeases()
		}
	}()
}

// checkLeases copies every mapping whose lease is being broken. SIGIO
// says neither which file nor how many (signals coalesce), so it asks each
// lease: during a break F_GETLEASE answers the type it is going to
// (F_UNLCK for a writer), not F_RDLCK.
func checkLeases() {
	leases.mu.Lock()
	defer leases.mu.Unlock()
	for m := range leases.maps {
		if m.copied || m.unleased {
			continue
		}
		if t, err := unix.FcntlInt(m.f.Fd(), unix.F_GETLEASE, 0); err == nil && t == unix.F_RDLCK {
			continue
		}
		m.copyOut()
	}
}

// copyOut puts a private copy of the mapping at its addresses and releases
// the lease (leases.mu held). The copy is made while the writer still
// waits, so it holds the bytes as loaded; mremap moves it over the file's
// pages in one step (other threads' reads see the file's page or the
// copy's, never a hole). The pages given back by drop stay zeros.
func (m *leasedMap) copyOut() {
	copied := false
	defer func() {
		unix.FcntlInt(m.f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
		m.f.Close()
		m.copied, m.unleased = copied, !copied
		if copied {
			leases.copies++
		}
	}()
	n := len(m.b)
	// MmapPtr, not Mmap: the copy's own addresses go away in the move, so
	// they must not be in package unix's table of mappings
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		// no memory for the copy: the lease goes, and a changed file would
		// change the weights (the checksum's re-check then shows it)
		fmt.Fprintf(os.Stderr, "inferscope: %s is being written; no memory to copy its weights first: %v\n", m.f.Name(), err)
		return
	}
	c := unsafe.Slice((*byte)(p), n)
	copy(c[m.dropped:], m.b[m.dropped:])
	if err := unix.Mprotect(c, unix.PROT_READ); err != nil {
		unix.MunmapPtr(p, uintptr(n))
		fmt.Fprintf(os.Stderr, "inferscope: %s: %v\n", m.f.Name(), err)
		return
	}
	_, _, e := unix.Syscall6(unix.SYS_MREMAP, uintptr(p), uintptr(n), uintptr(n),
		unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED, uintptr(unsafe.Pointer(&m.b[0])), 0)
	if e != 0 {
		unix.MunmapPtr(p, uintptr(n))
		fmt.Fprintf(os.Stderr, "inferscope: %s: moving the weights' copy into place: %v\n", m.f.Name(), e)
		return
	}
	copied = true
}

// drop gives back the whole pages of the first n bytes: the page table's
// entries go (the pages stay in the page cache); read again they would be
// the file's, so a later copy leaves them zeros, as the copy path does.
func (m *leasedMap) drop(n int) {
	leases.mu.Lock()
	defer leases.mu.Unlock()
	if n = min(n, len(m.b)) &^ (os.Getpagesize() - 1); n > 0 && !m.closed {
		unix.Madvise(m.b[:n], unix.MADV_DONTNEED)
		m.dropped = max(m.dropped, n)
	}
}

// unmap releases the mapping and, if it is still in place, the lease.
func (m *leasedMap) unmap() error {
	leases.mu.Lock()
	defer leases.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	delete(leases.maps, m)
	if !m.copied && !m.unleased {
		unix.FcntlInt(m.f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
		m.f.Close()
	}
	return unix.Munmap(m.b)
}

// inPlace reports whether b (bytes from Map) is mapped in place under its
// lease now.
func inPlace(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	leases.mu.Lock()
	defer leases.mu.Unlock()
	for m := range leases.maps {
		if &m.b[0] == &b[0] {
			return !m.copied && !m.unleased
		}
	}
	return false
}
