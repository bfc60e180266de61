package study

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestRunWorkers: with several workers every trial of the budget is
// evaluated once, never two trials at one point while both run (the
// policy conditions on pending trials), up to Workers at a time; for
// every policy including batched BKB.
func TestRunWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _ := objectives.Lookup("hartmann3")
	for _, policy := range []string{"bkb", "gp-ucb", "bbkb", "random"} {
		sp, _ := Box(nil, f.Lower, f.Upper)
		s, err := Create(ctx, storage.NewMemory(), "w", Config{Space: sp, Budget: 40, Seed: 5, Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		inFlight := map[string]bool{}
		var peak, now atomic.Int32
		err = s.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
			key := pointKey(tr.X)
			mu.Lock()
			if inFlight[key] && policy != "random" && policy != "bbkb" {
				t.Errorf("%s: point %v evaluated twice at once", policy, tr.X)
			}
			inFlight[key] = true
			mu.Unlock()
			if n := now.Add(1); n > peak.Load() {
				peak.Store(n)
			}
			v := f.Value(tr.X)
			now.Add(-1)
			mu.Lock()
			delete(inFlight, key)
			mu.Unlock()
			return v, nil
		}, RunOptions{Workers: 4})
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		trials := s.Trials()
		if len(trials) != 40 {
			t.Errorf("%s: %d trials, want 40", policy, len(trials))
		}
		for _, tr := range trials {
			if tr.State != Complete {
				t.Errorf("%s: trial %d is %s", policy, tr.Number, tr.State)
			}
		}
		if peak.Load() > 4 {
			t.Errorf("%s: %d evaluations at once, want at most 4", policy, peak.Load())
		}
	}
}

// TestLateWorker: a worker that joins a study late (a new process: Load
// replays the stored events) asks, when nothing is pending, exactly the
// points a single uninterrupted worker asks.
func TestLateWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _ := objectives.Lookup("hartmann3")
	sp, _ := Box(nil, f.Lower, f.Upper)
	cfg := Config{Space: sp, Budget: 30, Seed: 9, FitEvery: 10}
	obj := func(_ context.Context, tr *Trial) (float64, error) { return f.Value(tr.X), nil }
	single, err := Create(ctx, storage.NewMemory(), "one", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := single.Optimize(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
	st := storage.NewMemory()
	first, err := Create(ctx, st, "two", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Optimize(ctx, obj, 12); err != nil {
		t.Fatal(err)
	}
	late, err := Load(ctx, st, "two")
	if err != nil {
		t.Fatal(err)
	}
	if err := late.Optimize(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
	a, b := single.Trials(), late.Trials()
	if len(a) != len(b) {
		t.Fatalf("%d and %d trials", len(a), len(b))
	}
	for i := range a {
		if a[i].Arm != b[i].Arm {
			t.Errorf("trial %d: arm %d with a late worker, %d uninterrupted", i, b[i].Arm, a[i].Arm)
		}
	}
}
