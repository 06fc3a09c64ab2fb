//go:build !linux

package main

// memory_other.go: no start-up pages to hand back outside Linux (see memory_linux.go).

func releaseStartupPages() int64 { return 0 }
