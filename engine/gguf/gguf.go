// Package gguf reads GGUF files (llama.cpp's model format, versions 2 and
// 3, little-endian): the header, every metadata key/value, the tensor
// infos and the data section, used in place.
//
// Every count, size and offset is checked against the file before it is
// used: counts are bounded by the bytes left to hold them (so nothing is
// allocated beyond a small multiple of the file's size), products of
// dimensions are computed without overflow, each tensor must lie inside
// the data section at an aligned offset, and a row must be a whole number
// of its type's blocks. Tensor types other than those package quant
// computes with are refused by name.
//
// Layout (gguf.md in ggml's docs): "GGUF", uint32 version, uint64 tensor
// count, uint64 key/value count; the key/values (string key, uint32 type,
// value); the tensor infos (string name, uint32 n_dims, uint64 dims[n_dims]
// innermost first, uint32 ggml type, uint64 offset into the data); padding
// to general.alignment (32 by default); the data. Strings are a uint64
// length and that many bytes, arrays a uint32 element type, a uint64 count
// and the elements.
package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/inferscope/inferscope/engine/internal/filemap"
	"github.com/inferscope/inferscope/engine/quant"
)

// ValueType is a metadata value's type (enum gguf_type).
type ValueType uint32

// The metadata value types.
const (
	Uint8 ValueType = iota
	Int8
	Uint16
	Int16
	Uint32
	Int32
	Float32
	Bool
	String
	Array
	Uint64
	Int64
	Float64
)

var valueTypeNames = [...]string{"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
	"BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"}

// String is gguf-py's name for the type ("UINT32").
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value type %d", uint32(t))
}

// minSize is the fewest bytes a value of type t takes in a file.
func (t ValueType) minSize() int {
	switch t {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32, Float32:
		return 4
	case Uint64, Int64, Float64, String: // a string: its uint64 length
		return 8
	case Array: // element type and count
		return 12
	}
	return 0
}

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// MaxNameLen is the longest tensor name ggml accepts (GGML_MAX_NAME − 1).
const MaxNameLen = 63

// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
const MaxDims = 4

// maxNesting bounds arrays of arrays.
const maxNesting = 4

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo is one tensor: its name, shape, type and bytes.
type TensorInfo struct {
	Name string
	// Dims are ggml's ne[], innermost first: Dims[0] is the length of a
	// row (a [rows][cols] matrix has Dims = [cols, rows]).
	Dims   []uint64
	Type   quant.Type
	Offset uint64 // from the start of the data section
	// Data is the tensor's bytes in the file (read-only when the file was
	// opened with Open).
	Data []byte
}

// Elements is the number of values (the product of Dims).
func (t *TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d) // checked not to overflow when the file was read
	}
	return n
}

// Cols is the length of a row (Dims[0]); Rows the number of rows (the
// product of the other dims).
func (t *TensorInfo) Cols() int { return int(t.Dims[0]) }

// Rows is the product of Dims[1:] (1 for a vector).
func (t *TensorInfo) Rows() int { return int(t.Elements() / int64(t.Dims[0])) }

// Matrix is the tensor as a Rows×Cols quant.Matrix over its bytes.
func (t *TensorInfo) Matrix() (*quant.Matrix, error) {
	m, err := quant.NewMatrix(t.Type, t.Data, t.Rows(), t.Cols())
	if err != nil {
		return nil, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
	}
	return m, nil
}

// File is a parsed GGUF file. Its tensors' Data point into the bytes it was
// read from.
type File struct {
	Version    uint32
	Alignment  int
	KV         []KV // in file order
	Tensors    []TensorInfo
	DataOffset int // where the data section starts in the file

	data    []byte
	keys    map[string]int
	tensors map[string]int
	unmap   func() error
	drop    func(n int) // gives back the whole pages of the first n bytes (Open's memory)
}

// Get returns the value of key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Bytes is the whole file as read.
func (f *File) Bytes() []byte { return f.data }

// InPlace reports whether Open mapped the file in place (its pages shared
// with the page cache, held unchanged by a read lease) rather than reading
// it into a private copy; it turns false once a writer's open has made the
// mapping a copy.
func (f *File) InPlace() bool { return f.unmap != nil && filemap.InPlace(f.data) }

// Close releases the memory Open mapped; the tensors' Data must not be used
// afterwards. It does nothing for a File from Read.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	u := f.unmap
	f.unmap, f.data, f.Tensors = nil, nil, nil
	return u()
}

