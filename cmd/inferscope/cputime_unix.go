//go:build unix

package main

// cputime_unix.go: the process's CPU time, for bench's CPU figures.

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
