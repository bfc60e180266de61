package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// dtcCovariance is the DTC posterior covariance (GP scale) of x and y for
// inducing points s and distinct observed points xs with counts w,
// computed densely from the kernel (not from the code under test):
//
//	k(x,y) - k_S(x)^T K_SS^{-1} k_S(y) + lambda k_S(x)^T M^{-1} k_S(y),
//	M = K_SX W K_XS + lambda K_SS,
//
// and the posterior mean k_S(x)^T M^{-1} K_SX ysum.
func dtcCovariance(k kernel.Kernel, s, xs [][]float64, w []int, ysum []float64, lambda float64, pts [][]float64) (mean []float64, cov *mat.Dense) {
	m := len(s)
	kss := mat.NewDense(m, m, nil)
	mm := mat.NewDense(m, m, nil)
	b := mat.NewVecDense(m, nil)
	for a := range s {
		for c := range s {
			kss.Set(a, c, k.Eval(s[a], s[c]))
			v := lambda * kss.At(a, c)
			for j := range xs {
				v += float64(w[j]) * k.Eval(s[a], xs[j]) * k.Eval(s[c], xs[j])
			}
			mm.Set(a, c, v)
		}
		for j := range xs {
			b.SetVec(a, b.AtVec(a)+k.Eval(s[a], xs[j])*ysum[j])
		}
	}
	ks := mat.NewDense(m, len(pts), nil)
	for a := range s {
		for p, x := range pts {
			ks.Set(a, p, k.Eval(s[a], x))
		}
	}
	var q1, q2 mat.Dense
	if err := q1.Solve(kss, ks); err != nil {
		panic(err)
	}
	if err := q2.Solve(mm, ks); err != nil {
		panic(err)
	}
	var beta mat.VecDense
	if err := beta.SolveVec(mm, b); err != nil {
		panic(err)
	}
	var a1, a2 mat.Dense
	a1.Mul(ks.T(), &q1)
	a2.Mul(ks.T(), &q2)
	cov = mat.NewDense(len(pts), len(pts), nil)
	for p, x := range pts {
		mean = append(mean, mat.Dot(ks.ColView(p), &beta))
		for q, y := range pts {
			cov.Set(p, q, k.Eval(x, y)-a1.At(p, q)+lambda*a2.At(p, q))
		}
	}
	return mean, cov
}

