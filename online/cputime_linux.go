//go:build linux

package online

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU returns the CPU time (user + system) consumed so far by the
// calling OS thread, so that a pass timed on a locked thread is not
// inflated by other processes sharing the machine.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

func lockThread()   { runtime.LockOSThread() }
func unlockThread() { runtime.UnlockOSThread() }

// processCPU returns the CPU time consumed so far by the whole process:
// the relevance fits call gonum's BLAS, which runs large products on
// other threads.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
