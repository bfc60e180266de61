package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/internal/snapenc"
	"github.com/bkb-go/bkb/kernel"
)

// TestSnapshotFlooredPivots: a DTC whose S holds floored points (near
// duplicates below the rounding of k(x,x)) and a twin (identical
// coordinates) round-trips through EncodeState and DecodeDTC, and both
// copies then make the same computations: the same means and variances,
// bit for bit, after further observations, a dictionary change and a
// prediction at a floored point.
func TestSnapshotFlooredPivots(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3, Variance: 2}
	g, err := NewDTC(k, 1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 21))
	pts := [][]float64{{0.1}, {0.5}, {0.9}, {0.5 + 1e-10}, {0.5 - 2e-10}, {0.5}, {0.1 + 3e-10}}
	cand := mat.NewDense(len(pts), 1, nil)
	for i, p := range pts {
		cand.Set(i, 0, p[0])
	}
	if err := g.SetCandidates(cand); err != nil {
		t.Fatal(err)
	}
	for i, p := range pts {
		if err := g.ObserveCandidate(i, math.Sin(5*p[0])+1e-3*rng.NormFloat64()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := g.SetDictionary(g.observed); err != nil {
		t.Fatal(err)
	}
	nu := g.Numerics()
	if nu.FlooredPivots == 0 || nu.DeadPivots == 0 {
		t.Fatalf("want floored and dead pivots, got %+v", nu)
	}
	var w snapenc.Writer
	g.EncodeState(&w)
	h, err := DecodeDTC(k, snapenc.NewReader(w.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	same := func(step string) {
		t.Helper()
		if g.Numerics() != h.Numerics() {
			t.Errorf("%s: numerics %+v, decoded %+v", step, g.Numerics(), h.Numerics())
		}
		g.flush()
		h.flush()
		for j := range g.r.mean {
			if g.r.mean[j] != h.r.mean[j] || g.r.vari[j] != h.r.vari[j] {
				t.Fatalf("%s: row %d: %v %v, decoded %v %v", step, j, g.r.mean[j], g.r.vari[j], h.r.mean[j], h.r.vari[j])
			}
		}
		// A floored point, and a point 1e-12 from it.
		for _, x := range []float64{0.5 - 2e-10, 0.5 - 2e-10 + 1e-12} {
			gm, gv, _ := g.Predict([]float64{x})
			hm, hv, _ := h.Predict([]float64{x})
			if gm != hm || gv != hv {
				t.Errorf("%s: Predict(%v): %v %v, decoded %v %v", step, x, gm, gv, hm, hv)
			}
		}
	}
	same("decoded")
	steps := []struct {
		name string
		do   func(d *DTC) error
	}{
		{"a new row at a floored point's coordinates", func(d *DTC) error {
			// A non-candidate point with a candidate's coordinates is a
			// row of its own, embedded as the floored point's row of L.
			_, err := d.Observe([]float64{0.5 + 1e-10}, 0.3)
			return err
		}},
		{"a dictionary change", func(d *DTC) error { _, _, err := d.SetDictionary(d.observed[:5]); return err }},
		{"an observation", func(d *DTC) error { _, err := d.Observe([]float64{0.7}, 0.1); return err }},
	}
	for _, s := range steps {
		for _, d := range []*DTC{g, h} {
			if err := s.do(d); err != nil {
				t.Fatal(err)
			}
		}
		same(s.name)
	}
}

// TestDeadPivotsRule: under SetDeadPivots (study configuration versions 5
// to 7) the near-duplicates of TestSnapshotFlooredPivots are dead, none
// floored, and the rule survives EncodeState and DecodeDTC: a point
// added after the round trip is dead in both copies.
func TestDeadPivotsRule(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3, Variance: 2}
	g, err := NewDTC(k, 1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	g.SetDeadPivots(true)
	pts := []float64{0.1, 0.5, 0.9, 0.5 + 1e-10, 0.5 - 2e-10, 0.1 + 3e-10, 0.9 + 1e-10}
	cand := mat.NewDense(len(pts), 1, pts)
	if err := g.SetCandidates(cand); err != nil {
		t.Fatal(err)
	}
	for i, p := range pts[:6] {
		if err := g.ObserveCandidate(i, math.Sin(5*p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := g.SetDictionary(g.observed); err != nil {
		t.Fatal(err)
	}
	if nu := g.Numerics(); nu.FlooredPivots != 0 || nu.DeadPivots == 0 {
		t.Fatalf("dead rule: %+v, want dead pivots and none floored", nu)
	}
	var w snapenc.Writer
	g.EncodeState(&w)
	h, err := DecodeDTC(k, snapenc.NewReader(w.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*DTC{g, h} {
		before := d.Numerics().DeadPivots
		if err := d.ObserveCandidate(6, math.Sin(5*pts[6])); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.SetDictionary(append(d.Dictionary(), 6)); err != nil {
			t.Fatal(err)
		}
		if nu := d.Numerics(); nu.FlooredPivots != 0 || nu.DeadPivots != before+1 {
			t.Errorf("after the round trip: %+v, want %d dead and none floored", nu, before+1)
		}
	}
}
