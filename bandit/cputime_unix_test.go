//go:build unix

package bandit

import "syscall"

// cpuSeconds returns the process's user+system CPU time: on a machine
// shared with other jobs it measures a benchmark's own work better than
// the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + 1e-6*float64(ru.Utime.Usec+ru.Stime.Usec)
}
