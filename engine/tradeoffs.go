package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/pareto"
)

// Constraints and several objectives.
//
// A constrained study (Config.Constraints = J) tells J constraint values
// c_j(x) with each value; x is feasible when every c_j(x) <= 0. A study
// with several objectives (Config.Directions) tells one value per
// objective. Both are modelled on BKB's dictionary: every further target
// (objective or constraint) is a GP on the inducing points BKB chose for
// the objective, standardized on its own, with its own ARD fit
// (targetPosterior); without ARD fits it shares the objective's kernel,
// so its posterior variance is the objective's and only its mean differs
// (gp.DTC.TargetWeights, one m x m solve per target and ask).
//
// The acquisition, on the standardized scale, with u_k = mu_k + beta*sd
// the upper confidence bound of objective k (rewards: maximized) and
// l_j = mu_j - beta*sd the lower confidence bound of constraint j:
//
//   - several objectives: random scalarizations with UCB (Paria,
//     Kandasamy and Poczos 2019): each ask draws a direction w uniformly
//     from the unit sphere's positive orthant and maximizes the
//     hypervolume scalarization min_k (u_k - z_k)/w_k of Golovin and
//     Zhang 2020, z_k the lowest observed standardized reward of
//     objective k. Each ask's maximizer is Pareto optimal for the
//     optimistic model; averaged over w the scalarization's maximum is
//     the hypervolume dominated with respect to z (up to a power and a
//     constant), so the asks spread over the front as a hypervolume
//     criterion would, and the scalarized UCB keeps BKB's regret argument
//     (Paria et al. bound the Bayes regret of random scalarizations with
//     UCB). Chosen over Chebyshev weights
//     drawn from the simplex on seeds outside the reported benchmark
//     (docs/tradeoffs.md);
//   - constraints: a feasible-set UCB (Xu, Jiang, Svetozarevic and Jones
//     2023, CONFIG): the acquisition is maximized over the points that are
//     feasible for the optimistic constraint model, l_j <= 0 for every j;
//     where no point is, the point of least optimistic violation
//     sum_j max(l_j, 0) is asked. Unlike the probability of feasibility
//     times the acquisition, this needs no sign convention for the
//     acquisition and is optimistic in both parts, as UCB is, so an
//     infeasible region is asked only while it may still be feasible.
//
// The trust region follows the best feasible value (several objectives:
// it counts a success when a point joins the feasible Pareto front) and is
// centred on the best feasible point under the ask's scalarization.
// These studies need policy bkb with growing candidates (the default) or
// policy random, and are replayed rather than restored from snapshots.

// MaxObjectives bounds the objectives of a study: the hypervolume costs
// O(n^(k-1) log n) for k objectives.
const MaxObjectives = 4

// MaxConstraints bounds the constraints of a study.
const MaxConstraints = 32

// streamScalarize seeds the weights of each ask's scalarization.
const streamScalarize = 0x73_63_61_6c // "scal"

// infeasibleScore is added to the acquisition of a point that no
// optimistic constraint model calls feasible: below every feasible score
// on the standardized scale, ordered by the violation.
const infeasibleScore = -1e9

// frontStep is the trust region's value step for a point that joins the
// Pareto front: above any improvement threshold (1e-3 of the values'
// standard deviation, at most 1e147 for values within ±MaxAbsValue).
const frontStep = 1e200

// normalizeDirections checks Directions and sets Direction from it.
func (c *Config) normalizeDirections() error {
	if len(c.Directions) == 0 {
		return nil
	}
	if len(c.Directions) > MaxObjectives {
		return fmt.Errorf("study: %d directions (at most %d objectives)", len(c.Directions), MaxObjectives)
	}
	for i, d := range c.Directions {
		if d != Minimize && d != Maximize {
			return fmt.Errorf("study: directions[%d] is %q (want minimize or maximize)", i, d)
		}
	}
	if c.Direction != "" && c.Direction != c.Directions[0] {
		return fmt.Errorf("study: direction %q differs from the first of directions %v", c.Direction, c.Directions)
	}
	c.Direction = c.Directions[0]
	if len(c.Directions) == 1 {
		c.Directions = nil
	}
	return nil
}

