package gguf

import "testing"

// FuzzRead: Read never panics on any input, and what it accepts is
// consistent: every tensor's data lies inside the file and holds its
// values, and its first row dequantizes; an array of strings gives the
// same elements by At and Strings, no more bytes than the file's. The
// seeds are the small files in testdata/fuzz/FuzzRead (a key/value of each
// kind and two tensors, made by gguf-py's writer; their truncations) and
// two made here.
func FuzzRead(f *testing.F) {
	f.Add(oneTensor(16, 0, 66, 256))
	f.Add(nested(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Read(b)
		if err != nil {
			return
		}
		for i := range file.Tensors {
			tt := &file.Tensors[i]
			m, err := tt.Matrix()
			if err != nil {
				t.Fatalf("tensor %s read but is not a matrix: %v", tt.Name, err)
			}
			if int64(m.Rows)*int64(m.Cols) != tt.Elements() || len(tt.Data) > len(b) {
				t.Fatalf("tensor %s: %d×%d for %d values", tt.Name, m.Rows, m.Cols, tt.Elements())
			}
			if m.Cols <= 1<<16 {
				row := make([]float32, m.Cols)
				m.Row(0, row)
			}
		}
		file.HyperParams()
		file.Tokenizer()
		for _, kv := range file.KV {
			_ = kv.Value.String()
			if a, ok := kv.Value.StringArray(); ok { // strarray.go: the elements lie in the file's bytes
				n := 0
				for i, s := range a.Strings() {
					if s != a.At(i) {
						t.Fatalf("%s[%d]: Strings %q, At %q", kv.Key, i, s, a.At(i))
					}
					n += len(s)
				}
				if n > len(b) {
					t.Fatalf("%s: %d bytes of strings from a %d-byte file", kv.Key, n, len(b))
				}
			}
		}
	})
}
