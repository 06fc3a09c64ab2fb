//go:build !linux

package engine

// mmap_direct_other.go: without Linux's mremap, LoadModelAs converts after
// a whole-file load (canMapDirect false); these are never called.

import (
	"errors"
	"unsafe"
)

type fileMap struct{ b []byte }

const canMapDirect = false

func mapFileDirect(string) (*fileMap, error)              { return nil, errors.New("not supported") }
func (fm *fileMap) holds(unsafe.Pointer, int) (int, bool) { return 0, false }
func (fm *fileMap) release(int, int)                      {}
func (fm *fileMap) detach() error                         { return nil }
func (fm *fileMap) unmap()                                {}