// Acquisitions of a study with several objectives (Config.MOAcquisition).
const (
	// MOHypervolume scores a candidate by the hypervolume improvement of
	// its optimistic objective vector over the observed Pareto front, and
	// a candidate whose optimistic vector is dominated by SMS-EGO's
	// penalty (Ponweiser, Wagner, Biermann and Naujoks 2008): the default
	// of new studies.
	MOHypervolume = "hvi"
	// MOScalarize maximizes a random hypervolume scalarization of the
	// objectives' upper confidence bounds at each ask (Paria, Kandasamy
	// and Poczos 2019; Golovin and Zhang 2020): the rule of studies stored
	// before Config.MOAcquisition existed.
	MOScalarize = "scalarize"
)

// MOAcquisitions returns the acquisitions a study with several
// objectives may name, in a new slice.
func MOAcquisitions() []string { return []string{MOHypervolume, MOScalarize} }

// StoredTradeoffDefaults gives a stored configuration the defaults of the
// time it was written: a study with several objectives stored without
// MOAcquisition was created before it existed, and asked by random
// scalarizations.
func (c *Config) StoredTradeoffDefaults() {
	if len(c.Directions) >= 2 && c.MOAcquisition == "" {
		c.MOAcquisition = MOScalarize
	}
}

// normalizeTradeoffs checks that the policy supports constraints and
// several objectives, and sets the acquisition of several objectives.
func (c *Config) normalizeTradeoffs() error {
	if c.Constraints < 0 || c.Constraints > MaxConstraints {
		return fmt.Errorf("study: constraints must be between 0 and %d, got %d", MaxConstraints, c.Constraints)
	}
	switch {
	case !c.MultiObjective() && c.MOAcquisition != "":
		return fmt.Errorf("study: mo_acquisition %q needs several objectives (directions)", c.MOAcquisition)
	case c.MultiObjective() && c.MOAcquisition == "":
		c.MOAcquisition = MOHypervolume
	case c.MultiObjective() && !slices.Contains(MOAcquisitions(), c.MOAcquisition):
		return fmt.Errorf("study: unknown mo_acquisition %q; valid: %s, %s", c.MOAcquisition, MOHypervolume, MOScalarize)
	}
	if !c.Tradeoffs() {
		return nil
	}
	if c.Policy == "random" {
		return nil
	}
	if c.Policy != "bkb" || !c.grows() {
		return fmt.Errorf("study: constraints and several objectives need policy bkb with candidates grow (configuration version 2 or later), or policy random; got policy %s, candidates %q",
			c.Policy, c.Candidates)
	}
	return nil
}

// MultiObjective reports whether the study has several objectives.
func (c *Config) MultiObjective() bool { return len(c.Directions) >= 2 }

// Tradeoffs reports whether the study has constraints or several
// objectives.
func (c *Config) Tradeoffs() bool { return c.Constraints > 0 || c.MultiObjective() }

// Objectives returns the number of objectives: len(Directions), or 1.
func (c Config) Objectives() int { return max(len(c.Directions), 1) }

// ObjectiveDirections returns the direction of every objective.
func (c Config) ObjectiveDirections() []Direction {
	if c.MultiObjective() {
		return slices.Clone(c.Directions)
	}
	return []Direction{c.Direction}
}

// Feasible reports whether constraint values c are all <= 0 (true for
// none).
func Feasible(c []float64) bool {
	for _, v := range c {
		if !(v <= 0) {
			return false
		}
	}
	return true
}

// CheckOutcome checks the values and constraint values of a tell against
// the study's configuration and returns the value it stores as Y.
func (c *Config) CheckOutcome(trial int, value float64, values, cons []float64) (float64, error) {
	if c.MultiObjective() {
		if len(values) != len(c.Directions) {
			return 0, outcomeError{fmt.Errorf("study: trial %d: the study has %d objectives (%v): tell %d values, got %d",
				trial, len(c.Directions), c.Directions, len(c.Directions), len(values))}
		}
		for i, v := range values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, outcomeError{fmt.Errorf("study: trial %d: value %d is %v, not finite (record a failed evaluation instead)", trial, i, v)}
			}
			if math.Abs(v) > MaxAbsValue {
				return 0, fmt.Errorf("study: trial %d: value %d is %v, beyond ±%g: %w", trial, i, v, MaxAbsValue, ErrValueRange)
			}
		}
		value = values[0]
	} else if values != nil && !(len(values) == 1 && values[0] == value) {
		return 0, outcomeError{fmt.Errorf("study: trial %d: %d values for a study with one objective (set directions for several)", trial, len(values))}
	}
	if len(cons) != c.Constraints {
		if c.Constraints == 0 {
			return 0, outcomeError{fmt.Errorf("study: trial %d: %d constraint values for a study without constraints (set constraints: %d when creating it)", trial, len(cons), len(cons))}
		}
		return 0, outcomeError{fmt.Errorf("study: trial %d: the study has %d constraints: tell %d constraint values, got %d", trial, c.Constraints, c.Constraints, len(cons))}
	}
	for i, v := range cons {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxAbsValue {
			return 0, outcomeError{fmt.Errorf("study: trial %d: constraint %d is %v (want a finite value within ±%g)", trial, i, v, MaxAbsValue)}
		}
	}
	return value, nil
}

