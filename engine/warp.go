package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Output warping (Config.Warp): the GP is told a monotone transform of the
// values, fitted to them, instead of the values standardized by an affine
// map. An objective whose values span several orders of magnitude over
// the box (a loss that blows up at bad settings) otherwise shows the GP a
// few huge values and, near the optimum, differences a millionth of their
// standard deviation: the posterior there is flat and the policy searches
// at random.
//
// The transform is the Box-Cox power family (Box and Cox 1964) on the
// costs c (the values when minimizing, their negatives when maximizing),
// shifted and scaled to (0, 1]:
//
//	z = (c - cmin + delta) / (cmax - cmin + delta),
//	w(c) = (z^lambda - 1)/lambda   (log z at lambda = 0),
//
// cmin and cmax the least and largest cost observed at the fit and delta
// the gap between cmin and the costs' warpQuantile quantile, as SMAC's
// log-scaled costs use (Hutter, Hoos and Leyton-Brown 2011; Lindauer et
// al. 2022): the resolution of the transform near the optimum follows the
// points there, so it sharpens as the search concentrates. The power lambda
// maximizes the Box-Cox profile likelihood of the costs (their Jacobian
// included), on a grid of [warpLambdaMin, 1] refined by golden sections;
// HEBO (Cowen-Rivers et al. 2022) fits a power transform the same way.
// Lambda 1 is the affine map of an unwarped study, so "auto" warps only
// when the likelihood ratio against it is significant (warpLRT). The
// reward told to the policy is -w(c), standardized to mean 0 and standard
// deviation 1. Costs below cmin at a later observation (an improvement
// since the fit) continue w linearly with its slope at cmin, so the map is
// defined and increasing for every value.
//
// Which data the test reads (version 8). The test asks whether the costs
// look like draws of a wide-range function; it reads the marginal
// distribution of the costs, which reflects the function's range only
// while the points are spread over the box. Once the policy concentrates
// them where the costs are low, the costs of any function become skewed
// (many near the incumbent, a tail from the earlier asks), and up to
// version 7 the test warped functions of narrow range late in a run:
// Ackley 10-d with 1% noise was warped from 91 to 133 observations on,
// and its median simple regret at T = 200 was 3.82 warped and 3.28
// with warp none (30 seeds, two-sided Mann-Whitney p = 0.01). From
// version 8:
//   - the costs of the initial design (random points spread over the box)
//     must be right-skewed: the transform compresses an upper tail of
//     large costs, and a function whose costs over the box have none
//     (most of the box near the worst values: Hartmann, Ackley, Shekel,
//     Michalewicz: skewness -1.1 to -3.3 over 1,024 Sobol points,
//     TestWarpDesignSkewness)
//     has nothing to compress; a warp fitted to such a function's
//     concentrated costs only sharpens the incumbent's basin (Hartmann 3
//     on 1,000 fixed arms stayed in its second basin, 0.7 above the best
//     arm, in 1 seed of 30, TestNotStuck);
//   - the likelihood-ratio test reads the first warpDecisionPoints(init)
//     evaluations only, the initial design and the first asks;
// the power and the shift are fitted on all evaluations as before.
//
// The fit is a function of the completed evaluations alone, redone
// whenever the study refreshes its standardization (at the length-scale
// fits and at Init*2^k observations), so a replay of the records rebuilds
// the same transform.

// Warp modes (Config.Warp).
const (
	// WarpAuto fits the Box-Cox power by likelihood and warps when the
	// fit is significantly better than the affine map (the default from
	// configuration version 6).
	WarpAuto = "auto"
	// WarpNone standardizes the values by an affine map (versions 1 to 4).
	WarpNone = "none"
	// WarpLog always takes the shifted logarithm (Box-Cox power 0).
	WarpLog = "log"
)

// Constants of the warp, chosen on the tuning half of the held-out suite
// of docs/robust.md.
const (
	// warpQuantile sets the shift delta: the gap between the least cost
	// and this quantile of the costs (SMAC uses the 5th percentile).
	warpQuantile = 0.05
	// warpLambdaMin is the least Box-Cox power tried (-1: z^-1, which
	// compresses large costs more than the logarithm).
	warpLambdaMin = -1.0
	// warpLRT is the least likelihood-ratio statistic 2 (l(lambda) - l(1))
	// at which "auto" warps: the 1% point of chi-square with 1 degree of
	// freedom.
	warpLRT = 6.635
	// warpMinPoints is the least number of distinct costs a fit needs.
	warpMinPoints = 5
)

