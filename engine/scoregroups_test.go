package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// TestScoringInGroupsSamePoints: the candidates scored in groups
// (scoreBatch, gp.DTC.PredictBatch) give the points asked one at a time
// gave, bit for bit: on Hartmann 3, noise-free and noisy, with three
// trials pending at every ask (the pending points' own path near them),
// the current version and version 4 (the legacy core). Not parallel: it
// switches the package's scoreInGroups.
func TestScoringInGroupsSamePoints(t *testing.T) {
	f, err := objectives.Lookup("hartmann3")
	if err != nil {
		t.Fatal(err)
	}
	space, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	run := func(version int, noise float64, groups bool) [][]float64 {
		scoreInGroups = groups
		defer func() { scoreInGroups = true }()
		s, err := newTestStudy(Config{Space: space, Budget: 60, Seed: 5, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var pts [][]float64
		var pending []*testTrial
		for len(pts) < s.cfg.Budget {
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			pts = append(pts, tr.X)
			pending = append(pending, tr)
			if len(pending) < 3 && len(pts) < s.cfg.Budget {
				continue
			}
			// Tell the oldest: three stay pending at the next ask.
			old := pending[0]
			pending = pending[1:]
			if err := s.Tell(old.Number, f.Value(old.X)+noise*rng.NormFloat64()); err != nil {
				t.Fatal(err)
			}
		}
		return pts
	}
	for _, tc := range []struct {
		version int
		noise   float64
	}{{CurrentVersion, 0}, {CurrentVersion, 0.3}, {4, 0}} {
		with, without := run(tc.version, tc.noise, true), run(tc.version, tc.noise, false)
		for i := range with {
			if !slices.EqualFunc(with[i], without[i], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
				t.Fatalf("version %d, noise %v: trial %d at %v in groups, %v one at a time", tc.version, tc.noise, i, with[i], without[i])
			}
		}
	}
}