// outcomeError is the error of a tell whose values or constraint values
// do not fit the study: Run records the evaluation failed.
type outcomeError struct{ error }

func (e outcomeError) Unwrap() error { return e.error }

// Is makes errors.Is(err, ErrOutcome) hold.
func (e outcomeError) Is(target error) bool { return target == ErrOutcome }

// ErrValueRange is returned by a tell of a value beyond ±MaxAbsValue.
var ErrValueRange = errors.New("value out of the supported range")

// ErrOutcome is wrapped by the errors of a tell whose values or constraint
// values do not fit the study (their number, or a non-finite one).
var ErrOutcome = errors.New("the outcome does not fit the study")

// ErrNoFeasible is the error of ParetoFront and Hypervolumes when no
// complete trial is feasible.
var ErrNoFeasible = errors.New("no complete trial is feasible")

// rewardOf maps the value of objective k to its maximized reward.
func (e *Engine) rewardOf(k int, v float64) float64 {
	if e.cfg.MultiObjective() && e.cfg.Directions[k] == Maximize || !e.cfg.MultiObjective() && !e.cfg.minimize() {
		return v
	}
	return -v
}

// objectiveValue returns the value of objective k of an observation.
func (o observation) objectiveValue(k int) float64 {
	if k == 0 || len(o.values) == 0 {
		return o.value
	}
	return o.values[k]
}

// tradeoffModel is one ask's model of the further objectives and the
// constraints, on the refiner's posterior.
type tradeoffModel struct {
	r     *refiner
	nObj  int
	nCons int
	// ws are the posterior mean weights of the targets: objectives 1 to
	// nObj-1, then the constraints; shift and scale standardize them.
	ws           [][]float64
	shift, scale []float64
	// post and noise are the targets' own posteriors (with a fitted
	// kernel each, on the objective's inducing points) and their noise
	// variances; post[j] nil: target j uses ws[j] on the objective's
	// posterior and its standard deviation.
	post  []*gp.DTC
	noise []float64
	sds   []float64
	// thr is each constraint's threshold 0 on the standardized scale.
	thr []float64
	// lam are the ask's scalarization weights, ref the reference point
	// (standardized rewards, objective 0 the posterior's own scale).
	lam, ref []float64
	// obs holds the standardized rewards of every objective and the
	// standardized constraint values of each observation.
	obs [][]float64
	buf []float64
	// front and hvRef are, for MOHypervolume, the Pareto front of the
	// feasible observations and the reference point of the hypervolume
	// improvement, as minimized standardized values (negated rewards);
	// hvi true selects that acquisition, y is its buffer.
	hvi         bool
	front       [][]float64
	hvRef, ybuf []float64
}