// warpDecisionPoints is the number of first evaluations on which version
// 8's test of Warp auto is made: four times the initial design, the first
// standardization of the doubling schedule (init 2^k) at which the test
// warped every wide-range function of the tuning half of the held-out suite
// (Goldstein-Price, three-hump camel, Zakharov: at 2 init it left
// Goldstein-Price unwarped in 2 seeds of 2), while Ackley 10-d's costs
// up to 80 evaluations give likelihood ratios of 0 to 2.1 (docs/robust.md).
func warpDecisionPoints(init int) int { return 4 * max(init, 1) }

// Warp is the output transform a study has fitted to its values (see
// Config.Warp), as reported by Study.Info.
type Warp struct {
	// Kind is "box-cox" (warped) or "none" (affine map only).
	Kind string `json:"kind"`
	// Lambda is the Box-Cox power (0: the logarithm).
	Lambda float64 `json:"lambda"`
	// Min and Max are the least and largest costs at the fit, Delta the
	// shift: z = (c - Min + Delta)/(Max - Min + Delta), c the value (its
	// negative when maximizing).
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Delta float64 `json:"delta"`
	// LRT is the likelihood-ratio statistic of the fitted power against
	// the affine map (lambda 1).
	LRT float64 `json:"lrt"`
	// Observations is the number of values the transform was fitted on.
	Observations int `json:"observations"`
}

// String describes the transform, e.g. "box-cox lambda=0.12 shift=3.4e-05".
func (w Warp) String() string {
	if w.Kind != "box-cox" {
		return "none (affine)"
	}
	return fmt.Sprintf("box-cox lambda=%.3g on (c - %.6g + %.3g), fitted on %d values (likelihood ratio %.1f)",
		w.Lambda, w.Min, w.Delta, w.Observations, w.LRT)
}

// Active reports whether the transform warps.
func (w *Warp) Active() bool { return w != nil && w.Kind == "box-cox" }

// z maps a cost to the transform's (0, 1] scale (below 0 for costs under
// Min - Delta).
func (w *Warp) z(c float64) float64 { return (c - w.Min + w.Delta) / (w.Max - w.Min + w.Delta) }

// apply returns w(c) for a cost c: the Box-Cox transform of z, continued
// linearly below z0 = Delta/(Max - Min + Delta), the least z of the fit.
func (w *Warp) apply(c float64) float64 {
	z := w.z(c)
	z0 := w.z(w.Min)
	if z < z0 {
		// w(z0) + w'(z0)(z - z0), w'(z) = z^(lambda-1).
		return boxCox(z0, w.Lambda) + math.Pow(z0, w.Lambda-1)*(z-z0)
	}
	return boxCox(z, w.Lambda)
}

// boxCox is (z^lambda - 1)/lambda, log z at lambda 0 (z > 0).
func boxCox(z, lambda float64) float64 {
	if math.Abs(lambda) < 1e-9 {
		return math.Log(z)
	}
	return math.Expm1(lambda*math.Log(z)) / lambda
}

// boxCoxProfile returns the Box-Cox profile log likelihood of the values
// z (all > 0) at power lambda, up to a constant:
//
//	l(lambda) = -n/2 log s2(lambda) + (lambda - 1) sum log z_i,
//
// s2 the (biased) variance of the transformed values (Box and Cox 1964,
// eq. 9). logSum is sum log z_i.
func boxCoxProfile(z []float64, logSum, lambda float64) float64 {
	n := float64(len(z))
	var s, ss float64
	for _, v := range z {
		s += boxCox(v, lambda)
	}
	m := s / n
	for _, v := range z {
		d := boxCox(v, lambda) - m
		ss += d * d
	}
	s2 := ss / n
	if !(s2 > 0) {
		return math.Inf(-1)
	}
	return -n/2*math.Log(s2) + (lambda-1)*logSum
}

// warpTest says which costs the test of Warp auto reads (version 8; the
// zero value reads them all, as versions 6 and 7 do): with design > 0 the
// first design costs must have a positive sample skewness, and with
// points > 0 the likelihood-ratio test reads the first points costs only,
// the transform then being fitted on all of them.
type warpTest struct{ design, points int }

