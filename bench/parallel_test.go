package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestParallelTable runs the parallel-workers experiment of docs/scaling.md
// (evaluations of 200 ms, T=200, 1 and 4 workers, 10 seeds: about 9
// minutes) when BKB_PARALLEL=1, and prints its table.
func TestParallelTable(t *testing.T) {
	if os.Getenv("BKB_PARALLEL") == "" {
		t.Skip("set BKB_PARALLEL=1 to run the parallel-workers experiment (about 12 minutes)")
	}
	cfg := ParallelConfig{Function: "hartmann6", Budget: 200, Delay: 200 * time.Millisecond, Workers: 4, Seeds: 10, Policies: []string{"bkb"}}
	runs, err := RunParallel(context.Background(), cfg, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("| policy | workers | wall time (median) | speed-up | policy ms/trial | avg batch | simple regret median [q1, q3] |")
	fmt.Println("|---|---|---|---|---|---|---|")
	sum := SummarizeParallel(runs)
	for _, s := range sum {
		fmt.Printf("| %s | %d | %.1f s | %.2fx | %.2f | %.2f | %.3g [%.3g, %.3g] |\n", s.Policy, s.Workers, s.Seconds,
			sum[0].Seconds/s.Seconds, s.PolicyMS, s.Batch, s.SimpleMedian, s.SimpleQ1, s.SimQ3)
	}
}
