package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// TestDropNearDependent: with SetDropNearDependent a run whose points
// cluster (near-duplicates 1e-7 length scales apart, a dense cluster) and
// whose S would take every observed point (qbar = 1e9) changes S
// incrementally only (no rebuild caused by a near-dependent point), drops
// some points, and its posterior is the exact DTC posterior on the S it
// kept (1,024-bit reference, 1e-8) and within 1% of the noise standard
// deviation sqrt(lambda) of the exact GP on all the data (GP scale: what
// a dropped point would have added is bounded by its squared pivot, below
// 1.5e-8 k(x,x); measured 8.7e-7 to 3.1e-5). Without it the same run
// rebuilds on every change once S holds a near-dependent point.
func TestDropNearDependent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		l      float64
		lambda float64
	}{
		{"l=0.3 lambda=1e-4", 0.3, 1e-4},
		{"l=0.3 lambda=1e-2", 0.3, 1e-2},
		{"l=1 lambda=1e-3", 1, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := kernel.RBF{LengthScale: tc.l}
			rng := rand.New(rand.NewPCG(5, 7))
			var xs [][]float64
			for i := 0; i < 60; i++ {
				var x []float64
				switch {
				case i < 20: // spread over the box
					x = []float64{rng.Float64(), rng.Float64()}
				case i%3 == 0: // a near-duplicate of an earlier point
					p := xs[rng.IntN(len(xs))]
					x = []float64{p[0] + 1e-7*tc.l*rng.NormFloat64(), p[1] + 1e-7*tc.l*rng.NormFloat64()}
				default: // a dense cluster around (0.5, 0.5)
					x = []float64{0.5 + 0.01*tc.l*rng.NormFloat64(), 0.5 + 0.01*tc.l*rng.NormFloat64()}
				}
				xs = append(xs, x)
			}
			f := func(x []float64) float64 { return math.Sin(5*x[0]) + math.Cos(3*x[1]) }
			run := func(drop bool) *DTC {
				g, err := NewDTC(k, 2, tc.lambda)
				if err != nil {
					t.Fatal(err)
				}
				g.SetDropNearDependent(drop)
				src := rand.New(rand.NewPCG(9, 9))
				for _, x := range xs {
					if _, err := g.Observe(x, f(x)); err != nil {
						t.Fatal(err)
					}
					if _, _, err := g.Resample(src, 1e9); err != nil {
						t.Fatal(err)
					}
				}
				return g
			}
			g := run(true)
			if g.Dropped() == 0 {
				t.Fatalf("no point dropped: the case does not exercise the rule")
			}
			if g.repivots != 0 {
				t.Errorf("%d rebuilds caused by near-dependent points, want 0", g.repivots)
			}
			if plain := run(false); plain.repivots == 0 {
				t.Errorf("without the rule: no rebuild caused by a near-dependent point (the case does not test what the rule avoids)")
			}
			var q [][]float64
			for i := 0; i < 15; i++ {
				q = append(q, []float64{rng.Float64(), rng.Float64()})
			}
			q = append(q, xs[25], xs[40], []float64{0.5, 0.5})
			var gm, gv []float64
			for _, x := range q {
				m, v, err := g.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				gm, gv = append(gm, m), append(gv, v)
			}
			s, obs, w, ysum := refInputs(g)
			wm, wv := refDTC(tc.l, s, obs, w, ysum, tc.lambda, q)
			if me, ve := maxRelErr(gm, gv, wm, wv); me > 1e-8 || ve > 1e-8 {
				t.Errorf("against the exact DTC on the kept S (|S| = %d of %d): mean error %.2g, variance error %.2g, want <= 1e-8", len(s), len(xs), me, ve)
			}
			ex, err := NewExact(k, 2, tc.lambda)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				if err := ex.Observe(x, f(x)); err != nil {
					t.Fatal(err)
				}
			}
			var worst float64
			for i, x := range q {
				em, ev, err := ex.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				worst = math.Max(worst, math.Max(math.Abs(em-gm[i]), math.Abs(ev-tc.lambda*gv[i])))
			}
			t.Logf("|S| = %d, dropped %d, largest difference from the exact GP %.2g", len(s), g.Dropped(), worst)
			if tol := 0.01 * math.Sqrt(tc.lambda); worst > tol {
				t.Errorf("against the exact GP on all %d points: largest difference %.2g, want <= %.2g", len(xs), worst, tol)
			}
		})
	}
}
