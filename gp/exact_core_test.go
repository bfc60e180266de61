package gp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// Tests of the exact core against an independent reference:
// the DTC posterior (Eq. 4, seed 004) solved densely in 1024-bit
// floating point (math/big), with the RBF kernel itself evaluated in that
// precision, so the reference is the true posterior of the given points
// to far beyond float64.

const refPrec = 1024

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

// bigExp returns e^x for x <= 0 in refPrec bits: x is halved k times to
// below 2^-20, the Taylor series summed to the precision, then squared k
// times.
func bigExp(x *big.Float) *big.Float {
	r := new(big.Float).SetPrec(refPrec).Set(x)
	k := 0
	lim := bf(0x1p-20)
	for new(big.Float).Abs(r).Cmp(lim) > 0 {
		r.Quo(r, bf(2))
		k++
	}
	sum, term := bf(1), bf(1)
	for n := 1; n < 80; n++ {
		term.Mul(term, r)
		term.Quo(term, bf(float64(n)))
		sum.Add(sum, term)
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

func bigRBF(x, y []float64, l float64) *big.Float {
	d := bf(0)
	for i := range x {
		t := new(big.Float).SetPrec(refPrec).Sub(bf(x[i]), bf(y[i]))
		d.Add(d, t.Mul(t, t))
	}
	ll := bf(l)
	ll.Mul(ll, ll)
	d.Quo(d, ll.Mul(ll, bf(2)))
	return bigExp(d.Neg(d))
}

// bigSolve solves a x = b (a n x n, row-major; both destroyed) by
// Gaussian elimination with partial pivoting in refPrec bits.
func bigSolve(a []*big.Float, b [][]*big.Float, n int) {
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if new(big.Float).Abs(a[r*n+c]).Cmp(new(big.Float).Abs(a[p*n+c])) > 0 {
				p = r
			}
		}
		if p != c {
			for j := 0; j < n; j++ {
				a[p*n+j], a[c*n+j] = a[c*n+j], a[p*n+j]
			}
			for _, v := range b {
				v[p], v[c] = v[c], v[p]
			}
		}
		for r := c + 1; r < n; r++ {
			f := new(big.Float).SetPrec(refPrec).Quo(a[r*n+c], a[c*n+c])
			for j := c; j < n; j++ {
				a[r*n+j].Sub(a[r*n+j], new(big.Float).SetPrec(refPrec).Mul(f, a[c*n+j]))
			}
			for _, v := range b {
				v[r].Sub(v[r], new(big.Float).SetPrec(refPrec).Mul(f, v[c]))
			}
		}
	}
	for c := n - 1; c >= 0; c-- {
		for _, v := range b {
			for j := c + 1; j < n; j++ {
				v[c].Sub(v[c], new(big.Float).SetPrec(refPrec).Mul(a[c*n+j], v[j]))
			}
			v[c].Quo(v[c], a[c*n+c])
		}
	}
}