// fitWarp fits the transform of mode (WarpAuto or WarpLog) to the costs,
// in the order of the evaluations. It returns a Warp of Kind "none" when
// the costs do not support one (too few distinct values, or under auto a
// likelihood ratio below warpLRT or a test of t that fails).
func fitWarp(mode string, costs []float64, t warpTest) Warp {
	if mode == WarpAuto && t.design > 0 {
		d := costs[:min(t.design, len(costs))]
		if len(d) < 3 || !(stat.Skew(d, nil) > 0) {
			return Warp{Kind: "none", Lambda: 1, Observations: len(costs)}
		}
	}
	if mode == WarpAuto && t.points > 0 && len(costs) > t.points {
		if w := fitWarp(mode, costs[:t.points], warpTest{}); !w.Active() {
			w.Observations = len(costs)
			return w
		}
		mode = warpFitted
	}
	out := Warp{Kind: "none", Lambda: 1, Observations: len(costs)}
	if mode == WarpNone || len(costs) < warpMinPoints {
		return out
	}
	s := slices.Clone(costs)
	slices.Sort(s)
	lo, hi := s[0], s[len(s)-1]
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return out
	}
	// delta: the gap to the warpQuantile quantile, or to the next
	// distinct cost when that quantile is tied with the least one.
	k := max(1, int(math.Round(warpQuantile*float64(len(s)))))
	delta := s[k] - lo
	if delta <= 0 {
		i, _ := slices.BinarySearchFunc(s, lo, func(a, b float64) int {
			if a <= b {
				return -1
			}
			return 1
		})
		delta = s[i] - lo
	}
	distinct := 1
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1] {
			distinct++
		}
	}
	if distinct < warpMinPoints {
		return out
	}
	w := Warp{Kind: "box-cox", Min: lo, Max: hi, Delta: delta, Observations: len(costs)}
	z := make([]float64, len(costs))
	var logSum float64
	for i, c := range costs {
		z[i] = w.z(c)
		logSum += math.Log(z[i])
	}
	l1 := boxCoxProfile(z, logSum, 1)
	if mode == WarpLog {
		w.Lambda = 0
		w.LRT = 2 * (boxCoxProfile(z, logSum, 0) - l1)
		return w
	}
	lambda, best := maximizeProfile(z, logSum)
	w.Lambda, w.LRT = lambda, 2*(best-l1)
	if !(w.LRT >= warpLRT || mode == warpFitted) || lambda >= 1 {
		out.LRT = w.LRT
		return out
	}
	return w
}

// warpFitted is fitWarp's mode for a transform whose test has been made
// on the first costs: the power is fitted on all, without a second test.
const warpFitted = "fitted"

// maximizeProfile maximizes boxCoxProfile over [warpLambdaMin, 1]: the
// best of a grid of step 0.05, then golden sections on its neighbours.
func maximizeProfile(z []float64, logSum float64) (lambda, best float64) {
	const step = 0.05
	n := int(math.Round((1 - warpLambdaMin) / step))
	lambda, best = 1, boxCoxProfile(z, logSum, 1)
	for i := 0; i <= n; i++ {
		l := warpLambdaMin + float64(i)*step
		if v := boxCoxProfile(z, logSum, l); v > best {
			lambda, best = l, v
		}
	}
	a, b := math.Max(warpLambdaMin, lambda-step), math.Min(1, lambda+step)
	g := (math.Sqrt(5) - 1) / 2
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := boxCoxProfile(z, logSum, c), boxCoxProfile(z, logSum, d)
	for range 40 {
		if fc > fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = boxCoxProfile(z, logSum, c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = boxCoxProfile(z, logSum, d)
		}
	}
	if m := (a + b) / 2; boxCoxProfile(z, logSum, m) > best {
		lambda, best = m, boxCoxProfile(z, logSum, m)
	}
	return lambda, best
}

// warpedRewards fits the transform of mode to the costs of rewards r (the
// maximized rewards, in the order of the evaluations; test as in fitWarp)
// and returns it with the warped rewards -w(-r_i).
func warpedRewards(mode string, r []float64, test warpTest) (Warp, []float64) {
	costs := make([]float64, len(r))
	for i, v := range r {
		costs[i] = -v
	}
	w := fitWarp(mode, costs, test)
	if !w.Active() {
		return w, r
	}
	out := make([]float64, len(r))
	for i, c := range costs {
		out[i] = -w.apply(c)
	}
	return w, out
}

// warps reports whether the study's values are warped (Config.Warp auto
// or log).
func (c *Config) warps() bool { return c.Warp == WarpAuto || c.Warp == WarpLog }

// singleObjectiveRules reports whether the study's version keeps the rules
// made for one objective, the output warp and the local Newton steps
// (version 6), out of a study with constraints or several objectives:
// from version 7 on. Version 6 applied both to the scalar it tracks for
// the trust region (the first objective, or the feasible-region value),
// not to what the policy asks by; version 6 studies replay as written.
func (c *Config) singleObjectiveRules() bool { return c.rules().SingleObjectiveRules && c.Tradeoffs() }

