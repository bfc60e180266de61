package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParallelTable runs the parallel-workers experiment of
// docs/parallel.md (evaluations of 200 ms, Hartmann 6, T=200, one worker
// and four, BKB with pending conditioning and batched BKB, 10 seeds: about
// 19 minutes) when BKB_PARALLEL=1, and prints its table.
func TestParallelTable(t *testing.T) {
	if os.Getenv("BKB_PARALLEL") == "" {
		t.Skip("set BKB_PARALLEL=1 to run the parallel-workers experiment (about 19 minutes)")
	}
	cfg := ParallelConfig{Function: "hartmann6", Budget: 200, Delay: 200 * time.Millisecond, Workers: 4, Seeds: 10, Policies: []string{"bkb", "bbkb"}}
	runs, err := RunParallel(context.Background(), cfg, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	printParallel(os.Stdout, SummarizeParallel(runs))
}

// TestParallelQuick is the quick version for iterating on the parallel
// path (BKB_PARALLEL_QUICK=1): 40 ms evaluations, 4 workers, 10 seeds,
// Hartmann 6, T=200. BKB_PARALLEL_SEEDS (first-last, default 1-10)
// picks the seeds, BKB_PARALLEL_POLICIES (comma-separated, default
// bkb) picks the policies; BKB_PARALLEL_REF (comma-separated simple
// regrets of the one-worker runs, seed order) skips the one-worker runs;
// BKB_PARALLEL_NOISE (fraction of the function's range) adds noise and
// BKB_PARALLEL_DELAY (e.g. 200ms) sets the evaluation time.
func TestParallelQuick(t *testing.T) {
	if os.Getenv("BKB_PARALLEL_QUICK") == "" {
		t.Skip("set BKB_PARALLEL_QUICK=1 to run the quick parallel-workers experiment")
	}
	cfg := ParallelConfig{Function: "hartmann6", Budget: 200, Delay: 40 * time.Millisecond, Workers: 4, Seeds: 10, Policies: []string{"bkb"}}
	if s := os.Getenv("BKB_PARALLEL_SEEDS"); s != "" {
		if _, err := fmt.Sscanf(s, "%d-%d", &cfg.FirstSeed, &cfg.Seeds); err != nil {
			t.Fatalf("BKB_PARALLEL_SEEDS %q: want first-last", s)
		}
		cfg.Seeds -= cfg.FirstSeed - 1
	}
	if p := os.Getenv("BKB_PARALLEL_POLICIES"); p != "" {
		cfg.Policies = strings.Split(p, ",")
	}
	if s := os.Getenv("BKB_PARALLEL_NOISE"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			t.Fatalf("BKB_PARALLEL_NOISE %q: want a fraction of the range >= 0", s)
		}
		cfg.NoiseFrac = v
	}
	if s := os.Getenv("BKB_PARALLEL_DELAY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			t.Fatalf("BKB_PARALLEL_DELAY %q: want a duration such as 200ms", s)
		}
		cfg.Delay = d
	}
	var ref []float64
	if s := os.Getenv("BKB_PARALLEL_REF"); s != "" {
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				t.Fatalf("BKB_PARALLEL_REF: %v", err)
			}
			ref = append(ref, v)
		}
		cfg.NoSequential = true
	}
	runs, err := RunParallel(context.Background(), cfg, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if ref == nil {
		printParallel(os.Stdout, SummarizeParallel(runs))
		return
	}
	printParallel(os.Stdout, SummarizeParallelRef(runs, ref))
}

// printParallel writes the summary as the table of docs/parallel.md, the
// speed-up relative to the policy's first row (one worker), and the per-seed simple regrets.
func printParallel(w io.Writer, sum []ParallelSummary) {
	fmt.Fprintln(w, "| policy | workers | wall time (median) | speed-up | policy ms/trial | avg batch | simple regret median [q1, q3] | seeds with regret >= 0.05 | Mann-Whitney U, p vs 1 worker |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	first := map[string]float64{} // wall time of the policy's first row
	for _, s := range sum {
		if _, ok := first[s.Policy]; !ok {
			first[s.Policy] = s.Seconds
		}
	}
	for _, s := range sum {
		test := "-"
		if s.P == s.P {
			test = fmt.Sprintf("U = %g, p = %.2f", s.U, s.P)
		}
		batch := "-"
		if s.Batch > 0 {
			batch = fmt.Sprintf("%.2f", s.Batch)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f s | %.2fx | %.2f | %s | %.3g [%.3g, %.3g] | %d/%d | %s |\n", s.Policy, s.Workers, s.Seconds,
			first[s.Policy]/s.Seconds, s.PolicyMS, batch, s.SimpleMedian, s.SimpleQ1, s.SimQ3, s.Basin, len(s.Simple), test)
	}
	for _, s := range sum {
		var v []string
		for _, x := range s.Simple {
			v = append(v, strconv.FormatFloat(x, 'g', 3, 64))
		}
		fmt.Fprintf(w, "%s, %d workers, simple regret per seed: %s\n", s.Policy, s.Workers, strings.Join(v, ", "))
	}
}

// TestSummarizeParallel: medians, basin counts and the rank test of each
// parallel group against its own policy's one-worker runs.
func TestSummarizeParallel(t *testing.T) {
	t.Parallel()
	var runs []ParallelRun
	for i := 0; i < 5; i++ {
		runs = append(runs,
			ParallelRun{Policy: "a", Workers: 1, Seconds: 10, Simple: 0.001 * float64(i+1)},
			ParallelRun{Policy: "a", Workers: 4, Seconds: 2.5, Simple: 0.12 + 0.001*float64(i)},
			ParallelRun{Policy: "b", Workers: 1, Seconds: 10, Simple: 0.5 + 0.01*float64(i)},
			ParallelRun{Policy: "b", Workers: 4, Seconds: 5, Simple: 0.5 + 0.01*float64(i) + 0.001})
	}
	sum := SummarizeParallel(runs)
	if len(sum) != 4 {
		t.Fatalf("%d groups, want 4", len(sum))
	}
	a1, a4, b4 := sum[0], sum[1], sum[3]
	if a1.Basin != 0 || a4.Basin != 5 || a1.SimpleMedian != 0.003 || a1.P == a1.P {
		t.Errorf("a, 1 worker: basin %d median %g p %g; a, 4: basin %d", a1.Basin, a1.SimpleMedian, a1.P, a4.Basin)
	}
	// a: complete separation, U = 25 of 25, exact p = 2/C(10,5).
	if a4.U != 25 || math.Abs(a4.P-2.0/252) > 1e-12 {
		t.Errorf("a, 4 workers: U = %g, p = %g, want 25, %g", a4.U, a4.P, 2.0/252)
	}
	// b: tested against b's own one-worker runs, interleaved: p large.
	if b4.P < 0.5 {
		t.Errorf("b, 4 workers: p = %g against its own reference, want >= 0.5", b4.P)
	}
}
