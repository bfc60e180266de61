package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/candidates"
	"github.com/bkb-go/bkb/kernel"
)

// cand is a candidate's encoded point and its acquisition value.
type cand struct {
	x []float64
	v float64
}

// suggest returns the encoded next point.
func (r *refiner) suggest(e *Engine) ([]float64, error) {
	if err := r.sync(e); err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { r.growSec += time.Since(start).Seconds() }()
	rng := rand.New(rand.NewPCG(r.cfg.Seed^streamAsk, uint64(r.asks)))
	r.asks++
	if r.cfg.Policy == "random" {
		x := make([]float64, r.d)
		r.dom.Random(x, rng)
		if r.cond != nil {
			r.cond.CanonicalizeEncoded(x)
		}
		return x, nil
	}
	if r.cfg.Policy == "ada-bkb" {
		return r.ada.Ask()
	}
	// The points to avoid: pending trials and failed evaluations.
	var avoid [][]float64
	for _, a := range e.pendingArms() {
		avoid = append(avoid, e.enc[a*e.e:(a+1)*e.e])
	}
	acq, score, err := r.acquisition(e, avoid, rng)
	if err != nil {
		return nil, err
	}
	// A late ask (late.go): the local posterior's incumbent and candidates
	// only.
	lateAsk := r.lateLocal(len(e.succ))
	var inc []float64
	if lateAsk {
		inc = r.lateIncumbent(e)
		r.restartDue, r.local = false, nil
	} else {
		inc = r.incumbent(e)
	}

	var cs []cand
	// The candidates of the pool and of each trust region are scored
	// together where the posterior allows (scoreBatch): the same floats,
	// in the same order, as one at a time.
	var group [][]float64
	flush := func() {
		for i, v := range r.scoreBatch(group, acq, score) {
			cs = append(cs, cand{group[i], v})
		}
		group = group[:0]
	}
	add := func(x []float64) {
		if r.batchable {
			group = append(group, x)
			return
		}
		cs = append(cs, cand{x, acq(x)})
	}
	// seen holds the candidates of a conditional space, which are
	// canonicalized and kept once (nil without conditions).
	var seen map[string]bool
	if r.cond != nil {
		acq, seen = r.conditionalAcq(acq), map[string]bool{}
		r.batchable = false
		add = func(x []float64) {
			r.cond.CanonicalizeEncoded(x)
			if k := PointKey(x); !seen[k] {
				seen[k] = true
				cs = append(cs, cand{x, acq(x)})
			}
		}
	}
	n, _ := r.global.Dims()
	// appendGlobal appends the global space-filling set's candidates,
	// scored from the means and variances its posterior keeps current
	// (O(n m) per observation, not O(n m^2) per ask), or by acq.
	appendGlobal := func(kept bool) {
		var means, vars []float64
		if kept {
			means, vars = r.globalPosterior()
		}
		for i := 0; i < n; i++ {
			x := r.global.RawRowView(i)
			if kept {
				cs = append(cs, cand{x, score(x, means[i], vars[i])})
			} else {
				cs = append(cs, cand{x, acq(x)})
			}
		}
	}
	if lateAsk {
		// No global candidates: the local posterior has no data there.
	} else if r.sample != nil {
		// A joint sample's values on the global set: O(n m).
		lin, res := make([]float64, n), make([]float64, n)
		r.dtc.SampleCandidates(lin, res, r.sample)
		for i := 0; i < n; i++ {
			cs = append(cs, cand{r.global.RawRowView(i), sampleValue(lin[i], res[i], rng)})
		}
	} else {
		appendGlobal(true)
	}
	if seen != nil {
		for _, c := range cs {
			seen[PointKey(c.x)] = true // the arms are canonical
		}
	}
	var weights []float64
	if r.hp != nil {
		weights = candidates.ARDWeights(r.hp.LengthScales)
	}
	var lateBox []float64 // the half-widths of a late ask's candidates
	if lateAsk {
		lateBox = r.lateHalfWidths(weights)
	}
	for _, x := range r.pool {
		if lateAsk && !inBox(x, inc, lateBox) {
			continue // out of the local posterior's data
		}
		add(x)
	}
	flush()
	// trust adds k trust-region candidates around center, of half-widths
	// radius times w (the ARD weights, or a late ask's box).
	trust := func(center []float64, radius float64, w []float64, k int) error {
		m := mat.NewDense(k, r.d, nil)
		if err := r.trustCandidates(m, center, radius, w, rng); err != nil {
			return err
		}
		for i := 0; i < k; i++ {
			add(m.RawRowView(i))
		}
		flush()
		return nil
	}
	if r.restartDue {
		r.restartDue = false
		r.startLocal(inc, acq)
	}
	// A conditional space's branch ask (branchEvery): the candidates of
	// the branches the incumbent is not in compete alone, with a trust
	// region around each branch's best point, so that a run does not lock
	// onto the first branch that looks good (a GP that saw a few poor
	// points of a branch believes all of it poor, where the branch's basin
	// may be narrow; TPE keeps sampling every branch by its density).
	branch, incBranch := -1, -1
	if r.cond != nil && r.local == nil && r.asks%branchEvery == 0 {
		if branch = r.cond.BranchParam(); branch >= 0 {
			incBranch = r.cond.BranchOf(branch, inc)
			for _, x := range r.branchBests(e, branch, incBranch) {
				if err := trust(x, r.region.Radius, weights, trustPoints); err != nil {
					return nil, err
				}
			}
		}
	}
	if r.local != nil {
		// Only the local region's candidates compete.
		cs = cs[:0]
		if err := trust(r.local, r.region.Radius, weights, trustPoints); err != nil {
			return nil, err
		}
	} else if lateAsk {
		if err := trust(inc, 1, lateBox, trustPoints); err != nil {
			return nil, err
		}
	} else if err := trust(inc, r.region.Radius, weights, trustPoints); err != nil {
		return nil, err
	}
	byScore := func(a, b cand) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(cs, byScore)
	// Probe the best points away from the incumbent.
	probes := 0
	for _, c := range cs {
		if probes == probeCenters || r.local != nil || lateAsk {
			break
		}
		if math.IsInf(c.v, -1) || dist(c.x, inc) < 2*probeRadius {
			continue
		}
		if err := trust(c.x, probeRadius, weights, probePoints); err != nil {
			return nil, err
		}
		probes++
	}
	slices.SortStableFunc(cs, byScore)
	// Polish the best few (distinct) points.
	if r.polishes() {
		var starts [][]float64
		for _, c := range cs {
			if len(starts) == polishStarts || math.IsInf(c.v, -1) {
				break
			}
			dup := false
			for _, s := range starts {
				if dist(s, c.x) < 1e-6 {
					dup = true
				}
			}
			if !dup {
				starts = append(starts, c.x)
			}
		}
		// Diverse starts: the best points far from the incumbent and
		// from each other, whose local maxima of the acquisition a raw
		// candidate underestimates most.
		far := 0
		for _, c := range cs {
			if far == farStarts || r.local != nil || lateAsk {
				break
			}
			if math.IsInf(c.v, -1) || dist(c.x, inc) < 0.3 {
				continue
			}
			ok := true
			for _, s := range starts {
				if dist(s, c.x) < 0.3 {
					ok = false
				}
			}
			if ok {
				starts = append(starts, c.x)
				far++
			}
		}
		var polishBatch func(xs [][]float64, out []float64)
		if r.batchable {
			polishBatch = func(xs [][]float64, out []float64) { copy(out, r.scoreBatch(xs, acq, score)) }
		}
		pacq := acq
		if lateAsk {
			// Polishes stay in the late box (latePenalty).
			h := lateBox
			pacq = func(x []float64) float64 { return acq(x) - latePenalty(x, inc, h) }
			if polishBatch != nil {
				pb := polishBatch
				polishBatch = func(xs [][]float64, out []float64) {
					pb(xs, out)
					for i, x := range xs {
						out[i] -= latePenalty(x, inc, h)
					}
				}
			}
		}
		for _, s := range starts {
			p, v, err := candidates.Polish(pacq, s, r.dom, candidates.PolishOptions{MaxEvals: polishEvals, Batch: polishBatch})
			if err != nil {
				return nil, err
			}
			if seen != nil {
				// acq reads p canonicalized: v is its canonical point's.
				r.cond.CanonicalizeEncoded(p)
				if k := PointKey(p); seen[k] {
					continue
				}
				seen[PointKey(p)] = true
			}
			cs = append(cs, cand{p, v})
		}
		slices.SortStableFunc(cs, byScore)
	}
	fresh := r.freshAsks(e)
	if fresh {
		dropped := r.dropObserved(e, cs)
		if dropped == dropAll {
			// Every candidate is an observed configuration: a local
			// region of a discrete space that the asks have exhausted.
			// The global set's configurations compete too (scored by acq
			// in a late ask, whose posterior keeps no global values, and
			// in a joint sample's ask, which has no score).
			appendGlobal(!lateAsk && score != nil)
			slices.SortStableFunc(cs, byScore)
			dropped = r.dropObserved(e, cs)
		}
		if dropped != dropNone {
			slices.SortStableFunc(cs, byScore)
		}
	}
	if len(cs) == 0 || math.IsInf(cs[0].v, -1) || math.IsNaN(cs[0].v) {
		return nil, fmt.Errorf("study: no candidate has a finite acquisition (every one pending or failed?)")
	}
	if branch >= 0 {
		x := make([]float64, e.p)
		for _, c := range cs {
			if !math.IsInf(c.v, -1) && r.cond.BranchOf(branch, c.x) != incBranch && !(fresh && e.observedConfig(x, c.x)) {
				return slices.Clone(c.x), nil
			}
		}
	}
	pick := 0
	if r.cfg.CostAware && !lateAsk && r.sample == nil {
		// A cost-aware ask (costaware.go) weighs the best candidates'
		// scores against their predicted seconds.
		var xs [][]float64
		var vs []float64
		var at []int // the index in cs of xs[i]
		x := make([]float64, e.p)
		for j, c := range cs[:min(costTop, len(cs))] {
			if !math.IsInf(c.v, -1) && !math.IsNaN(c.v) && !(fresh && e.observedConfig(x, c.x)) {
				xs, vs, at = append(xs, c.x), append(vs, c.v), append(at, j)
			}
		}
		i, err := r.costPick(e, xs, vs)
		if err != nil {
			return nil, err
		}
		if len(at) > 0 {
			pick = at[i]
		}
	}
	// Keep the best for the next ask; retire the rest.
	r.pool = r.pool[:0]
	for _, c := range cs[:min(poolSize, len(cs))] {
		if !math.IsInf(c.v, -1) {
			r.pool = append(r.pool, slices.Clone(c.x))
		}
	}
	return slices.Clone(cs[pick].x), nil
}

