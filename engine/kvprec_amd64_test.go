//go:build amd64 && !purego

package engine

// kvprec_amd64_test.go: the AVX2 (F16C) widening, which a machine with
// AVX-512 does not pick, gives the pure-Go bits too.

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestKVWidenAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasF16C {
		t.Skip("no AVX2/F16C")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []KVPrec{KVF16, KVBF16} {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 64, 100} {
			for _, rows := range []int{1, 3} {
				lds := n + 3
				src := make([]uint16, (rows-1)*lds+n)
				for i := range src {
					src[i] = uint16(r.Uint32())
				}
				want, got := make([]float32, rows*n+2), make([]float32, rows*n+2)
				kvWidenGo(want, src, rows, n, lds, p)
				kvWidenAVX2w(got, src, rows, n, lds, p)
				if i := bitsEqual(got, want); i >= 0 {
					t.Fatalf("%s n %d rows %d: [%d] = %v, want %v", p, n, rows, i, got[i], want[i])
				}
			}
		}
	}
}
