package sched

// sched_prio_linux.go: Linux sets a nice value per thread.

import "syscall"

const threadPriorities = true

// lowerThreadPriority sets the calling thread's nice value (raising it is
// always allowed); on failure the thread keeps its priority, which is
// only slower for the others, never wrong.
func lowerThreadPriority(nice int) {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}