// newTradeoffModel builds the ask's model: the further targets' weights
// and, with several objectives, the scalarization of this ask.
func (r *refiner) newTradeoffModel(e *Engine) (*tradeoffModel, error) {
	if !r.cfg.Tradeoffs() || r.dtc == nil {
		return nil, nil
	}
	nObj, nCons := r.cfg.Objectives(), r.cfg.Constraints
	nt := nObj - 1 + nCons
	t := len(e.succ)
	if r.dtc.Len() != t {
		return nil, fmt.Errorf("study: the posterior has %d observations, the study %d", r.dtc.Len(), t)
	}
	m := &tradeoffModel{r: r, nObj: nObj, nCons: nCons, ws: make([][]float64, nt),
		shift: make([]float64, nt), scale: make([]float64, nt), thr: make([]float64, nCons), buf: make([]float64, nt),
		post: make([]*gp.DTC, nt), noise: make([]float64, nt), sds: make([]float64, nt)}
	xs := make([][]float64, t)
	for i, o := range e.succ {
		xs[i] = e.enc[o.arm*e.e : (o.arm+1)*e.e]
	}
	raw := make([]float64, t)
	m.obs = make([][]float64, t)
	for i := range m.obs {
		m.obs[i] = make([]float64, nObj+nCons)
		m.obs[i][0] = r.toldValue(e.reward(e.succ[i].value))
	}
	for j := 0; j < nt; j++ {
		for i, o := range e.succ {
			if j < nObj-1 {
				raw[i] = e.rewardOf(j+1, o.objectiveValue(j+1))
			} else {
				raw[i] = o.cons[j-(nObj-1)]
			}
		}
		m.shift[j], m.scale[j] = meanSD(raw)
		y := make([]float64, t)
		for i, v := range raw {
			y[i] = (v - m.shift[j]) / m.scale[j]
			m.obs[i][j+1] = y[i]
		}
		if r.cfg.fitsARD() && r.hp != nil {
			g, noise, err := r.targetPosterior(e, j, nt, xs, y)
			if err != nil {
				return nil, err
			}
			m.post[j], m.noise[j] = g, noise
		} else {
			w, err := r.dtc.TargetWeights(xs, y)
			if err != nil {
				return nil, err
			}
			m.ws[j] = w
		}
		if j >= nObj-1 {
			m.thr[j-(nObj-1)] = -m.shift[j] / m.scale[j]
		}
	}
	if nObj > 1 {
		rng := rand.New(rand.NewPCG(r.cfg.Seed^streamScalarize, uint64(r.asks)))
		m.lam = make([]float64, nObj)
		var sum float64
		for k := range m.lam {
			// |N(0, I)| normalized: uniform on the unit sphere's positive orthant.
			m.lam[k] = math.Abs(rng.NormFloat64())
			sum += m.lam[k] * m.lam[k]
		}
		m.ref = make([]float64, nObj)
		sum = math.Sqrt(sum)
		for k := range m.lam {
			// lam holds the inverse direction: the scalarization is
			// min_k lam_k (u_k - z_k) = min_k (u_k - z_k) / w_k.
			m.lam[k] = 1 / math.Max(m.lam[k]/sum, 1e-12)
			m.ref[k] = math.Inf(1)
			for _, ob := range m.obs {
				m.ref[k] = math.Min(m.ref[k], ob[k])
			}
		}
		if r.cfg.MOAcquisition == MOHypervolume {
			m.setHypervolumeFront(e)
		}
	}
	return m, nil
}

// hviMargin moves the reference point of the hypervolume improvement
// out from the nadir of the observed front, on the standardized scale:
// half a standard deviation of each objective's values. Chosen on ZDT1
// and DTLZ2 (docs/tradeoffs.md): a tighter reference point gained on
// DTLZ2, whose box corners hold weakly dominated points far from the
// front, and lost on ZDT1, where the improvement then stays in a thin box
// around the first extreme point found; a looser one lost on DTLZ2.
const hviMargin = 0.5

// setHypervolumeFront sets the Pareto front of the feasible observations
// (of every observation when none is feasible) as minimized standardized
// values, and the reference point: the front's nadir moved out by
// hviMargin. Points worse than the nadir add nothing to the observed
// front; the margin lets a point that extends the front at one end gain.
func (m *tradeoffModel) setHypervolumeFront(e *Engine) {
	k := m.nObj
	var pts [][]float64
	for pass := 0; pass < 2 && len(pts) == 0; pass++ {
		for i, o := range e.succ {
			if pass == 0 && !Feasible(o.cons) {
				continue
			}
			p := make([]float64, k)
			for j := range p {
				p[j] = -m.obs[i][j]
			}
			pts = append(pts, p)
		}
	}
	idx := pareto.Front(pts)
	m.front = make([][]float64, len(idx))
	for i, j := range idx {
		m.front[i] = pts[j]
	}
	m.hvRef = make([]float64, k)
	for j := range m.hvRef {
		m.hvRef[j] = math.Inf(-1)
		for _, p := range m.front {
			m.hvRef[j] = math.Max(m.hvRef[j], p[j])
		}
		m.hvRef[j] += hviMargin
	}
	m.hvi, m.ybuf = true, make([]float64, k)
}

