package gp

import (
	"runtime"
	"sync"
)

// rowPass is a pass over a range of rows. Hot passes are structs kept
// inside the posterior and handed over as pointers, so that starting a
// pass allocates nothing (a closure sent to another goroutine would
// escape to the heap on every step).
type rowPass interface {
	run(lo, hi int)
}

type funcPass func(lo, hi int)

func (f funcPass) run(lo, hi int) { f(lo, hi) }

type job struct {
	p      rowPass
	lo, hi int
	wg     *sync.WaitGroup
}

// workers is a process-wide pool of GOMAXPROCS-1 goroutines started on
// first use; the calling goroutine runs the first chunk itself.
var workers struct {
	once sync.Once
	jobs chan job
}

func startWorkers() {
	n := runtime.GOMAXPROCS(0) - 1
	workers.jobs = make(chan job, 4*n+4)
	for i := 0; i < n; i++ {
		go func() {
			for j := range workers.jobs {
				j.p.run(j.lo, j.hi)
				j.wg.Done()
			}
		}()
	}
}

// parallelMin is the number of rows below which a pass runs on one
// goroutine: under it, handing work over costs more than the pass.
const parallelMin = 2048

// runRows runs p over [0, n) in contiguous chunks, one per CPU, using wg
// (owned by the caller, reused across calls) to wait for them.
func runRows(n int, p rowPass, wg *sync.WaitGroup) {
	procs := runtime.GOMAXPROCS(0)
	if n < parallelMin || procs == 1 {
		p.run(0, n)
		return
	}
	workers.once.Do(startWorkers)
	procs = min(procs, n/1024)
	chunk := (n + procs - 1) / procs
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		workers.jobs <- job{p: p, lo: lo, hi: min(lo+chunk, n), wg: wg}
	}
	p.run(0, min(chunk, n))
	wg.Wait()
}

// parallelFor runs f over [0, n) in parallel chunks. For passes that are
// not per-step hot paths (rebuilds, dictionary changes), where a closure's
// allocation does not matter.
func parallelFor(n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	runRows(n, funcPass(f), &wg)
}
