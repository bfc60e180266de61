package study

import (
	"context"
	"math"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestLocalStepNewton checks the local step against the closed form: on a
// quadratic (Booth, minimum 0 at (1, 3); the fit is exact) the first local
// step of a version 6 study lands on the minimizer, while a version 5
// study (the long-study engine without local steps) never asks it.
func TestLocalStepNewton(t *testing.T) {
	t.Parallel()
	f, _ := objectives.Lookup("booth")
	sp, _ := Box(nil, f.Lower, f.Upper)
	for _, v := range []int{5, 6} {
		ctx := context.Background()
		// Budget 36: local steps start at 12 completed evaluations.
		s, err := Create(ctx, storage.NewMemory(), "q", Config{Space: sp, Budget: 36, Seed: 2, Version: v})
		if err != nil {
			t.Fatal(err)
		}
		runTrials(t, s, 12, func(tr *Trial) float64 { return f.Value(tr.X) }, false)
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d := math.Hypot(tr.X[0]-1, tr.X[1]-3)
		switch {
		case v == 6 && d > 1e-6:
			t.Errorf("version 6: the local step asks %v, the minimizer is (1, 3)", tr.X)
		case v == 5 && d < 1e-3:
			t.Errorf("version 5 asks the minimizer %v: a local step without version 6", tr.X)
		}
	}
}
