//go:build linux

package engine

// mmap_direct_linux.go: a checkpoint mapped from the file itself, for a
// load that converts its weights matrix by matrix (loadconvert.go).

import (
	"fmt"
	"os"
	"sort"
	"syscall"
	"unsafe"
)

// fileMap is a checkpoint file mapped from the file (private, read-only):
// a page comes in when it is first read and goes out again (release) once
// its values are converted, so the whole float32 file is never resident.
// Before the model is used, detach moves what is still read in place
// (vectors, BF16 matrices) to memory of the process's own.
type fileMap struct {
	b        []byte
	path     string
	released [][2]int // byte ranges given back, whole pages
}

const canMapDirect = true

func mapFileDirect(path string) (*fileMap, error) {
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
		return &fileMap{b: []byte{}}, nil
	}
	if size != int64(int(size)) || size < 0 {
		return nil, fmt.Errorf("%s: %d bytes is too large to load", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &fileMap{b: b, path: path}, nil
}

// holds reports whether p..p+n lies in the mapping, and its offset.
func (fm *fileMap) holds(p unsafe.Pointer, n int) (int, bool) {
	if len(fm.b) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(&fm.b[0]))
	if uintptr(p) < base || uintptr(p)+uintptr(n) > base+uintptr(len(fm.b)) {
		return 0, false
	}
	return int(uintptr(p) - base), true
}

// release gives back the whole pages of b[lo:hi]: they leave the resident
// set (read again, they would come back from the file).
func (fm *fileMap) release(lo, hi int) {
	ps := syscall.Getpagesize()
	lo, hi = (lo+ps-1)/ps*ps, hi/ps*ps
	if lo >= hi {
		return
	}
	syscall.Madvise(fm.b[lo:hi], syscall.MADV_DONTNEED)
	fm.released = append(fm.released, [2]int{lo, hi})
}

// detach puts anonymous memory holding the same bytes in the mapping's
// place, at the same address (mremap), so the slices that point into it
// stay valid and no longer depend on the file, which may change on disk
// (see package filemap: a truncated file's pages would fault, private copies
// included). The bytes between the released ranges are read from the file
// (read through the mapping, each page would map its neighbours in too);
// the released pages stay unbacked, never read again.
func (fm *fileMap) detach() (err error) {
	if len(fm.b) == 0 {
		return nil
	}
	ps := syscall.Getpagesize()
	size := (len(fm.b) + ps - 1) / ps * ps
	anon, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			syscall.Munmap(anon)
		}
	}()
	syscall.Madvise(anon, 15) // MADV_NOHUGEPAGE: a write makes 4 KiB resident, not 2 MiB
	f, err := os.Open(fm.path)
	if err != nil {
		return err
	}
	defer f.Close()
	sort.Slice(fm.released, func(i, j int) bool { return fm.released[i][0] < fm.released[j][0] })
	at := 0
	for _, r := range append(fm.released, [2]int{len(fm.b), len(fm.b)}) {
		if r[0] > at {
			if _, err := f.ReadAt(anon[at:r[0]], int64(at)); err != nil {
				return fmt.Errorf("%s changed while it was loaded: %w", fm.path, err)
			}
		}
		at = max(at, r[1])
	}
	if err := syscall.Mprotect(anon, syscall.PROT_READ); err != nil {
		syscall.Munmap(anon)
		return err
	}
	const mremapMayMove, mremapFixed = 1, 2
	_, _, e := syscall.Syscall6(syscall.SYS_MREMAP, uintptr(unsafe.Pointer(&anon[0])), uintptr(size), uintptr(size),
		mremapMayMove|mremapFixed, uintptr(unsafe.Pointer(&fm.b[0])), 0)
	if e != 0 {
		return fmt.Errorf("mremap: %w", e)
	}
	return nil
}

func (fm *fileMap) unmap() {
	if len(fm.b) > 0 {
		syscall.Munmap(fm.b)
	}
}
