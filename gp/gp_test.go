package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

func randPoints(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.Float64())
		}
	}
	return x
}

var testKernels = []kernel.Kernel{
	kernel.RBF{LengthScale: 0.4},
	kernel.RBF{LengthScale: 0.7, Variance: 2},
	kernel.Matern{Nu: 0.5, LengthScale: 0.5},
	kernel.Matern{Nu: 1.5, LengthScale: 0.5},
	kernel.Matern{Nu: 2.5, LengthScale: 0.5, Variance: 0.5},
	kernel.Linear{Offset: 1},
	kernel.Polynomial{Degree: 3, Offset: 1},
}

// denseGP is the O(n^3) reference: K + lambda I solved densely by LU.
type denseGP struct {
	k      kernel.Kernel
	x      *mat.Dense // observed points
	y      *mat.VecDense
	lambda float64
	inv    *mat.Dense
}

func newDenseGP(k kernel.Kernel, x *mat.Dense, y []float64, lambda float64) *denseGP {
	n, _ := x.Dims()
	kx := mat.NewDense(n, n, nil)
	kernel.Matrix(kx, k, x, x)
	for i := 0; i < n; i++ {
		kx.Set(i, i, kx.At(i, i)+lambda)
	}
	var inv mat.Dense
	if err := inv.Inverse(kx); err != nil {
		panic(err)
	}
	return &denseGP{k: k, x: x, y: mat.NewVecDense(n, y), lambda: lambda, inv: &inv}
}

func (g *denseGP) kvec(p []float64) *mat.VecDense {
	n, _ := g.x.Dims()
	v := make([]float64, n)
	kernel.Column(v, g.k, g.x, p)
	return mat.NewVecDense(n, v)
}

func (g *denseGP) predict(p []float64) (float64, float64) {
	kv := g.kvec(p)
	var a mat.VecDense
	a.MulVec(g.inv, g.y)
	var b mat.VecDense
	b.MulVec(g.inv, kv)
	return mat.Dot(kv, &a), g.k.Eval(p, p) - mat.Dot(kv, &b)
}

func (g *denseGP) cov(p, q []float64) float64 {
	kp, kq := g.kvec(p), g.kvec(q)
	var b mat.VecDense
	b.MulVec(g.inv, kq)
	return g.k.Eval(p, q) - mat.Dot(kp, &b)
}

func close(a, b, scale, tol float64) bool {
	return math.Abs(a-b) <= tol*(math.Abs(scale)+math.Abs(b))
}

func TestExactMatchesDenseSolve(t *testing.T) {
	t.Parallel()
	for ki, k := range testKernels {
		t.Run(fmt.Sprintf("%d:%T", ki, k), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(ki), 7))
			const d, a, n, lambda = 3, 25, 60, 0.05
			cand := randPoints(rng, a, d)
			g, err := NewExact(k, d, lambda)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.SetCandidates(cand); err != nil {
				t.Fatal(err)
			}
			obs := mat.NewDense(n, d, nil)
			ys := make([]float64, n)
			for s := 0; s < n; s++ {
				var p []float64
				y := rng.NormFloat64()
				if s%3 == 0 { // a point off the candidate set
					p = []float64{rng.Float64(), rng.Float64(), rng.Float64()}
					if err := g.Observe(p, y); err != nil {
						t.Fatal(err)
					}
				} else { // a candidate, often repeated
					i := rng.IntN(a / 2)
					p = cand.RawRowView(i)
					if err := g.ObserveCandidate(i, y); err != nil {
						t.Fatal(err)
					}
				}
				obs.SetRow(s, p)
				ys[s] = y
			}
			ref := newDenseGP(k, obs, ys, lambda)
			for i := 0; i < a; i++ {
				p := cand.RawRowView(i)
				wm, wv := ref.predict(p)
				scale := k.Eval(p, p)
				if !close(g.Means()[i], wm, scale, 1e-8) || !close(g.Variances()[i], wv, scale, 1e-8) {
					t.Fatalf("candidate %d: incremental (%v, %v), dense (%v, %v)", i, g.Means()[i], g.Variances()[i], wm, wv)
				}
				pm, pv, err := g.Predict(p)
				if err != nil {
					t.Fatal(err)
				}
				if !close(pm, wm, scale, 1e-8) || !close(pv, wv, scale, 1e-8) {
					t.Fatalf("Predict %d: (%v, %v), dense (%v, %v)", i, pm, pv, wm, wv)
				}
			}
			p, q := cand.RawRowView(1), cand.RawRowView(a-1)
			c, err := g.Covariance(p, q)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.cov(p, q); !close(c, want, k.Eval(p, p), 1e-8) {
				t.Errorf("covariance %v, dense %v", c, want)
			}
			// Log marginal likelihood against the dense formula.
			kx := mat.NewDense(n, n, nil)
			kernel.Matrix(kx, k, obs, obs)
			for i := 0; i < n; i++ {
				kx.Set(i, i, kx.At(i, i)+lambda)
			}
			var lu mat.LU
			lu.Factorize(kx)
			ld, _ := lu.LogDet()
			var a2 mat.VecDense
			a2.MulVec(ref.inv, ref.y)
			want := -0.5*mat.Dot(ref.y, &a2) - 0.5*ld - 0.5*float64(n)*math.Log(2*math.Pi)
			if got := g.LogMarginalLikelihood(); !close(got, want, 1, 1e-8) {
				t.Errorf("log marginal likelihood %v, dense %v", got, want)
			}
		})
	}
}

