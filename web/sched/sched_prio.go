package sched

// sched_prio.go: backlogged visitors' engine work runs on threads at a
// lower OS priority (see sched.go). A thread's priority cannot be raised
// again without privileges, so the work is handed to goroutines locked to
// threads that were lowered once and stay lowered; there are as many as
// ever ran such work at once (at most the fair queue's slots).

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// lowPrioNice is the nice value of the low-priority threads: a thread at
// nice 10 weighs about a tenth of one at 0, so whenever both are ready the
// other visitors' threads run first, and it still gets the cores nobody
// else wants.
const lowPrioNice = 10

// lowPrioWork is the hand-off to an idle low-priority goroutine.
var lowPrioWork = make(chan func())

// runLowPriority runs f on a low-priority thread and returns when it is
// done; a panic in f is re-raised here, on the caller's goroutine. Where
// thread priorities cannot be set it runs f on the caller's goroutine.
func runLowPriority(f func()) {
	if !threadPriorities {
		f()
		return
	}
	done := make(chan any, 1)
	job := func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("%v\n%s", p, debug.Stack())
				return
			}
			done <- nil
		}()
		f()
	}
	select {
	case lowPrioWork <- job: // an idle one takes it
	default:
		go lowPrioWorker(job) // all busy (or none yet): one more
	}
	if p := <-done; p != nil {
		panic(p)
	}
}

// lowPrioWorker lowers its thread's priority once, then runs jobs forever.
// The goroutine never unlocks its thread, so no other goroutine ever runs
// at the lowered priority.
func lowPrioWorker(first func()) {
	runtime.LockOSThread()
	lowerThreadPriority(lowPrioNice)
	first()
	for job := range lowPrioWork {
		job()
	}
}