// refDTC returns the DTC mean and variance (1/lambda scale) at each query
// point, for inducing points s, distinct observed points xs with counts w
// and sums of values ysum:
//
//	M     = K_SX W K_XS + lambda K_SS
//	mean  = k_S(x)^T M^{-1} K_SX ysum
//	var   = (k(x,x) - k_S(x)^T K_SS^{-1} k_S(x))/lambda + k_S(x)^T M^{-1} k_S(x)
func refDTC(l float64, s, xs [][]float64, w []int, ysum []float64, lambda float64, q [][]float64) (mean, vari []float64) {
	m, n := len(s), len(xs)
	ksx := make([][]*big.Float, m)
	for a := range s {
		ksx[a] = make([]*big.Float, n)
		for j := range xs {
			ksx[a][j] = bigRBF(s[a], xs[j], l)
		}
	}
	mk := func(lam float64, data bool) []*big.Float {
		out := make([]*big.Float, m*m)
		for a := 0; a < m; a++ {
			for c := 0; c < m; c++ {
				v := bigRBF(s[a], s[c], l)
				v.Mul(v, bf(lam))
				if data {
					for j := 0; j < n; j++ {
						t := new(big.Float).SetPrec(refPrec).Mul(ksx[a][j], ksx[c][j])
						v.Add(v, t.Mul(t, bf(float64(w[j]))))
					}
				}
				out[a*m+c] = v
			}
		}
		return out
	}
	rhs := make([]*big.Float, m)
	for a := 0; a < m; a++ {
		rhs[a] = bf(0)
		for j := 0; j < n; j++ {
			rhs[a].Add(rhs[a], new(big.Float).SetPrec(refPrec).Mul(ksx[a][j], bf(ysum[j])))
		}
	}
	// Right-hand sides: K_SX ysum, then k_S(x) for every query (twice).
	kq := make([][]*big.Float, len(q))
	b1 := [][]*big.Float{rhs}
	b2 := [][]*big.Float{}
	for i, x := range q {
		kq[i] = make([]*big.Float, m)
		c1, c2 := make([]*big.Float, m), make([]*big.Float, m)
		for a := range s {
			kq[i][a] = bigRBF(s[a], x, l)
			c1[a] = new(big.Float).Copy(kq[i][a])
			c2[a] = new(big.Float).Copy(kq[i][a])
		}
		b1 = append(b1, c1)
		b2 = append(b2, c2)
	}
	bigSolve(mk(lambda, true), b1, m)
	bigSolve(mk(1, false), b2, m)
	dotb := func(x, y []*big.Float) *big.Float {
		s := bf(0)
		for i := range x {
			s.Add(s, new(big.Float).SetPrec(refPrec).Mul(x[i], y[i]))
		}
		return s
	}
	for i := range q {
		mu, _ := dotb(kq[i], b1[0]).Float64()
		res := bf(1) // k(x,x) = 1 for the RBF
		res.Sub(res, dotb(kq[i], b2[i]))
		res.Quo(res, bf(lambda))
		res.Add(res, dotb(kq[i], b1[i+1]))
		v, _ := res.Float64()
		mean, vari = append(mean, mu), append(vari, v)
	}
	return mean, vari
}

