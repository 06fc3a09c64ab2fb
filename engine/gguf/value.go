package gguf

import (
	"fmt"
	"math"
)

// Value is a metadata value: a scalar, a string or an array.
type Value struct {
	Type ValueType
	Elem ValueType // the element type of an Array
	// v is uint8, int8, uint16, int16, uint32, int32, float32, bool,
	// string, uint64, int64 or float64; an array is a slice of one of
	// those, a StringArray for an array of STRING (strarray.go), or
	// []Value for an array of arrays.
	v any
}

// Any is the value as Go holds it: uint8 … float64, bool, string; for an
// array []uint8 … []float64, []bool, []string (made from the compact
// StringArray on each call) or []Value.
func (v Value) Any() any {
	if a, ok := v.v.(StringArray); ok {
		return a.Strings()
	}
	return v.v
}

func (v Value) typeName() string {
	if v.Type == Array {
		return "ARRAY of " + v.Elem.String()
	}
	return v.Type.String()
}

// Uint is an integer value of any type as a uint64 (false for a negative
// one or a non-integer).
func (v Value) Uint() (uint64, bool) {
	switch x := v.v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	if i, ok := v.Int(); ok && i >= 0 {
		return uint64(i), true
	}
	return 0, false
}

// Int is an integer value of any type as an int64 (false for a uint64
// above MaxInt64 or a non-integer).
func (v Value) Int() (int64, bool) {
	switch x := v.v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8, uint16, uint32:
		u, _ := v.Uint()
		return int64(u), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// Float is a FLOAT32 or FLOAT64 value as a float64.
func (v Value) Float() (float64, bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Str is a STRING value.
func (v Value) Str() (string, bool) { s, ok := v.v.(string); return s, ok }

// Bool is a BOOL value.
func (v Value) Bool() (bool, bool) { b, ok := v.v.(bool); return b, ok }

// Len is the number of elements of an array (0 for a scalar).
func (v Value) Len() int {
	switch a := v.v.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case StringArray:
		return a.Len()
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// Strings is an array of STRING as a []string (new headers on each call,
// the bytes shared: StringArray.Strings).
func (v Value) Strings() ([]string, bool) {
	a, ok := v.v.(StringArray)
	if !ok {
		return nil, false
	}
	return a.Strings(), true
}

// StringArray is an array of STRING as the parser holds it (no copy).
func (v Value) StringArray() (StringArray, bool) { a, ok := v.v.(StringArray); return a, ok }

// Float32s is an array of FLOAT32.
func (v Value) Float32s() ([]float32, bool) { a, ok := v.v.([]float32); return a, ok }

// Int32s is an array of INT32.
func (v Value) Int32s() ([]int32, bool) { a, ok := v.v.([]int32); return a, ok }

// Values is an array of arrays.
func (v Value) Values() ([]Value, bool) { a, ok := v.v.([]Value); return a, ok }

// String formats the value for people (arrays of more than 8 elements abridged).
func (v Value) String() string {
	if v.Type == Array {
		n := v.Len()
		if n > 8 {
			return fmt.Sprintf("[%d × %s]", n, v.Elem)
		}
		if a, ok := v.Values(); ok {
			s := "["
			for i, e := range a {
				if i > 0 {
					s += " "
				}
				s += e.String()
			}
			return s + "]"
		}
	}
	if s, ok := v.Str(); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v.Any())
}
