package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

// expected is what scripts/gguf/make_testdata.py gave gguf-py's writer.
type expected struct {
	Version    uint32
	Alignment  int
	DataOffset int `json:"data_offset"`
	Keys       []expectedKV
	Tensors    []struct {
		Name      string
		Dims      []uint64
		Type      string
		Offset    uint64
		NBytes    int
		SHA256    string
		DeqSHA256 string `json:"deq_sha256"`
	}
}

type expectedKV struct {
	Key   string
	Type  string
	Elem  string
	Value json.RawMessage
}

func readExpected(t *testing.T, name string) *expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

// checkValue compares a value read by Read with the JSON gguf-py was given.
func checkValue(t *testing.T, key string, v Value, typ, elem string, raw json.RawMessage) {
	t.Helper()
	if v.Type.String() != typ || typ == "ARRAY" && v.Elem.String() != elem {
		t.Errorf("%s: type %s of %s, want %s of %s", key, v.Type, v.Elem, typ, elem)
		return
	}
	if typ == "ARRAY" {
		if elem == "ARRAY" {
			var inner []expectedKV
			if err := json.Unmarshal(raw, &inner); err != nil {
				t.Fatal(err)
			}
			vals, _ := v.Values()
			if len(vals) != len(inner) {
				t.Errorf("%s: %d arrays, want %d", key, len(vals), len(inner))
				return
			}
			for i := range inner {
				checkValue(t, fmt.Sprintf("%s[%d]", key, i), vals[i], inner[i].Type, inner[i].Elem, inner[i].Value)
			}
			return
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			t.Fatal(err)
		}
		rv := reflect.ValueOf(v.Any())
		if rv.Len() != len(items) {
			t.Errorf("%s: %d elements, want %d", key, rv.Len(), len(items))
			return
		}
		for i := range items {
			checkScalar(t, fmt.Sprintf("%s[%d]", key, i), rv.Index(i).Interface(), items[i])
		}
		return
	}
	checkScalar(t, key, v.Any(), raw)
}

func checkScalar(t *testing.T, key string, got any, raw json.RawMessage) {
	t.Helper()
	want := strings.TrimSpace(string(raw))
	var g string
	switch x := got.(type) {
	case string:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if x != s {
			t.Errorf("%s = %q, want %q", key, x, s)
		}
		return
	case float32, float64:
		w, err := strconv.ParseFloat(want, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := reflect.ValueOf(x).Float()
		if _, is32 := x.(float32); is32 {
			w = float64(float32(w))
		}
		if f != w {
			t.Errorf("%s = %v, want %v", key, f, w)
		}
		return
	case bool:
		g = strconv.FormatBool(x)
	default:
		g = fmt.Sprint(x)
	}
	if g != want {
		t.Errorf("%s = %s, want %s", key, g, want)
	}
}

// TestReadsWhatGGUFPyWrote: every key (type and value, in order) and every
// tensor info (name, ggml dims, type, offset, size, bytes) of the files
// gguf-py's writer made, and each tensor dequantized equals gguf-py's
// dequantization (sha256 of the float32 values).
func TestReadsWhatGGUFPyWrote(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-align64"} {
		t.Run(name, func(t *testing.T) {
			e := readExpected(t, name+".json")
			f, err := Open(filepath.Join("testdata", name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Version != e.Version || f.Alignment != e.Alignment || f.DataOffset != e.DataOffset {
				t.Errorf("version %d, alignment %d, data at %d; want %d, %d, %d", f.Version, f.Alignment, f.DataOffset, e.Version, e.Alignment, e.DataOffset)
			}
			if len(f.KV) != len(e.Keys) {
				t.Errorf("%d keys, want %d", len(f.KV), len(e.Keys))
			}
			for i, k := range e.Keys {
				if i >= len(f.KV) || f.KV[i].Key != k.Key {
					t.Errorf("key %d is not %s", i, k.Key)
					continue
				}
				checkValue(t, k.Key, f.KV[i].Value, k.Type, k.Elem, k.Value)
			}
			if len(f.Tensors) != len(e.Tensors) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(e.Tensors))
			}
			for i, w := range e.Tensors {
				g := &f.Tensors[i]
				if g.Name != w.Name || !reflect.DeepEqual(g.Dims, w.Dims) || g.Type.String() != w.Type || g.Offset != w.Offset || len(g.Data) != w.NBytes {
					t.Errorf("tensor %d: %s %v %s at %d, %d bytes; want %s %v %s at %d, %d bytes", i, g.Name, g.Dims, g.Type, g.Offset, len(g.Data), w.Name, w.Dims, w.Type, w.Offset, w.NBytes)
					continue
				}
				if tt, ok := f.Tensor(w.Name); !ok || tt != g {
					t.Errorf("Tensor(%q) does not find it", w.Name)
				}
				if s := sha256.Sum256(g.Data); hex.EncodeToString(s[:]) != w.SHA256 {
					t.Errorf("%s: the data differs from what was written", g.Name)
				}
				m, err := g.Matrix()
				if err != nil {
					t.Fatal(err)
				}
				deq := make([]float32, g.Elements())
				for r := range m.Rows {
					m.Row(r, deq[r*m.Cols:])
				}
				fb := make([]byte, 4*len(deq))
				for j, v := range deq {
					binary.LittleEndian.PutUint32(fb[4*j:], math.Float32bits(v))
				}
				if s := sha256.Sum256(fb); hex.EncodeToString(s[:]) != w.DeqSHA256 {
					t.Errorf("%s (%s): dequantized values differ from gguf-py's", g.Name, g.Type)
				}
			}
		})
	}
}

