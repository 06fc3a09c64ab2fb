//go:build amd64 && !purego

package enginebench

// bandwidth_amd64.go: the probe's vector read loops (bandwidth_amd64.s), chosen by CPU features.

import "golang.org/x/sys/cpu"

//go:noescape
func readSumAVX512(p *uint64, n int) uint64

//go:noescape
func readSumAVX2(p *uint64, n int) uint64

func init() {
	switch {
	case cpu.X86.HasAVX512F:
		readSumVec, readProbeName = readSumAVX512, "avx512"
	case cpu.X86.HasAVX2:
		readSumVec, readProbeName = readSumAVX2, "avx2"
	}
}
