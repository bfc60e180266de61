package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// TestTopKEqualsStableSort: topK's indices equal the first k of a stable
// sort by value, descending, with many ties.
func TestTopKEqualsStableSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n, k := rng.IntN(80), 1+rng.IntN(40)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(rng.IntN(10)) // ties
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(vals[b], vals[a]) })
		want = want[:min(k, n)]
		got, _ := topK(nil, nil, k, n, func(i int) float64 { return vals[i] })
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: got %v, want %v", n, k, got, want)
		}
	}
}

// TestRefitDrawsFromPreviousDictionary: in version 5 a refit's new
// posterior starts from the previous dictionary's points and then
// resamples, so the new DTC makes far fewer dictionary changes than there
// are observations; version 4 put every observed point into S first (the
// exact posterior, O((A + t) t^2) per refit) and keeps doing so to replay
// as written. Checked at every refit from 50 observations on of a 150-trial Branin
// study (earlier, the previous dictionary may hold every point).
func TestRefitDrawsFromPreviousDictionary(t *testing.T) {
	t.Parallel()
	f, err := objectives.Lookup("branin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version  int
		allPoint bool // every observed point entered S at each refit
	}{{4, true}, {5, false}} {
		space, err := Box(nil, f.Lower, f.Upper)
		if err != nil {
			t.Fatal(err)
		}
		// Warp none: on Branin version 6's warped values make S hold
		// nearly every point by 50 observations, which says nothing of the
		// draw.
		s, err := newTestStudy(Config{Space: space, Budget: 150, Seed: 3, Version: tc.version, Warp: WarpNone})
		if err != nil {
			t.Fatal(err)
		}
		refits := 0
		for i := 0; i < 150; i++ {
			fits := len(s.eng.fits)
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(s.eng.fits); n > fits && fits > 0 && s.eng.ref.dtc.Len() >= 50 {
				refits++
				obs := s.eng.ref.dtc.Len()
				chg := s.eng.ref.dtc.DictionaryChanges()
				if all := chg >= obs; all != tc.allPoint {
					t.Errorf("version %d, refit at %d observations: %d dictionary changes (dictionary %d); every point entered S: %v, want %v",
						tc.version, obs, chg, s.eng.ref.dtc.DictionarySize(), all, tc.allPoint)
				}
			}
			if err := s.Tell(tr.Number, f.Value(tr.X)); err != nil {
				t.Fatal(err)
			}
		}
		if refits < 3 {
			t.Errorf("version %d: %d refits in 150 trials, want at least 3", tc.version, refits)
		}
	}
}
