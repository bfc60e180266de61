package engine

import (
	"strings"
	"testing"
)

// TestVersion7KeepsSingleObjectiveRulesOut: from version 7 a study with
// several objectives or constraints gets neither the output warp nor the
// local Newton steps, which version 6 applied to the scalar it tracks (the
// first objective, or the feasible-region value); version 6 keeps both
// (its studies replay as written), and a version 7 one asking for a warp
// is refused with an error naming the reason.
func TestVersion7KeepsSingleObjectiveRulesOut(t *testing.T) {
	t.Parallel()
	sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	objective := func(x []float64) []float64 {
		return []float64{x[0]*x[0] + x[1], (1-x[0])*(1-x[0]) + x[1]}
	}
	for _, c := range []struct {
		version   int
		wantWarp  string
		wantLocal bool
	}{{6, WarpAuto, true}, {7, WarpNone, false}} {
		cfg := Config{Version: c.version, Space: sp, Budget: 45, Seed: 3, Directions: []Direction{Minimize, Minimize}}
		s, err := newTestStudy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.cfg.Warp; got != c.wantWarp {
			t.Errorf("version %d: warp %q, want %q", c.version, got, c.wantWarp)
		}
		// At 30 observations (past a third of the budget, a multiple of
		// localEvery) a local step is due in a study that takes them.
		for range 30 {
			a, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if err := s.TellOutcome(a.Number, 0, objective(a.X), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Ask(); err != nil {
			t.Fatal(err)
		}
		if n := len(s.eng.succ); n != 30 {
			t.Fatalf("version %d: %d observations, want 30", c.version, n)
		}
		if got := s.eng.localStepDue(); got != c.wantLocal {
			t.Errorf("version %d: local step due at 30 observations: %v, want %v", c.version, got, c.wantLocal)
		}
	}
	cfg := Config{Version: 7, Space: sp, Budget: 20, Directions: []Direction{Minimize, Minimize}, Warp: WarpLog}
	if _, err := newTestStudy(cfg); err == nil || !strings.Contains(err.Error(), "several objectives") {
		t.Fatalf("version 7, several objectives, warp log: error %v, want a refusal", err)
	}
}