// optimisticImprovement is the MOHypervolume acquisition of the
// minimized optimistic objective vector y (the negated upper confidence
// bounds of the rewards) over the front against ref, after SMS-EGO
// (Ponweiser, Wagner, Biermann and Naujoks 2008):
//
//   - y not weakly dominated by a front point and better than ref in every
//     objective: its hypervolume improvement, > 0;
//   - y dominated (or equal to a front point): SMS-EGO's penalty, the sum
//     over the front points a that weakly dominate y of
//     1 - prod_j (1 + y_j - a_j), <= 0 and decreasing in every y_j, so
//     that a candidate whose optimistic vector is dominated is ranked by
//     how far it is from the front, not flat;
//   - otherwise (y beyond ref in some objective): minus its distance
//     beyond ref, sum_j max(y_j - ref_j, 0), < 0.
func optimisticImprovement(front [][]float64, y, ref []float64) float64 {
	var pen float64
	dominated := false
	for _, a := range front {
		weak := true
		for j := range y {
			if a[j] > y[j] {
				weak = false
				break
			}
		}
		if !weak {
			continue
		}
		dominated = true
		prod := 1.0
		for j := range y {
			prod *= 1 + y[j] - a[j]
		}
		pen += prod - 1
	}
	if dominated {
		return -pen
	}
	var beyond float64
	for j := range y {
		beyond += math.Max(y[j]-ref[j], 0)
	}
	if beyond > 0 {
		return -beyond
	}
	hvi, err := pareto.Improvement(front, y, ref)
	if err != nil {
		return math.NaN()
	}
	return hvi
}

// targetFit is the hyperparameter fit of one further target, kept from
// one ask to the next and refitted when the objective's is.
type targetFit struct {
	hp      *hyper.Params
	lastFit int // the objective's lastFit at this fit
}

// targetPosterior returns target j's posterior: its own ARD fit (at the
// objective's fit schedule: cold when the objective's was, else warm from
// the previous one) on the same inducing points as the objective's
// posterior, BKB's dictionary, with the same noise floor.
func (r *refiner) targetPosterior(e *Engine, j, nt int, xs [][]float64, y []float64) (*gp.DTC, float64, error) {
	if len(r.tfits) != nt {
		r.tfits = make([]targetFit, nt)
	}
	tf := &r.tfits[j]
	t := len(xs)
	if tf.hp == nil || tf.lastFit != r.lastFit {
		fam, err := r.cfg.Family()
		if err != nil {
			return nil, 0, err
		}
		x := mat.NewDense(t, e.e, nil)
		for i, xi := range xs {
			x.SetRow(i, xi)
		}
		opt := hyper.Options{Family: fam, Init: tf.hp, MaxPoints: fitPointsBKB,
			Seed: r.cfg.Seed ^ (uint64(t) * 0x9e3779b97f4a7c15) ^ streamFit ^ uint64(j+1)<<48}
		if tf.hp != nil && r.lastFull != r.lastFit {
			opt.Starts, opt.Screen = 1, -1
		}
		res, err := hyper.Fit(x, y, opt)
		if err != nil {
			return nil, 0, fmt.Errorf("study: hyperparameter fit of target %d at %d observations: %w", j+1, t, err)
		}
		tf.hp, tf.lastFit = &res.Params, r.lastFit
	}
	floor := r.cfg.Lambda
	if r.cfg.rules().NoiseFloor {
		floor = math.Min(floor, dtcNoiseFloorV4)
	}
	noise := math.Max(tf.hp.NoiseVariance, floor)
	// The targets' posteriors keep near-dependent points in S (no
	// DropNearDependent), as they always have.
	g, err := gp.NewDTCWith(tf.hp.Kernel(), e.e, noise, gp.CoreOptions{LegacyCore: r.cfg.legacyCore(), DeadPivots: r.cfg.deadPivots()})
	if err != nil {
		return nil, 0, err
	}
	rowOf := make(map[string]int, t)
	for i, x := range xs {
		row, err := g.Observe(x, y[i])
		if err != nil {
			return nil, 0, err
		}
		rowOf[PointKey(x)] = row
	}
	var dict []int
	seen := map[int]bool{}
	for _, row := range r.dtc.Dictionary() {
		if x, ok := r.rowPoint[row]; ok {
			if tr, ok := rowOf[PointKey(x)]; ok && !seen[tr] {
				seen[tr] = true
				dict = append(dict, tr)
			}
		}
	}
	if _, _, err := g.SetDictionary(dict); err != nil {
		return nil, 0, err
	}
	return g, noise, nil
}

