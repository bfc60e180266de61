package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// TestUnwarpSticky: on Hartmann 6 with noise of sd 1% of its
// range (bkb bench's noise), the fits on warped values read the noise as heavy from about
// 180 trials on and the fits on the unwarped values that follow find noise
// well above the fit's floor; version 9 warps the values again at the next
// refit (the warp switched at every refit), version 10 keeps them
// unwarped for the rest of the study (rule unwarp_sticky). Noise-free
// (Hartmann 3, seed 3, the golden study, whose warped fit at t = 44 reads
// 6% noise and whose unwarped fit then sits at the floor), version 10 warps
// the values at the same fits as version 9 (its asks differ in the last
// digits from t = 44 on through rule noisy_legacy_core). The warped-heavy fits are found from the transform in
// use at each fit, not from FitResult.Warped, which version 9 does not set.
func TestUnwarpSticky(t *testing.T) {
	t.Parallel()
	h6, h3 := objectives.Hartmann6(), objectives.Hartmann3()
	for _, c := range []struct {
		f     *objectives.Function
		T     int
		seed  uint64
		sd    float64
		latch bool
	}{{h6, 260, 1, 0.01 * 3.3222368, true}, {h3, 60, 3, 0, false}} {
		var warps [2][]bool
		for k, version := range []int{9, 10} {
			sp, _ := Box(nil, c.f.Lower, c.f.Upper)
			s, err := newTestStudy(Config{Space: sp, Budget: c.T, Seed: c.seed, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			noise := rand.New(rand.NewPCG(c.seed, 0x6e6f697365)) // the benchmarks' noise stream
			latched, rewarped := false, 0
			for i := 0; i < c.T; i++ {
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
					if latched && warped {
						rewarped++
					}
					if !warped && n >= 2 && s.eng.fits[n-2].NoiseVariance > noiseFoundVariance && fr.NoiseVariance > noiseFoundVariance {
						if p := s.eng.fits[n-2]; fr.Observations >= warpDecisionPoints(s.eng.cfg.Init) && p.NoiseVariance/(p.NoiseVariance+p.SignalVariance) > noiseShareHeavy {
							latched = true
						}
					}
				}
				if err := s.Tell(tr.Number, c.f.Value(tr.X)+c.sd*noise.NormFloat64()); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s version %d: latched %v, warped again at %d refits", c.f, version, latched, rewarped)
			switch {
			case c.latch && !latched:
				t.Fatalf("%s version %d: no unwarped fit found noise after a heavy fit on warped values (the study does not exercise the rule)", c.f, version)
			case c.latch && version == 9 && rewarped == 0:
				t.Errorf("version 9: never warped again after the noise was found (want version 7's rule, which decides on the last fit)")
			case c.latch && version == 10 && rewarped > 0:
				t.Errorf("version 10: warped again at %d refits after the noise was found", rewarped)
			}
		}
		if !c.latch && !slices.Equal(warps[0], warps[1]) {
			t.Errorf("%s noise-free: the values warped at each fit %v in version 9, %v in version 10", c.f, warps[0], warps[1])
		}
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
