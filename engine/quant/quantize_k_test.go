package quant

// quantize_k_test.go: Q4_K quantization against llama-quantize's bytes
// (testdata/q4_k_quant.*, made by scripts/gguf/make_q4k_testdata.py).

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestQuantizeQ4_KMatchesLlamaQuantize(t *testing.T) {
	var meta struct {
		Rows, Cols       int
		Src, Blocks, Deq string
	}
	b, err := os.ReadFile(filepath.Join("testdata", "q4_k_quant.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	src, want, deq := readF32(t, meta.Src), readFile(t, meta.Blocks), readF32(t, meta.Deq)
	rb, err := Q4_K.RowBytes(meta.Cols)
	if err != nil || len(want) != meta.Rows*rb || len(src) != meta.Rows*meta.Cols {
		t.Fatalf("golden sizes: %d bytes, %d values, %d×%d (%v)", len(want), len(src), meta.Rows, meta.Cols, err)
	}
	for r := range meta.Rows {
		got := make([]byte, rb)
		if err := Quantize(Q4_K, got, src[r*meta.Cols:(r+1)*meta.Cols]); err != nil {
			t.Fatal(err)
		}
		w := want[r*rb : (r+1)*rb]
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("row %d byte %d (super-block %d, byte %d in it): got %#02x, llama-quantize %#02x", r, i, i/144, i%144, got[i], w[i])
			}
		}
		back := make([]float32, meta.Cols)
		if err := Dequantize(Q4_K, back, got); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(back, deq[r*meta.Cols:(r+1)*meta.Cols]); i >= 0 {
			t.Fatalf("row %d value %d: dequantized %g, gguf-py %g", r, i, back[i], deq[r*meta.Cols+i])
		}
	}
}

// TestQuantizeQ4_KError: on random weight-like rows the round trip's
// error per value stays within one step of the sub-block's grid
// (d·sc), plus the min's rounding.
func TestQuantizeQ4_KError(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 36))
	x := make([]float32, 4*QK_K)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.05)
	}
	q := make([]byte, 4*144)
	if err := Quantize(Q4_K, q, x); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := Dequantize(Q4_K, y, q); err != nil {
		t.Fatal(err)
	}
	var se, sx float64
	for i := range x {
		e := float64(x[i] - y[i])
		se += e * e
		sx += float64(x[i]) * float64(x[i])
	}
	// 4-bit values: the error's rms is a few percent of the values' rms.
	if rel := math.Sqrt(se / sx); rel > 0.15 || rel == 0 {
		t.Fatalf("relative rms error %.4f, want in (0, 0.15]", rel)
	}
}
