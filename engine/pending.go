package engine

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// Pending evaluations (parallel workers) and the refiner's trust-region
// phases. With several workers, the results that arrive just after the
// trust region restarted (a local phase begins, see refiner.startLocal, or
// one ends) are of points asked before, around the previous center.
// Counted for the new phase they made the phase's best point, its center,
// jump back to the incumbent's basin (a local phase meant to search a
// second basin at least localSeparation away then refined the incumbent's
// instead: 4 workers, Hartmann 6, T=200, seed 4 spent its 76 local-phase
// evaluations at the incumbent), and counted as successes or failures of
// a region they were not drawn from. Such results still improve the best
// value, but not the phase. Without pending trials nothing changes: every
// observation after a restart is of a point asked after it.

// markPhaseStale records the trials pending when the region restarts.
func (r *refiner) markPhaseStale(e *Engine) {
	r.phaseStale = nil
	for t := range e.pending {
		if r.phaseStale == nil {
			r.phaseStale = map[int]bool{}
		}
		r.phaseStale[t] = true
	}
}

// skipStale reports whether the observation of trial with reward v must
// not move the trust region, and if so only updates the best reward:
//   - a trial pending when the trust region last restarted was asked for
//     the previous phase;
//   - a trial pending when an improvement was observed was asked without
//     knowing it, and is not a failure of the region for falling short of
//     it: with 4 workers, every success was followed by up to 3 such
//     "failures", and the region shrank at several times the sequential
//     rate (Hartmann 6, seed 2: radius 0.1 at trial 30 against 0.8), as
//     TuRBO counts successes and failures per batch for the same reason
//     (Eriksson et al. 2019, Sec. 2).
//
// An observation that improves is marked for the trials then pending. In a
// sequential study nothing is pending when an observation is tracked, and
// nothing changes.
func (r *refiner) skipStale(e *Engine, trial int, v float64) bool {
	if r.phaseStale[trial] {
		delete(r.phaseStale, trial)
		r.best = math.Max(r.best, v)
		return true
	}
	ref := r.best
	if r.local != nil {
		ref = r.localBest
	}
	improved := !math.IsInf(r.best, -1) && v > ref+r.threshold
	if r.failStale[trial] {
		delete(r.failStale, trial)
		if !improved {
			r.best = math.Max(r.best, v)
			return true
		}
	}
	if improved {
		for t := range e.pending {
			if r.failStale == nil {
				r.failStale = map[int]bool{}
			}
			r.failStale[t] = true
		}
	}
	return false
}

// pendingCond conditions the acquisition's variances on the pending
// trials as GP-BUCB does (Desautels, Krause and Burdick 2014, Sec. 4): the
// posterior variance after hallucinated observations at the pending
// points, whose values are not known yet (a GP's variance does not depend
// on them),
//
//	var'(x) = var(x) - c(x,P)^T (C_PP + lambda I)^{-1} c(x,P),
//
// with c the posterior covariance (gp.CrossCovariance: exact, or the DTC's
// covariance function lambda*c~) and lambda the posterior's noise. P has
// at most Workers-1 points, so the p x p factor is made once per ask and
// each candidate costs one more prediction.
type pendingCond struct {
	cc    *gp.CrossCovariance
	scale float64 // c to the GP scale
	ch    mat.Cholesky
	kern  kernel.Kernel
	pts   [][]float64
	c     []float64 // cross covariances of lastX
	lastX []float64
	cv, s mat.VecDense
}

// pendingScreen is the prior squared correlation with every pending point
// below which a candidate's variance is left as it is: the reduction is
// then below about pendingScreen of the variance, and the candidate (most
// of the global set) is spared the cross-covariance prediction.
const pendingScreen = 1e-2

// newPendingCond returns the conditioning on e's pending trials, nil when
// none is pending.
func (r *refiner) newPendingCond(e *Engine) (*pendingCond, error) {
	if len(e.pending) == 0 || (r.dtc == nil && r.exact == nil) {
		return nil, nil
	}
	trials := make([]int, 0, len(e.pending))
	for t := range e.pending {
		trials = append(trials, t)
	}
	slices.Sort(trials)
	c := &pendingCond{scale: 1, kern: r.kern}
	for _, t := range trials {
		a := e.pending[t]
		c.pts = append(c.pts, e.enc[a*e.e:(a+1)*e.e])
	}
	var err error
	if r.dtc != nil {
		c.cc, err = r.dtc.CrossCovariance(c.pts)
		c.scale = r.lambda
	} else {
		c.cc, err = r.exact.CrossCovariance(c.pts)
	}
	if err != nil {
		return nil, err
	}
	p := len(c.pts)
	cpp := mat.NewSymDense(p, nil)
	for a := 0; a < p; a++ {
		for b := 0; b <= a; b++ {
			cpp.SetSym(a, b, c.scale*c.cc.Between(a, b))
		}
		cpp.SetSym(a, a, cpp.At(a, a)+r.lambda)
	}
	if !c.ch.Factorize(cpp) {
		return nil, fmt.Errorf("study: covariance of the %d pending points is not positive definite", p)
	}
	c.c = make([]float64, p)
	c.cv = *mat.NewVecDense(p, nil)
	return c, nil
}

// predict returns the posterior mean and variance at x when x is near a
// pending point (ok), keeping x's cross covariances for variance, so that
// the candidate is embedded once.
func (c *pendingCond) predict(x []float64) (m, v float64, ok bool) {
	if !c.near(x) {
		return 0, 0, false
	}
	m, v, err := c.cc.Predict(x, c.c)
	if err != nil {
		return 0, 0, false
	}
	c.lastX = append(c.lastX[:0], x...)
	return m, c.scale * v, true
}

// near reports whether x's prior squared correlation with some pending
// point exceeds pendingScreen.
func (c *pendingCond) near(x []float64) bool {
	for _, p := range c.pts {
		kxp := c.kern.Eval(x, p)
		if kxp*kxp > pendingScreen*kernel.Diag(c.kern, x)*kernel.Diag(c.kern, p) {
			return true
		}
	}
	return false
}

// variance returns the variance v of x conditioned on the pending points,
// and false if x is one of them (a point already being evaluated).
func (c *pendingCond) variance(x []float64, v float64) (float64, bool) {
	near := false
	for _, p := range c.pts {
		kxp := c.kern.Eval(x, p)
		rho2 := kxp * kxp / (kernel.Diag(c.kern, x) * kernel.Diag(c.kern, p))
		if rho2 > 1-1e-12 {
			return 0, false
		}
		near = near || rho2 > pendingScreen
	}
	if !near {
		return v, true
	}
	if !slices.Equal(x, c.lastX) {
		if _, _, err := c.cc.Predict(x, c.c); err != nil {
			return v, true
		}
	}
	for a, ca := range c.c {
		c.cv.SetVec(a, c.scale*ca)
	}
	if err := c.ch.SolveVecTo(&c.s, &c.cv); err != nil {
		return v, true
	}
	return math.Max(v-mat.Dot(&c.cv, &c.s), 0), true
}