// ErrNotGGUF is returned (wrapped) for data that does not start with "GGUF".
var ErrNotGGUF = errors.New("gguf: not a GGUF file (no \"GGUF\" magic)")

// reader walks the file's bytes; every read is checked against what is left.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) left() int { return len(r.b) - r.pos }

func (r *reader) need(n int, what string) error {
	if n < 0 || n > r.left() {
		return fmt.Errorf("gguf: %s at byte %d: needs %d bytes, the file has %d left", what, r.pos, n, r.left())
	}
	return nil
}

func (r *reader) u8(what string) (uint8, error) {
	if err := r.need(1, what); err != nil {
		return 0, err
	}
	r.pos++
	return r.b[r.pos-1], nil
}

func (r *reader) u16(what string) (uint16, error) {
	if err := r.need(2, what); err != nil {
		return 0, err
	}
	r.pos += 2
	return binary.LittleEndian.Uint16(r.b[r.pos-2:]), nil
}

func (r *reader) u32(what string) (uint32, error) {
	if err := r.need(4, what); err != nil {
		return 0, err
	}
	r.pos += 4
	return binary.LittleEndian.Uint32(r.b[r.pos-4:]), nil
}

func (r *reader) u64(what string) (uint64, error) {
	if err := r.need(8, what); err != nil {
		return 0, err
	}
	r.pos += 8
	return binary.LittleEndian.Uint64(r.b[r.pos-8:]), nil
}

// count reads a uint64 count of items each taking at least size bytes, and
// refuses one the rest of the file could not hold.
func (r *reader) count(size int, what string) (int, error) {
	n, err := r.u64(what)
	if err != nil {
		return 0, err
	}
	if size < 1 {
		size = 1
	}
	if n > uint64(r.left()/size) {
		return 0, fmt.Errorf("gguf: %s is %d, more than the %d bytes left in the file can hold", what, n, r.left())
	}
	return int(n), nil
}

