package quant

// quant_test.go: every format against gguf-py's quantize/dequantize
// (testdata/golden.json, made by scripts/gguf/make_testdata.py), and every
// kernel path against the scalar reference.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type goldenCase struct {
	Name, Type, Blocks, Deq, Src string
	Dots                         []float64
	AbsDots                      []float64 `json:"abs_dots"`
}

type golden struct {
	Rows, Cols int
	X          string
	Cases      []goldenCase
	Half       struct {
		Src, F16, BF16 string
		N              int
	}
}

func readGolden(t *testing.T) *golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) != 8 {
		t.Fatalf("golden.json has %d cases, want 8 (one per supported type)", len(g.Cases))
	}
	return &g
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readF32(t *testing.T, name string) []float32 {
	b := readFile(t, name)
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func readU16(t *testing.T, name string) []uint16 {
	b := readFile(t, name)
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}

// paths runs f once per kernel path this machine has ("go", and "avx2" or
// the like), with that path in use.
func paths(t *testing.T, f func(t *testing.T, path string)) {
	t.Helper()
	names := []string{"go"}
	if simd != nil {
		names = append(names, simd.name)
	}
	has512 := use512
	if has512 {
		names = append(names, "avx512")
	}
	for _, p := range names {
		t.Run(p, func(t *testing.T) {
			defer func(old, old512 bool) { useSIMD, use512 = old, old512 }(useSIMD, use512)
			useSIMD, use512 = p != "go", p == "avx512"
			f(t, p)
		})
	}
}

// sameBits reports whether a and b are the same float32 (any NaN equals any NaN).
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

func firstDiff(got, want []float32) int {
	for i := range want {
		if !sameBits(got[i], want[i]) {
			return i
		}
	}
	return -1
}

// TestDequantizeMatchesGGUFPy: Dequantize equals gguf.quants.dequantize
// exactly, every type, every path.
func TestDequantizeMatchesGGUFPy(t *testing.T) {
	g := readGolden(t)
	paths(t, func(t *testing.T, _ string) {
		for _, c := range g.Cases {
			t.Run(c.Name, func(t *testing.T) {
				typ, err := ParseType(c.Type)
				if err != nil {
					t.Fatal(err)
				}
				blocks, want := readFile(t, c.Blocks), readF32(t, c.Deq)
				got := make([]float32, len(want))
				if err := Dequantize(typ, got, blocks); err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("value %d: got %g (%#08x), gguf-py %g (%#08x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			})
		}
	})
}

// TestQuantizeMatchesGGUFPy: Quantize writes the bytes gguf.quants.quantize
// wrote (F32, F16 and BF16 rows, Q8_0 and Q4_0 blocks), ties and zero blocks included.
func TestQuantizeMatchesGGUFPy(t *testing.T) {
	g := readGolden(t)
	n := 0
	for _, c := range g.Cases {
		if c.Src == "" {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			typ, _ := ParseType(c.Type)
			src, want := readF32(t, c.Src), readFile(t, c.Blocks)
			got := make([]byte, len(want))
			if err := Quantize(typ, got, src); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if got[i] != want[i] {
					bb := typ.BlockBytes()
					t.Fatalf("byte %d (block %d, byte %d in it): got %#02x, gguf-py %#02x", i, i/bb, i%bb, got[i], want[i])
				}
			}
		})
	}
	if n != 5 {
		t.Fatalf("%d quantized cases in golden.json, want 5 (F32, F16, BF16, Q8_0, Q4_0)", n)
	}
}

// TestHalfMatchesNumpy: F32ToF16 is numpy's astype(float16) and F32ToBF16
// gguf-py's BF16 quantization, on values across the whole float32 range.
func TestHalfMatchesNumpy(t *testing.T) {
	g := readGolden(t)
	src, f16, bf16 := readF32(t, g.Half.Src), readU16(t, g.Half.F16), readU16(t, g.Half.BF16)
	if len(src) != g.Half.N || len(f16) != g.Half.N || len(bf16) != g.Half.N {
		t.Fatalf("half files hold %d, %d, %d values, want %d", len(src), len(f16), len(bf16), g.Half.N)
	}
	for i, v := range src {
		if got := F32ToF16(v); got != f16[i] {
			t.Errorf("F32ToF16(%g = %#08x) = %#04x, numpy %#04x", v, math.Float32bits(v), got, f16[i])
		}
		if got := F32ToBF16(v); got != bf16[i] {
			t.Errorf("F32ToBF16(%g = %#08x) = %#04x, gguf-py %#04x", v, math.Float32bits(v), got, bf16[i])
		}
	}
}

// TestF16Exhaustive: every half widens and narrows back to itself, and
// every midpoint between neighbours rounds to the even one (the values
// just beside it to the nearer one).
func TestF16Exhaustive(t *testing.T) {
	for h := range 1 << 16 {
		f := F16ToF32(uint16(h))
		if f != f {
			if g := F32ToF16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 || g&0x8000 != uint16(h)&0x8000 {
				t.Fatalf("NaN %#04x came back as %#04x", h, g)
			}
			continue
		}
		if g := F32ToF16(f); g != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, f, g)
		}
		if h&0x7fff >= 0x7c00 || h&0x7fff == 0x7bff { // inf, or the largest finite: no neighbour above
			continue
		}
		next := F16ToF32(uint16(h) + 1) // the neighbour away from zero
		mid := (f + next) / 2           // exact: halves have 11 significant bits
		even := uint16(h)
		if h&1 == 1 {
			even = uint16(h) + 1
		}
		if g := F32ToF16(mid); g != even {
			t.Fatalf("midpoint of %#04x and %#04x (%g) → %#04x, want %#04x", h, h+1, mid, g, even)
		}
		toward := math.Nextafter32(mid, 0)
		away := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(mid))))
		if g := F32ToF16(toward); g != uint16(h) {
			t.Fatalf("just below the midpoint of %#04x and %#04x → %#04x", h, h+1, g)
		}
		if g := F32ToF16(away); g != uint16(h)+1 {
			t.Fatalf("just above the midpoint of %#04x and %#04x → %#04x", h, h+1, g)
		}
	}
	if F32ToF16(65520) != 0x7c00 || F32ToF16(-1e9) != 0xfc00 || F32ToF16(65519.996) != 0x7bff {
		t.Fatal("overflow to inf is wrong")
	}
}

