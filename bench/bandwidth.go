// Package bench holds the reproducible benchmarks of the toolkit: the
// scaling experiment of GP-UCB and BKB (time per step against t and the
// number of arms, rebuilt against incremental, with memory, dictionary
// and regret) and a memory-bandwidth probe, so that the cost of a BKB step
// can be read against the machine's limit: one pass over the A x m
// embedding.
package bench

import (
	"runtime"
	"sync"
	"time"
)

// MemoryBandwidth measures the sustained read bandwidth in bytes per second
// by summing a buffer of the given size (which should be well above the
// last-level cache) on `workers` goroutines, and returns the best of
// `repeats` passes. This is the access pattern of a BKB step: a streaming
// read of the embedding with a few flops per element.
func MemoryBandwidth(bytes, workers, repeats int) float64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := bytes / 8
	buf := make([]float64, n)
	for i := range buf {
		buf[i] = float64(i & 7)
	}
	best := 0.0
	sums := make([]float64, workers)
	for r := 0; r < max(repeats, 1); r++ {
		start := time.Now()
		var wg sync.WaitGroup
		chunk := (n + workers - 1) / workers
		for w := 0; w < workers; w++ {
			lo, hi := w*chunk, min((w+1)*chunk, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[w] = sum(buf[lo:hi])
			}()
		}
		wg.Wait()
		if bw := float64(n*8) / time.Since(start).Seconds(); bw > best {
			best = bw
		}
	}
	sink = sums[0]
	return best
}

var sink float64

func sum(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+3 < len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return s0 + s1 + s2 + s3
}
