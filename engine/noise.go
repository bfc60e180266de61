package engine

import (
	"math"
	"math/rand/v2"
)

// Version 4 of the configuration: the posterior's precision and the
// exploration under noise (docs/optimizer.md, "Version 4").
const (
	// dtcNoiseFloorV4 floors the fitted noise variance of BKB's posterior
	// (standardized scale) in version 4; versions 2 and 3 floor it at
	// Config.Lambda (1e-3 by default). On noise-free functions the floor
	// acts as observation noise of sd 0.03 standard deviations of f at
	// 1e-3: it smooths the posterior mean near the optimum and bounds how
	// close the asks get (Hartmann 6, T=500, 10 seeds: median simple
	// regret 1.4e-3 at 1e-3, 3.3e-4 at 1e-4, 9e-5 at 1e-5). The dictionary
	// grows like the effective dimension at the floor (at T=500, seed 1:
	// 139, 109 and 285 points) and near-dependent points make the
	// posterior rebuild more often as it falls (43 rebuilds over the last
	// 50 trials at 1e-5, 25 at 1e-4): the policy time over those trials
	// was 11, 11 and 15-50 ms per trial. 1e-4 keeps the cost of 1e-3 and
	// most of the precision of 1e-5.
	dtcNoiseFloorV4 = 1e-4
	// coveredShare: where the posterior variance left over the global
	// space-filling set is below this share of the prior's (unexplained),
	// the box is covered and the optimum's location is uncertain mainly
	// through the noise; the rules below apply only there, and never in
	// the 5- and 10-d problems of the benchmark, whose boxes a few
	// hundred trials cannot cover.
	coveredShare = 0.3
	// noiseShareRef and noiseShareHeavy split the fitted noise's share of
	// the variance, rho = noise/(signal + noise). Below noiseShareHeavy
	// the budget-aware beta keeps at least B min(1, sqrt(rho/
	// noiseShareRef)): its late decay concentrates the asks on the
	// posterior mean's maximizer, which the noise puts off the optimum
	// (Branin, 1% noise, 30 seeds: median simple regret 0.095 with the
	// decay, 0.026 with this floor, 0.033 for the fixed set). Noise-free
	// fits give rho of 1e-7 to 1e-6 once the box is covered, 1% noise
	// 2e-4 to 8e-3.
	noiseShareRef   = 1e-3
	noiseShareHeavy = 0.05
	// noiseShareDominant: where the fit gives the noise more than this
	// share of the variance, version 4 does not scale the budget-aware
	// beta by sqrt(1 - u). That scaling is for boxes the budget cannot
	// cover, where a wide posterior puts the UCB maximizer at the point
	// farthest from the data; a fit that explains the values as noise
	// leaves the posterior wide everywhere too (u near 1), and the
	// scaling then cut the exploration to its floor and kept the asks
	// around a noise-lucky incumbent (Ackley 10-d, 10% noise, rho 0.8 to
	// 0.95, 30 seeds: median simple regret 19.4 with the scaling, worse
	// than random search's 19.3 and the fixed set's 18.1 at p = 0.0004;
	// 18.4 without it, p = 0.33; Levy 10-d at 10% 10.5 against the fixed
	// set's 14.2).
	noiseShareDominant = 0.5
)

// noiseShare returns the fitted noise's share of the variance and
// whether there is an ARD fit to take it from.
func (r *refiner) noiseShare() (float64, bool) {
	if r.hp == nil {
		return 0, false
	}
	return noiseShareOf(r.hp.NoiseVariance, r.hp.SignalVariance)
}

// noiseShareOf is a fit's noise share noise/(signal + noise), false when
// the sum is not positive.
func noiseShareOf(noise, signal float64) (float64, bool) {
	if !(noise+signal > 0) {
		return 0, false
	}
	return noise / (noise + signal), true
}

// scalesByWideness reports whether the budget-aware beta is scaled by
// sqrt(1 - u): always before version 4 (v4 false), in version 4 unless the
// noise dominates the fit (noiseShareDominant).
func scalesByWideness(v4 bool, rho float64) bool { return !v4 || rho <= noiseShareDominant }

// noisyBetaFloor is version 4's least beta for a budget-aware exploration
// of scale B, at noise share rho and unexplained share u: 0 (no floor)
// outside a covered box or under heavy noise (see thompsonAsk).
func noisyBetaFloor(B, rho, u float64) float64 {
	if u >= coveredShare || rho >= noiseShareHeavy {
		return 0
	}
	return B * math.Min(1, math.Sqrt(rho/noiseShareRef))
}

// thompsonAsk reports whether version 4 makes ask number ask (counted
// from 1) a joint Thompson draw: every other ask where the box is covered
// and the noise heavy. There the UCB maximizer of a noisy fit runs along
// the trend of the data, often to the box's edge (Branin, 10% noise: 23
// of the last 30 asks of one seed on the edge x2 = 0), while the
// maximizer of a posterior sample spreads the asks over the places the
// optimum may be, in proportion to how likely it is there (Branin, 10%
// noise, 30 seeds: median simple regret 1.22 with UCB only, 0.48 with
// every other ask a draw, 0.40 for the fixed set). Draws on every ask
// cost more cumulative regret (Michalewicz at 10%, 10 seeds: 89 against
// 86 for every other ask), and
// independent per-candidate draws (acquisition.Thompson) explore far more
// than a joint sample (Levy 10-d at 10%: 20.7 against the fixed set's 14).
func thompsonAsk(rho, u float64, ask int) bool {
	return u < coveredShare && rho > noiseShareHeavy && ask%2 == 0
}

