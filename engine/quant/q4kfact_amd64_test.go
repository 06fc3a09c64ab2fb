//go:build amd64 && !purego

package quant

// q4kfact_amd64_test.go: the factored Q4_K kernels (q4kfact_amd64.go)
// against q4kFactModel, the same sums in Go, bit for bit; the model
// against a float64 dot product of the dequantized weights.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferscope/inferscope/engine/internal/fused"
)

// q4kFactModel is one row's factored dot product in Go, the order and
// roundings the package comment of q4kfact_amd64.go gives.
func q4kFactModel(row []byte, xp []float32, nb int) float32 {
	var tot [16]float32
	var macc [8]float32
	for b := range nb {
		blk, pb := row[b*144:(b+1)*144], xp[b*q4kXP:]
		d, dmin := halfAt(blk[0:]), halfAt(blk[2:])
		var S, M [8]float32
		for s := range 8 {
			sc, m := scaleMinK4(s, blk[4:16])
			S[s], M[s] = d*float32(sc), dmin*float32(m)
		}
		qs := blk[16:144]
		for c := range 2 {
			var a [2][16]float32
			for h := range 2 {
				for o := range 4 {
					v := pb[(c*8+o*2+h)*16:]
					for i := range 16 {
						q := qs[64*c+32*(i/8)+4*(i%8)+o]
						if h == 1 {
							q >>= 4
						}
						qf := float32(q & 15)
						if o == 0 {
							a[h][i] = qf * v[i]
						} else {
							a[h][i] = fused.F32(qf, v[i], a[h][i])
						}
					}
				}
			}
			for i := range 16 {
				tot[i] = fused.F32(a[0][i], S[4*c+2*(i/8)], tot[i])
				tot[i] = fused.F32(a[1][i], S[4*c+2*(i/8)+1], tot[i])
			}
		}
		for s := range 8 {
			macc[s] = fused.F32(-M[s], pb[256+s], macc[s])
		}
	}
	var acc [32]float32
	copy(acc[:16], tot[:])
	copy(acc[16:24], macc[:])
	return reduce32(&acc)
}

// TestQ4KPrep: q4kPrep places every value of x where the package comment
// says, bit for bit, each sub-block sum is within 32·2⁻²⁴ of Σ|x| of the
// float64 sum, and the AVX-512 kernel's output is q4kPrepGo's bit for bit.
func TestQ4KPrep(t *testing.T) {
	if simd == nil {
		t.Skip("no SIMD kernels on this CPU: the factored Q4_K kernels do not run here")
	}
	r := rand.New(rand.NewPCG(36, 12))
	for _, nb := range []int{1, 2, 3, 12} {
		x := randomVec(r, nb*QK_K)
		x[3] = float32(math.Copysign(0, -1))
		xp := make([]float32, nb*q4kXP)
		for i := range xp {
			xp[i] = float32(math.NaN())
		}
		q4kPrep(xp, x)
		if use512 {
			g := make([]float32, len(xp))
			q4kPrepGo(g, x)
			if i := firstDiff(xp, g); i >= 0 || len(g) != len(xp) {
				t.Fatalf("%d blocks: q4kPrepAVX512 gives xp[%d] = %g, q4kPrepGo %g", nb, i, xp[i], g[i])
			}
		}
		for b := range nb {
			pb, xb := xp[b*q4kXP:(b+1)*q4kXP], x[b*QK_K:(b+1)*QK_K]
			for c := range 2 {
				for o := range 4 {
					for h := range 2 {
						for i := range 16 {
							j := (c*8+o*2+h)*16 + i
							if v := xb[128*c+64*(i/8)+32*h+4*(i%8)+o]; math.Float32bits(pb[j]) != math.Float32bits(v) {
								t.Fatalf("block %d: xp[%d] = %g, want x[%d] = %g", b, j, pb[j], 128*c+64*(i/8)+32*h+4*(i%8)+o, v)
							}
						}
					}
				}
			}
			for s := range 8 {
				var sum, abs float64
				for _, v := range xb[32*s : 32*s+32] {
					sum += float64(v)
					abs += math.Abs(float64(v))
				}
				if d := math.Abs(float64(pb[256+s]) - sum); d > 32*0x1p-24*abs {
					t.Fatalf("block %d sub-block %d: sum %g, float64 %g", b, s, pb[256+s], sum)
				}
			}
			for _, v := range pb[264:] {
				if v != 0 {
					t.Fatalf("block %d: padding %g", b, v)
				}
			}
		}
	}
}

