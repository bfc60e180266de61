package engine

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
)

// Cost-aware asks (Config.CostAware). When the evaluations' seconds vary
// widely, an ask weighs each candidate's optimistic improvement against
// the seconds it is predicted to take: it maximizes
//
//	(UCB(x) - m*)_+ / c(x)^alpha,
//
// where m* is the best posterior mean at an observed point, c(x) the
// predicted seconds and alpha the cost cooling of CArBO (Lee, Perrone,
// Archambeau and Seeger 2020, "Cost-aware Bayesian Optimization"), here
// counted in trials: alpha = (T - t) / (T - init), from 1 after the
// initial design down to 0 at the budget T, so that early asks prefer what
// is cheap and the last ones are the plain policy's. Snoek, Larochelle and
// Adams 2012 ("Practical Bayesian Optimization of Machine Learning
// Algorithms", section 3.2) divide by the predicted seconds throughout;
// the cooling keeps the run's end from avoiding a good, costly region.
//
// The seconds come from the records (each tell's Seconds), so a replay
// asks what the run asked; a rerun with the same seed asks the same points
// only as long as its evaluations take the same seconds.
const (
	// costMinObs is the number of timed evaluations before costs are
	// modelled: the initial design's five at least.
	costMinObs = 5
	// costSpread: costs are weighed only while the observed seconds'
	// 90th percentile is at least this times their 10th. Below it,
	// evaluations cost about the same and the plain policy asks: a fixed
	// factor, not tuned, so that the timing noise of a cheap objective
	// does not move the asks.
	costSpread = 4.0
	// costFloor: an evaluation is taken to cost at least 0.1 s, about
	// what an ask of a long study costs; below it the measured seconds
	// are mostly timing noise (a 1 ms objective's times vary several-fold
	// from one call to the next), which must not move the asks. A fixed
	// value, not tuned.
	costFloor = 0.1
	// costTop is the number of the best candidates by the policy's score
	// that are weighed: the ones the policy would consider at all.
	costTop = 256
	// streamCost seeds the cost model's hyperparameter fit.
	streamCost = 0x63_6f_73_74 // "cost"
)

// costAwarePolicies are the policies whose asks can weigh cost: a UCB
// score over grown candidates.
var costAwarePolicies = []string{"bkb", "gp-ucb"}

// checkCostAware checks CostAware against the rest of the configuration
// (normalized).
func (c *Config) checkCostAware() error {
	switch {
	case !c.CostAware:
		return nil
	case !slices.Contains(costAwarePolicies, c.Policy):
		return fmt.Errorf("study: cost_aware weighs a UCB score over grown candidates: policy bkb or gp-ucb, not %s", c.Policy)
	case !c.grows():
		return fmt.Errorf("study: cost_aware weighs grown candidates: candidates %s (configuration version 2 or later), not %s", CandidatesGrow, c.Candidates)
	case c.Budget <= 0:
		return fmt.Errorf("study: cost_aware needs the study's budget (its trial count): the weight of cost falls to 0 as the budget is spent")
	case len(c.Directions) > 1 || c.Constraints > 0:
		return fmt.Errorf("study: cost_aware is for one objective without constraints")
	}
	return nil
}

// costModel is a GP on the log seconds of the timed evaluations, with its
// own ARD length scales (what drives the cost, such as a number of trees,
// is often not what drives the value).
type costModel struct {
	n        int // timed evaluations it was fitted on
	post     *gp.Exact
	mean, sd float64 // of the log seconds it was fitted on
}

// logSeconds returns the model's predicted log seconds at x.
func (c *costModel) logSeconds(x []float64) float64 {
	m, _, err := c.post.Predict(x)
	if err != nil {
		return c.mean
	}
	return c.mean + c.sd*m
}

// timedEvaluations returns the encoded points and log seconds, at least
// log(costFloor), of the completed evaluations that have a positive time.
func (e *Engine) timedEvaluations() (x []float64, logs []float64) {
	if e.secondsOf == nil {
		return nil, nil
	}
	for _, o := range e.succ {
		s := e.secondsOf(o.trial)
		if !(s > 0) || math.IsInf(s, 0) {
			continue
		}
		x = append(x, e.enc[o.arm*e.e:(o.arm+1)*e.e]...)
		logs = append(logs, math.Log(max(s, costFloor)))
	}
	return x, logs
}

// costCooling returns CArBO's alpha after t evaluations of a budget of
// T with an initial design of init: 1 at the design's end, 0 at T.
func costCooling(t, T, init int) float64 {
	if T <= init {
		return 0
	}
	return min(1, max(0, float64(T-t)/float64(T-init)))
}

// costVaries reports whether the 90th percentile of the log seconds is at
// least log(costSpread) above their 10th.
func costVaries(logs []float64) bool {
	s := slices.Sorted(slices.Values(logs))
	q := func(p float64) float64 { return s[int(math.Round(p*float64(len(s)-1)))] }
	return q(0.9)-q(0.1) >= math.Log(costSpread)
}

// fitCost fits the cost model on the timed evaluations (x, logs) of
// dimension d. The fit is cold (seeded, from no previous fit), so that it
// depends on the records alone: a study restored from a snapshot, which
// keeps no cost model, fits the same one.
func (r *refiner) fitCost(x, logs []float64, d int) (*costModel, error) {
	n := len(logs)
	z, mean, sd := hyper.Standardize(logs)
	res, err := hyper.Fit(mat.NewDense(n, d, x), z, hyper.Options{Seed: r.cfg.Seed ^ streamCost})
	if err != nil {
		return nil, fmt.Errorf("cost model: %w", err)
	}
	post, err := gp.NewExact(res.Params.Kernel(), d, res.NoiseVariance)
	if err != nil {
		return nil, fmt.Errorf("cost model: %w", err)
	}
	for i := range n {
		if err := post.Observe(x[i*d:(i+1)*d], z[i]); err != nil {
			return nil, fmt.Errorf("cost model: %w", err)
		}
	}
	return &costModel{n: n, post: post, mean: mean, sd: sd}, nil
}

// costPick returns the index, among the candidates xs of policy scores vs
// (best first), that a cost-aware ask takes: 0 (the policy's own choice)
// while costs are not weighed or no candidate's score exceeds m*.
func (r *refiner) costPick(e *Engine, xs [][]float64, vs []float64) (int, error) {
	t := len(e.succ)
	alpha := costCooling(t, r.cfg.Budget, r.cfg.Init)
	if alpha <= 0 || len(xs) < 2 {
		return 0, nil
	}
	x, logs := e.timedEvaluations()
	if len(logs) < costMinObs || !costVaries(logs) {
		return 0, nil
	}
	if r.cost == nil || r.cost.n != len(logs) {
		c, err := r.fitCost(x, logs, e.e)
		if err != nil {
			return 0, err
		}
		r.cost = c
	}
	best := r.bestObservedMean(e) // m*; NaN makes every u NaN: the plain choice
	pick, top := 0, math.Inf(-1)
	for i, x := range xs {
		u := vs[i] - best
		if !(u > 0) || math.IsInf(u, 1) {
			continue
		}
		// log of u / c(x)^alpha; c's scale cancels in the comparison.
		if s := math.Log(u) - alpha*r.cost.logSeconds(x); s > top {
			pick, top = i, s
		}
	}
	return pick, nil
}
