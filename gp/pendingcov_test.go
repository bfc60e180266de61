package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// TestCrossCovariance checks the cross covariances against independent
// references: the exact posterior's Covariance and ConditionalVariances
// (GP-BUCB's conditioning written as the Schur complement of the cross
// covariances must equal it), Predict, and the DTC with every observed
// point in its dictionary, which equals the exact GP.
func TestCrossCovariance(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3}
	rng := rand.New(rand.NewPCG(31, 32))
	const n, lambda = 40, 0.05
	cand := randPoints(rng, n, 2)
	ex, _ := NewExact(k, 2, lambda)
	dt, _ := NewDTC(k, 2, lambda)
	ex.SetCandidates(cand)
	dt.SetCandidates(cand)
	for s := 0; s < 25; s++ {
		i, y := rng.IntN(n), rng.NormFloat64()
		ex.ObserveCandidate(i, y)
		dt.ObserveCandidate(i, y)
	}
	if _, _, err := dt.SetDictionary(dt.observed); err != nil {
		t.Fatal(err)
	}
	pending := []int{4, 11, 29}
	pts := make([][]float64, len(pending))
	for a, i := range pending {
		pts[a] = cand.RawRowView(i)
	}
	cx, err := ex.CrossCovariance(pts)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := dt.CrossCovariance(pts)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n)
	if err := ex.ConditionalVariances(want, pending); err != nil {
		t.Fatal(err)
	}
	p := len(pts)
	for name, c := range map[string]*CrossCovariance{"exact": cx, "dtc": cd} {
		scale := 1.0 // to the GP scale
		if name == "dtc" {
			scale = lambda
		}
		cpp := mat.NewSymDense(p, nil)
		for a := 0; a < p; a++ {
			for b := 0; b <= a; b++ {
				cpp.SetSym(a, b, scale*c.Between(a, b))
			}
			cpp.SetSym(a, a, cpp.At(a, a)+lambda)
		}
		var ch mat.Cholesky
		if !ch.Factorize(cpp) {
			t.Fatalf("%s: C_PP + lambda I not positive definite", name)
		}
		dst := make([]float64, p)
		for i := 0; i < n; i++ {
			x := cand.RawRowView(i)
			m, v, err := c.Predict(x, dst)
			if err != nil {
				t.Fatal(err)
			}
			em, ev, _ := ex.Predict(x)
			if !close(m, em, 1, 1e-7) || !close(scale*v, ev, ev+1e-3, 1e-7) {
				t.Fatalf("%s point %d: mean, variance %v %v, exact %v %v", name, i, m, scale*v, em, ev)
			}
			for a := range pts {
				cov, _ := ex.Covariance(x, pts[a])
				if !close(scale*dst[a], cov, 1e-3, 1e-7) {
					t.Fatalf("%s point %d pending %d: covariance %v, exact %v", name, i, a, scale*dst[a], cov)
				}
			}
			// GP-BUCB: var - c^T (C_PP + lambda I)^{-1} c.
			cv := mat.NewVecDense(p, nil)
			for a := range dst {
				cv.SetVec(a, scale*dst[a])
			}
			var s mat.VecDense
			if err := ch.SolveVecTo(&s, cv); err != nil {
				t.Fatal(err)
			}
			if got := scale*v - mat.Dot(cv, &s); !close(got, want[i], want[i]+1e-3, 1e-7) {
				t.Fatalf("%s point %d: conditional variance %v, ConditionalVariances %v", name, i, got, want[i])
			}
		}
	}
	// A DTC with a small dictionary: the diagonal is Predict's variance
	// and Between is symmetric.
	if _, _, err := dt.SetDictionary(dt.observed[:4]); err != nil {
		t.Fatal(err)
	}
	cd, _ = dt.CrossCovariance(pts)
	dst := make([]float64, p)
	for a, x := range pts {
		_, v, _ := cd.Predict(x, dst)
		_, pv, _ := dt.Predict(x)
		if !close(dst[a], pv, pv, 1e-9) || !close(v, pv, pv, 1e-12) || !close(cd.Between(a, a), pv, pv, 1e-9) {
			t.Fatalf("dtc pending %d: covariance with itself %v, Between %v, variance %v", a, dst[a], cd.Between(a, a), pv)
		}
		for b := range pts {
			if math.Abs(cd.Between(a, b)-cd.Between(b, a)) > 1e-12 {
				t.Fatalf("Between(%d,%d) not symmetric", a, b)
			}
		}
	}
	if _, err := dt.CrossCovariance([][]float64{{1, 2, 3}}); err == nil {
		t.Error("point of the wrong dimension accepted")
	}
	if _, _, err := cd.Predict(pts[0], make([]float64, 1)); err == nil {
		t.Error("wrong destination length accepted")
	}
}