// TestQ4KFactKernels: on random Q4_K rows (bytes random, scales finite,
// and a block with zero scales), the SIMD MatVec, Dot and MatMat (AVX2,
// and AVX-512 where the CPU has it) equal q4kFactModel bit for bit, for
// row counts around the four-row groups, rows at the very end of their
// slice (the padded copy) and 1–9 inputs; the model is within
// q4kFactTolerance of the float64 dot product of the dequantized weights.
func TestQ4KFactKernels(t *testing.T) {
	if simd == nil {
		t.Skip("no SIMD kernels on this CPU: the factored Q4_K kernels do not run here")
	}
	paths(t, func(t *testing.T, path string) {
		if path == "go" {
			return // the pure-Go path keeps the exact sum (TestMatVecPaths)
		}
		testQ4KFact(t, rand.New(rand.NewPCG(36, 11)))
	})
}

func testQ4KFact(t *testing.T, r *rand.Rand) {
	for i, sh := range []shape{{1, 256}, {3, 512}, {4, 256}, {5, 768}, {8, 1536}, {11, 3072}, {13, 2048}} {
		// odd cases: the slice ends where its memory does (the last row is
		// copied into padding); even: q4kOver bytes of room after it (the
		// kernels read the last row where it is)
		spare := q4kOver * (1 - i%2)
		t.Run(fmt.Sprintf("%dx%d+%d", sh.rows, sh.cols, spare), func(t *testing.T) {
			w := randomRows(r, Q4_K, sh.rows, sh.cols)
			clear(w[4:16]) // a block whose scales and mins are all zero
			w = append(w[:len(w):len(w)], make([]byte, spare)...)[:len(w)]
			w = w[: len(w) : len(w)+spare]
			rb, _ := Q4_K.RowBytes(sh.cols)
			nb := sh.cols / QK_K
			xs := make([][]float32, 9)
			for k := range xs {
				xs[k] = randomVec(r, sh.cols)
			}
			xs[1][5] = float32(math.Copysign(0, -1))
			want := make([][]float32, len(xs))
			xp := make([]float32, nb*q4kXP)
			deq := make([]float32, sh.cols)
			for k, x := range xs {
				q4kPrep(xp, x)
				want[k] = make([]float32, sh.rows)
				for i := range sh.rows {
					row := w[i*rb : (i+1)*rb]
					want[k][i] = q4kFactModel(row, xp, nb)
					dequantGo(Q4_K, deq, row)
					var ref float64
					for c := range deq {
						ref += float64(deq[c]) * float64(x[c])
					}
					if tol := q4kFactTolerance(row, x); math.Abs(float64(want[k][i])-ref) > tol {
						t.Fatalf("input %d row %d: model %g, float64 %g: off by %g > %g", k, i, want[k][i], ref, math.Abs(float64(want[k][i])-ref), tol)
					}
				}
			}
			got := make([]float32, sh.rows)
			for k, x := range xs {
				MatVec(Q4_K, got, w, x, sh.rows, sh.cols)
				if i := firstDiff(got, want[k]); i >= 0 {
					t.Fatalf("input %d row %d: MatVec %g, model %g", k, i, got[i], want[k][i])
				}
				for i := range sh.rows {
					row := w[i*rb : (i+1)*rb : (i+1)*rb]
					if d := Dot(Q4_K, row, x); !sameBits(d, want[k][i]) {
						t.Fatalf("input %d row %d: Dot %g, model %g", k, i, d, want[k][i])
					}
				}
			}
			for n := 2; n <= len(xs); n++ {
				outs := make([][]float32, n)
				for k := range outs {
					outs[k] = make([]float32, sh.rows)
				}
				MatMat(Q4_K, outs, w, xs[:n], sh.rows, sh.cols)
				for k := range outs {
					if i := firstDiff(outs[k], want[k]); i >= 0 {
						t.Fatalf("%d inputs, input %d row %d: MatMat %g, model %g", n, k, i, outs[k][i], want[k][i])
					}
				}
			}
		})
	}
}
