package engine

// inout_test.go: [in][out] matrices: a batch's rows equal, bit for bit, each row's lone decode step, on every kernel set.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestInOutBatchRowsExact runs [in][out] jobs (a fused matrix's views with
// biases, and a lone matrix whose output count is not a multiple of 16)
// on batches of several sizes, as a BatchState does (2100 inputs: several
// blocks of input rows in the batched tiles), and checks every row
// against the same row run alone, bit for bit, and against float64 sums.
func TestInOutBatchRowsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, ks := range kernelSets(t) {
		for _, sh := range []struct{ in, out, views int }{{64, 96, 3}, {72, 100, 1}, {48, 40, 2}, {2100, 96, 2}} {
			for _, B := range []int{2, 5, 8, 9, 12, 13, 20, 21, 32} {
				name := fmt.Sprintf("%s/%dx%d*%d/B%d", ks.name, sh.in, sh.out, sh.views, B)
				old := useKernels(ks)
				ld := sh.out * sh.views
				data := randVec(r, sh.in*ld)
				var jobs, alone []linJob
				x := randVec(r, B*sh.in)
				outs := make([][]float32, sh.views)
				for v := range sh.views {
					w := &Mat{Rows: sh.out, Cols: sh.in, InOut: true, Ld: ld, Off: v * sh.out, F32: data}
					outs[v] = make([]float32, B*sh.out)
					jobs = append(jobs, linJob{outs[v], w, randVec(r, sh.out)})
				}
				a := &acts{decodeRows: true}
				a.linear(x, B, jobs...)
				for s := 0; s < B; s++ {
					alone = alone[:0]
					one := make([][]float32, sh.views)
					for v, j := range jobs {
						one[v] = make([]float32, sh.out)
						alone = append(alone, linJob{one[v], j.w, j.bias})
					}
					(&acts{}).linear(x[s*sh.in:(s+1)*sh.in], 1, alone...)
					for v := range sh.views {
						want := refLinear(x[s*sh.in:(s+1)*sh.in], 1, jobs[v].w, jobs[v].bias)
						for o := 0; o < sh.out; o++ {
							got := outs[v][s*sh.out+o]
							if math.Float32bits(got) != math.Float32bits(one[v][o]) {
								t.Fatalf("%s: seq %d view %d out %d: batched %g, alone %g", name, s, v, o, got, one[v][o])
							}
							if d := math.Abs(float64(got) - want[o]); d > 1e-5*(1+math.Sqrt(float64(sh.in))) {
								t.Fatalf("%s: seq %d view %d out %d: %g, want %g", name, s, v, o, got, want[o])
							}
						}
					}
				}
				useKernels(old)
			}
		}
	}
}

// TestPackBand32: the AVX-512 band copy (where the CPU has it) puts each
// 32-float piece of a row's band where the Go copy puts it, whatever the
// panel count and stride, and writes nothing between the pieces.
func TestPackBand32(t *testing.T) {
	if packBand32 == nil {
		t.Skip("no band-copy kernel on this machine/build: linearInOut copies with Go")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ np, dstride int }{{1, 32}, {2, 32}, {3, 64}, {7, 32 * 5}, {24, 32 * 9}} {
		src := randVec(r, 32*tc.np+5)
		got := make([]float32, (tc.np-1)*tc.dstride+32+7)
		want := make([]float32, len(got))
		for i := range got {
			got[i], want[i] = -1, -1
		}
		for p := range tc.np {
			copy(want[p*tc.dstride:p*tc.dstride+32], src[32*p:32*p+32])
		}
		packBand32(got, src, tc.np, tc.dstride, 4*len(src))
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("np %d stride %d: dst[%d] = %g, want %g", tc.np, tc.dstride, i, got[i], want[i])
			}
		}
	}
}
