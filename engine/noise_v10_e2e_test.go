//go:build e2e

package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// TestUnwarpStickyLong (end-to-end tier: 1,150 trials of Hartmann 6 twice,
// about 40 s of CPU): at 1% noise on bkb bench's noise stream (seed 1), version 9 warps
// the values again after the pair of fits that version 10's rule
// unwarp_sticky reads (a heavy fit on warped values at t = 877, noise found
// unwarped at 1,002), and version 10 keeps them unwarped.
func TestUnwarpStickyLong(t *testing.T) {
	t.Parallel()
	f := objectives.Hartmann6()
	sp, _ := Box(nil, f.Lower, f.Upper)
	const T, sd = 1150, 0.01 * 3.3223654732538481 // 1% of the range (bench.Range)
	for _, version := range []int{9, 10} {
		s, err := newTestStudy(Config{Space: sp, Budget: T, Seed: 1, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		noise := rand.New(rand.NewPCG(1, 0x6e6f697365)) // bkb bench's noise stream
		r := &refiner{cfg: &Config{Version: 10, Warp: WarpAuto}}
		latched, rewarped := false, 0
		var marked []FitResult
		for i := 0; i < T; i++ {
			fits := len(s.eng.fits)
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(s.eng.fits); n > fits {
				if latched && s.eng.ref.warp.Active() {
					rewarped++
				}
				// Version 9 does not set Warped: read it from the
				// transform in use, as version 10 records it.
				fr := s.eng.fits[n-1]
				fr.Warped = s.eng.ref.warp.Active()
				marked = append(marked, fr)
				latched = latched || r.unwarpedForGood(marked)
			}
			if err := s.Tell(tr.Number, f.Value(tr.X)+sd*noise.NormFloat64()); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("version %d: rule's pair of fits seen %v, warped again at %d refits after it", version, latched, rewarped)
		switch {
		case !latched:
			t.Fatalf("version %d: the rule's pair of fits never came (the study does not exercise the rule)", version)
		case version == 9 && rewarped == 0:
			t.Errorf("version 9: never warped again after the pair (want version 7's rule, which decides on the last fit)")
		case version == 10 && rewarped > 0:
			t.Errorf("version 10: warped again at %d refits after the pair", rewarped)
		}
	}
}
