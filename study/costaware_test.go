package study

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// costProblem is Branin with an evaluation time of exp(slope (u - 1/2))
// seconds, u its first coordinate scaled to [0, 1]: a cost that varies
// e^|slope|-fold across the box.
func costProblem(t *testing.T, slope float64) (Space, func(x []float64) (value, seconds float64), float64) {
	t.Helper()
	f, err := objectives.Lookup("branin")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Box([]string{"x1", "x2"}, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	return sp, func(x []float64) (float64, float64) {
		u := (x[0] - f.Lower[0]) / (f.Upper[0] - f.Lower[0])
		return f.Value(x), math.Exp(slope * (u - 0.5))
	}, f.MinValue
}

// runCosted asks and tells n trials of s, each with its value and
// seconds from eval, and returns the points asked.
func runCosted(t *testing.T, s *Study, n int, eval func(x []float64) (float64, float64)) [][]float64 {
	t.Helper()
	ctx := context.Background()
	var xs [][]float64
	for range n {
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		y, secs := eval(tr.X)
		if err := s.TellOutcome(ctx, tr.Number, Outcome{Value: y, Seconds: secs}); err != nil {
			t.Fatal(err)
		}
		xs = append(xs, tr.X)
	}
	return xs
}

// interruptedRun runs a journal study of cfg for k trials of eval, saves
// its snapshot, and runs the rest of its budget in the next process, which
// loads it (its snapshot first removed when lost); it returns every asked
// point.
func interruptedRun(t *testing.T, cfg Config, k int, lost bool, eval func(x []float64) (float64, float64)) [][]float64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Create(context.Background(), st, "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := runCosted(t, first, k, eval)
	forceSnapshot(first)
	return append(got, runCosted(t, loadAgain(t, path, lost, Options{}), cfg.Budget-k, eval)...)
}

// TestCostAwareResume: a cost-aware study reads the seconds from its
// records, so a process that loads it (from its snapshot, or replaying
// every record when the snapshot is lost) asks the uninterrupted run's
// points bit for bit; and those points are not the plain policy's (the
// costs were weighed).
func TestCostAwareResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, eval, _ := costProblem(t, 4)
	const budget, k = 36, 18
	cfg := Config{Space: sp, Seed: 3, Budget: budget, CostAware: true}
	ref, err := Create(ctx, storage.NewMemory(), "ref", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := runCosted(t, ref, budget, eval)
	plainCfg := cfg
	plainCfg.CostAware = false
	plain, err := Create(ctx, storage.NewMemory(), "plain", plainCfg)
	if err != nil {
		t.Fatal(err)
	}
	if slices.EqualFunc(want, runCosted(t, plain, budget, eval), slices.Equal) {
		t.Fatal("the cost-aware run asked the plain policy's points: no cost was weighed")
	}
	for _, lost := range []bool{false, true} {
		got := interruptedRun(t, cfg, k, lost, eval)
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("snapshot lost %v: trial %d asked %v, the uninterrupted run %v", lost, i, got[i], want[i])
			}
		}
	}
}

// TestCostAwarePlainWhileCostsAlike: while the seconds vary less than
// 4-fold, or every evaluation takes less than 0.1 s (timing noise), a
// cost-aware study asks the plain policy's points bit for bit.
func TestCostAwarePlainWhileCostsAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, eval, _ := costProblem(t, 0)
	for _, c := range []struct {
		name    string
		seconds func(x []float64) float64
	}{
		{"2 s each", func([]float64) float64 { return 2 }},
		{"1-3.5 s", func(x []float64) float64 { return 1 + 2.5*(x[0]+5)/15 }},
		{"1 us-50 ms", func(x []float64) float64 { return 1e-6 * math.Exp(10.8*(x[0]+5)/15) }},
	} {
		timed := func(x []float64) (float64, float64) { y, _ := eval(x); return y, c.seconds(x) }
		var runs [2][][]float64
		for i, aware := range []bool{false, true} {
			s, err := Create(ctx, storage.NewMemory(), "s", Config{Space: sp, Seed: 5, Budget: 30, CostAware: aware})
			if err != nil {
				t.Fatal(err)
			}
			runs[i] = runCosted(t, s, 30, timed)
		}
		if !slices.EqualFunc(runs[0], runs[1], slices.Equal) {
			t.Errorf("%s: the cost-aware study asked other points than the plain one", c.name)
		}
	}
}

// TestCostAwareSavesSeconds: on Branin with a 55-fold cost gradient along
// its first coordinate, either way, a cost-aware study spends at most
// 85% of the plain policy's seconds over 6 seeds of 40 trials, and its
// median simple regret stays below 1e-3 (the plain policy's is 4e-5).
// Branin has minima at both ends of that coordinate, so the seconds saved
// are not paid for in regret.
func TestCostAwareSavesSeconds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, slope := range []float64{4, -4} {
		sp, eval, fmin := costProblem(t, slope)
		var total [2]float64
		var regrets [2][]float64
		for i, aware := range []bool{false, true} {
			for seed := uint64(1); seed <= 6; seed++ {
				s, err := Create(ctx, storage.NewMemory(), "s", Config{Space: sp, Seed: seed, Budget: 40, CostAware: aware})
				if err != nil {
					t.Fatal(err)
				}
				best := math.Inf(1)
				for _, x := range runCosted(t, s, 40, eval) {
					y, secs := eval(x)
					best, total[i] = math.Min(best, y), total[i]+secs
				}
				regrets[i] = append(regrets[i], best-fmin)
			}
		}
		slices.Sort(regrets[1])
		med := (regrets[1][2] + regrets[1][3]) / 2
		t.Logf("slope %+g: seconds %.1f plain, %.1f cost-aware; median regret of the cost-aware runs %.2g", slope, total[0], total[1], med)
		if total[1] > 0.85*total[0] {
			t.Errorf("slope %+g: the cost-aware runs took %.1f s, the plain ones %.1f s: want at most 85%%", slope, total[1], total[0])
		}
		if med > 1e-3 {
			t.Errorf("slope %+g: the cost-aware runs' median regret is %.3g, want <= 1e-3", slope, med)
		}
	}
}
