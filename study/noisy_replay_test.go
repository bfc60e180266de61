package study

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestNoisyVersion7Replay: a noisy version 7 study, whose dictionary rule
// and warp switch with the fitted noise share, replays from its records
// with the same asks.
func TestNoisyVersion7Replay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _ := objectives.Lookup("branin")
	sp, _ := Box(nil, f.Lower, f.Upper)
	st := storage.NewMemory()
	s, err := Create(ctx, st, "r", Config{Space: sp, Budget: 70, Seed: 5, Version: 7})
	if err != nil {
		t.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(1, 1))
	runTrials(t, s, 69, func(tr *Trial) float64 { return f.Value(tr.X) + 30*noise.NormFloat64() }, false)
	if _, err := s.Ask(ctx); err != nil {
		t.Fatal(err)
	}
	if rho, ok := s.eng.NoiseShare(); !ok || rho <= engine.NoiseShareHeavy {
		t.Fatalf("noise share %v (fitted %v): the test's noise is not heavy", rho, ok)
	}
	r, err := Load(ctx, st, "r")
	if err != nil {
		t.Fatal(err)
	}
	r.Arms()
	if d := r.Info().Diverged; d != 0 {
		t.Errorf("replay diverged at %d asks", d)
	}
}
