//go:build linux

// Package cputime reads CPU times, so that a benchmark is not inflated by
// other processes sharing the machine as its wall-clock time is.
package cputime

import (
	"syscall"
	"time"
)

// Thread returns the CPU time (user + system) consumed so far by the
// calling OS thread; false where the system cannot tell.
func Thread() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// Process returns the CPU time (user + system) consumed so far by the
// whole process: every goroutine and the garbage collector.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// PeakRSS returns the process's peak resident set size in bytes.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}