// dotTolerance bounds the rounding error of a 32-lane float32 dot product
// of cols terms whose magnitudes sum to abs: each lane adds cols/32
// products, the lanes combine in 5 more levels, and each product is rounded
// once: γ_k·Σ|w·x| with k = cols/32 + 6, taken twice over for safety.
func dotTolerance(cols int, abs float64) float64 {
	return 2 * float64(cols/32+6) * 0x1p-24 * abs
}

// q4kFactTolerance bounds the factored sum's distance from the exact dot
// product: 2·(cols/32 + 40)·2⁻²⁴ times the sum of the magnitudes of its
// two parts, |d·sc·q·x| and |dmin·m·x| over every value (the parts can
// cancel, so Σ|w·x| alone does not bound it).
func q4kFactTolerance(row []byte, x []float32) float64 {
	var abs float64
	nb := len(x) / QK_K
	for b := range nb {
		blk := row[b*144:]
		d, dmin := halfAt(blk[0:]), halfAt(blk[2:])
		for s := range 8 {
			sc, m := scaleMinK4(s, blk[4:16])
			ds, dm := float64(d*float32(sc)), float64(dmin*float32(m))
			for k := range 32 {
				i := 32*s + k
				q := blk[16+32*(s/2)+k]
				if s%2 == 1 {
					q >>= 4
				}
				xv := math.Abs(float64(x[b*QK_K+i]))
				abs += math.Abs(ds*float64(q&15))*xv + math.Abs(dm)*xv
			}
		}
	}
	return 2 * float64(len(x)/32+40) * 0x1p-24 * abs
}

// factored reports whether path computes typ's rows as a factored sum
// (Q4_K on the SIMD kernels, q4kfact_amd64.go): within q4kFactTolerance of
// the exact dot product, not bit for bit the F32 MatVec of the
// dequantized weights.
func factored(typ Type, path string) bool { return typ == Q4_K && path != "go" }

// TestDotMatchesFloat64: Dot and MatVec on the golden blocks are within
// dotTolerance of gguf-py's float64 dot product of the dequantized values.
func TestDotMatchesFloat64(t *testing.T) {
	g := readGolden(t)
	x := readF32(t, g.X)
	paths(t, func(t *testing.T, path string) {
		for _, c := range g.Cases {
			t.Run(c.Name, func(t *testing.T) {
				typ, _ := ParseType(c.Type)
				blocks := readFile(t, c.Blocks)
				rb := len(blocks) / g.Rows
				out := make([]float32, g.Rows)
				MatVec(typ, out, blocks, x, g.Rows, g.Cols)
				for r := range g.Rows {
					d := Dot(typ, blocks[r*rb:(r+1)*rb], x)
					if !sameBits(d, out[r]) {
						t.Errorf("row %d: Dot %g, MatVec %g", r, d, out[r])
					}
					tol := dotTolerance(g.Cols, c.AbsDots[r])
					if factored(typ, path) {
						tol = q4kFactTolerance(blocks[r*rb:(r+1)*rb], x)
					}
					if math.Abs(float64(d)-c.Dots[r]) > tol {
						t.Errorf("row %d: Dot %g, float64 %g: off by %g > %g", r, d, c.Dots[r], math.Abs(float64(d)-c.Dots[r]), tol)
					}
				}
			})
		}
	})
}