// pinvDTC is the DTC posterior computed as the BKB authors' code does it,
// in plain float64: an eigendecomposition of K_SS with the eigenvalues
// below max * m * eps dropped (their stable_invert_root), the embedding
// K_XS U S^{-1/2}, and V = Z^T W Z + lambda I solved by Cholesky. It is
// the yardstick where lambda is so small that no float64 method reaches
// 1e-8.
func pinvDTC(l float64, s, xs [][]float64, w []int, ysum []float64, lambda float64, q [][]float64) (mean, vari []float64) {
	k := kernel.RBF{LengthScale: l}
	m := len(s)
	kss := mat.NewSymDense(m, nil)
	for a := range s {
		for c := 0; c <= a; c++ {
			kss.SetSym(a, c, k.Eval(s[a], s[c]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(kss, true) {
		panic("eigen")
	}
	vals := es.Values(nil)
	var u mat.Dense
	es.VectorsTo(&u)
	mx := 0.0
	for _, v := range vals {
		mx = math.Max(mx, v)
	}
	thresh := mx * float64(m) * 0x1p-52
	var keep []int
	for i, v := range vals {
		if math.Abs(v) > thresh {
			keep = append(keep, i)
		}
	}
	r := len(keep)
	embed := func(x []float64) []float64 {
		z := make([]float64, r)
		for c, e := range keep {
			var sum float64
			for a := range s {
				sum += k.Eval(s[a], x) * u.At(a, e)
			}
			z[c] = sum / math.Sqrt(vals[e])
		}
		return z
	}
	v := mat.NewSymDense(r, nil)
	bv := make([]float64, r)
	for j, x := range xs {
		z := embed(x)
		for a := 0; a < r; a++ {
			bv[a] += z[a] * ysum[j]
			for c := 0; c <= a; c++ {
				v.SetSym(a, c, v.At(a, c)+float64(w[j])*z[a]*z[c])
			}
		}
	}
	for a := 0; a < r; a++ {
		v.SetSym(a, a, v.At(a, a)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(v) {
		panic("chol")
	}
	var beta mat.VecDense
	_ = ch.SolveVecTo(&beta, mat.NewVecDense(r, bv))
	for _, x := range q {
		z := embed(x)
		zv := mat.NewVecDense(r, z)
		var g mat.VecDense
		_ = ch.SolveVecTo(&g, zv)
		mean = append(mean, mat.Dot(zv, &beta))
		vari = append(vari, (1-mat.Dot(zv, zv))/lambda+mat.Dot(zv, &g))
	}
	return mean, vari
}

// coreCase is one row of the table of hard cases.
type coreCase struct {
	name      string
	grid      int       // 1-D grid of this many points on [0,1] (0: pts)
	pts       []float64 // the points when grid is 0
	l, lambda float64
	resample  bool // S resampled by BKB's rule; else S = every observed point
}

// coreCases are the hard cases, on 20- and 40-point grids
// (the 40-point ones only without -short: the reference costs O(n^3) in
// 1024-bit arithmetic). Observations arrive in random order, each point
// once and a third of them twice.
var coreCases = []coreCase{
	{name: "grid20 l=0.2 lambda=1e-2 resampled", grid: 20, l: 0.2, lambda: 1e-2, resample: true},
	{name: "grid20 l=1 lambda=1e-4 all observed", grid: 20, l: 1, lambda: 1e-4},
	{name: "grid20 l=0.1 lambda=1e-6 all observed", grid: 20, l: 0.1, lambda: 1e-6},
	{name: "grid20 l=100 lambda=1e-2 all observed", grid: 20, l: 100, lambda: 1e-2},
	{name: "4 points l=0.88 lambda=1.5e-3 all observed", pts: []float64{0.1, 0.35, 0.6, 0.95}, l: 0.88, lambda: 1.5e-3},
	{name: "grid40 l=0.2 lambda=1e-2 resampled", grid: 40, l: 0.2, lambda: 1e-2, resample: true},
	{name: "grid40 l=1 lambda=1e-4 all observed", grid: 40, l: 1, lambda: 1e-4},
	{name: "grid40 l=0.1 lambda=1e-6 all observed", grid: 40, l: 0.1, lambda: 1e-6},
	{name: "grid40 l=100 lambda=1e-2 all observed", grid: 40, l: 100, lambda: 1e-2},
}

// runCoreCase plays the case's observations through a DTC (incrementally,
// S updated after each) and returns it with the reference inputs.
func runCoreCase(t *testing.T, c coreCase) (g *DTC, q [][]float64) {
	pts := c.pts
	if c.grid > 0 {
		pts = nil
		for i := 0; i < c.grid; i++ {
			pts = append(pts, float64(i)/float64(c.grid-1))
		}
	}
	// Candidates: the points and the midpoints between them.
	var cand []float64
	for i, p := range pts {
		cand = append(cand, p)
		if i+1 < len(pts) {
			cand = append(cand, (p+pts[i+1])/2)
		}
	}
	g, err := NewDTC(kernel.RBF{LengthScale: c.l}, 1, c.lambda)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetCandidates(mat.NewDense(len(cand), 1, cand)); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, uint64(c.grid)))
	order := rng.Perm(len(pts))
	order = append(order, order[:len(order)/3]...) // some repeats
	for _, p := range order {
		i := 2 * p
		y := math.Sin(6*cand[i]) + 0.1*rng.NormFloat64()
		if err := g.ObserveCandidate(i, y); err != nil {
			t.Fatal(err)
		}
		if c.resample {
			if _, _, err := g.Resample(rng, 2); err != nil {
				t.Fatal(err)
			}
		} else if _, _, err := g.SetDictionary(g.observed); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range cand {
		q = append(q, []float64{x})
	}
	return g, q
}

func refInputs(g *DTC) (s, xs [][]float64, w []int, ysum []float64) {
	for _, i := range g.dict {
		s = append(s, g.r.point(i))
	}
	for _, i := range g.observed {
		xs = append(xs, g.r.point(i))
		w = append(w, g.count[i])
		ysum = append(ysum, g.ysum[i])
	}
	return
}

// maxRelErr returns the largest |got-want|/|want| of the variances and
// the largest |got-want| / max|want| of the means.
func maxRelErr(gm, gv, wm, wv []float64) (meanErr, varErr float64) {
	var scale float64
	for _, v := range wm {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range gv {
		varErr = math.Max(varErr, math.Abs(gv[i]-wv[i])/math.Abs(wv[i]))
		meanErr = math.Max(meanErr, math.Abs(gm[i]-wm[i])/scale)
	}
	return
}

// TestExactCoreAgainstBigFloat: DTC variances and means against the
// 1024-bit reference, on the hard cases (there, with the
// old fixed pivot floor 1e-8 k(x,x): 1.7e-6, 1.4e-5, 8.4e-4, 4.6e-6 and a
// mean 1.15e-3 off). Where lambda >= 1e-4 the error must be below 1e-8;
// below that, within 10x of the authors' float64 method (pinvDTC).
// Incremental must equal rebuilt (1e-9, or 10x pinv's error where that
// is larger).
// Incremental must also equal rebuilt, and, with S = every observed
// point, the DTC must equal the exact GP (Exact, GP scale).
func TestExactCoreAgainstBigFloat(t *testing.T) {
	t.Parallel()
	for _, c := range coreCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if testing.Short() && c.grid > 20 {
				t.Skip("the 1024-bit reference costs O(grid^3)")
			}
			g, q := runCoreCase(t, c)
			s, xs, w, ys := refInputs(g)
			wm, wv := refDTC(c.l, s, xs, w, ys, c.lambda, q)
			gm := append([]float64(nil), g.Means()...)
			gv := append([]float64(nil), g.Variances()...)
			me, ve := maxRelErr(gm, gv, wm, wv)
			pm, pv := pinvDTC(c.l, s, xs, w, ys, c.lambda, q)
			pme, pve := maxRelErr(pm, pv, wm, wv)
			t.Logf("|S| = %d (%d dead), n = %d: variance rel. error %.2g (float64 pinv %.2g), mean %.2g (pinv %.2g)",
				len(s), g.ny.ndead, len(xs), ve, pve, me, pme)
			// 1e-8 where lambda >= 1e-4; below, and where the posterior
			// itself is so ill-conditioned that float64 pinv is worse than
			// 1e-9 (the resampled 40-point grid: 4e-4), within 10x of it.
			tol := 1e-8
			if c.lambda < 1e-4 || math.Max(pve, pme) > 1e-9 {
				tol = math.Max(tol, 10*math.Max(pve, pme))
			}
			if ve > tol || me > tol {
				t.Errorf("error %.3g (variance) %.3g (mean) above %.3g", ve, me, tol)
			}
			if err := g.Rebuild(); err != nil {
				t.Fatal(err)
			}
			rme, rve := maxRelErr(gm, gv, g.Means(), g.Variances())
			// Incremental equals rebuilt to 1e-9; below lambda = 1e-4 no
			// float64 method is that accurate, so within 10x of pinv's.
			if rtol := math.Max(1e-9, 10*math.Max(pve, pme)); rve > rtol || rme > rtol {
				t.Errorf("incremental vs rebuilt: variance %.3g, mean %.3g", rve, rme)
			} else {
				t.Logf("incremental vs rebuilt: variance %.2g, mean %.2g", rve, rme)
			}
			if c.resample {
				return
			}
			ex, _ := NewExact(kernel.RBF{LengthScale: c.l}, 1, c.lambda)
			cand := mat.NewDense(len(q), 1, nil)
			for i, x := range q {
				cand.Set(i, 0, x[0])
			}
			_ = ex.SetCandidates(cand)
			for k, i := range g.observed {
				for r := 0; r < w[k]; r++ {
					_ = ex.ObserveCandidate(i, ys[k]/float64(w[k]))
				}
			}
			// Exact with the mean of the repeats as each value gives the
			// same posterior mean as the sums (the data enter through
			// sum_s y_s k(x_s, .)).
			ev := make([]float64, len(q))
			for i, v := range ex.Variances() {
				ev[i] = v / c.lambda
			}
			eme, eve := maxRelErr(ex.Means(), ev, wm, wv)
			t.Logf("exact GP vs reference: variance %.2g, mean %.2g", eve, eme)
			dme, dve := maxRelErr(gm, gv, ex.Means(), ev)
			if c.lambda >= 1e-4 && (dve > 1e-8 || dme > 1e-8) {
				t.Errorf("DTC with S = all observed vs exact GP: variance %.3g, mean %.3g", dve, dme)
			}
		})
	}
}
