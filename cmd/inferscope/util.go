package main

// util.go: small helpers shared by the commands.

import (
	"encoding/binary"
	"math"
	"runtime"
)

func runtimeCPUs() int { return runtime.GOMAXPROCS(0) }

func appendI32(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

func appendF32(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}
