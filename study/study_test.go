package study

import (
	"context"
	"math"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// branin returns a study of Branin over its domain with the defaults.
func braninConfig(t *testing.T) Config {
	t.Helper()
	f, err := objectives.Lookup("branin")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Space: sp, Budget: 60, Seed: 1}
}

func TestBraninDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _ := objectives.Lookup("branin")
	cfg := braninConfig(t)
	cfg.Version = 1 // the fixed arm set of the README's first example
	s, err := Create(ctx, storage.NewMemory(), "branin", cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		return f.Value([]float64{tr.Params.Float("x1"), tr.Params.Float("x2")}), nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	best, ok := s.Best()
	if !ok {
		t.Fatal("no best trial")
	}
	// The best of the 1024 Sobol arms (README, docs/cli.md).
	if math.Abs(best.Value-0.486751) > 1e-6 {
		t.Errorf("best %v, want 0.486751", best.Value)
	}
	if n := len(s.Trials()); n != 60 {
		t.Errorf("%d trials, want 60", n)
	}
}
