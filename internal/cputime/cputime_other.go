//go:build !linux

package cputime

import "time"

// Thread returns false: the thread's CPU time is not available here.
func Thread() (time.Duration, bool) { return 0, false }

// PeakRSS returns 0: not available here.
func PeakRSS() int64 { return 0 }

// Process returns false: the process's CPU time is not available here.
func Process() (time.Duration, bool) { return 0, false }
