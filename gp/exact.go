package gp

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// Exact is the exact GP posterior (Calandriello et al., COLT 2019, Sec. 2) with observation noise lambda, updated one observation at a
// time:
//
//	mu_t(x)      = k_t(x)^T (K_t + lambda I)^{-1} y_t
//	sigma_t^2(x) = k(x,x) - k_t(x)^T (K_t + lambda I)^{-1} k_t(x)
//
// It keeps the Cholesky factor L of K_t + lambda I and extends it by one
// row per observation (O(t^2); O(t) when the point is a candidate), never
// refactoring. Repeated observations of one point are separate rows.
//
// With a candidate set (SetCandidates), it also keeps, for every candidate
// x, the column c(x) = L^{-1} k_t(x), so that each observation updates the
// mean and variance of all A candidates in O(A t) with the rank-one
// identity sigma_{t+1}^2(x) = sigma_t^2(x) - c_new(x)^2, c_new(x) =
// (k(x,x_new) - c(x).c(x_new)) / sqrt(sigma_t^2(x_new) + lambda).
//
// Exact is not safe for concurrent use.
type Exact struct {
	k      kernel.Kernel
	dim    int
	lambda float64

	obs   []float64 // t x dim observed points
	y     []float64
	l     chol.Factor
	alpha []float64 // L^{-1} y

	cand *rows // candidates; emb rows are c(x), len t
	work []float64
	pass exactPass
	wg   sync.WaitGroup

	clamps     int // negative variances set to 0
	condJitter int // jitter of ConditionalVariances' factorizations
}

// exactPass appends the new coordinate c_new(x) to every candidate's
// column and applies the rank-one mean and variance updates.
type exactPass struct {
	g       *Exact
	x       []float64
	l       []float64
	d, a    float64
	clamped atomic.Int64
}

func (p *exactPass) run(lo, hi int) {
	g, c, l, t := p.g, p.g.cand, p.l, len(p.l)
	var clamped int64
	defer func() {
		if clamped > 0 {
			p.clamped.Add(clamped)
		}
	}()
	for i := lo; i < hi; i++ {
		cn := (g.k.Eval(c.x[i*c.d:(i+1)*c.d], p.x) - c.dotRow(i, l)) / p.d
		c.set(i, t, cn)
		c.mean[i] += cn * p.a
		v := c.vari[i] - cn*cn
		if v < 0 {
			v = 0
			clamped++
		}
		c.vari[i] = v
	}
}

// NewExact returns an exact GP posterior with prior kernel k on points of
// dimension dim and noise variance lambda >= 0. With lambda = 0, repeated
// points make K_t singular: the factor then gets a tiny jitter (see
// Jitter) instead of failing.
func NewExact(k kernel.Kernel, dim int, lambda float64) (*Exact, error) {
	if err := kernel.Validate(k); err != nil {
		return nil, err
	}
	if dim <= 0 {
		return nil, fmt.Errorf("gp: point dimension must be positive, got %d", dim)
	}
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("gp: noise variance lambda must be finite and >= 0, got %v", lambda)
	}
	return &Exact{k: k, dim: dim, lambda: lambda}, nil
}

// SetCandidates attaches a candidate set (rows of x) whose posterior means
// and variances are kept up to date after every observation. It must be
// called before the first observation.
func (g *Exact) SetCandidates(x *mat.Dense) error {
	if g.Len() > 0 {
		return fmt.Errorf("gp: SetCandidates after %d observations", g.Len())
	}
	if _, c := x.Dims(); c != g.dim {
		return fmt.Errorf("gp: candidates have dimension %d, want %d", c, g.dim)
	}
	r, err := newRows(g.k, x)
	if err != nil {
		return err
	}
	copy(r.vari, r.kdiag)
	g.cand = r
	return nil
}

// Reserve preallocates room for t observations (the factor and, with
// candidates, the A x t matrix of c(x) columns).
func (g *Exact) Reserve(t int) {
	g.l.Reserve(t)
	if g.cand != nil {
		g.cand.ensureCoords(t)
	}
}

// Len returns the number of observations t.
func (g *Exact) Len() int { return len(g.y) }

// Dim returns the dimension of the points.
func (g *Exact) Dim() int { return g.dim }

// Lambda returns the noise variance.
func (g *Exact) Lambda() float64 { return g.lambda }

// Kernel returns the prior kernel.
func (g *Exact) Kernel() kernel.Kernel { return g.k }

// Jitter reports the jitter added to the diagonal of K_t + lambda I.
func (g *Exact) Jitter() (total float64, count int) { return g.l.Jitter() }

// NumCandidates returns the number of candidates (0 without a set).
func (g *Exact) NumCandidates() int {
	if g.cand == nil {
		return 0
	}
	return g.cand.n()
}

// Means returns the posterior mean of every candidate. The slice aliases
// internal state, is updated in place by later observations, and must not
// be modified.
func (g *Exact) Means() []float64 { return g.cand.mean }

// Variances returns the posterior variance of every candidate (aliasing
// internal state like Means).
func (g *Exact) Variances() []float64 { return g.cand.vari }

// Observe adds the observation y at point x. O(t^2 + A t).
func (g *Exact) Observe(x []float64, y float64) error {
	if err := checkPoint(x, g.dim); err != nil {
		return err
	}
	if err := checkValue(y); err != nil {
		return err
	}
	t := g.Len()
	if cap(g.work) < t+1 {
		g.work = make([]float64, t+1, 2*t+16)
	}
	g.observe(x, y, g.embed(g.work, x))
	return nil
}

