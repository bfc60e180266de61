//go:build !unix

package bench

import "time"

var cpuStart = time.Now()

// cpuSeconds falls back to wall time where getrusage is missing.
func cpuSeconds() float64 { return time.Since(cpuStart).Seconds() }