func TestExactZeroNoiseDuplicates(t *testing.T) {
	t.Parallel()
	g, err := NewExact(kernel.RBF{LengthScale: 0.3}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetCandidates(mat.NewDense(3, 1, []float64{0, 0.5, 1})); err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 4; rep++ {
		if err := g.ObserveCandidate(1, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, c := g.Jitter(); c == 0 {
		t.Error("no jitter reported for repeated noiseless observations")
	}
	for i, v := range g.Variances() {
		if math.IsNaN(v) || math.IsNaN(g.Means()[i]) {
			t.Fatalf("candidate %d: NaN posterior", i)
		}
	}
	if m := g.Means()[1]; math.Abs(m-2) > 1e-3 {
		t.Errorf("mean at the noiseless observation is %v, want 2", m)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	if _, err := NewExact(kernel.RBF{}, 2, 0.1); err == nil {
		t.Error("zero length scale accepted")
	}
	if _, err := NewDTC(kernel.RBF{LengthScale: 1}, 2, 0); err == nil {
		t.Error("DTC with lambda 0 accepted")
	}
	g, _ := NewExact(kernel.RBF{LengthScale: 1}, 2, 0.1)
	if err := g.Observe([]float64{1}, 1); err == nil {
		t.Error("wrong dimension accepted")
	}
	if err := g.Observe([]float64{1, math.NaN()}, 1); err == nil {
		t.Error("NaN point accepted")
	}
	if err := g.Observe([]float64{1, 1}, math.Inf(1)); err == nil {
		t.Error("Inf value accepted")
	}
	if err := g.ObserveCandidate(0, 1); err == nil {
		t.Error("candidate without a candidate set accepted")
	}
}

// denseDTC is the independent reference for the DTC posterior, written in
// the original coordinates (no embedding): with M = K_SX W K_XS + lambda K_SS,
//
//	mu~(x)      = k_S(x)^T M^{-1} K_SX ysum
//	sigma~^2(x) = (k(x,x) - k_S^T K_SS^{-1} k_S)/lambda + k_S^T M^{-1} k_S.
func denseDTC(k kernel.Kernel, s *mat.Dense, xs *mat.Dense, w, ysum []float64, lambda float64, p []float64) (float64, float64) {
	m, _ := s.Dims()
	n, _ := xs.Dims()
	kss := mat.NewDense(m, m, nil)
	kernel.Matrix(kss, k, s, s)
	ksx := mat.NewDense(m, n, nil)
	kernel.Matrix(ksx, k, s, xs)
	var mm mat.Dense
	wk := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			wk.Set(i, j, ksx.At(i, j)*w[j])
		}
	}
	mm.Mul(wk, ksx.T())
	var lk mat.Dense
	lk.Scale(lambda, kss)
	mm.Add(&mm, &lk)
	kp := make([]float64, m)
	kernel.Column(kp, k, s, p)
	kpv := mat.NewVecDense(m, kp)
	var rhs mat.VecDense
	rhs.MulVec(ksx, mat.NewVecDense(n, ysum))
	var a, b, c mat.VecDense
	if err := a.SolveVec(&mm, &rhs); err != nil {
		panic(err)
	}
	if err := b.SolveVec(&mm, kpv); err != nil {
		panic(err)
	}
	if err := c.SolveVec(kss, kpv); err != nil {
		panic(err)
	}
	return mat.Dot(kpv, &a), (k.Eval(p, p)-mat.Dot(kpv, &c))/lambda + mat.Dot(kpv, &b)
}

func TestDTCAllInDictionaryEqualsExact(t *testing.T) {
	t.Parallel()
	for ki, k := range testKernels[:5] {
		rng := rand.New(rand.NewPCG(uint64(ki), 11))
		const d, a, n, lambda = 2, 40, 50, 0.1
		cand := randPoints(rng, a, d)
		ex, _ := NewExact(k, d, lambda)
		dt, _ := NewDTC(k, d, lambda)
		if err := ex.SetCandidates(cand); err != nil {
			t.Fatal(err)
		}
		if err := dt.SetCandidates(cand); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < n; s++ {
			i := rng.IntN(a / 2) // repeats
			y := rng.NormFloat64()
			ex.ObserveCandidate(i, y)
			dt.ObserveCandidate(i, y)
			if !dt.InDictionary(i) {
				if _, _, err := dt.SetDictionary(append(append([]int(nil), dt.Dictionary()...), i)); err != nil {
					t.Fatal(err)
				}
			}
			for j := 0; j < a; j++ {
				scale := k.Eval(cand.RawRowView(j), cand.RawRowView(j))
				if !close(dt.Means()[j], ex.Means()[j], scale, 1e-8) || !close(lambda*dt.Variances()[j], ex.Variances()[j], scale, 1e-8) {
					t.Fatalf("kernel %d step %d arm %d: DTC (%v, %v) exact (%v, %v)", ki, s, j, dt.Means()[j], lambda*dt.Variances()[j], ex.Means()[j], ex.Variances()[j])
				}
			}
		}
	}
}

func TestDTCIncrementalEqualsRebuild(t *testing.T) {
	t.Parallel()
	for ki, k := range testKernels[:5] {
		rng := rand.New(rand.NewPCG(uint64(ki), 13))
		const d, a, steps, lambda = 2, 60, 400, 0.05
		cand := randPoints(rng, a, d)
		g, _ := NewDTC(k, d, lambda)
		if err := g.SetCandidates(cand); err != nil {
			t.Fatal(err)
		}
		var extra [][]float64
		for s := 0; s < steps; s++ {
			y := rng.NormFloat64()
			switch {
			case s%7 == 3: // a non-candidate point, sometimes repeated
				if len(extra) == 0 || rng.IntN(2) == 0 {
					extra = append(extra, []float64{rng.Float64(), rng.Float64()})
				}
				if _, err := g.Observe(extra[rng.IntN(len(extra))], y); err != nil {
					t.Fatal(err)
				}
			default:
				if err := g.ObserveCandidate(rng.IntN(a), y); err != nil {
					t.Fatal(err)
				}
			}
			// Random small dictionary change among observed rows.
			dict := append([]int(nil), g.Dictionary()...)
			if len(dict) > 3 && rng.IntN(3) == 0 {
				j := rng.IntN(len(dict))
				dict = append(dict[:j], dict[j+1:]...)
			}
			if rng.IntN(2) == 0 {
				o := g.observed[rng.IntN(len(g.observed))]
				if !g.InDictionary(o) && len(dict) < 25 {
					dict = append(dict, o)
				}
			}
			if _, _, err := g.SetDictionary(dict); err != nil {
				t.Fatal(err)
			}
			checkDTCDense(t, g, k, 10)
		}
		if g.DictionaryChanges() < 50 {
			t.Fatalf("only %d dictionary changes: the test exercises too little", g.DictionaryChanges())
		}
		g.flush()
		mean := append([]float64(nil), g.r.mean...)
		vari := append([]float64(nil), g.r.vari...)
		// Independent dense reference in original coordinates.
		s, xs, w, ys := denseInputs(g)
		if err := g.Rebuild(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < g.r.n(); j++ {
			scale := g.r.kdiag[j] / lambda
			if !close(mean[j], g.r.mean[j], scale, 1e-8) || !close(vari[j], g.r.vari[j], scale, 1e-8) {
				t.Fatalf("kernel %d row %d: incremental (%v, %v), rebuilt (%v, %v)", ki, j, mean[j], vari[j], g.r.mean[j], g.r.vari[j])
			}
			if j%5 == 0 {
				wm, wv := denseDTC(k, s, xs, w, ys, lambda, g.r.point(j))
				if !close(mean[j], wm, scale, 1e-7) || !close(vari[j], wv, scale, 1e-7) {
					t.Fatalf("kernel %d row %d: incremental (%v, %v), dense (%v, %v)", ki, j, mean[j], vari[j], wm, wv)
				}
				pm, pv, _ := g.Predict(g.r.point(j))
				if !close(pm, wm, scale, 1e-7) || !close(pv, wv, scale, 1e-7) {
					t.Fatalf("kernel %d Predict row %d: (%v, %v), dense (%v, %v)", ki, j, pm, pv, wm, wv)
				}
			}
		}
	}
}

// checkDTCDense compares every stride-th row of g against denseDTC.
func checkDTCDense(t *testing.T, g *DTC, k kernel.Kernel, stride int) {
	g.flush()
	t.Helper()
	m := g.DictionarySize()
	s, xs, w, ys := denseInputs(g)
	for j := 0; j < g.r.n(); j += stride {
		if m == 0 {
			break
		}
		wm, wv := denseDTC(k, s, xs, w, ys, g.lambda, g.r.point(j))
		scale := g.r.kdiag[j] / g.lambda
		if !close(g.r.mean[j], wm, scale, 1e-7) || !close(g.r.vari[j], wv, scale, 1e-7) {
			t.Fatalf("row %d after %d observations: incremental (%v, %v), dense (%v, %v)", j, g.Len(), g.r.mean[j], g.r.vari[j], wm, wv)
		}
	}
}

// denseInputs returns what denseDTC needs from g: the inducing points, the
// observed points, their counts and their sums of observed values.
func denseInputs(g *DTC) (s, xs *mat.Dense, w, ysum []float64) {
	s = mat.NewDense(max(g.DictionarySize(), 1), g.dim, nil)
	for p, i := range g.Dictionary() {
		s.SetRow(p, g.r.point(i))
	}
	no := len(g.observed)
	xs = mat.NewDense(no, g.dim, nil)
	w = make([]float64, no)
	ysum = make([]float64, no)
	for p, i := range g.observed {
		xs.SetRow(p, g.r.point(i))
		w[p] = float64(g.count[i])
		ysum[p] = g.ysum[i]
	}
	return s, xs, w, ysum
}
