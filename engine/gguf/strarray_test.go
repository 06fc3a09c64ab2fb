package gguf

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestStringArray: StringArrayOf, At and Strings give back the strings
// they were made of (empty ones and multi-byte ones too), and Strings'
// elements share the array's one string.
func TestStringArray(t *testing.T) {
	for _, s := range [][]string{nil, {""}, {"", "", ""}, {"a"}, {"Ġthe", "", "✓", "a b", "<|endoftext|>"}} {
		a := StringArrayOf(s)
		if a.Len() != len(s) {
			t.Fatalf("%q: Len %d", s, a.Len())
		}
		for i := range s {
			if a.At(i) != s[i] {
				t.Errorf("%q: At(%d) = %q", s, i, a.At(i))
			}
		}
		got := a.Strings()
		if len(s) == 0 && got != nil || len(s) > 0 && !reflect.DeepEqual(got, s) {
			t.Errorf("Strings() = %q, want %q", got, s)
		}
	}
	a := StringArrayOf([]string{"ab", "cd"})
	if p := a.Strings(); unsafe.StringData(p[0]) != unsafe.StringData(a.all) || unsafe.StringData(a.At(1)) != unsafe.StringData(p[1]) {
		t.Errorf("elements %q are copies, not the array's string", p)
	}
	var zero StringArray
	if zero.Len() != 0 || zero.Strings() != nil {
		t.Error("the zero StringArray is not empty")
	}
}

// TestReadStrings: a file's array of STRING reads into a StringArray (the
// accessors agree), and its lengths are checked against the file: a
// length past the end, a truncated element and a count the file cannot
// hold are refused without reading past the end.
func TestReadStrings(t *testing.T) {
	arr := func(n uint64) *builder {
		return new(builder).header(3, 0, 1).str("tokenizer.ggml.tokens").u32(uint32(Array)).u32(uint32(String)).u64(n)
	}
	kv := func(elems ...string) *builder {
		b := arr(uint64(len(elems)))
		for _, e := range elems {
			b.str(e)
		}
		return b
	}
	trunc := func(b []byte, n int) []byte { return b[:len(b)-n] }
	for _, elems := range [][]string{{}, {""}, {"a", "", "Ġb", "✓✓", strings.Repeat("x", 300)}} {
		f, err := Read(kv(elems...).Bytes())
		if err != nil {
			t.Fatalf("%q: %v", elems, err)
		}
		v, _ := f.Get("tokenizer.ggml.tokens")
		a, ok := v.StringArray()
		if !ok || a.Len() != len(elems) || v.Len() != len(elems) {
			t.Fatalf("%q: StringArray %v (%d elements), Len %d", elems, ok, a.Len(), v.Len())
		}
		s, _ := v.Strings()
		anyS, _ := v.Any().([]string)
		for i, e := range elems {
			if a.At(i) != e || s[i] != e || anyS[i] != e {
				t.Errorf("element %d: At %q, Strings %q, Any %q; want %q", i, a.At(i), s[i], anyS[i], e)
			}
		}
	}
	if v := (Value{Type: Array, Elem: String, v: StringArrayOf([]string{"a", "b"})}); v.String() != "[a b]" {
		t.Errorf("String() = %q", v.String())
	}
	huge := uint64(1) << 62
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"length past the end", arr(2).str("abcdefgh").u64(huge).Bytes(), "tokenizer.ggml.tokens length is 4611686018427387904, more than"},
		{"truncated element", trunc(kv("a", "bcdefghi").Bytes(), 1), "tokenizer.ggml.tokens length is 8, more than the 7 bytes"},
		{"missing element", arr(2).str("abcdefgh").Bytes(), "tokenizer.ggml.tokens length at byte"},
		{"count", new(builder).header(3, 0, 1).str("k").u32(uint32(Array)).u32(uint32(String)).u64(3).str("a").str("b").Bytes(), "length of array k is 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Read(c.file)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
				t.Errorf("%d bytes allocated", d)
			}
		})
	}
}
