//go:build amd64 && !purego

package engine

// kvprec_amd64.go: the SIMD widening of a 16-bit KV cache's rows
// (kvprec_amd64.s) behind the same bounds as the pure-Go one.

import "golang.org/x/sys/cpu"

//go:noescape
func kvWidenAVX512(dst *float32, src *uint16, rows, n, lds, bf int)

//go:noescape
func kvWidenAVX2(dst *float32, src *uint16, rows, n, lds, bf int)

func init() {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW:
		kvWiden = kvWidenAVX512w
	case cpu.X86.HasAVX2 && cpu.X86.HasF16C:
		kvWiden = kvWidenAVX2w
	}
}

func checkKVWiden(nd, ns, rows, n, lds int) {
	if rows <= 0 || n <= 0 || lds < n || nd < rows*n || ns < (rows-1)*lds+n {
		panic("engine: kv widen: bad shape")
	}
}

func kvWidenAVX512w(dst []float32, src []uint16, rows, n, lds int, p KVPrec) {
	if rows == 0 || n == 0 {
		return
	}
	checkKVWiden(len(dst), len(src), rows, n, lds)
	kvWidenAVX512(&dst[0], &src[0], rows, n, lds, bfFlag(p))
}

func kvWidenAVX2w(dst []float32, src []uint16, rows, n, lds int, p KVPrec) {
	if rows == 0 || n == 0 {
		return
	}
	checkKVWiden(len(dst), len(src), rows, n, lds)
	if n >= 8 {
		kvWidenAVX2(&dst[0], &src[0], rows, n, lds, bfFlag(p))
	}
	if t := n &^ 7; t < n { // each row's last n%8 values
		for r := range rows {
			kvWidenGo(dst[r*n+t:], src[r*lds+t:], 1, n-t, n-t, p)
		}
	}
}

func bfFlag(p KVPrec) int {
	if p == KVBF16 {
		return 1
	}
	return 0
}