// TestJointSampleCovariance draws many joint samples and compares their
// mean and covariance with the DTC posterior's, at points in S, observed
// points outside S, unobserved candidates (two with identical
// coordinates, one a near-duplicate) and new points (one with a
// candidate's coordinates), each pair within 5 standard errors of the
// Monte Carlo estimate. Points with identical coordinates must have
// the same value in every draw, to 1e-12 (posterior correlation 1); the per-point
// residual of SampleCandidates, drawn independently, gives them
// correlation near 0 (logged).
func TestJointSampleCovariance(t *testing.T) {
	t.Parallel()
	draws := 40000
	if testing.Short() {
		draws = 8000
	}
	const d, a, lambda = 2, 12, 0.05
	for ki, k := range []kernel.Kernel{kernel.RBF{LengthScale: 0.3, Variance: 2}, kernel.Matern52ARD{LengthScales: []float64{0.4, 0.25}, Variance: 1.5}} {
		rng := rand.New(rand.NewPCG(uint64(ki), 21))
		cand := randPoints(rng, a, d)
		copy(cand.RawRowView(10), cand.RawRowView(3)) // identical coordinates
		copy(cand.RawRowView(11), cand.RawRowView(5))
		cand.Set(11, 0, cand.At(11, 0)+1e-6) // a near-duplicate
		g, _ := NewDTC(k, d, lambda)
		if err := g.SetCandidates(cand); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < 14; s++ {
			var err error
			y := 0.3 * rng.NormFloat64()
			if s%3 == 2 {
				_, err = g.Observe(randPoints(rng, 1, d).RawRowView(0), y)
			} else {
				err = g.ObserveCandidate(rng.IntN(8), y)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		// S: every other observed point, grown incrementally.
		var dict []int
		for k, i := range g.observed {
			if k%2 == 0 {
				dict = append(dict, i)
				if _, _, err := g.SetDictionary(dict); err != nil {
					t.Fatal(err)
				}
			}
		}
		var s, xs [][]float64
		var w []int
		var ysum []float64
		for _, i := range g.dict {
			s = append(s, g.r.point(i))
		}
		for _, i := range g.observed {
			xs = append(xs, g.r.point(i))
			w = append(w, g.count[i])
			ysum = append(ysum, g.ysum[i])
		}
		// Test points: every candidate (through Candidates), then through
		// At: an observed point in S, one outside S, two new points and a
		// copy of candidate 3's coordinates.
		pts := [][]float64{}
		for i := 0; i < a; i++ {
			pts = append(pts, cand.RawRowView(i))
		}
		var outside int
		for _, i := range g.observed {
			if !g.InDictionary(i) && i >= a {
				outside = i
			}
		}
		pts = append(pts, g.r.point(g.dict[0]), g.r.point(outside), randPoints(rng, 1, d).RawRowView(0), randPoints(rng, 1, d).RawRowView(0), append([]float64(nil), cand.RawRowView(3)...))
		np := len(pts)
		wantMean, wantCov := dtcCovariance(k, s, xs, w, ysum, lambda, pts)
		vals := make([][]float64, draws)
		cv := make([]float64, a)
		src := rand.New(rand.NewPCG(7, uint64(ki)))
		var oldSame float64 // sum of products for candidates 3 and 10 with per-point residuals
		wts := make([]float64, g.DictionarySize())
		lin, res := make([]float64, a), make([]float64, a)
		for n := range vals {
			js, err := g.NewJointSample(src, 64)
			if err != nil {
				t.Fatal(err)
			}
			if err := js.Candidates(cv); err != nil {
				t.Fatal(err)
			}
			v := append(make([]float64, 0, np), cv...)
			for _, x := range pts[a:] {
				f, err := js.At(x)
				if err != nil {
					t.Fatal(err)
				}
				v = append(v, f)
			}
			vals[n] = v
			// Identical coordinates: the same value, up to the rounding of
			// the embeddings (a candidate's row is updated incrementally,
			// At embeds afresh).
			if math.Abs(v[3]-v[10]) > 1e-12 || math.Abs(v[3]-v[np-1]) > 1e-12 {
				t.Fatalf("kernel %d draw %d: identical coordinates, values %v %v %v", ki, n, v[3], v[10], v[np-1])
			}
			g.SampleCandidates(lin, res, g.SampleWeights(wts, src))
			f3 := lin[3] + math.Sqrt(res[3])*src.NormFloat64() - wantMean[3]
			f10 := lin[10] + math.Sqrt(res[10])*src.NormFloat64() - wantMean[10]
			oldSame += f3 * f10
		}
		t.Logf("kernel %d: candidates 3 and 10 (identical coordinates): posterior correlation 1, joint sample 1, per-point residual %.3g",
			ki, oldSame/float64(draws)/wantCov.At(3, 3))
		mean := make([]float64, np)
		for _, v := range vals {
			for p := range v {
				mean[p] += v[p] / float64(draws)
			}
		}
		var worst float64
		for p := 0; p < np; p++ {
			se := math.Sqrt(wantCov.At(p, p) / float64(draws))
			if e := math.Abs(mean[p]-wantMean[p]) / (se + 1e-12); e > 5 {
				t.Errorf("kernel %d point %d: sample mean %.6g, posterior mean %.6g (%.1f standard errors)", ki, p, mean[p], wantMean[p], e)
			}
			for q := p; q < np; q++ {
				var c, c2 float64
				for _, v := range vals {
					x := (v[p] - wantMean[p]) * (v[q] - wantMean[q])
					c += x
					c2 += x * x
				}
				c /= float64(draws)
				se := math.Sqrt((c2/float64(draws) - c*c) / float64(draws))
				e := math.Abs(c-wantCov.At(p, q)) / (se + 1e-12)
				worst = math.Max(worst, e)
				if e > 5 {
					t.Errorf("kernel %d points %d,%d: sample covariance %.6g, posterior %.6g (%.1f standard errors)", ki, p, q, c, wantCov.At(p, q), e)
				}
			}
		}
		t.Logf("kernel %d: %d draws, %d points (%d in S of %d observed): worst covariance %.2f standard errors", ki, draws, np, g.DictionarySize(), len(g.observed), worst)
	}
}

func TestJointSampleStale(t *testing.T) {
	t.Parallel()
	g, _ := NewDTC(kernel.RBF{LengthScale: 0.5}, 1, 0.1)
	_ = g.SetCandidates(mat.NewDense(2, 1, []float64{0.1, 0.9}))
	if _, err := g.Observe([]float64{0.2}, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.SetDictionary([]int{2}); err != nil {
		t.Fatal(err)
	}
	js, err := g.NewJointSample(rand.New(rand.NewPCG(1, 1)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.At([]float64{0.3}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.At([]float64{0.3, 0.4}); err == nil {
		t.Error("At with a 2-d point in 1-d: no error")
	}
	if err := js.Candidates(make([]float64, 3)); err == nil {
		t.Error("Candidates with a destination of the wrong length: no error")
	}
	if _, err := g.Observe([]float64{0.5}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := js.At([]float64{0.3}); err == nil {
		t.Error("At after an observation: no error")
	}
	lin, _ := NewDTC(kernel.Linear{}, 1, 0.1)
	if _, err := lin.NewJointSample(rand.New(rand.NewPCG(1, 1)), 0); err == nil {
		t.Error("a joint sample of a linear kernel: no error")
	}
}