func TestMetadataAccessors(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "tiny.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := f.HyperParams()
	if err != nil {
		t.Fatal(err)
	}
	want := HyperParams{Arch: "llama", ContextLength: 2048, EmbeddingLength: 64, BlockCount: 2, FeedForwardLength: 172,
		HeadCount: 4, HeadCountKV: 2, KeyLength: 16, ValueLength: 16, RopeDimensionCount: 16, VocabSize: 10,
		RopeFreqBase: 500000, RMSEpsilon: float64(float32(1e-5))}
	if *h != want {
		t.Errorf("HyperParams:\n got %+v\nwant %+v", *h, want)
	}
	tok, err := f.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	wantTok := Tokenizer{Model: "gpt2", Pre: "default",
		Tokens:     StringArrayOf([]string{"<unk>", "<s>", "</s>", "<pad>", "a", "b", "ab", "Ġa", "Ġ", "✓"}),
		Scores:     []float32{0, -0.25, -0.5, -0.75, -1, -1.25, -1.5, -1.75, -2, -2.25},
		TokenTypes: []int32{2, 3, 3, 3, 1, 1, 1, 1, 1, 1},
		Merges:     StringArrayOf([]string{"a b", "Ġ a"}),
		BOS:        1, EOS: 2, UNK: 0, PAD: 3, SEP: -1, EOT: -1, AddBOS: &yes, AddEOS: &no,
		ChatTemplate: "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"}
	if !reflect.DeepEqual(*tok, wantTok) {
		t.Errorf("Tokenizer:\n got %+v\nwant %+v", *tok, wantTok)
	}
	v, _ := f.Get("test.u64")
	if u, ok := v.Uint(); !ok || u != math.MaxUint64 {
		t.Errorf("test.u64: %v %v", u, ok)
	}
	if _, ok := v.Int(); ok {
		t.Error("MaxUint64 passed as an int64")
	}
	v, _ = f.Get("test.i8")
	if i, ok := v.Int(); !ok || i != -128 {
		t.Errorf("test.i8: %v %v", i, ok)
	}
	if _, ok := v.Uint(); ok {
		t.Error("-128 passed as a uint")
	}
	if s := v.String(); s != "-128" {
		t.Errorf("String() = %q", s)
	}
	v, _ = f.Get("test.arr.nested")
	if s := v.String(); s != "[[1 2 3] [4]]" {
		t.Errorf("nested String() = %q", s)
	}
}

// builder writes GGUF files by hand, for the files gguf-py would not write.
type builder struct{ bytes.Buffer }

func (b *builder) u32(v uint32) *builder { binary.Write(b, binary.LittleEndian, v); return b }
func (b *builder) u64(v uint64) *builder { binary.Write(b, binary.LittleEndian, v); return b }
func (b *builder) str(s string) *builder { b.u64(uint64(len(s))); b.WriteString(s); return b }
func (b *builder) header(version uint32, nTensors, nKV uint64) *builder {
	b.WriteString("GGUF")
	return b.u32(version).u64(nTensors).u64(nKV)
}
func (b *builder) kvU32(key string, v uint32) *builder { return b.str(key).u32(uint32(Uint32)).u32(v) }
func (b *builder) tensor(name string, typ quant.Type, offset uint64, dims ...uint64) *builder {
	b.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		b.u64(d)
	}
	return b.u32(uint32(typ)).u64(offset)
}

// pad aligns to a and appends n data bytes.
func (b *builder) data(a, n int) []byte {
	for b.Len()%a != 0 {
		b.WriteByte(0)
	}
	b.Write(make([]byte, n))
	return b.Bytes()
}

func oneTensor(typ quant.Type, offset uint64, n int, dims ...uint64) []byte {
	b := new(builder).header(3, 1, 0)
	b.tensor("blk.0.attn_q.weight", typ, offset, dims...)
	return b.data(32, n)
}

