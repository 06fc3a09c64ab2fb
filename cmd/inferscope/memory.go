package main

// memory.go: the CLI's resident memory: a heap kept near its live data for one-shot model commands.

import (
	"os"
	"runtime/debug"
)

// leanGCPercent is the GC target of a one-shot model command (generate,
// trace, tokenize): the heap may grow 25% above the live data (Go's default
// is 100%). Their live heap is the tokenizer and the KV cache; each decode
// step leaves a little garbage, so the extra collections cost well under 1%
// of a run, and the heap stays a few MB smaller.
const leanGCPercent = 25

// leanGC lowers the GC target for a one-shot command unless GOGC is set,
// and returns a func that restores the previous target.
func leanGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(leanGCPercent)
	return func() { debug.SetGCPercent(old) }
}
