//go:build unix

// Package cputime reads the process's CPU time, for benchmarks that report
// CPU figures beside wall-clock ones (one copy, not one per package).
package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time the process has used so far (0
// if the system does not say).
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
