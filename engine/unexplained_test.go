package engine

import (
	"math"
	"testing"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// TestUnexplained: the share of the prior variance the posterior leaves
// unexplained over the global set (which scales version 3's exploration)
// equals a brute-force computation (an exact GP built afresh on the
// observations, predicting every global point), is small on a 2-d problem
// after 40 evaluations and large on a 10-d one. The values are not warped
// (Warp none): a warp close to a logarithm makes Branin's fitted length
// scales short and the share large (0.7 at version 8's defaults), which
// is the warp's doing, not the coverage this test is about.
func TestUnexplained(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fn     string
		lo, hi float64 // bounds on the share
	}{{"branin", 0, 0.05}, {"levy:10", 0.3, 1}} {
		f, err := objectives.Lookup(c.fn)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := Box(nil, f.Lower, f.Upper)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newTestStudy(Config{Space: sp, Policy: "gp-ucb", Budget: 60, Seed: 2, Warp: WarpNone})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Optimize(func(tr *testTrial) (float64, error) { return f.Value(tr.X), nil }, 40); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ask(); err != nil { // brings the model up to the 40 evaluations
			t.Fatal(err)
		}
		r, e := s.eng.ref, s.eng
		got := r.unexplained()
		g, err := gp.NewExact(r.kern, e.e, r.lambda)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range e.succ {
			if err := g.Observe(e.enc[o.arm*e.e:(o.arm+1)*e.e], r.toldValue(e.reward(o.value))); err != nil {
				t.Fatal(err)
			}
		}
		n, _ := r.global.Dims()
		var want float64
		for i := 0; i < n; i++ {
			x := r.global.RawRowView(i)
			_, v, err := g.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			want += math.Min(math.Max(v/kernel.Diag(r.kern, x), 0), 1)
		}
		want /= float64(n)
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: unexplained %.9g, brute force %.9g", c.fn, got, want)
		}
		if got < c.lo || got > c.hi {
			t.Errorf("%s: unexplained %.3g, want in [%g, %g]", c.fn, got, c.lo, c.hi)
		}
		t.Logf("%s: unexplained share %.3g after %d evaluations", c.fn, got, len(e.succ))
	}
}