// randomRows makes rows×cols weights of type t: quantized from random
// values for the types Quantize knows, random block bytes with finite
// scales for the K-quants.
func randomRows(r *rand.Rand, typ Type, rows, cols int) []byte {
	rb, err := typ.RowBytes(cols)
	if err != nil {
		panic(err)
	}
	w := make([]byte, rows*rb)
	switch typ {
	case Q4_K, Q5_K, Q6_K:
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		for b := 0; b < len(w)/typ.BlockBytes(); b++ {
			blk := w[b*typ.BlockBytes() : (b+1)*typ.BlockBytes()]
			d := F32ToF16(float32(r.NormFloat64() * 0.01))
			if typ == Q6_K {
				binary.LittleEndian.PutUint16(blk[208:], d)
			} else {
				binary.LittleEndian.PutUint16(blk[0:], d)
				binary.LittleEndian.PutUint16(blk[2:], F32ToF16(float32(r.Float64()*0.01)))
			}
		}
	default:
		src := make([]float32, rows*cols)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		if err := Quantize(typ, w, src); err != nil {
			panic(err)
		}
	}
	return w
}

func randomVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// refMatVec is the reference: each row dequantized whole with the scalar
// code, then w[c]·x[c] rounded and added to lane c mod 32 in order, the
// lanes combined in the package's order, any tail added one by one.
func refMatVec(typ Type, w []byte, x []float32, rows, cols int) (out []float32, abs []float64) {
	rb, _ := typ.RowBytes(cols)
	deq := make([]float32, cols)
	out, abs = make([]float32, rows), make([]float64, rows)
	for r := range rows {
		dequantGo(typ, deq, w[r*rb:(r+1)*rb])
		var a [32]float32
		main := cols &^ 31
		for c := range main {
			a[c%32] += float32(deq[c] * x[c])
		}
		out[r] = reduce32(&a)
		if main < cols {
			var s float32
			for c := main; c < cols; c++ {
				s += float32(deq[c] * x[c])
			}
			out[r] += s
		}
		for c := range cols {
			abs[r] += math.Abs(float64(deq[c]) * float64(x[c]))
		}
	}
	return out, abs
}

type shape struct{ rows, cols int }

func shapesFor(typ Type) []shape {
	switch typ.BlockSize() {
	case 1:
		return []shape{{1, 1}, {3, 7}, {2, 31}, {5, 32}, {4, 33}, {7, 64}, {3, 100}, {9, 288}, {2, 1000}}
	case 32: // rows ≥ 4: the AVX-512 kernels' four-row groups, with and without a rest
		return []shape{{1, 32}, {3, 64}, {5, 96}, {2, 288}, {7, 512}, {3, 1056}, {2, 2080}, {8, 64}, {13, 160}}
	default:
		return []shape{{1, 256}, {3, 512}, {2, 768}, {5, 1280}, {2, 2304}, {8, 512}, {11, 768}}
	}
}

