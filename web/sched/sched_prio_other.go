//go:build !linux

package sched

// sched_prio_other.go: elsewhere a nice value is the whole process's, so
// backlogged work runs at the usual priority (the slots and the engine's
// worker cap still apply).

const threadPriorities = false

func lowerThreadPriority(int) {}
