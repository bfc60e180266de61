package engine

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Local quadratic steps (configuration version 6): once the basin is
// found, a GP's posterior mean resolves the optimum to about its noise
// floor, and the trust region stops at its least radius, so a study
// stalled at 1e-4 to 1e-5 of the optimum of smooth functions where a
// local optimizer (CMA-ES, a quasi-Newton method) reaches 1e-9. Every
// localEvery-th ask (counted by completed evaluations) of a study whose
// parameters are all continuous is therefore a Newton step on a quadratic
// model of the values: the model is fitted by least squares to the
// localPoints(d) observed points nearest the best one, x0, and the step
// goes to its minimizer, at most as far from x0 as the farthest of those
// points (a trust region: the model is trusted where it was fitted), when
// its Hessian is positive definite; otherwise the ask is the policy's.
// This is the model-based local step of derivative-free trust-region
// methods (Conn, Scheinberg and Vicente 2009, ch. 10; Powell's NEWUOA,
// 2006), taken between the GP's asks: the other asks keep the global
// phase's ability to leave a wrong basin. The step is a function of the
// completed evaluations alone, so a replay asks the same points; a second
// ask at the same count (parallel workers) finds the step's point pending
// and asks the policy.

// localEvery: one ask in localEvery is a local step (chosen on the tuning
// half of the held-out suite, docs/robust.md).
const localEvery = 3

// localMaxDim bounds the encoded dimension of local steps: the model has
// (d+1)(d+2)/2 coefficients.
const localMaxDim = 10

// localPoints is the number of points the quadratic model is fitted to:
// twice its number of coefficients.
func localPoints(d int) int { return (d + 1) * (d + 2) }

// localStepDue reports whether the next ask is a local step.
func (e *Engine) localStepDue() bool {
	c := e.cfg
	if !c.rules().LocalSteps || e.ref == nil || c.Policy == "random" || c.Policy == "ada-bkb" || c.singleObjectiveRules() ||
		e.e > localMaxDim || !e.space.Continuous() {
		return false
	}
	t := len(e.succ)
	start := localStartPoints * localPoints(e.e)
	if c.Budget > 0 {
		start = max(c.Budget/localStartShare, localPoints(e.e))
	}
	return t >= max(c.Init, start) && t%localEvery == 0
}

// Local steps start once the global phase has had its share of the
// budget: a third (when horizonBeta starts to decay), or without a budget
// localStartPoints times the model's points. Local steps from the first
// trials polish the first basin found: on Goldstein-Price 2 of 3 seeds
// then ended in the local minimum 30.
const (
	localStartShare  = 3
	localStartPoints = 4
)

// bestObserved returns the encoded point of the best observed value, the
// earliest of ties (at least one observation).
func (e *Engine) bestObserved() []float64 {
	best := 0
	for i, o := range e.succ {
		if e.reward(o.value) > e.reward(e.succ[best].value) {
			best = i
		}
	}
	o := e.succ[best]
	return e.enc[o.arm*e.e : (o.arm+1)*e.e]
}

// localStep returns the encoded point of a local step, nil when the model
// gives none (too few points, a Hessian not positive definite, a step
// onto an observed or pending point).
func (e *Engine) localStep() []float64 {
	d := e.e
	t := len(e.succ)
	n := localPoints(d)
	if t < n {
		return nil
	}
	x0 := e.bestObserved()
	// The n nearest by (squared distance, index), in that order: a heap
	// selection (nearest, O(t log n)), where a stable sort of all t cost
	// O(t log t) every localEvery asks (about a fifth of a late trial's CPU
	// at t = 60,000, perf). The same points in the same order: the golden
	// journals of every version replay unchanged.
	idx, dist2 := nearest(e, x0, nil, n)
	r := math.Sqrt(dist2[n-1])
	if !(r > 1e-12) {
		return nil
	}
	// Least squares on z = (x - x0)/r: q(z) = a + g.z + sum_{j<=k} b_jk z_j z_k.
	p := (d + 1) * (d + 2) / 2
	A := mat.NewDense(n, p, nil)
	y := mat.NewVecDense(n, nil)
	z := make([]float64, d)
	for row, i := range idx {
		o := e.succ[i]
		x := e.enc[o.arm*d : (o.arm+1)*d]
		for j := range z {
			z[j] = (x[j] - x0[j]) / r
		}
		A.Set(row, 0, 1)
		col := 1
		for j := range d {
			A.Set(row, col, z[j])
			col++
		}
		for j := range d {
			for k := j; k < d; k++ {
				A.Set(row, col, z[j]*z[k])
				col++
			}
		}
		y.SetVec(row, -e.reward(o.value))
	}
	var coef mat.VecDense
	if err := coef.SolveVec(A, y); err != nil {
		return nil
	}
	g := make([]float64, d)
	H := mat.NewSymDense(d, nil)
	col := 1
	for j := range d {
		g[j] = coef.AtVec(col)
		col++
	}
	for j := range d {
		for k := j; k < d; k++ {
			if j == k {
				H.SetSym(j, j, 2*coef.AtVec(col))
			} else {
				H.SetSym(j, k, coef.AtVec(col))
			}
			col++
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(H) {
		return nil
	}
	var s mat.VecDense
	if err := ch.SolveVecTo(&s, mat.NewVecDense(d, g)); err != nil {
		return nil
	}
	norm := mat.Norm(&s, 2)
	if !(norm > 0) || math.IsNaN(norm) {
		return nil
	}
	scale := math.Min(1, 1/norm) // the step s solves H s = g: go to -s
	u := make([]float64, d)
	for j := range u {
		u[j] = math.Min(1, math.Max(0, x0[j]-scale*s.AtVec(j)*r))
	}
	return u
}

// localArm returns the arm of a local step, or -1 when none is due or the
// step's point is observed or pending.
func (e *Engine) localArm() int {
	if !e.localStepDue() {
		return -1
	}
	u := e.localStep()
	if u == nil {
		return -1
	}
	x := make([]float64, e.p)
	e.space.Decode(x, u)
	if e.cond != nil {
		e.cond.Canonicalize(x) // (a conditional space takes no local steps)
	}
	if i, ok := e.byX[PointKey(x)]; ok {
		for _, o := range e.succ {
			if o.arm == i {
				return -1
			}
		}
		if slices.Contains(e.pendingArms(), i) {
			return -1
		}
		return i
	}
	if e.space.Check(x) != nil {
		return -1
	}
	return e.addArm(x)
}