func (r *reader) str(what string) (string, error) {
	n, err := r.count(1, what+" length")
	if err != nil {
		return "", err
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s, nil
}

// Read parses a GGUF file held in b, which the File keeps and its tensors
// point into.
func Read(b []byte) (*File, error) {
	r := &reader{b: b}
	if len(b) < 4 || string(b[:4]) != "GGUF" {
		return nil, ErrNotGGUF
	}
	r.pos = 4
	version, err := r.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version == 1:
		return nil, fmt.Errorf("gguf: version 1 files are not supported (versions 2 and 3 are)")
	case version&0xffff == 0 && bits.ReverseBytes32(version) <= 3:
		return nil, fmt.Errorf("gguf: a big-endian file (version %d byte-swapped): not supported", bits.ReverseBytes32(version))
	default:
		return nil, fmt.Errorf("gguf: unknown version %d (versions 2 and 3 are supported)", version)
	}
	// The smallest tensor info: a name length, 1 dim, type, offset (8+4+8+4+8);
	// the smallest key/value: key length, type, a 1-byte value.
	const minTensorInfo, minKV = 32, 13
	nTensors, err := r.count(minTensorInfo, "tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := r.count(minKV, "key/value count")
	if err != nil {
		return nil, err
	}
	f := &File{Version: version, Alignment: DefaultAlignment, data: b,
		KV: make([]KV, 0, nKV), keys: make(map[string]int, nKV)}
	for range nKV {
		key, err := r.str("key")
		if err != nil {
			return nil, err
		}
		if _, dup := f.keys[key]; dup {
			return nil, fmt.Errorf("gguf: key %q appears twice", key)
		}
		t, err := r.u32("type of " + key)
		if err != nil {
			return nil, err
		}
		v, err := r.value(ValueType(t), key, 0)
		if err != nil {
			return nil, err
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KV{key, v})
	}
	if v, ok := f.Get("general.alignment"); ok {
		a, isU32 := v.v.(uint32)
		if !isU32 {
			return nil, fmt.Errorf("gguf: general.alignment is a %s, not a UINT32", v.typeName())
		}
		if a == 0 || a&(a-1) != 0 || a > 1<<30 {
			return nil, fmt.Errorf("gguf: general.alignment %d is not a power of two up to 2³⁰", a)
		}
		f.Alignment = int(a)
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tensors = make(map[string]int, nTensors)
	sizes := make([]uint64, 0, nTensors)
	for range nTensors {
		t, size, err := r.tensorInfo()
		if err != nil {
			return nil, err
		}
		if _, dup := f.tensors[t.Name]; dup {
			return nil, fmt.Errorf("gguf: tensor %s appears twice", t.Name)
		}
		if t.Offset%uint64(f.Alignment) != 0 {
			return nil, fmt.Errorf("gguf: tensor %s: offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
		f.tensors[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
		sizes = append(sizes, size)
	}
	// the data section starts at the next multiple of the alignment
	start := uint64(r.pos) + uint64(f.Alignment-1)
	start -= start % uint64(f.Alignment)
	if start > uint64(len(b)) {
		if nTensors > 0 {
			return nil, fmt.Errorf("gguf: the data section would start at byte %d, past the end of the %d-byte file", start, len(b))
		}
		start = uint64(len(b))
	}
	f.DataOffset = int(start)
	dataLen := uint64(len(b)) - start
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset > dataLen || sizes[i] > dataLen-t.Offset {
			return nil, fmt.Errorf("gguf: tensor %s: %d bytes at offset %d run past the end of the %d-byte data section", t.Name, sizes[i], t.Offset, dataLen)
		}
		lo := start + t.Offset
		t.Data = b[lo : lo+sizes[i] : lo+sizes[i]]
	}
	return f, nil
}

// tensorInfo reads one tensor info and checks its shape and type; size is
// its data's bytes.
func (r *reader) tensorInfo() (t TensorInfo, size uint64, err error) {
	if t.Name, err = r.str("tensor name"); err != nil {
		return t, 0, err
	}
	if len(t.Name) > MaxNameLen {
		return t, 0, fmt.Errorf("gguf: tensor name %.80q… is %d bytes, longer than ggml's %d", t.Name, len(t.Name), MaxNameLen)
	}
	nd, err := r.u32("dimension count of " + t.Name)
	if err != nil {
		return t, 0, err
	}
	if nd < 1 || nd > MaxDims {
		return t, 0, fmt.Errorf("gguf: tensor %s has %d dimensions (1 to %d allowed)", t.Name, nd, MaxDims)
	}
	t.Dims = make([]uint64, nd)
	elems := uint64(1)
	for i := range t.Dims {
		d, err := r.u64("dimension of " + t.Name)
		if err != nil {
			return t, 0, err
		}
		if d == 0 || d > math.MaxInt64 {
			return t, 0, fmt.Errorf("gguf: tensor %s: dimension %d is %d", t.Name, i, d)
		}
		hi, lo := bits.Mul64(elems, d)
		if hi != 0 || lo > math.MaxInt64 {
			return t, 0, fmt.Errorf("gguf: tensor %s: dimensions %v overflow", t.Name, t.Dims[:i+1])
		}
		elems, t.Dims[i] = lo, d
	}
	typ, err := r.u32("type of " + t.Name)
	if err != nil {
		return t, 0, err
	}
	t.Type = quant.Type(typ)
	if !t.Type.IsSupported() {
		return t, 0, fmt.Errorf("gguf: tensor %s has type %s; supported: %s", t.Name, t.Type, quant.SupportedNames())
	}
	bs, bb := uint64(t.Type.BlockSize()), uint64(t.Type.BlockBytes())
	if t.Dims[0]%bs != 0 {
		return t, 0, fmt.Errorf("gguf: tensor %s: rows of %d values are not a whole number of %s blocks of %d", t.Name, t.Dims[0], t.Type, bs)
	}
	hi, size := bits.Mul64(elems/bs, bb)
	if hi != 0 || size > math.MaxInt {
		return t, 0, fmt.Errorf("gguf: tensor %s: %v %s values are too many bytes", t.Name, t.Dims, t.Type)
	}
	if t.Offset, err = r.u64("offset of " + t.Name); err != nil {
		return t, 0, err
	}
	return t, size, nil
}

// value reads a value of type t (depth: how deep in arrays it is).
func (r *reader) value(t ValueType, key string, depth int) (Value, error) {
	v := Value{Type: t}
	var err error
	switch t {
	case Uint8:
		var x uint8
		x, err = r.u8(key)
		v.v = x
	case Int8:
		var x uint8
		x, err = r.u8(key)
		v.v = int8(x)
	case Bool:
		var x uint8
		x, err = r.u8(key)
		v.v = x != 0
	case Uint16:
		var x uint16
		x, err = r.u16(key)
		v.v = x
	case Int16:
		var x uint16
		x, err = r.u16(key)
		v.v = int16(x)
	case Uint32:
		var x uint32
		x, err = r.u32(key)
		v.v = x
	case Int32:
		var x uint32
		x, err = r.u32(key)
		v.v = int32(x)
	case Float32:
		var x uint32
		x, err = r.u32(key)
		v.v = math.Float32frombits(x)
	case Uint64:
		var x uint64
		x, err = r.u64(key)
		v.v = x
	case Int64:
		var x uint64
		x, err = r.u64(key)
		v.v = int64(x)
	case Float64:
		var x uint64
		x, err = r.u64(key)
		v.v = math.Float64frombits(x)
	case String:
		v.v, err = r.str(key)
	case Array:
		return r.array(key, depth)
	default:
		return v, fmt.Errorf("gguf: key %q has unknown value type %d", key, uint32(t))
	}
	return v, err
}

func (r *reader) array(key string, depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, fmt.Errorf("gguf: key %q: arrays nested more than %d deep", key, maxNesting)
	}
	et, err := r.u32("element type of " + key)
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if elem.minSize() == 0 {
		return Value{}, fmt.Errorf("gguf: key %q: array of unknown value type %d", key, et)
	}
	n, err := r.count(elem.minSize(), "length of array "+key)
	if err != nil {
		return Value{}, err
	}
	v := Value{Type: Array, Elem: elem}
	if elem == String || elem == Array {
		if elem == String {
			v.v, err = r.readStrings(n, key) // compact: strarray.go
			return v, err
		}
		a := make([]Value, n)
		for i := range a {
			if a[i], err = r.array(key, depth+1); err != nil {
				return v, err
			}
		}
		v.v = a
		return v, nil
	}
	raw := r.b[r.pos : r.pos+n*elem.minSize()] // count checked these bytes are there
	r.pos += len(raw)
	v.v = decodeArray(elem, raw, n)
	return v, nil
}

// decodeArray converts n little-endian values of a fixed-size type.
func decodeArray(t ValueType, raw []byte, n int) any {
	le := binary.LittleEndian
	switch t {
	case Uint8:
		return append([]uint8(nil), raw...)
	case Int8:
		a := make([]int8, n)
		for i := range a {
			a[i] = int8(raw[i])
		}
		return a
	case Bool:
		a := make([]bool, n)
		for i := range a {
			a[i] = raw[i] != 0
		}
		return a
	case Uint16:
		a := make([]uint16, n)
		for i := range a {
			a[i] = le.Uint16(raw[2*i:])
		}
		return a
	case Int16:
		a := make([]int16, n)
		for i := range a {
			a[i] = int16(le.Uint16(raw[2*i:]))
		}
		return a
	case Uint32:
		a := make([]uint32, n)
		for i := range a {
			a[i] = le.Uint32(raw[4*i:])
		}
		return a
	case Int32:
		a := make([]int32, n)
		for i := range a {
			a[i] = int32(le.Uint32(raw[4*i:]))
		}
		return a
	case Float32:
		a := make([]float32, n)
		for i := range a {
			a[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return a
	case Uint64:
		a := make([]uint64, n)
		for i := range a {
			a[i] = le.Uint64(raw[8*i:])
		}
		return a
	case Int64:
		a := make([]int64, n)
		for i := range a {
			a[i] = int64(le.Uint64(raw[8*i:]))
		}
		return a
	case Float64:
		a := make([]float64, n)
		for i := range a {
			a[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return a
	}
	panic("gguf: decodeArray: " + t.String())
}

// Open maps the GGUF file at path in place under a read lease, or reads it
// into private read-only memory where no lease can be taken (package
// filemap), and parses it; Close gives the memory back.
func Open(path string) (*File, error) {
	b, unmap, drop, err := filemap.Map(path)
	if err != nil {
		return nil, err
	}
	f, err := Read(b)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.unmap, f.drop = unmap, drop
	return f, nil
}

// ReleaseMetadata gives the memory of the file's metadata back to the
// system: the whole pages before the data section (the header, the
// key–value pairs — a tokenizer's vocabulary and merges are most of them —
// and the tensor infos), which Read has already parsed into Go values that
// nothing reads from the file again. The weights' pages stay. A File from
// Read (the caller's memory) keeps everything.
func (f *File) ReleaseMetadata() {
	if f.drop != nil {
		f.drop(f.DataOffset)
	}
}
