package gp

import (
	"fmt"
	"math"
)

// InclusionProbability returns min(1, qbar * sigma~^2(x_i) * count_i)
// with the current variance of row i: the probability that observed row i
// would be in a dictionary drawn now (ridge leverage score sampling;
// with counts as in the authors' batch-bkb code). Resample itself uses the
// variances before the newest observation; see Resample.
func (g *DTC) InclusionProbability(i int, qbar float64) float64 {
	g.flush()
	return math.Min(1, qbar*g.r.vari[i]*float64(g.count[i]))
}

// inclusion is the probability that Resample uses for the k-th observed
// row: as InclusionProbability, with sigma~_t (before the newest
// observation) unless SetLeverageAfterObservation is on or no
// observation was made since the last resampling.
func (g *DTC) inclusion(k int, qbar float64) float64 {
	i := g.observed[k]
	v := g.r.vari[i]
	if g.preValid && !g.leverageAfter {
		v = g.preVar[k]
	}
	return math.Min(1, qbar*v*float64(g.count[i]))
}

// SetLeverageAfterObservation makes Resample and ResampleIncremental
// compute the inclusion probabilities from the variances after the
// newest observation (sigma~_{t+1}, the ridge leverage scores of all the
// data), which is what this package did at first. The default
// follows Algorithm 1 of Calandriello et al. (COLT 2019): p_{t+1,i} = qbar sigma~_t^2(x_i), the
// variances under S_t and X_t, before y_{t+1}; Theorem 3.1's argument
// that sigma~ over-estimates sigma needs that order. The two differ only
// in which posterior the probabilities are read from; the after-order
// gives slightly smaller probabilities (variances only shrink with data),
// so slightly smaller dictionaries.
func (g *DTC) SetLeverageAfterObservation(on bool) { g.leverageAfter = on }

// Resample draws a fresh dictionary: each observed row enters with
// probability min(1, qbar sigma~_t^2(x_i) count_i), independently, as
// BKB's Algorithm 1 states it (sigma~_t: the variance before the newest
// observation; see SetLeverageAfterObservation). After the first
// observation S_1 = {x_1}, as Algorithm 1 initialises it, so that the
// first draw never leaves S empty. It returns how many points entered
// and left S.
func (g *DTC) Resample(src Uniform, qbar float64) (added, removed int, err error) {
	if !(qbar > 0) {
		return 0, 0, fmt.Errorf("gp: qbar must be positive, got %v", qbar)
	}
	if !g.preValid || g.leverageAfter {
		g.flush()
	}
	g.sel = g.sel[:0]
	if g.firstDictionary() {
		return g.applySelection()
	}
	for k := range g.observed {
		if src.Float64() < g.inclusion(k, qbar) {
			g.sel = append(g.sel, g.observed[k])
		}
	}
	g.preValid = false
	return g.applySelection()
}

// firstDictionary sets the selection to S_1 = {x_1} when exactly one
// observation has been made.
func (g *DTC) firstDictionary() bool {
	if g.nobs != 1 {
		return false
	}
	g.sel = append(g.sel, g.observed[0])
	g.preValid = false
	return true
}

// applySelection makes S the rows in g.sel (a subset of the observed rows,
// in observation order). When nothing changes, as in most steps of the
// incremental variant, it allocates nothing.
func (g *DTC) applySelection() (added, removed int, err error) {
	if len(g.sel) == len(g.dict) {
		same := true
		for _, i := range g.sel {
			if g.pos[i] < 0 {
				same = false
				break
			}
		}
		if same {
			return 0, 0, nil
		}
	}
	return g.SetDictionary(g.keepOrder(g.sel))
}

// ResampleIncremental is the incremental variant that Calandriello et al. (COLT 2019) mentions
// (keep x_i with probability p_new/p_old, add a new point with its p),
// implemented by coupling: each observed row draws one uniform threshold
// u_i the first time it is resampled, and is in S exactly while
// u_i < p_i. Given the current state, S has the law of a fresh draw, and
// when p_i shrinks a member stays with probability p_new/p_old, as the
// paper says; S changes only when a probability crosses its threshold,
// which, since variances mostly shrink as data arrives, is rare. Along an
// adaptive run the thresholds are never redrawn, so the arms chosen depend
// on them and |S| is biased upwards at small qbar (measured: +2 points
// over sum p = 17.6 at qbar = 1; none measurable at qbar = 4; see
// TestResampleIncrementalAdaptiveLaw).
func (g *DTC) ResampleIncremental(src Uniform, qbar float64) (added, removed int, err error) {
	if !(qbar > 0) {
		return 0, 0, fmt.Errorf("gp: qbar must be positive, got %v", qbar)
	}
	if !g.preValid || g.leverageAfter {
		g.flush()
	}
	g.sel = g.sel[:0]
	if g.firstDictionary() {
		return g.applySelection()
	}
	for k, i := range g.observed {
		if math.IsNaN(g.thresh[i]) {
			g.thresh[i] = src.Float64()
		}
		if g.thresh[i] < g.inclusion(k, qbar) {
			g.sel = append(g.sel, i)
		}
	}
	g.preValid = false
	return g.applySelection()
}

// keepOrder orders rows with current members first, in dictionary order,
// so that SetDictionary never reorders S.
func (g *DTC) keepOrder(rows []int) []int {
	out := g.orderBuf[:0]
	if len(g.mark) < g.r.n() {
		g.mark = append(g.mark, make([]bool, g.r.n()-len(g.mark))...)
	}
	for _, i := range rows {
		g.mark[i] = true
	}
	for _, i := range g.dict {
		if g.mark[i] {
			out = append(out, i)
		}
	}
	for _, i := range rows {
		g.mark[i] = false
		if g.pos[i] < 0 {
			out = append(out, i)
		}
	}
	g.orderBuf = out
	return out
}

// clampVar returns v, or 0 with the clamp counted in *n when rounding
// made it negative.
func clampVar(v float64, n *int) float64 {
	if v < 0 {
		*n++
		return 0
	}
	return v
}

// Numerics counts the numerical safeguards that fired in a posterior, so
// that a caller can say when they happened.
type Numerics struct {
	// VarianceClamps counts variances that rounding made negative and
	// that were set to 0.
	VarianceClamps int
	// RetryJitter counts diagonal entries that chol.Factorize had to
	// jitter (conditioning on pending points, rebuilds).
	RetryJitter int
	// DeadPivots is the number of inducing points that currently
	// contribute no direction (DTC: a point with the coordinates of
	// another point of S; under SetLegacyCore, any pivot below rounding
	// noise).
	DeadPivots int
	// FlooredPivots is the number of inducing points whose squared pivot
	// was below rounding noise and that keep a direction with the
	// squared pivot set to that noise (DTC, not under SetLegacyCore).
	FlooredPivots int
	// Repivots counts rebuilds in canonical pivoted order that a
	// near-dependent new inducing point caused (DTC; under
	// SetLegacyCore, a new pivot within an estimate of its forward
	// error).
	Repivots int
	// Revived counts dead inducing points that became live again after
	// the point they depended on left S (DTC under SetLegacyCore;
	// otherwise the rebuilds that near-dependent points cause decide
	// them afresh).
	Revived int
}

// Numerics reports the numerical safeguards that fired so far.
func (g *DTC) Numerics() Numerics {
	_, j := g.vf.Jitter()
	return Numerics{VarianceClamps: g.clamps, RetryJitter: j + g.condJitter, DeadPivots: g.ny.ndead, FlooredPivots: g.ny.nfloor, Repivots: g.repivots, Revived: g.revived}
}