// trustCandidates fills the rows of m with trust-region candidates around
// center, TuRBO's (Eriksson et al. 2019, "Scalable Global Optimization via
// Local Bayesian Optimization", NeurIPS, section 2 and its appendix on high
// dimensions): each continuous or discrete coordinate is perturbed with
// probability min(1, 20/k), k such coordinates, and at least one is, to a
// uniform draw within radius times its ARD weight (candidates.TrustRegion
// with PerturbProb 0). Above 20 coordinates a candidate so moves about 20
// of them, and version 9's asks above highDim are such candidates
// (polishes).
func (r *refiner) trustCandidates(m *mat.Dense, center []float64, radius float64, weights []float64, rng *rand.Rand) error {
	return candidates.TrustRegion(m, r.dom, center, radius, rng, candidates.TROptions{Weights: weights})
}

// polishes reports whether this ask polishes its best candidates by L-BFGS
// on the acquisition: not on a joint sample or a Thompson ask, not without
// continuous coordinates, and not above highDim coordinates in version 9
// (HighDimNoPolish): there a polish moves every coordinate and won nearly
// every ask of version 8 at 100 parameters (docs/tuning.md), where
// TuRBO's sparse candidates are what makes progress.
func (r *refiner) polishes() bool {
	if r.cfg.rules().HighDimNoPolish && r.d > highDim {
		return false
	}
	return r.sample == nil && r.cfg.Policy != "thompson" && r.cfg.Policy != "bkb-thompson" && len(r.dom.ContinuousIndices()) > 0
}

