package pruner

import (
	"math"
	"slices"
)

// ExpDecay is a learning curve y(s) = A + B exp(-s/Tau): the exponential
// decay basis of freeze-thaw Bayesian optimization (Swersky, Snoek and
// Adams 2014), one of the parametric curve families of Domhan, Springenberg
// and Hutter (2015). A is the curve's limit, B how far it starts above it
// (negative for a curve that rises) and Tau how many steps it takes to get
// there.
type ExpDecay struct {
	A, B, Tau float64
	// RSS is the residual sum of squares of the fit.
	RSS float64
}

// At returns the curve's value at step s.
func (e ExpDecay) At(s float64) float64 { return e.A + e.B*math.Exp(-s/e.Tau) }

// The range of Tau searched by FitExpDecay: from a curve that is flat after
// one step to one that is nearly a straight line over thousands of steps.
const (
	tauMin    = 0.2
	tauMax    = 1e4
	tauGrid   = 48 // log-spaced grid points
	tauRefine = 40 // golden-section iterations around the best grid point
)

// linearFit returns the least-squares A and B of y ≈ A + B exp(-s/tau) and
// the residual sum of squares (the closed form of a line fit in
// z = exp(-s/tau)); n = len(steps) >= 2.
// z is scratch of len(steps), which holds exp(-s/tau) after the call.
func linearFit(steps []int, values []float64, tau float64, z []float64) (a, b, rss float64) {
	n := float64(len(steps))
	var mz, my float64
	for i, s := range steps {
		z[i] = math.Exp(-float64(s) / tau)
		mz += z[i]
		my += values[i]
	}
	mz /= n
	my /= n
	var szz, szy float64
	for i := range steps {
		dz := z[i] - mz
		szz += dz * dz
		szy += dz * (values[i] - my)
	}
	if szz > 1e-300 {
		b = szy / szz
	}
	a = my - b*mz
	for i := range steps {
		r := values[i] - a - b*z[i]
		rss += r * r
	}
	return a, b, rss
}

// FitExpDecay fits A + B exp(-s/Tau) to the points (steps[i], values[i])
// by least squares: A and B in closed form for each Tau, Tau by a
// log-spaced grid over [0.2, 10^4] refined by golden-section search around
// the best grid point. It needs at least three distinct steps; the fit is a
// deterministic function of its input.
func FitExpDecay(steps []int, values []float64) (ExpDecay, bool) {
	if len(steps) != len(values) || len(steps) < 3 {
		return ExpDecay{}, false
	}
	distinct := slices.Clone(steps)
	slices.Sort(distinct)
	if len(slices.Compact(distinct)) < 3 {
		return ExpDecay{}, false
	}
	lo, hi := math.Log(tauMin), math.Log(tauMax)
	z := make([]float64, len(steps))
	cost := func(logTau float64) float64 {
		_, _, rss := linearFit(steps, values, math.Exp(logTau), z)
		return rss
	}
	best, bestCost := 0, math.Inf(1)
	grid := make([]float64, tauGrid)
	for i := range grid {
		grid[i] = lo + (hi-lo)*float64(i)/float64(tauGrid-1)
		if c := cost(grid[i]); c < bestCost {
			best, bestCost = i, c
		}
	}
	// Golden-section search on the bracket of the best grid point.
	l, r := grid[max(best-1, 0)], grid[min(best+1, tauGrid-1)]
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := r-g*(r-l), l+g*(r-l)
	f1, f2 := cost(x1), cost(x2)
	for range tauRefine {
		if f1 <= f2 {
			r, x2, f2 = x2, x1, f1
			x1 = r - g*(r-l)
			f1 = cost(x1)
		} else {
			l, x1, f1 = x1, x2, f2
			x2 = l + g*(r-l)
			f2 = cost(x2)
		}
	}
	logTau := grid[best]
	if f1 < bestCost && f1 <= f2 {
		logTau = x1
	} else if f2 < bestCost {
		logTau = x2
	}
	tau := math.Exp(logTau)
	a, b, rss := linearFit(steps, values, tau, z)
	return ExpDecay{A: a, B: b, Tau: tau, RSS: rss}, true
}

