package study

import (
	"context"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestVersion7KeepsSingleObjectiveRulesOut: from version 7 a study with
// several objectives or constraints gets neither the output warp nor the
// local Newton steps, which version 6 applied to the scalar it tracks (the
// first objective, or the feasible-region value); version 6 keeps both
// (its studies replay as written), and a version 7 one asking for a warp
// is refused with an error naming the reason.
func TestVersion7KeepsSingleObjectiveRulesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	objective := func(_ context.Context, tr *Trial) (float64, error) {
		x := tr.X
		v := []float64{x[0]*x[0] + x[1], (1-x[0])*(1-x[0]) + x[1]}
		tr.SetValues(v...)
		return v[0], nil
	}
	for _, c := range []struct {
		version   int
		wantWarp  string
		wantLocal bool
	}{{6, WarpAuto, true}, {7, WarpNone, false}} {
		cfg := Config{Version: c.version, Space: sp, Budget: 45, Seed: 3, Directions: []Direction{Minimize, Minimize}}
		s, err := Create(ctx, storage.NewMemory(), "mo", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Config().Warp; got != c.wantWarp {
			t.Errorf("version %d: warp %q, want %q", c.version, got, c.wantWarp)
		}
		// At 30 observations (past a third of the budget, a multiple of
		// localEvery) a local step is due in a study that takes them.
		if err := s.Optimize(ctx, objective, 30); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ask(ctx); err != nil {
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
	if _, err := Create(ctx, storage.NewMemory(), "mo", cfg); err == nil || !strings.Contains(err.Error(), "several objectives") {
		t.Fatalf("version 7, several objectives, warp log: error %v, want a refusal", err)
	}
}