// ObserveCandidate adds the observation y at candidate i. The factor's new
// row is c(x_i), already kept, so this costs O(A t) with no solve.
func (g *Exact) ObserveCandidate(i int, y float64) error {
	if g.cand == nil || i < 0 || i >= g.cand.n() {
		return fmt.Errorf("gp: candidate %d out of range [0,%d)", i, g.NumCandidates())
	}
	if err := checkValue(y); err != nil {
		return err
	}
	t := g.Len()
	if cap(g.work) < t+1 {
		g.work = make([]float64, t+1, 2*t+16)
	}
	l := g.cand.load(g.work, i, t)
	g.observe(g.cand.point(i), y, l)
	return nil
}

// observe appends (x, y) given l = L^{-1} k_t(x).
func (g *Exact) observe(x []float64, y float64, l []float64) {
	t := len(l)
	d := g.l.AppendSolved(l, kernel.Diag(g.k, x)+g.lambda)
	a := (y - dot(l, g.alpha)) / d
	g.alpha = append(g.alpha, a)
	g.obs = append(g.obs, x...)
	g.y = append(g.y, y)
	c := g.cand
	if c == nil {
		return
	}
	c.ensureCoords(t + 1)
	g.pass.g, g.pass.x, g.pass.l, g.pass.d, g.pass.a = g, x, l, d, a
	runRows(c.n(), &g.pass, &g.wg)
	g.clamps += int(g.pass.clamped.Swap(0))
	c.m = t + 1
}

// embed writes c = L^{-1} k_t(x) into dst[:t].
func (g *Exact) embed(dst, x []float64) []float64 {
	t := g.Len()
	dst = dst[:t]
	for i := 0; i < t; i++ {
		dst[i] = g.k.Eval(g.obs[i*g.dim:(i+1)*g.dim], x)
	}
	g.l.SolveL(dst)
	return dst
}

// Predict returns the posterior mean and variance at x. O(t^2).
func (g *Exact) Predict(x []float64) (mean, variance float64, err error) {
	if err := checkPoint(x, g.dim); err != nil {
		return 0, 0, err
	}
	c := g.embed(make([]float64, g.Len()), x)
	return dot(c, g.alpha), math.Max(0, kernel.Diag(g.k, x)-dot(c, c)), nil
}

// Covariance returns the posterior covariance
// c_t(x, x') = k(x,x') - k_t(x)^T (K_t + lambda I)^{-1} k_t(x'). O(t^2).
func (g *Exact) Covariance(x, xp []float64) (float64, error) {
	if err := checkPoint(x, g.dim); err != nil {
		return 0, err
	}
	if err := checkPoint(xp, g.dim); err != nil {
		return 0, err
	}
	c := g.embed(make([]float64, g.Len()), x)
	cp := g.embed(make([]float64, g.Len()), xp)
	return g.k.Eval(x, xp) - dot(c, cp), nil
}

// LogMarginalLikelihood returns log p(y_t) under the GP prior with noise:
// -1/2 y^T (K+lambda I)^{-1} y - 1/2 log det(K + lambda I) - t/2 log 2 pi
// (Rasmussen & Williams Eq. 2.30), with y^T (K+lambda I)^{-1} y = ||L^{-1} y||^2.
func (g *Exact) LogMarginalLikelihood() float64 {
	t := float64(g.Len())
	return -0.5*dot(g.alpha, g.alpha) - 0.5*g.l.LogDet() - 0.5*t*math.Log(2*math.Pi)
}

// Weights returns (K_t + lambda I)^{-1} y_t, the representer weights of
// the posterior mean mu_t(x) = sum_s w_s k(x_s, x).
func (g *Exact) Weights() []float64 {
	w := append([]float64(nil), g.alpha...)
	g.l.SolveLT(w)
	return w
}

// Rebuild recomputes the factor and every candidate's column from scratch:
// O(t^3 + A t^2). This is what a GP-UCB without incremental updates does
// every step; it is the baseline of the scaling benchmarks and a reference
// for the tests.
func (g *Exact) Rebuild() error {
	t := g.Len()
	a := make([]float64, t*t)
	for i := 0; i < t; i++ {
		for j := 0; j <= i; j++ {
			v := g.k.Eval(g.obs[i*g.dim:(i+1)*g.dim], g.obs[j*g.dim:(j+1)*g.dim])
			a[i*t+j], a[j*t+i] = v, v
		}
		a[i*t+i] += g.lambda
	}
	if err := g.l.Factorize(a, t, t); err != nil {
		return fmt.Errorf("gp: rebuilding the exact posterior: %w", err)
	}
	copy(g.alpha, g.y)
	g.l.SolveL(g.alpha)
	c := g.cand
	if c == nil {
		return nil
	}
	c.ensureCoords(t)
	c.m = t
	var clamped atomic.Int64
	parallelFor(c.n(), func(lo, hi int) {
		row := make([]float64, t)
		for i := lo; i < hi; i++ {
			x := c.point(i)
			for s := 0; s < t; s++ {
				row[s] = g.k.Eval(g.obs[s*g.dim:(s+1)*g.dim], x)
			}
			g.l.SolveL(row)
			c.store(i, row)
			c.mean[i] = dot(row, g.alpha)
			v := c.kdiag[i] - dot(row, row)
			if v < 0 {
				v = 0
				clamped.Add(1)
			}
			c.vari[i] = v
		}
	})
	g.clamps += int(clamped.Load())
	return nil
}

// Numerics reports the numerical safeguards that fired so far.
func (g *Exact) Numerics() Numerics {
	_, j := g.l.Jitter()
	return Numerics{VarianceClamps: g.clamps, RetryJitter: j + g.condJitter}
}
