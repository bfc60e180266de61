package main

import "github.com/bkb-go/bkb/internal/cputime"

// cpuSeconds is the process's user and system CPU time (0 where the
// system cannot tell).
func cpuSeconds() float64 {
	d, _ := cputime.Process()
	return d.Seconds()
}