// sampleValue is a joint posterior sample's value at a point, from its
// linear part and Nystrom residual (gp.DTC.SampleAt, SampleCandidates):
// the residual's part is drawn independently per point, as the DTC
// posterior has it.
func sampleValue(linear, residual float64, rng *rand.Rand) float64 {
	return linear + math.Sqrt(residual)*rng.NormFloat64()
}

// noisyDictionaryMax is the last observation count at which version 7
// keeps version 4's dictionary rule under heavy noise (noisyDictionary):
// that rule rebuilds the exact posterior at every refit, O((A + t) t^2)
// every FitEvery trials, which up to 500 observations is what version 4
// pays at the budgets of docs/optimizer.md; past it the long-study rule of
// version 5 takes over.
const noisyDictionaryMax = 500

// noisyDictionary reports whether version 7 draws BKB's dictionary by
// version 4's rule at t observations: every observed point enters S at a
// refit (the exact posterior) and S is redrawn from the ridge leverage
// scores at every observation. It does while the last ARD fit gives the
// noise more than noiseShareHeavy of the variance and t is at most
// noisyDictionaryMax.
//
// Why: version 5's dictionary (drawn at a refit from the previous S under
// the variances after the data, and redrawn only when BBKB's
// resparsification rule says so; Calandriello et al. 2020) keeps a small S
// fixed for many asks. Under heavy noise the leverage scores are small
// (the variances are read on the scale of a large noise), S holds few
// points, and the asks follow one stale Nystrom basis: at 10% noise, 5
// seeds, Ackley 5-d at T=200 had median simple regret 7.8 with version 5's
// rule and 3.9 with version 4's, with one seed in five failing (13-20)
// unless all three of version 5's dictionary changes were undone
// (docs/robust.md, "Version 7"). Fits of noise-free values give noise
// shares of 1e-7 to 1e-6 once the box is covered, and of 1% noise 2e-4 to
// 8e-3 (see noiseShareRef), so there the rule of version 5 stays.
func (r *refiner) noisyDictionary(t int) bool {
	if !r.cfg.noiseRobust() || t > noisyDictionaryMax {
		return false
	}
	rho, ok := r.noiseShare()
	return ok && rho > noiseShareHeavy
}

// noisyUnwarped reports whether version 7 leaves the values of a study
// with Warp auto unwarped: while the last ARD fit gives the noise more than
// noiseShareHeavy of the variance. The Box-Cox transform's shift is the
// gap between the least cost and the costs' 5% quantile, which under
// heavy noise is mostly noise, and a transform close to a logarithm then
// magnifies the noise of the best values (Branin at 10% noise, 5 seeds:
// median simple regret 1.55 warped, 0.61 unwarped).
func (r *refiner) noisyUnwarped() bool {
	if !r.cfg.noiseRobust() || r.cfg.Warp != WarpAuto {
		return false
	}
	rho, ok := r.noiseShare()
	return ok && rho > noiseShareHeavy
}

// unwarpedForGood reports whether version 10 keeps a study's values
// unwarped for good (rule unwarp_sticky): once, past noisyDictionaryMax
// observations, a fit made on warped values gave the noise more than
// noiseShareHeavy of the variance and a later fit on the unwarped values
// still found noise (a noise variance above noiseFoundVariance). Version
// 7's noisyUnwarped decides on the last fit alone: a warp close to a
// logarithm magnifies the noise of the best values, so the fit on warped
// values reads the noise as heavy, the fit on the unwarped values that
// follows reads it as light, and the warp came back at the next refit. At
// 1% noise on Hartmann 6 (seed 1) the warp switched at each of the 20
// refits from t = 183 to 2,291, every switch rebuilt the posterior on
// another scale, and the dictionary grew to 772 points by t = 2,500, against
// 300-340 with the values kept unwarped (docs/long-studies.md). At the
// budgets of docs/optimizer.md (at most noisyDictionaryMax trials) the rule
// does not act: there the switching is harmless, and keeping the values
// unwarped from the first such pair of fits lost regret on the wide-range
// functions at 1% noise (10 seeds, T = 200: Levy 10-d median 3.30 against
// version 9's 1.78, worse on 7 seeds of 10; Rosenbrock 4-d 228 against
// 107). A noise-free function can read as noisy on the warped scale too
// (Hartmann 3 at t = 44), but its unwarped fits sit at the fit's noise
// floor. The fits are in the engine's snapshot, so the rule needs no
// state of its own.
func (r *refiner) unwarpedForGood(fits []FitResult) bool {
	if !r.cfg.rules().UnwarpSticky || r.cfg.Warp != WarpAuto {
		return false
	}
	heavy := false
	for _, f := range fits {
		switch {
		case f.Observations <= noisyDictionaryMax:
		case f.Warped:
			if rho, ok := noiseShareOf(f.NoiseVariance, f.SignalVariance); ok && rho > noiseShareHeavy {
				heavy = true
			}
		case heavy && !f.Warped && f.NoiseVariance > noiseFoundVariance:
			return true
		}
	}
	return false
}

// noiseFoundVariance is the least noise variance (standardized values) at
// which a fit is taken to have found noise: ten times the lower bound of
// gp/hyper's fits (1e-6), at which noise-free values are fitted; the
// unwarped fits of Hartmann 6 at 1% noise give 6e-4 to 3e-3.
const noiseFoundVariance = 1e-5
