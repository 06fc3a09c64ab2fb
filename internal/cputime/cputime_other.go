//go:build !unix

// Package cputime reads the process's CPU time, for benchmarks that report
// CPU figures beside wall-clock ones (one copy, not one per package).
package cputime

import "time"

// Process is 0 where the process's CPU time is not read (CPU figures are
// then 0).
func Process() time.Duration { return 0 }