// normalizeWarp fills in and checks Warp: auto from version 6 on, none
// before; raw values are never warped.
func (c *Config) normalizeWarp() error {
	if c.Warp == "" {
		c.Warp = WarpNone
		if c.rules().WarpByDefault && !c.RawValues && !c.singleObjectiveRules() {
			c.Warp = WarpAuto
		}
	}
	c.Warp = strings.ToLower(strings.TrimSpace(c.Warp))
	switch c.Warp {
	case WarpNone:
	case WarpAuto, WarpLog:
		if c.singleObjectiveRules() {
			return fmt.Errorf("study: warp %s transforms one objective's values; a study with constraints or several objectives (configuration version 7 on) models each target on its own scale: use warp none", c.Warp)
		}
		if c.RawValues {
			return fmt.Errorf("study: warp %s transforms the values the GP is told, which raw values (no standardization) leave as they are: use warp none", c.Warp)
		}
	default:
		return fmt.Errorf("study: warp %q (want %s, %s or %s)", c.Warp, WarpAuto, WarpNone, WarpLog)
	}
	return nil
}

// standardizeWarped fits the warp of mode to the rewards r (test as in
// fitWarp) and returns it with the shift and scale that standardize the
// warped rewards.
func standardizeWarped(mode string, r []float64, test warpTest) (w Warp, shift, scale float64) {
	w, y := warpedRewards(mode, r, test)
	var s, ss float64
	for _, v := range y {
		s += v
	}
	n := float64(len(y))
	shift = s / n
	for _, v := range y {
		ss += (v - shift) * (v - shift)
	}
	scale = 1
	if sd := math.Sqrt(ss / math.Max(n-1, 1)); sd > 1e-12*math.Max(1, math.Abs(shift)) {
		scale = sd
	}
	return w, shift, scale
}

// warpedReward maps a reward through w (the identity without a warp).
func (w *Warp) warpedReward(r float64) float64 {
	if !w.Active() {
		return r
	}
	return -w.apply(-r)
}

// warpThreshold is the trust region's improvement threshold of a warped
// study, on the standardized warped scale: a relative improvement of the
// cost near the optimum, where the transform is close to a logarithm.
const warpThreshold = 1e-3

// standardizeWarped sets the refiner's transform and reward map from all
// observations.
func (r *refiner) standardizeWarped(e *Engine) {
	rw := make([]float64, len(e.succ))
	for i, o := range e.succ {
		rw[i] = e.reward(o.value)
	}
	mode := r.cfg.Warp
	if r.noisyUnwarped() || r.unwarpedForGood(e.fits) {
		mode = WarpNone
	}
	r.warp, r.shift, r.scale = standardizeWarped(mode, rw, r.cfg.warpTest())
	if r.threshold == 0 {
		r.threshold = warpThreshold * r.scale
	}
}

// improves reports whether the reward v improves on ref by the trust
// region's threshold: v > ref + threshold in reward units, or, in a
// warped study, by warpThreshold on the standardized warped scale.
func (r *refiner) improves(v, ref float64) bool {
	if !r.warp.Active() && !(r.cfg.noiseRobust() && r.cfg.warps()) {
		// Version 7 compares on the standardized scale below whether or
		// not the values are warped at present (noisyUnwarped may switch
		// the warp off after r.threshold was set on a warped scale).
		return v > ref+r.threshold
	}
	if math.IsInf(ref, -1) {
		return !math.IsInf(v, -1)
	}
	return r.toldValue(v) > r.toldValue(ref)+warpThreshold
}

// encodeWarp and decodeWarp save a warped study's transform in a
// snapshot (nothing for the others, whose snapshots are unchanged).
func (w *Warp) encodeFloats() []float64 {
	kind := 0.0
	if w.Active() {
		kind = 1
	}
	return []float64{kind, w.Lambda, w.Min, w.Max, w.Delta, w.LRT, float64(w.Observations)}
}

func decodeWarpFloats(f []float64) (Warp, error) {
	if len(f) != 7 {
		return Warp{}, fmt.Errorf("warp of %d fields", len(f))
	}
	w := Warp{Kind: "none", Lambda: f[1], Min: f[2], Max: f[3], Delta: f[4], LRT: f[5], Observations: int(f[6])}
	if f[0] == 1 {
		w.Kind = "box-cox"
	}
	return w, nil
}

// WarpInfo returns the transform in use (nil without warping).
func (e *Engine) WarpInfo() *Warp {
	if !e.cfg.warps() {
		return nil
	}
	w := e.warp
	if e.ref != nil {
		w = e.ref.warp
	}
	if w.Kind == "" {
		w.Kind = "none"
	}
	return &w
}
