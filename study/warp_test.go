package study

import (
	"context"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestWarpReplay runs warped studies (growing candidates, and a fixed
// arm set) on Goldstein-Price, then reopens each from its records: the
// replay must ask the same next point and report the same transform.
func TestWarpReplay(t *testing.T) {
	t.Parallel()
	f, _ := objectives.Lookup("goldsteinprice")
	sp, _ := Box(nil, f.Lower, f.Upper)
	for _, cfg := range []Config{
		{Space: sp, Budget: 45, Seed: 3, Version: LatestVersion},
		{Space: sp, Budget: 45, Seed: 3, Warp: WarpLog, Candidates: CandidatesFixed, Policy: "gp-ucb"},
	} {
		ctx := context.Background()
		st := storage.NewMemory()
		s, err := Create(ctx, st, "w", cfg)
		if err != nil {
			t.Fatal(err)
		}
		runTrials(t, s, 44, func(tr *Trial) float64 { return f.Value(tr.X) }, false)
		if _, err := s.Ask(ctx); err != nil {
			t.Fatal(err)
		}
		info := s.Info()
		if info.Warp == nil || !info.Warp.Active() {
			t.Fatalf("%s: no warp after 44 trials: %+v", cfg.Candidates, info.Warp)
		}
		r, err := Load(ctx, st, "w")
		if err != nil {
			t.Fatal(err)
		}
		// The reopened study replays the 45 asks (the last one pending)
		// and must find the same arms.
		r.Arms()
		ri := r.Info()
		if ri.Diverged != 0 || ri.Warp == nil || *ri.Warp != *info.Warp {
			t.Errorf("%s: replay diverged %d times, warp %+v, want %+v", cfg.Candidates, ri.Diverged, ri.Warp, info.Warp)
		}
	}
}

// TestWarpDirection: maximizing -f asks the same points as minimizing f
// (the warp and the local steps work on costs either way).
func TestWarpDirection(t *testing.T) {
	t.Parallel()
	f, _ := objectives.Lookup("goldsteinprice")
	sp, _ := Box(nil, f.Lower, f.Upper)
	var pts [2][][]float64
	for i, dir := range []Direction{Minimize, Maximize} {
		s, err := Create(context.Background(), storage.NewMemory(), "d", Config{Space: sp, Budget: 40, Seed: 5, Version: LatestVersion, Direction: dir})
		if err != nil {
			t.Fatal(err)
		}
		sign := 1.0
		if dir == Maximize {
			sign = -1
		}
		for _, tr := range runTrials(t, s, 40, func(tr *Trial) float64 { return sign * f.Value(tr.X) }, false) {
			pts[i] = append(pts[i], tr.X)
		}
		if w := s.Info().Warp; w == nil || !w.Active() {
			t.Fatalf("%s: not warped", dir)
		}
	}
	for k := range pts[0] {
		if !samePoint(pts[0][k], pts[1][k]) {
			t.Fatalf("trial %d: minimize asks %v, maximize -f asks %v", k, pts[0][k], pts[1][k])
		}
	}
}