// TestMatVecPaths: on random weights of every type and shape, the pure-Go
// MatVec equals the reference bit for bit; the SIMD one is within the FMA
// tolerance of it (same order, fused roundings: 2·(cols/32+6)·2⁻²⁴·Σ|w·x|)
// and equals, bit for bit, the SIMD F32 MatVec on the dequantized weights
// (a factored path: within q4kFactTolerance instead);
// Dot equals MatVec's row; MatMat equals MatVec bit for bit for 1–5 inputs.
func TestMatVecPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	for _, typ := range Supported {
		for _, sh := range shapesFor(typ) {
			w := randomRows(r, typ, sh.rows, sh.cols)
			x := randomVec(r, sh.cols)
			want, abs := refMatVec(typ, w, x, sh.rows, sh.cols)
			deq := make([]float32, sh.rows*sh.cols)
			if err := Dequantize(typ, deq, w); err != nil {
				t.Fatal(err)
			}
			deqBytes := make([]byte, 4*len(deq))
			if err := Quantize(F32, deqBytes, deq); err != nil {
				t.Fatal(err)
			}
			paths(t, func(t *testing.T, path string) {
				name := fmt.Sprintf("%s/%dx%d", typ, sh.rows, sh.cols)
				got := make([]float32, sh.rows)
				MatVec(typ, got, w, x, sh.rows, sh.cols)
				for i := range want {
					if path == "go" && !sameBits(got[i], want[i]) {
						t.Fatalf("%s row %d: pure Go %g, reference %g (bits %#08x, %#08x)", name, i, got[i], want[i], math.Float32bits(got[i]), math.Float32bits(want[i]))
					}
					tol := dotTolerance(sh.cols, abs[i])
					if factored(typ, path) {
						rb, _ := typ.RowBytes(sh.cols)
						tol = q4kFactTolerance(w[i*rb:(i+1)*rb], x)
					}
					if math.Abs(float64(got[i])-float64(want[i])) > tol {
						t.Fatalf("%s row %d: %s %g, reference %g: off by %g > %g", name, i, path, got[i], want[i], math.Abs(float64(got[i]-want[i])), tol)
					}
				}
				f32 := make([]float32, sh.rows)
				MatVec(F32, f32, deqBytes, x, sh.rows, sh.cols)
				if i := firstDiff(got, f32); i >= 0 && !factored(typ, path) {
					t.Fatalf("%s row %d: %s MatVec %g, F32 MatVec of the dequantized weights %g", name, i, path, got[i], f32[i])
				}
				rb, _ := typ.RowBytes(sh.cols)
				for i := range sh.rows {
					if d := Dot(typ, w[i*rb:(i+1)*rb], x); !sameBits(d, got[i]) {
						t.Fatalf("%s row %d: Dot %g, MatVec %g", name, i, d, got[i])
					}
				}
				for n := 1; n <= 5; n++ {
					xs, outs := make([][]float32, n), make([][]float32, n)
					for k := range xs {
						xs[k] = randomVec(r, sh.cols)
						outs[k] = make([]float32, sh.rows)
					}
					xs[0] = x
					MatMat(typ, outs, w, xs, sh.rows, sh.cols)
					one := make([]float32, sh.rows)
					for k := range xs {
						MatVec(typ, one, w, xs[k], sh.rows, sh.cols)
						if i := firstDiff(outs[k], one); i >= 0 {
							t.Fatalf("%s, %d inputs, input %d, row %d: MatMat %g, MatVec %g", name, n, k, i, outs[k][i], one[i])
						}
					}
				}
			})
		}
	}
}

