package engine

// safetensors.go: the safetensors reader: header, dtypes (F32/F16/BF16), tensors as float32.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// maxSafetensorsHeader bounds the JSON header we accept (100 MB, as the
// reference implementation does).
const maxSafetensorsHeader = 100 << 20

// tensorInfo is one entry of a safetensors header.
type tensorInfo struct {
	Name   string
	DType  string // F32, F16 or BF16 (others are rejected)
	Shape  []int
	Offset [2]int64 // [begin, end) within the data section
}

// safetensorsFile is a parsed safetensors file held in memory.
type safetensorsFile struct {
	Path    string
	Tensors map[string]tensorInfo
	data    []byte // the data section
}

var dtypeSize = map[string]int64{"F32": 4, "F16": 2, "BF16": 2}

// parseSafetensorsHeader validates a safetensors header against the file
// size: the length prefix, JSON shape, dtypes, shapes × dtype size = byte
// length, and offsets inside the data section without overlap.
func parseSafetensorsHeader(b []byte, fileSize int64) (map[string]tensorInfo, int64, error) {
	if len(b) < 8 {
		return nil, 0, fmt.Errorf("file has %d bytes, too short for the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxSafetensorsHeader {
		return nil, 0, fmt.Errorf("header length %d exceeds the %d-byte limit", n, maxSafetensorsHeader)
	}
	if int64(n)+8 > fileSize || int64(n)+8 > int64(len(b)) {
		return nil, 0, fmt.Errorf("header length %d runs past the end of the %d-byte file", n, fileSize)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, 0, fmt.Errorf("header is not a JSON object: %v", err)
	}
	dataLen := fileSize - 8 - int64(n)
	out := make(map[string]tensorInfo, len(raw))
	type span struct {
		b, e int64
		name string
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			DType   string  `json:"dtype"`
			Shape   []int64 `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, 0, fmt.Errorf("tensor %q: malformed entry: %v", name, err)
		}
		size, ok := dtypeSize[e.DType]
		if !ok {
			return nil, 0, fmt.Errorf("tensor %q: unsupported dtype %q (supported: F32, F16, BF16)", name, e.DType)
		}
		if len(e.Offsets) != 2 || e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > dataLen {
			return nil, 0, fmt.Errorf("tensor %q: data_offsets %v outside the %d-byte data section", name, e.Offsets, dataLen)
		}
		count := int64(1)
		shape := make([]int, len(e.Shape))
		for i, s := range e.Shape {
			if s < 0 || s > 1<<40 {
				return nil, 0, fmt.Errorf("tensor %q: bad dimension %d in shape %v", name, s, e.Shape)
			}
			shape[i] = int(s)
			var ok bool
			if count, ok = checkedMul(count, s); !ok || count > 1<<40 {
				return nil, 0, fmt.Errorf("tensor %q: shape %v is too large", name, e.Shape)
			}
		}
		if count*size != e.Offsets[1]-e.Offsets[0] {
			return nil, 0, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes but data_offsets span %d", name, e.Shape, e.DType, count*size, e.Offsets[1]-e.Offsets[0])
		}
		out[name] = tensorInfo{Name: name, DType: e.DType, Shape: shape, Offset: [2]int64{e.Offsets[0], e.Offsets[1]}}
		spans = append(spans, span{e.Offsets[0], e.Offsets[1], name})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].b < spans[j].b })
	for i := 1; i < len(spans); i++ {
		if spans[i].b < spans[i-1].e {
			return nil, 0, fmt.Errorf("tensors %q and %q overlap in the data section", spans[i-1].name, spans[i].name)
		}
	}
	return out, 8 + int64(n), nil
}

// newSafetensors parses a safetensors file already in memory; path names it in errors.
func newSafetensors(path string, b []byte) (*safetensorsFile, error) {
	infos, start, err := parseSafetensorsHeader(b, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &safetensorsFile{Path: path, Tensors: infos, data: b[start:]}, nil
}

// Float32 returns tensor name as float32: F32 data in place (do not write
// to it), F16 and BF16 widened into a new slice.
func (f *safetensorsFile) Float32(name string) ([]float32, []int, error) {
	ti, ok := f.Tensors[name]
	if !ok {
		return nil, nil, fmt.Errorf("%s: missing tensor %q", f.Path, name)
	}
	b := f.data[ti.Offset[0]:ti.Offset[1]]
	var out []float32
	switch ti.DType {
	case "F32":
		out = f32View(b) // the file's memory when aligned: read-only
	case "BF16":
		out = make([]float32, len(b)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case "F16":
		out = make([]float32, len(b)/2)
		for i := range out {
			out[i] = f16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	}
	return out, ti.Shape, nil
}

// f16ToF32 converts an IEEE 754 half-precision value.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: renormalize
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		man &= 0x3ff
		return math.Float32frombits(sign | e<<23 | man<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}
