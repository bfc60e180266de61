package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// unitSource returns the entries of one unit vector e_i (or zeros).
type unitSource struct{ i, n int }

func (u *unitSource) NormFloat64() float64 {
	v := 0.0
	if u.n == u.i {
		v = 1
	}
	u.n++
	return v
}

// TestSampleMomentsEqualExact checks the joint posterior sample of the
// DTC against the exact GP, with every observed point in S (where the DTC
// posterior is the exact one): with xi = 0 the sample is the exact
// posterior mean; with xi = e_1, ..., e_m the deviations z(x)^T (w - mean)
// are the columns of a square root of the weights' covariance, so their
// squares summed over i plus the residual give the exact posterior
// variance, and their cross products plus the residual cross term
// k(x,x') - z(x)^T z(x') the exact posterior covariance (Exact.Covariance).
func TestSampleMomentsEqualExact(t *testing.T) {
	t.Parallel()
	const d, a, n, lambda = 2, 12, 25, 0.05
	for ki, k := range []kernel.Kernel{kernel.RBF{LengthScale: 0.4}, kernel.Matern{Nu: 2.5, LengthScale: 0.3}} {
		rng := rand.New(rand.NewPCG(uint64(ki), 5))
		cand := randPoints(rng, a, d)
		ex, _ := NewExact(k, d, lambda)
		dt, _ := NewDTC(k, d, lambda)
		if err := dt.SetCandidates(cand); err != nil {
			t.Fatal(err)
		}
		var obs []int
		for s := 0; s < n; s++ {
			x := randPoints(rng, 1, d).RawRowView(0)
			y := math.Sin(3*x[0]) + rng.NormFloat64()*0.1
			ex.Observe(x, y)
			row, err := dt.Observe(x, y)
			if err != nil {
				t.Fatal(err)
			}
			obs = append(obs, row)
		}
		if _, _, err := dt.SetDictionary(obs); err != nil {
			t.Fatal(err)
		}
		m := dt.DictionarySize()
		// Test points: candidates (SampleCandidates) and new points (SampleAt).
		pts := append([][]float64{}, cand.RawRowView(0), cand.RawRowView(5))
		pts = append(pts, randPoints(rng, 3, d).RawRowView(0), []float64{0.5, 0.5})
		mean := dt.SampleWeights(make([]float64, m), &unitSource{i: -1})
		lm, res := make([]float64, len(pts)), make([]float64, len(pts)) // the sample at xi = 0
		for p, x := range pts {
			var err error
			if lm[p], res[p], err = dt.SampleAt(x, mean); err != nil {
				t.Fatal(err)
			}
		}
		dev := make([][]float64, m) // dev[i][p]: deviation of point p under xi = e_i
		for i := range dev {
			w := dt.SampleWeights(make([]float64, m), &unitSource{i: i})
			dev[i] = make([]float64, len(pts))
			for p, x := range pts {
				lw, _, err := dt.SampleAt(x, w)
				if err != nil {
					t.Fatal(err)
				}
				dev[i][p] = lw - lm[p]
			}
		}
		for p, x := range pts {
			em, _, _ := ex.Predict(x)
			if math.Abs(lm[p]-em) > 1e-8 {
				t.Errorf("kernel %d point %d: sample mean %v, exact mean %v", ki, p, lm[p], em)
			}
			for q, xq := range pts {
				var c float64
				for i := range dev {
					c += dev[i][p] * dev[i][q]
				}
				if p == q {
					c += res[p]
				} else {
					// The residual's cross term k(x,x') - z(x)^T z(x').
					c += residualCross(t, dt, k, x, xq)
				}
				want, _ := ex.Covariance(x, xq)
				if math.Abs(c-want) > 1e-8 {
					t.Errorf("kernel %d points %d,%d: sample covariance %v, exact %v", ki, p, q, c, want)
				}
			}
		}
		// SampleCandidates agrees with SampleAt on the candidates.
		w := dt.SampleWeights(make([]float64, m), rand.New(rand.NewPCG(9, 9)))
		lin, res := make([]float64, a), make([]float64, a)
		dt.SampleCandidates(lin, res, w)
		for i := 0; i < a; i++ {
			l, r, _ := dt.SampleAt(cand.RawRowView(i), w)
			if math.Abs(l-lin[i]) > 1e-10 || math.Abs(r-res[i]) > 1e-10 {
				t.Errorf("kernel %d candidate %d: SampleCandidates (%v, %v), SampleAt (%v, %v)", ki, i, lin[i], res[i], l, r)
			}
		}
	}
}

// residualCross returns k(x,y) - z(x)^T z(y) from the Nystrom
// embeddings, computed by Embed (not by the code under test).
func residualCross(t *testing.T, g *DTC, k kernel.Kernel, x, y []float64) float64 {
	t.Helper()
	m := g.DictionarySize()
	zx, zy := make([]float64, m), make([]float64, m)
	g.ny.Embed(zx, x)
	g.ny.Embed(zy, y)
	return k.Eval(x, y) - dot(zx, zy)
}

func TestSampleBadInput(t *testing.T) {
	t.Parallel()
	dt, _ := NewDTC(kernel.RBF{LengthScale: 0.5}, 1, 0.1)
	if _, err := dt.Observe([]float64{0.2}, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := dt.SetDictionary([]int{0}); err != nil {
		t.Fatal(err)
	}
	w := dt.SampleWeights(make([]float64, 1), rand.New(rand.NewPCG(1, 1)))
	if _, _, err := dt.SampleAt([]float64{0.1, 0.2}, w); err == nil {
		t.Error("SampleAt with a 2-d point in 1-d: no error")
	}
	if _, _, err := dt.SampleAt([]float64{0.1}, []float64{1, 2}); err == nil {
		t.Error("SampleAt with weights of the wrong length: no error")
	}
}
