package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/candidates"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// TestPendingVariance: GP-BUCB's conditional variance of pendingCond
// equals the variance of a posterior that observed the pending points
// (any values: a GP's variance does not depend on them), for the exact
// posterior and for a DTC with every observed point in its dictionary;
// a pending point itself is excluded.
func TestPendingVariance(t *testing.T) {
	t.Parallel()
	const d, lambda = 3, 0.01
	k := kernel.RBF{LengthScale: 0.4}
	rng := rand.New(rand.NewPCG(7, 8))
	pt := func() []float64 {
		x := make([]float64, d)
		for i := range x {
			x[i] = rng.Float64()
		}
		return x
	}
	var obs [][]float64
	var ys []float64
	for i := 0; i < 20; i++ {
		obs, ys = append(obs, pt()), append(ys, rng.NormFloat64())
	}
	// Three pending points: two near observed ones, one alone.
	pend := [][]float64{{0.5, 0.5, 0.5}, {0.52, 0.45, 0.5}, pt()}
	e := &Engine{e: d, pending: map[int]int{}}
	for a, p := range pend {
		e.enc = append(e.enc, p...)
		e.pending[10+a] = a
	}
	for _, useDTC := range []bool{false, true} {
		r := &refiner{kern: k, lambda: lambda}
		var ref func(x []float64) float64 // variance after observing P
		if useDTC {
			g, _ := gp.NewDTC(k, d, lambda)
			all, _ := gp.NewDTC(k, d, lambda)
			var rows, allRows []int
			for i, x := range obs {
				row, _ := g.Observe(x, ys[i])
				rows = append(rows, row)
				row, _ = all.Observe(x, ys[i])
				allRows = append(allRows, row)
			}
			for _, p := range pend {
				row, _ := all.Observe(p, 0)
				allRows = append(allRows, row)
			}
			if _, _, err := g.SetDictionary(rows); err != nil {
				t.Fatal(err)
			}
			if _, _, err := all.SetDictionary(allRows); err != nil {
				t.Fatal(err)
			}
			r.dtc = g
			ref = func(x []float64) float64 { _, v, _ := all.Predict(x); return lambda * v }
		} else {
			g, _ := gp.NewExact(k, d, lambda)
			all, _ := gp.NewExact(k, d, lambda)
			for i, x := range obs {
				g.Observe(x, ys[i])
				all.Observe(x, ys[i])
			}
			for _, p := range pend {
				all.Observe(p, 1)
			}
			r.exact = g
			ref = func(x []float64) float64 { _, v, _ := all.Predict(x); return v }
		}
		c, err := r.newPendingCond(e)
		if err != nil || c == nil {
			t.Fatalf("dtc %v: conditioning %v, %v", useDTC, c, err)
		}
		near := 0
		for i := 0; i < 300; i++ {
			x := pt()
			if i%3 == 0 { // close to the first pending point
				for j := range x {
					x[j] = pend[0][j] + 0.1*(x[j]-0.5)
				}
			}
			m, v := r.predict(x)
			if pm, pv, ok := c.predict(x); ok {
				near++
				if math.Abs(pm-m) > 1e-9 || math.Abs(pv-v) > 1e-9 {
					t.Fatalf("dtc %v: predict %v %v, posterior %v %v", useDTC, pm, pv, m, v)
				}
			}
			got, ok := c.variance(x, v)
			want := ref(x)
			// Exact where conditioned; screened-out points keep v, within
			// about pendingScreen of the truth.
			tol := 1e-8 + 1e-8*v
			if !c.near(x) {
				tol = 2 * pendingScreen * v
			}
			if !ok || math.Abs(got-want) > tol {
				t.Fatalf("dtc %v point %v: conditional variance %v (ok %v), observed %v (unconditioned %v)", useDTC, x, got, ok, want, v)
			}
		}
		if near < 50 {
			t.Errorf("dtc %v: only %d of 300 points near a pending point; the test checks little", useDTC, near)
		}
		if _, ok := c.variance(pend[1], 1); ok {
			t.Errorf("dtc %v: a pending point was not excluded", useDTC)
		}
	}
	// Nothing pending: no conditioning.
	if c, _ := (&refiner{}).newPendingCond(&Engine{pending: map[int]int{}}); c != nil {
		t.Error("conditioning without pending trials")
	}
}

// TestSkipStale: a result pending when an improvement was seen is not a
// failure of the trust region (but may still be a success), one pending
// at a restart does not count for the new phase, and without pending
// trials every result counts.
func TestSkipStale(t *testing.T) {
	t.Parallel()
	newRef := func() *refiner {
		return &refiner{region: candidates.NewRegion(2), best: 1, threshold: 1e-3}
	}
	r := newRef()
	e := &Engine{pending: map[int]int{5: 0, 6: 1}}
	if r.skipStale(e, 4, 2) { // an improvement, trials 5 and 6 pending
		t.Fatal("an improvement was skipped")
	}
	r.best = 2
	if !r.skipStale(e, 5, 1.5) || r.best != 2 {
		t.Error("a stale non-improvement counted")
	}
	if r.skipStale(e, 6, 3) {
		t.Error("a stale improvement was skipped")
	}
	if r.skipStale(e, 7, 1.5) {
		t.Error("a fresh result was skipped")
	}
	// Restart: trials pending then count for the best value only.
	r.markPhaseStale(e)
	if !r.skipStale(e, 6, 5) || r.best != 5 {
		t.Errorf("a result pending at the restart counted for the phase (best %v)", r.best)
	}
	// Sequential: nothing pending, nothing skipped.
	r = newRef()
	seq := &Engine{pending: map[int]int{}}
	for i, v := range []float64{2, 1, 3, 0.5} {
		if r.skipStale(seq, i, v) {
			t.Errorf("sequential result %d skipped", i)
		}
		r.best = math.Max(r.best, v)
	}
}