// TestRejects: malformed and unsupported files fail with an error that
// says what is wrong (and never panic).
func TestRejects(t *testing.T) {
	huge := uint64(1) << 62
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "not a GGUF file"},
		{"magic", []byte("GGML\x03\x00\x00\x00"), "not a GGUF file"},
		{"version 1", new(builder).header(1, 0, 0).Bytes(), "version 1 files are not supported"},
		{"big-endian", []byte("GGUF\x00\x00\x00\x03" + strings.Repeat("\x00", 16)), "big-endian"},
		{"version 4", new(builder).header(4, 0, 0).Bytes(), "unknown version 4"},
		{"truncated header", []byte("GGUF\x03\x00\x00\x00\x01"), "tensor count"},
		{"tensor count", new(builder).header(3, huge, 0).Bytes(), "tensor count is 4611686018427387904, more than"},
		{"kv count", new(builder).header(3, 0, huge).Bytes(), "key/value count is"},
		{"key length", new(builder).header(3, 0, 1).u64(huge).u32(0).u8pad(8).Bytes(), "key length is"},
		{"value type", new(builder).header(3, 0, 1).str("k").u32(13).u8pad(8).Bytes(), `key "k" has unknown value type 13`},
		{"array length", new(builder).header(3, 0, 1).str("k").u32(uint32(Array)).u32(uint32(Uint32)).u64(huge).u8pad(16).Bytes(), "length of array k is"},
		{"array type", new(builder).header(3, 0, 1).str("k").u32(uint32(Array)).u32(99).u64(1).u8pad(16).Bytes(), "array of unknown value type 99"},
		{"nesting", nested(5), "nested more than 4 deep"},
		{"duplicate key", new(builder).header(3, 0, 2).kvU32("k", 1).kvU32("k", 2).Bytes(), `key "k" appears twice`},
		{"alignment type", new(builder).header(3, 0, 1).str("general.alignment").u32(uint32(Uint64)).u64(32).Bytes(), "general.alignment is a UINT64"},
		{"alignment value", new(builder).header(3, 0, 1).kvU32("general.alignment", 48).Bytes(), "not a power of two"},
		{"unsupported type", oneTensor(quant.Type(16), 0, 66, 256), "gguf: tensor blk.0.attn_q.weight has type IQ2_XXS; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K"},
		{"unknown type", oneTensor(quant.Type(77), 0, 66, 256), "has type type 77; supported"},
		{"I32 tensor", oneTensor(quant.Type(26), 0, 4, 1), "has type I32"},
		{"no dims", oneTensor(quant.F32, 0, 4), "has 0 dimensions"},
		{"5 dims", oneTensor(quant.F32, 0, 4, 1, 1, 1, 1, 1), "has 5 dimensions"},
		{"zero dim", oneTensor(quant.F32, 0, 4, 4, 0), "dimension 1 is 0"},
		{"dims overflow", oneTensor(quant.F32, 0, 4, 1<<32, 1<<32), "overflow"},
		{"bytes overflow", oneTensor(quant.F32, 0, 4, 1<<31, 1<<31), "too many bytes"},
		{"partial block", oneTensor(quant.Q8_0, 0, 34, 48), "not a whole number of Q8_0 blocks of 32"},
		{"misaligned", oneTensor(quant.F32, 4, 64, 4), "offset 4 is not a multiple of the alignment 32"},
		{"past the end", oneTensor(quant.F32, 0, 15, 4), "16 bytes at offset 0 run past the end of the 15-byte data section"},
		{"offset past the end", oneTensor(quant.F32, 1<<40, 16, 4), "at offset 1099511627776 run past the end"},
		{"offset overflow", oneTensor(quant.F32, math.MaxUint64-31, 16, 4), "run past the end"},
		{"no data section", new(builder).header(3, 1, 0).tensor("t", quant.F32, 0, 1).Bytes(), "past the end of the"},
		{"duplicate tensor", func() []byte {
			b := new(builder).header(3, 2, 0).tensor("t", quant.F32, 0, 8).tensor("t", quant.F32, 32, 8)
			return b.data(32, 64)
		}(), "tensor t appears twice"},
		{"long name", new(builder).header(3, 1, 0).tensor(strings.Repeat("n", 64), quant.F32, 0, 1).Bytes(), "longer than ggml's 63"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Read(c.file)
			if err == nil {
				t.Fatalf("read it: %d tensors, %d keys", len(f.Tensors), len(f.KV))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func (b *builder) u8pad(n int) *builder { b.Write(make([]byte, n)); return b }

// nested is a key whose value is an array of arrays depth deep.
func nested(depth int) []byte {
	b := new(builder).header(3, 0, 1).str("k").u32(uint32(Array))
	for range depth - 1 {
		b.u32(uint32(Array)).u64(1)
	}
	b.u32(uint32(Uint8)).u64(1)
	b.WriteByte(7)
	return b.Bytes()
}

// TestEveryPrefixFails: each truncation of a valid file is an error, not a panic.
func TestEveryPrefixFails(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "tiny.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	end := f.DataOffset + int(last.Offset) + len(last.Data)
	for n := range end {
		if _, err := Read(b[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes read without error", n, len(b))
		}
	}
}

// TestHugeClaimsAllocateLittle: counts that claim more than the file holds
// are refused before anything is allocated for them.
func TestHugeClaimsAllocateLittle(t *testing.T) {
	files := [][]byte{
		new(builder).header(3, 1<<40, 1<<40).Bytes(),
		new(builder).header(3, 0, 1).str("k").u32(uint32(Array)).u32(uint32(String)).u64(1 << 40).u8pad(64).Bytes(),
		new(builder).header(3, 0, 1).str("k").u32(uint32(Array)).u32(uint32(Uint8)).u64(1 << 40).u8pad(64).Bytes(),
		new(builder).header(3, 0, 1).str("k").u32(uint32(String)).u64(1 << 40).u8pad(64).Bytes(),
	}
	for i, b := range files {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Read(b); err == nil {
			t.Fatalf("file %d read", i)
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Errorf("file %d: %d bytes allocated", i, d)
		}
	}
}

// TestAccessorErrors: wrong types and out-of-range values in the model metadata.
func TestAccessorErrors(t *testing.T) {
	kv := func(kvs ...func(*builder)) *File {
		b := new(builder).header(3, 0, uint64(len(kvs)))
		for _, k := range kvs {
			k(b)
		}
		f, err := Read(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s := func(k, v string) func(*builder) {
		return func(b *builder) { b.str(k).u32(uint32(String)).str(v) }
	}
	u := func(k string, v uint32) func(*builder) { return func(b *builder) { b.kvU32(k, v) } }
	strs := func(k string, v ...string) func(*builder) {
		return func(b *builder) {
			b.str(k).u32(uint32(Array)).u32(uint32(String)).u64(uint64(len(v)))
			for _, x := range v {
				b.str(x)
			}
		}
	}
	arch := s("general.architecture", "llama")
	for _, c := range []struct {
		name string
		f    *File
		tok  bool
		want string
	}{
		{"no arch", kv(), false, "no general.architecture"},
		{"arch type", kv(u("general.architecture", 1)), false, "general.architecture is a UINT32, not a STRING"},
		{"missing dim", kv(arch, u("llama.block_count", 2), u("llama.attention.head_count", 2)), false, "llama.embedding_length is missing"},
		{"kv heads", kv(arch, u("llama.embedding_length", 8), u("llama.block_count", 2), u("llama.attention.head_count", 4), u("llama.attention.head_count_kv", 3)), false, "4 attention heads do not share 3"},
		{"per-layer", kv(arch, func(b *builder) {
			b.str("llama.embedding_length").u32(uint32(Array)).u32(uint32(Uint32)).u64(1).u32(8)
		}), false, "is an array (per-layer values?)"},
		{"float type", kv(arch, u("llama.embedding_length", 8), u("llama.block_count", 2), u("llama.attention.head_count", 4), u("llama.rope.freq_base", 10000)), false, "llama.rope.freq_base is a UINT32, not a FLOAT32"},
		{"no model", kv(), true, "no tokenizer.ggml.model"},
		{"no tokens", kv(s("tokenizer.ggml.model", "gpt2")), true, "no tokenizer.ggml.tokens"},
		{"tokens type", kv(s("tokenizer.ggml.model", "gpt2"), s("tokenizer.ggml.tokens", "a")), true, "tokenizer.ggml.tokens is a STRING, not an ARRAY of STRING"},
		{"bos range", kv(s("tokenizer.ggml.model", "gpt2"), strs("tokenizer.ggml.tokens", "a", "b"), u("tokenizer.ggml.bos_token_id", 2)), true, "bos_token_id is 2, outside the 2-token vocabulary"},
		{"scores count", kv(s("tokenizer.ggml.model", "gpt2"), strs("tokenizer.ggml.tokens", "a", "b"), func(b *builder) {
			b.str("tokenizer.ggml.scores").u32(uint32(Array)).u32(uint32(Float32)).u64(1).u32(0)
		}), true, "1 tokenizer.ggml.scores for 2 tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.tok {
				_, err = c.f.Tokenizer()
			} else {
				_, err = c.f.HyperParams()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v does not say %q", err, c.want)
			}
		})
	}
}
