package bench

import (
	"time"

	"github.com/bkb-go/bkb/internal/cputime"
)

var cpuStart = time.Now()

// cpuSeconds is the process's user plus system CPU time (internal/cputime),
// wall time since the package started where the system cannot tell.
func cpuSeconds() float64 {
	if d, ok := cputime.Process(); ok {
		return d.Seconds()
	}
	return time.Since(cpuStart).Seconds()
}