// meanSD returns the mean and standard deviation (1 when it is 0) of v.
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd = math.Sqrt(ss / math.Max(float64(len(v)-1), 1))
	if !(sd > 1e-12*math.Max(1, math.Abs(mean))) {
		sd = 1
	}
	return mean, sd
}

// score is the acquisition at x of posterior mean m and standard
// deviation sd of objective 0 (standardized), with exploration beta.
func (m *tradeoffModel) score(x []float64, mean, sd, beta float64) float64 {
	for j, g := range m.post {
		if g == nil {
			if m.ws[j] == nil {
				continue
			}
			if err := m.r.dtc.PredictMeans(m.buf[j:j+1], x, m.ws[j:j+1]); err != nil {
				return math.NaN()
			}
			m.sds[j] = sd
			continue
		}
		mu, v, err := g.Predict(x)
		if err != nil {
			return math.NaN()
		}
		m.buf[j], m.sds[j] = mu, math.Sqrt(m.noise[j]*v)
	}
	s := mean + beta*sd
	if m.hvi {
		for k := 0; k < m.nObj; k++ {
			u := mean + beta*sd
			if k > 0 {
				u = m.buf[k-1] + beta*m.sds[k-1]
			}
			m.ybuf[k] = -u
		}
		s = optimisticImprovement(m.front, m.ybuf, m.hvRef)
	} else if m.nObj > 1 {
		s = math.Inf(1)
		for k := 0; k < m.nObj; k++ {
			u := mean + beta*sd
			if k > 0 {
				u = m.buf[k-1] + beta*m.sds[k-1]
			}
			s = math.Min(s, m.lam[k]*(u-m.ref[k]))
		}
	}
	var viol float64
	for j := 0; j < m.nCons; j++ {
		if l := m.buf[m.nObj-1+j] - beta*m.sds[m.nObj-1+j]; l > m.thr[j] {
			viol += l - m.thr[j]
		}
	}
	if viol > 0 {
		return infeasibleScore - viol
	}
	return s
}

// scalarized is the ask's scalarization of observation i's standardized
// rewards (objective 0's reward with one objective).
func (m *tradeoffModel) scalarized(i int) float64 {
	ob := m.obs[i]
	if m.nObj == 1 {
		return ob[0]
	}
	s := math.Inf(1)
	for k := 0; k < m.nObj; k++ {
		s = math.Min(s, m.lam[k]*(ob[k]-m.ref[k]))
	}
	return s
}

// incumbent returns the centre of the ask's trust region: the feasible
// observed point of best scalarized value, or, when none is feasible,
// the point of least (standardized) violation.
func (m *tradeoffModel) incumbent(e *Engine) []float64 {
	best, bv := -1, math.Inf(-1)
	for i, o := range e.succ {
		if !Feasible(o.cons) {
			continue
		}
		if v := m.scalarized(i); best < 0 || v > bv {
			best, bv = i, v
		}
	}
	if best < 0 {
		bv = math.Inf(1)
		for i, o := range e.succ {
			var viol float64
			for j, c := range o.cons {
				if c > 0 {
					viol += c / m.scale[m.nObj-1+j]
				}
			}
			if best < 0 || viol < bv {
				best, bv = i, viol
			}
		}
	}
	o := e.succ[best]
	return e.enc[o.arm*e.e : (o.arm+1)*e.e]
}

// regionValue is the value observation i gives the trust region's
// schedule: -Inf when infeasible; with several objectives, frontStep
// times the number of observations so far that joined the feasible
// Pareto front (each one a success); else the reward.
func (r *refiner) regionValue(e *Engine, i int) float64 {
	o := e.succ[i]
	if !Feasible(o.cons) {
		return math.Inf(-1)
	}
	if !r.cfg.MultiObjective() {
		return e.reward(o.value)
	}
	p := e.minimizedObs(o)
	joined := true
	for _, q := range e.succ[:i] {
		if !Feasible(q.cons) {
			continue
		}
		qv := e.minimizedObs(q)
		if pareto.Dominates(qv, p) || slices.Equal(qv, p) {
			joined = false
			break
		}
	}
	if joined {
		r.frontJoins++
	}
	return float64(r.frontJoins) * frontStep
}

// minimizedObs returns an observation's objective values, minimized.
func (e *Engine) minimizedObs(o observation) []float64 {
	n := e.cfg.Objectives()
	out := make([]float64, n)
	for k := range out {
		out[k] = -e.rewardOf(k, o.objectiveValue(k))
	}
	return out
}