// TestDequantizePaths: the SIMD dequantization equals the scalar one bit
// for bit on random blocks (K-quant bytes entirely random, NaN and inf
// scales included).
func TestDequantizePaths(t *testing.T) {
	if simd == nil {
		t.Skip("no SIMD kernels in this build or on this CPU: only the scalar path exists")
	}
	r := rand.New(rand.NewPCG(36, 2))
	for _, typ := range Supported {
		for _, n := range []int{1, 2, 3, 7, 8, 9, 33} {
			cols := n * typ.BlockSize()
			if typ.BlockSize() == 1 {
				cols = n * 37
			}
			rb, _ := typ.RowBytes(cols)
			src := make([]byte, rb)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			want, got := make([]float32, cols), make([]float32, cols)
			dequantGo(typ, want, src)
			if !simd.dequant(typ, got, src) {
				dequantGo(typ, got, src) // a type the SIMD set leaves to Go
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("%s, %d values: value %d: SIMD %g (%#08x), scalar %g (%#08x)", typ, cols, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// TestShapesChecked: kernels panic (never read past a slice) and
// Dequantize/Quantize/NewMatrix fail on sizes that do not fit.
func TestShapesChecked(t *testing.T) {
	w := make([]byte, 2*34)
	x := make([]float32, 64)
	out := make([]float32, 2)
	mustPanic(t, "MatVec with too few bytes", func() { MatVec(Q8_0, out, w[:67], x, 2, 64) })
	mustPanic(t, "MatVec with cols not a multiple of 32", func() { MatVec(Q8_0, out, w, x, 1, 48) })
	mustPanic(t, "MatVec with a short x", func() { MatVec(Q8_0, out, w, x[:63], 1, 64) })
	mustPanic(t, "MatVec with a short out", func() { MatVec(Q8_0, out[:1], w, x, 2, 32) })
	mustPanic(t, "MatVec on an unsupported type", func() { MatVec(Type(16), out, w, x, 1, 256) })
	mustPanic(t, "Dot with extra bytes", func() { Dot(Q8_0, w, x[:32]) })
	mustPanic(t, "MatMat with mismatched lists", func() { MatMat(Q8_0, [][]float32{out}, w, nil, 2, 32) })
	if err := Dequantize(Q4_K, make([]float32, 256), make([]byte, 143)); err == nil {
		t.Error("Dequantize accepted 143 bytes for a Q4_K block")
	}
	if err := Dequantize(Q4_K, make([]float32, 255), make([]byte, 144)); err == nil {
		t.Error("Dequantize accepted 255 values")
	}
	if err := Quantize(Q6_K, make([]byte, 210), make([]float32, 256)); err == nil || !strings.Contains(err.Error(), "not implemented") {
		t.Errorf("Quantize to Q6_K: %v", err)
	}
	if _, err := NewMatrix(Q8_0, w, 3, 32); err == nil {
		t.Error("NewMatrix accepted 68 bytes for 3×32 Q8_0")
	}
	if _, err := NewMatrix(Q8_0, w, 1, maxInt/2); err == nil {
		t.Error("NewMatrix accepted a huge row")
	}
}

func TestTypes(t *testing.T) {
	for _, c := range []struct {
		typ          Type
		name         string
		block, bytes int
	}{{F32, "F32", 1, 4}, {F16, "F16", 1, 2}, {BF16, "BF16", 1, 2}, {Q8_0, "Q8_0", 32, 34}, {Q4_0, "Q4_0", 32, 18},
		{Q4_K, "Q4_K", 256, 144}, {Q5_K, "Q5_K", 256, 176}, {Q6_K, "Q6_K", 256, 210}} {
		if c.typ.String() != c.name || c.typ.BlockSize() != c.block || c.typ.BlockBytes() != c.bytes || !c.typ.IsSupported() {
			t.Errorf("%d: %s %d %d %v", c.typ, c.typ, c.typ.BlockSize(), c.typ.BlockBytes(), c.typ.IsSupported())
		}
		if p, err := ParseType(strings.ToLower(c.name)); err != nil || p != c.typ {
			t.Errorf("ParseType(%q) = %v, %v", strings.ToLower(c.name), p, err)
		}
	}
	if s := Type(16).String(); s != "IQ2_XXS" {
		t.Errorf("type 16 is %q", s)
	}
	if s := Type(99).String(); s != "type 99" {
		t.Errorf("type 99 is %q", s)
	}
	if _, err := ParseType("iq2_xxs"); err == nil || !strings.Contains(err.Error(), "IQ2_XXS is not supported") {
		t.Errorf("ParseType(iq2_xxs): %v", err)
	}
	if _, err := Q4_K.RowBytes(300); err == nil {
		t.Error("a Q4_K row of 300 values")
	}
}

// TestMatMatGroups: MatMat equals MatVec bit for bit on every kernel set
// for the batch sizes a server runs (up to 33 inputs: the six-row kernel's
// pairs and lone input, the reduction's eight sums at a time and the rest)
// and row counts around the six-row groups (the four-row and one-row rest),
// over one and several 768-value chunks.
func TestMatMatGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 7))
	for _, typ := range []Type{Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, F16, BF16, F32} {
		for _, sh := range []shape{{6, 768}, {7, 256}, {12, 1024}, {17, 1536}, {23, 3072}} {
			w := randomRows(r, typ, sh.rows, sh.cols)
			// up to a prefill's positions (the engine runs passes of
			// T·in ≤ 2¹⁸ on MatMat: 85 positions of 3072, 341 of 768),
			// through the caller's scratch too
			for _, n := range []int{2, 7, 8, 9, 16, 33, 85, 341} {
				if n > 33 && sh.rows*sh.cols > 12*1024 {
					continue
				}
				xs, outs := make([][]float32, n), make([][]float32, n)
				for k := range xs {
					xs[k], outs[k] = randomVec(r, sh.cols), make([]float32, sh.rows)
				}
				var sc Scratch
				paths(t, func(t *testing.T, path string) {
					if n%2 == 1 {
						m, err := NewMatrix(typ, w, sh.rows, sh.cols)
						if err != nil {
							t.Fatal(err)
						}
						m.MatMatRowsWith(&sc, outs, xs, 0, sh.rows)
					} else {
						MatMat(typ, outs, w, xs, sh.rows, sh.cols)
					}
					one := make([]float32, sh.rows)
					for k := range xs {
						MatVec(typ, one, w, xs[k], sh.rows, sh.cols)
						if i := firstDiff(outs[k], one); i >= 0 {
							t.Fatalf("%s %dx%d, %d inputs, input %d, row %d: MatMat %g, MatVec %g", typ, sh.rows, sh.cols, n, k, i, outs[k][i], one[i])
						}
					}
				})
			}
		}
	}
}