// branchEvery: one ask in branchEvery of a conditional space is a branch
// ask (see suggest). Chosen among 3, 4 and 6 on the tuning half of
// bench/peers/conditional.py (cond-a, cond-b, breast-cancer; 10 seeds):
// the lowest mean best value on three of its five rows that differ
// (docs/conditional.md).
const branchEvery = 4

// branchBests returns the best observed point of every branch (choice of
// the branch parameter) but skip.
func (r *refiner) branchBests(e *Engine, branch, skip int) [][]float64 {
	k := len(r.cfg.Space.Params[branch].Choices)
	best := make([]int, k)
	for i := range best {
		best[i] = -1
	}
	for i, o := range e.succ {
		x := e.enc[o.arm*e.e : (o.arm+1)*e.e]
		b := r.cond.BranchOf(branch, x)
		if b != skip && (best[b] < 0 || e.reward(o.value) > e.reward(e.succ[best[b]].value)) {
			best[b] = i
		}
	}
	var out [][]float64
	for _, i := range best {
		if i >= 0 {
			o := e.succ[i]
			out = append(out, e.enc[o.arm*e.e:(o.arm+1)*e.e])
		}
	}
	return out
}

// startLocal begins a local phase: its center is the global point of
// largest acquisition at least localSeparation from the incumbent and from
// every earlier phase's center (the nearest such point if none is).
func (r *refiner) startLocal(inc []float64, acq func([]float64) float64) {
	n, _ := r.global.Dims()
	var center []float64
	bv := math.Inf(-1)
	for i := 0; i < n; i++ {
		x := r.global.RawRowView(i)
		if dist(x, inc) < localSeparation {
			continue
		}
		ok := true
		for _, c := range r.centers {
			if dist(x, c) < localSeparation {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if v := acq(x); v > bv {
			bv, center = v, x
		}
	}
	if center == nil {
		return // nowhere left to go: stay with the incumbent
	}
	r.local = slices.Clone(center)
	r.localBest = math.Inf(-1)
	r.centers = append(r.centers, r.local)
	r.region.Radius = r.region.Init
}

// topK appends to idx the indices of the k largest of value(0..n-1) in
// the order of a stable sort by value, descending (ties by index), and
// their values to vals, by insertion in one pass: O(n) for small k,
// where sorting all n cost O(n log n) and an allocation per ask.
func topK(idx []int, vals []float64, k, n int, value func(int) float64) ([]int, []float64) {
	for i := 0; i < n; i++ {
		v := value(i)
		if len(idx) == k && !(v > vals[len(vals)-1]) {
			continue
		}
		p := len(idx)
		for p > 0 && v > vals[p-1] {
			p--
		}
		if len(idx) < k {
			idx, vals = append(idx, 0), append(vals, 0)
		}
		copy(idx[p+1:], idx[p:len(idx)-1])
		copy(vals[p+1:], vals[p:len(vals)-1])
		idx[p], vals[p] = i, v
	}
	return idx, vals
}

// dist is the Euclidean distance.
func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// incumbent returns, of the incumbentCands observed points with the best
// values, the one with the best posterior mean (with noise, the best value
// may be luck; predicting every observation would cost O(t) predictions).
func (r *refiner) incumbent(e *Engine) []float64 {
	if r.tm != nil {
		return r.tm.incumbent(e)
	}
	idx, rew := topK(r.topBuf[:0], r.topRew[:0], incumbentCands, len(e.succ), func(i int) float64 { return e.reward(e.succ[i].value) })
	r.topBuf, r.topRew = idx, rew
	var best []float64
	bv := math.Inf(-1)
	for _, i := range idx {
		o := e.succ[i]
		x := e.enc[o.arm*e.e : (o.arm+1)*e.e]
		if m, _ := r.predict(x); m > bv || best == nil {
			best, bv = x, m
		}
	}
	return best
}

// bestObservedMean returns the largest posterior mean at an observed point
// (EI's incumbent value, and m* of a cost-aware ask); NaN if a prediction
// failed.
func (r *refiner) bestObservedMean(e *Engine) float64 {
	best := math.Inf(-1)
	for _, o := range e.succ {
		m, _ := r.predict(e.enc[o.arm*e.e : (o.arm+1)*e.e])
		best = math.Max(best, m)
	}
	return best
}

// acquisition returns the policy's score of a candidate. A point at a
// pending trial or failed evaluation scores -Inf; near pending trials the
// variance is GP-BUCB's, conditioned on all of them (pending.go); near a
// failed evaluation the standard deviation shrinks by sqrt(1 - rho^2) for
// the prior correlation rho of the two points.
func (r *refiner) acquisition(e *Engine, avoid [][]float64, rng *rand.Rand) (acq func(x []float64) float64, score func(x []float64, m, v float64) float64, err error) {
	r.batchable = false
	t := len(e.succ)
	beta, _, err := r.cfg.betaSchedule()
	if err != nil {
		return nil, nil, err
	}
	nGlobal, _ := r.global.Dims()
	b := beta.Beta(acquisition.State{T: t, Arms: nGlobal, Lambda: r.lambda, Kappa2: 1})
	u := -1.0 // the unexplained share, computed when needed
	rho, fitted := r.noiseShare()
	noisyRules := r.cfg.rules().NoisyExploration && fitted
	if h, ok := beta.(horizonBeta); ok {
		u = r.unexplained()
		if scalesByWideness(noisyRules, rho) {
			b = math.Max(b*math.Sqrt(1-u), horizonFloor*h.B)
		}
		if noisyRules {
			b = math.Max(b, noisyBetaFloor(h.B, rho, u))
		}
	}
	// Every exploitEvery-th ask takes the posterior mean's maximizer,
	// unless evaluations failed; also while points are pending (with
	// GP-BUCB's variances and stale results kept from the trust region,
	// 4 workers on Hartmann 6, T=200 then end as close to the minimum as
	// one: docs/parallel.md).
	if exploitEvery > 0 && r.asks%exploitEvery == 0 && len(avoid) == len(e.pending) {
		b = 0
	}
	if r.tm, err = r.newTradeoffModel(e); err != nil {
		return nil, nil, err
	}
	tm := r.tm
	var bestMean float64
	if r.cfg.Policy == "ei" {
		bestMean = r.bestObservedMean(e)
	}
	thompson := r.cfg.Policy == "thompson" || r.cfg.Policy == "bkb-thompson"
	// Version 4 under heavy noise: every other ask maximizes a joint
	// sample of BKB's posterior (noise.go), on the candidates only (a
	// sample has an independent part per point; there is nothing for
	// L-BFGS to polish).
	r.sample = nil
	if noisyRules && r.dtc != nil && len(avoid) == 0 && tm == nil {
		if u < 0 {
			u = r.unexplained()
		}
		if thompsonAsk(rho, u, r.asks) {
			w := r.dtc.SampleWeights(make([]float64, r.dtc.DictionarySize()), rng)
			r.sample = w
			return func(x []float64) float64 {
				lin, res, err := r.dtc.SampleAt(x, w)
				if err != nil {
					return math.NaN()
				}
				return sampleValue(lin, res, rng)
			}, nil, nil
		}
	}
	diag := func(x []float64) float64 { return kernel.Diag(r.kern, x) }
	// Pending trials: GP-BUCB's conditional variance (pending.go); the
	// prior-correlation shrink below is then for failed points only.
	cond, err := r.newPendingCond(e)
	if err != nil {
		return nil, nil, err
	}
	skip := 0
	if cond != nil {
		skip = len(e.pending)
	}
	score = func(x []float64, m, v float64) float64 {
		if cond != nil {
			var ok bool
			if v, ok = cond.variance(x, v); !ok {
				return math.Inf(-1)
			}
		}
		shrink := 1.0
		for _, p := range avoid[skip:] {
			kxp := r.kern.Eval(x, p)
			rho2 := kxp * kxp / (diag(x) * diag(p))
			if rho2 > 1-1e-12 {
				return math.Inf(-1)
			}
			shrink *= 1 - rho2
		}
		sd := math.Sqrt(math.Max(v, 0) * shrink)
		switch {
		case thompson:
			return m + sd*rng.NormFloat64()
		case r.cfg.Policy == "ei":
			if sd <= 0 {
				return math.Max(m-bestMean, 0)
			}
			z := (m - bestMean) / sd
			return (m-bestMean)*normCDF(z) + sd*normPDF(z)
		}
		if tm != nil {
			return tm.score(x, m, sd, b)
		}
		return m + b*sd
	}
	acq = func(x []float64) float64 {
		if cond != nil {
			if m, v, ok := cond.predict(x); ok {
				return score(x, m, v)
			}
		}
		m, v := r.predict(x)
		return score(x, m, v)
	}
	// acq is score at the posterior's prediction, which scoreBatch makes
	// for many points at once, except near a pending point (cond.near),
	// where acq predicts with the pending points' cross covariances.
	r.batchable, r.batchCond = scoreInGroups && r.dtc != nil, cond
	return acq, score, nil
}

// scoreInGroups enables scoreBatch's groups; a test turns it off to
// compare the points asked with and without them.
var scoreInGroups = true

// scoreBatch returns acq at each of xs, in order: with r.batchable,
// score at the DTC's predictions made by gp.DTC.PredictBatch (the floats
// of Predict, about 1.4x faster for an ask's hundreds of candidates late
// in a long study) for the points not near a pending one, and acq at the
// others, called in xs's order (score draws from the ask's random stream
// and keeps the pending points' state of the point it scores), else acq
// one point at a time.
func (r *refiner) scoreBatch(xs [][]float64, acq func([]float64) float64, score func(x []float64, m, v float64) float64) []float64 {
	n := len(xs)
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	if r.batchable {
		far := r.batchFar[:0]
		for _, x := range xs {
			far = append(far, r.batchCond == nil || !r.batchCond.near(x))
		}
		r.batchFar = far
		pts := r.batchPts[:0]
		for i, x := range xs {
			if far[i] {
				pts = append(pts, x)
			}
		}
		r.batchPts = pts
		k := len(pts)
		if cap(r.batchM) < k {
			r.batchM, r.batchV = make([]float64, k), make([]float64, k)
		}
		ms, vs := r.batchM[:k], r.batchV[:k]
		if err := r.dtc.PredictBatch(pts, ms, vs); err == nil {
			j := 0
			for i, x := range xs {
				if !far[i] {
					out[i] = acq(x)
					continue
				}
				out[i] = score(x, ms[j], r.lambda*vs[j])
				j++
			}
			return out
		}
	}
	for i, x := range xs {
		out[i] = acq(x)
	}
	return out
}

// unexplained is the mean, over the global space-filling set, of the
// posterior variance as a fraction of the prior variance: 1 before any
// observation, near 0 once the model is sure of f everywhere. The
// version 3 exploration (horizonBeta) scales its bonus by
// sqrt(1 - unexplained): where the posterior is wide almost everywhere
// (10-d problems at a few hundred trials, whose box the budget cannot
// cover) the UCB maximizer is merely the point farthest from the data, and
// exploring there cannot pay back within the budget (docs/optimizer.md).
func (r *refiner) unexplained() float64 {
	_, vars := r.globalPosterior()
	if len(vars) == 0 {
		return 0
	}
	var s float64
	for i, v := range vars {
		if prior := kernel.Diag(r.kern, r.global.RawRowView(i)); prior > 0 {
			s += math.Min(math.Max(v/prior, 0), 1)
		}
	}
	return s / float64(len(vars))
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// conditionalAcq returns the acquisition acq of a conditional space read
// at the canonical form of its argument: the GP sees inactive parameters at
// their placeholders only, so a polish cannot climb along a coordinate
// that does not exist at the point, nor two candidates differ there.
func (r *refiner) conditionalAcq(acq func([]float64) float64) func([]float64) float64 {
	buf := make([]float64, r.d)
	return func(x []float64) float64 {
		copy(buf, x)
		r.cond.CanonicalizeEncoded(buf)
		return acq(buf)
	}
}
