package engine

// view.go: little-endian file bytes seen as float32 / bfloat16 values without copying.

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// f32View returns b (little-endian float32s) as []float32: the same memory
// when the machine is little-endian and b is 4-byte aligned, else a copy.
func f32View(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// u16View returns b (little-endian 16-bit values) as []uint16, in place when
// it can, like f32View.
func u16View(b []byte) []uint16 {
	n := len(b) / 2
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}