// prefix returns the reports of c at steps up to step, in step order.
func prefix(c Curve, step int) ([]int, []float64) {
	idx := make([]int, 0, len(c.Steps))
	for i, s := range c.Steps {
		if s <= step {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(i, j int) int { return c.Steps[i] - c.Steps[j] })
	steps := make([]int, len(idx))
	values := make([]float64, len(idx))
	for k, i := range idx {
		steps[k], values[k] = c.Steps[i], c.Values[i]
	}
	return steps, values
}

// CurveExtrapolation stops a trial whose learning curve, extrapolated to
// the final step, cannot by the study's own record of such extrapolations
// beat the Rank-th best final value of the complete trials. It is this
// package's own rule, beyond Optuna's:
//
//  1. The trial's reports so far are fitted by least squares with the
//     exponential decay A + B exp(-s/Tau) (FitExpDecay; the basis of
//     freeze-thaw Bayesian optimization, Swersky, Snoek and Adams 2014,
//     and one of the families of Domhan, Springenberg and Hutter 2015),
//     and the fit is evaluated at the complete trials' last step.
//  2. Every complete trial's curve is cut at the same step, fitted and
//     extrapolated the same way, and compared with how it actually ended:
//     its error e = final - forecast.
//  3. The trial's optimistic final value is its forecast plus the most
//     negative of those errors (the largest amount by which any complete
//     curve ended better than its own early forecast said). It is pruned
//     when that is still worse than the Rank-th best final value.
//
// The family is only the means of forecasting: the calibration in step 2
// measures how wrong it is on this study's curves, whatever their shape.
// If the trial's forecast error is exchangeable with those of n complete
// trials, the chance that it ends better than its optimistic value is at
// most 1/(n+1). Nothing is pruned before StartupTrials trials are complete,
// at steps below WarmupSteps or with fewer than four reports, at or after
// the complete trials' last step, or while fewer than StartupTrials
// complete trials reported the step. A decision reads only the curves it
// is shown, so every worker reaches the same one.
type CurveExtrapolation struct {
	StartupTrials int // no pruning before this many trials are complete
	WarmupSteps   int // no pruning at steps below this
	Rank          int // compare with the Rank-th best final value (1: the incumbent)
}

// minReports is the fewest reports a forecast is made from: three
// parameters and one degree of freedom.
const minReports = 4

// Forecast returns the trial's forecast of its value at step final from
// its reports so far, and false when it has fewer than four reports.
func Forecast(c Curve, final int) (float64, bool) {
	steps, values := prefix(c, math.MaxInt)
	if len(steps) < minReports {
		return 0, false
	}
	fit, ok := FitExpDecay(steps, values)
	if !ok {
		return 0, false
	}
	return fit.At(float64(final)), true
}

// Prune implements Pruner.
func (p CurveExtrapolation) Prune(s Study, cur Curve) bool {
	n := len(cur.Steps)
	if n < minReports {
		return false
	}
	step := cur.Steps[n-1]
	if step < p.WarmupSteps {
		return false
	}
	finals, last := s.Finals()
	if len(finals) == 0 || len(finals) < p.StartupTrials || step >= last {
		return false
	}
	steps, values := prefix(cur, step)
	fit, ok := FitExpDecay(steps, values)
	if !ok {
		return false
	}
	forecast := fit.At(float64(last))
	slices.Sort(finals)
	threshold := finals[min(max(p.Rank, 1), len(finals))-1]
	if forecast <= threshold {
		return false // cheap exit: the plain forecast already competes
	}
	// Calibrate on the complete trials cut at the same step.
	worst, seen := 0.0, 0
	for _, t := range s.Trials {
		if !t.Complete || len(t.Steps) == 0 {
			continue
		}
		ls := t.LastStep()
		if ls <= step {
			continue
		}
		ts, tv := prefix(t, step)
		if len(ts) < minReports {
			continue
		}
		tf, ok := FitExpDecay(ts, tv)
		if !ok {
			continue
		}
		final, _ := t.ValueAt(ls)
		worst = math.Min(worst, final-tf.At(float64(ls)))
		seen++
		if forecast+worst <= threshold {
			return false // already rescued: no need to look further
		}
	}
	if seen < max(p.StartupTrials, 1) {
		return false
	}
	return forecast+worst > threshold
}
