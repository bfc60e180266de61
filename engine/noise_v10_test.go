package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// TestUnwarpedForGood: the rule unwarp_sticky on the fits of Hartmann 6 at
// 1% noise (bkb bench's noise stream, seed 1, version 9, as logged in
// docs/long-studies.md): the values stay unwarped once, past 500
// observations, a fit on warped values read the noise as heavy and a later
// fit on unwarped values found noise; not before 500 observations, not for
// a fit at the noise floor (noise-free values), not in version 9, and not
// where the warp is not automatic.
func TestUnwarpedForGood(t *testing.T) {
	t.Parallel()
	fit := func(n int, warped bool, noise, signal float64) FitResult {
		return FitResult{Observations: n, Warped: warped, NoiseVariance: noise, SignalVariance: signal}
	}
	early := []FitResult{fit(183, true, 0.0417, 0.685), fit(192, false, 6.93e-4, 0.828), fit(219, true, 0.0668, 0.831), fit(250, false, 6.95e-4, 1.31)}
	late := append(slices.Clone(early), fit(877, true, 0.071, 1.14), fit(1002, false, 5.93e-4, 1.1))
	floor := append(slices.Clone(early), fit(877, true, 0.071, 1.14), fit(1002, false, 1e-6, 2.3))
	light := append(slices.Clone(early), fit(877, true, 0.044, 1.06), fit(1002, false, 5.93e-4, 1.1))
	unwarpedFirst := append(slices.Clone(early), fit(877, false, 5.93e-4, 1.1), fit(1002, true, 0.071, 1.14))
	for _, c := range []struct {
		name    string
		version int
		warp    string
		fits    []FitResult
		want    bool
	}{
		{"late pair", 10, WarpAuto, late, true},
		{"only before 500", 10, WarpAuto, early, false},
		{"unwarped fit at the floor", 10, WarpAuto, floor, false},
		{"warped fit light", 10, WarpAuto, light, false},
		{"unwarped fit before the heavy one", 10, WarpAuto, unwarpedFirst, false},
		{"version 9", 9, WarpAuto, late, false},
		{"warp log", 10, WarpLog, late, false},
	} {
		r := &refiner{cfg: &Config{Version: c.version, Warp: c.warp}}
		if got := r.unwarpedForGood(c.fits); got != c.want {
			t.Errorf("%s: unwarpedForGood = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUnwarpStickyNoiseFree: on noise-free Hartmann 3 (seed 3, the golden
// study), whose fit on warped values at t = 44 reads 6% noise and whose
// unwarped fit then sits at the noise floor, version 10 warps the values at
// the same fits as version 9 (its asks differ in the last digits from t =
// 44 on, through rule noisy_legacy_core), and sets FitResult.Warped to the
// transform in use at each fit.
func TestUnwarpStickyNoiseFree(t *testing.T) {
	t.Parallel()
	f := objectives.Hartmann3()
	sp, _ := Box(nil, f.Lower, f.Upper)
	var warps [2][]bool
	heavy := false
	for k, version := range []int{9, 10} {
		s, err := newTestStudy(Config{Space: sp, Budget: 60, Seed: 3, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 60; i++ {
			fits := len(s.eng.fits)
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(s.eng.fits); n > fits {
				fr := s.eng.fits[n-1]
				warped := s.eng.ref.warp.Active()
				warps[k] = append(warps[k], warped)
				if version == 10 && fr.Warped != warped {
					t.Fatalf("version 10: fit at %d says warped=%v, the transform in use says %v", fr.Observations, fr.Warped, warped)
				}
				heavy = heavy || warped && fr.NoiseVariance/(fr.NoiseVariance+fr.SignalVariance) > noiseShareHeavy
			}
			if err := s.Tell(tr.Number, f.Value(tr.X)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !heavy {
		t.Fatal("no fit on warped values read the noise as heavy (the study does not exercise the rule)")
	}
	if !slices.Equal(warps[0], warps[1]) {
		t.Errorf("the values warped at each fit %v in version 9, %v in version 10", warps[0], warps[1])
	}
}

// TestNoisyLegacyCore: under heavy noise (Branin, sd 30, about 10% of its
// range), while the dictionary follows version 4's rule, version 10 builds
// the posterior with version 4's exact core, which never refuses a point
// as near-dependent, and version 9 with version 5's, which refuses some;
// outside that rule (a light fit, or more than noisyDictionaryMax
// observations) both use version 5's.
func TestNoisyLegacyCore(t *testing.T) {
	t.Parallel()
	f, _ := objectives.Lookup("branin")
	sp, _ := Box(nil, f.Lower, f.Upper)
	for _, version := range []int{9, 10} {
		s, err := newTestStudy(Config{Space: sp, Budget: 120, Seed: 4, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		noise := rand.New(rand.NewPCG(7, 9))
		heavy, legacy, dropped := 0, 0, 0
		for i := 0; i < 120; i++ {
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			r := s.eng.ref
			if r.dtc != nil {
				want := version == 10 && r.noisyDictionary(r.dtc.Len())
				// The core is chosen at the last rebuild, from the fit
				// then; the fit is the last one.
				if r.dtc.LegacyCore() {
					legacy++
				}
				if r.dtc.LegacyCore() != want && r.dtc.Len() == len(s.eng.succ) && r.lastFit == len(s.eng.succ) {
					t.Errorf("version %d at %d observations: legacy core %v, want %v", version, r.dtc.Len(), r.dtc.LegacyCore(), want)
				}
				if want {
					heavy++
				}
				dropped += r.dtc.Dropped()
			}
			if err := s.Tell(tr.Number, f.Value(tr.X)+30*noise.NormFloat64()); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("version %d: legacy core at %d asks, heavy %d, refused points counted %d", version, legacy, heavy, dropped)
		switch {
		case version == 10 && (heavy < 20 || legacy < heavy):
			t.Errorf("version 10: legacy core at %d asks of %d under heavy noise", legacy, heavy)
		case version == 9 && legacy > 0:
			t.Errorf("version 9: legacy core at %d asks", legacy)
		}
	}
}
