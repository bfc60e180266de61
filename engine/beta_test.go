package engine

import (
	"math"
	"testing"

	"github.com/bkb-go/bkb/acquisition"
)

// TestHorizonBeta: the version 3 exploration is B max(1/4, min(1, 1.5 (1 -
// t/Budget))), and B without a budget (values computed by hand); "horizon:B" is stored with the budget at creation, which a
// process extending the budget does not change.
func TestHorizonBeta(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b      float64
		budget int
		t      int
		want   float64
	}{
		{2, 100, 0, 2},
		{2, 100, 25, 2},
		{2, 100, 34, 1.98}, // 2 * 1.5 * 0.66
		{2, 100, 50, 1.5},
		{2, 100, 80, 0.6},
		{2, 100, 90, 0.5}, // 2 * 1.5 * 0.1 = 0.3 < the floor 2/4
		{2, 100, 100, 0.5},
		{2, 100, 150, 0.5}, // past the budget (an extended study)
		{2, 0, 0, 2},
		{2, 0, 1000, 2},
		{0.5, 10, 4, 0.45},
	} {
		got := horizonBeta{B: c.b, Budget: c.budget}.Beta(acquisition.State{T: c.t})
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("horizon B=%g budget %d at t=%d: %g, want %g", c.b, c.budget, c.t, got, c.want)
		}
	}
	sp, err := Box(nil, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Space: sp, Budget: 40}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	b, gpScale, err := cfg.betaSchedule()
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := b.(horizonBeta); !ok || h != (horizonBeta{B: 2, Budget: 40}) || !gpScale || cfg.Beta != "horizon:2:40" {
		t.Errorf("default beta of a new study with budget 40: %q, %#v (GP scale %v)", cfg.Beta, b, gpScale)
	}
	// A process that extends the budget keeps the stored horizon.
	cfg.Budget = 100
	if b, _, _ := cfg.betaSchedule(); b != (horizonBeta{B: 2, Budget: 40}) {
		t.Errorf("extended study: %#v, want the horizon of 40", b)
	}
	open := Config{Space: sp}
	if err := open.Normalize(); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := open.betaSchedule(); open.Beta != "horizon:2" || b != (horizonBeta{B: 2}) || b.Beta(acquisition.State{T: 500}) != 2 {
		t.Errorf("study without a budget: %q, %#v", open.Beta, b)
	}
}
