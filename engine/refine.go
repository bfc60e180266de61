package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/candidates"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/space"
)

// Candidate growth of a version 2 study (Config.Candidates grow).
const (
	// trustPoints are drawn around the incumbent at the trust region's
	// radius on every ask.
	trustPoints = 192
	// probeCenters are the best-UCB points away from the incumbent that get
	// probePoints trust-region points each, at a fixed radius, so that a
	// second basin is refined before the incumbent's is exhausted.
	probeCenters = 2
	probePoints  = 64
	probeRadius  = 0.1
	// poolSize bounds the candidates kept from one ask to the next (the
	// best by the acquisition); the others are retired, so memory stays
	// O(global + trustPoints + poolSize) whatever the number of trials.
	poolSize = 64
	// polishStarts are the best candidates polished by L-BFGS on the
	// acquisition (continuous coordinates), polishEvals acquisition
	// evaluations each.
	polishStarts = 3
	polishEvals  = 60
	// farStarts are extra polish starts: the best candidates at least 0.3
	// from the incumbent and from each other.
	farStarts = 2
	// localSeparation is the least distance of a local phase's center
	// from the incumbent and from earlier centers, on the encoded box.
	localSeparation = 0.5
	// exploitEvery makes every exploitEvery-th ask maximize the posterior
	// mean (UCB with beta 0, polished) instead of the UCB: the point a
	// user would be recommended, evaluated, which sharpens the simple
	// regret at small budgets at no cost in exploration elsewhere.
	exploitEvery = 4
	// incumbentCands are the best observed points among which the
	// incumbent is the best posterior mean.
	incumbentCands = 32
	// fitPointsBKB bounds the points a BKB fit uses (gp/hyper MaxPoints:
	// a fit evaluation costs O(fitPointsBKB^3) whatever t); the exact
	// policies use gp/hyper's default, 300.
	fitPointsBKB = 150
	// highDim is the encoded dimension above which version 9's rules for
	// many parameters apply (HighDimNoPolish, HighDimFailureTol): TuRBO's
	// own threshold, above which its trust-region candidates perturb
	// fewer than all coordinates (min(1, 20/d) each, Eriksson et al.
	// 2019). At or below it version 9 asks as version 8 does.
	highDim = 20
	// highDimFailureTol is version 9's failure tolerance of the trust
	// region above highDim coordinates (TuRBO's is max(4, d): at d = 100
	// the region halves after 100 failures, about once in a run of 250
	// trials). Chosen among 5, 10 and 20 on the tuning half of the
	// 20-100-parameter suite (docs/tuning.md).
	highDimFailureTol = 10
	// initCap caps version 9's default initial design, min(max(5, 2d),
	// initCap): chosen between 10 and 20 on the tuning half of the
	// 20-100-parameter suite (docs/tuning.md). It leaves d <= 10 as
	// before.
	initCap = 20
	// resparsifyRatio is the ratio threshold C~ of version 5's
	// resparsification rule (see observe): BBKB's default, 2.
	resparsifyRatio = 2.0
)

// Seeds of the random streams of a version 2 study, mixed with the study
// seed and a count (observations or asks), so that each draw is a function
// of the records alone.
const (
	streamFit      = 0x66_69_74          // "fit"
	streamAsk      = 0x61_73_6b          // "ask"
	streamResample = 0x72_65_73_61_6d_70 // "resamp"
)

// refiner is the model and candidate generator of a study whose candidates
// grow. It is advanced lazily, at each ask, from the engine's completed
// evaluations, and every random draw is seeded from the study seed and the
// number of observations or asks, so a replay of the records rebuilds the
// same state and asks the same points.
//
// The posterior is on the observed points only: gp.DTC with BKB's ridge
// leverage resampling (Calandriello et al. 2019, Alg. 1) for bkb and
// bkb-thompson, gp.Exact for the others, with the fitted ARD kernel.
// Candidates are scored by their predictions, built afresh on each ask:
// the global space-filling set (the study's arms), trust-region points
// around the incumbent at TuRBO's radius schedule and around the best UCB
// points away from it, the pool kept from the previous ask, and L-BFGS
// polishes of the best of them (candidates.Polish, continuous coordinates
// only, integer and categorical ones held). There is no per-candidate
// posterior state to grow or retire: a prediction costs O(m^2) for the DTC
// (m the dictionary size) and O(t^2) for the exact GP, and only the
// poolSize best candidates outlive an ask. (gp's incremental
// AddCandidates, when it lands, would let the global set keep its means
// and variances current instead; see docs/optimizer.md.)
type refiner struct {
	// batchable says that the acquisition of the ask under way is score
	// at the DTC's prediction away from the pending points of batchCond
	// (scoreBatch); the rest is scoreBatch's scratch. None of them is
	// state between asks.
	batchable      bool
	batchCond      *pendingCond
	batchM, batchV []float64
	batchFar       []bool
	batchPts       [][]float64
	// cost is the model of the evaluations' log seconds of a cost-aware
	// study (costaware.go), refitted when a timed evaluation arrives.
	cost *costModel
	cfg  *Config
	dom  candidates.Domain
	// cond is the space's compiled conditions, nil without any; with
	// them every candidate is canonicalized (condition.go).
	cond   *space.Plan
	d      int
	global *mat.Dense // encoded global set

	hp        *hyper.Params // last ARD fit (nil: the configured kernel)
	ls        float64       // the length scale without an ARD fit
	lastFit   int           // observations at the last fit
	lastFull  int           // observations at the last full (cold) fit
	shift     float64       // rewards are told as (r - shift)/scale
	scale     float64
	warp      Warp    // the output transform (warp.go), Kind "" without one
	threshold float64 // improvement threshold of the trust region, reward units

	dtc    *gp.DTC
	exact  *gp.Exact
	lambda float64 // the posterior's noise variance (DTC: its ridge)
	kern   kernel.Kernel
	nObs   int // observations in the posterior
	rs     *rand.Rand
	rsSrc  *rand.PCG // rs's source (snapshots save its state)
	gvar   []float64 // scratch: the global set's variances
	// topBuf and topRew are incumbent's scratch.
	topBuf []int
	topRew []float64
	// rowPoint maps the DTC's rows of observed points to the points.
	rowPoint map[int][]float64

	ada *bandit.AdaBKB

	region candidates.Region
	best   float64 // best reward so far (for the region's schedule)
	// A local phase (local != nil) runs a trust region around local, the
	// best point seen since the phase began (localBest its reward), on
	// candidates of that region only, so that a second basin is searched
	// once the incumbent's trust region has collapsed; centers lists the
	// phases' starting points, which later phases keep away from.
	local      []float64
	localBest  float64
	restartDue bool
	centers    [][]float64
	// phaseStale holds the trials pending when the trust region last
	// restarted (pending.go).
	phaseStale map[int]bool
	// failStale holds the trials pending when an improvement was seen.
	failStale map[int]bool
	pool      [][]float64
	asks      int
	// sample holds the weights of this ask's joint posterior sample
	// (version 4 under heavy noise, noise.go), nil on a UCB ask.
	sample  []float64
	fitSecs float64
	growSec float64
	// gain is the sum of sigma~^2(x)/lambda of the points observed since
	// S was last drawn, resparsified counts the draws (version 5).
	gain         float64
	resparsified int
	// tm is the ask's model of further objectives and constraints
	// (tradeoffs.go), nil without them; frontJoins counts the
	// observations that joined the feasible Pareto front.
	tm         *tradeoffModel
	frontJoins int
	tfits      []targetFit
	// The local posterior of a late ask (late.go): its incumbent and the
	// half-widths of its points' box at the last rebuild, the
	// observations at that rebuild and those in the posterior.
	lateInc, lateHalf   []float64
	lateBuilt, lateSeen int
}

func newRefiner(cfg *Config, global *mat.Dense) *refiner {
	d := cfg.Space.EncodedDim()
	region := candidates.NewRegion(d)
	if cfg.rules().HighDimFailureTol && d > highDim {
		region.FailureTol = highDimFailureTol
	}
	return &refiner{cfg: cfg, dom: cfg.Space.Domain(), cond: cfg.Space.Plan(), d: d, global: global, scale: 1,
		region: region, best: math.Inf(-1)}
}

// usesDTC reports whether the posterior is BKB's.
func (r *refiner) usesDTC() bool {
	return r.cfg.Policy == "bkb" || r.cfg.Policy == "bkb-thompson"
}

// fitDue reports whether a fit is due at t observations: at the first
// model, at doubling counts (a cold fit) and every FitEvery (warm).
func (r *refiner) fitDue(t int) (due, cold bool) {
	first := r.dtc == nil && r.exact == nil
	if r.cfg.Fit == FitScalar {
		k := r.cfg.FitEvery
		return first || t >= max(k, 2) && t/k > r.lastFit/k, false
	}
	if !r.cfg.fitsARD() {
		return first, false
	}
	if r.hp == nil || t >= 2*r.lastFull {
		return true, true
	}
	// Warm refits every FitEvery observations, or every t/8 once that is
	// longer: a refit rebuilds the posterior, O((A + t) m^2), so a fixed
	// period would make the policy's time per trial grow with t.
	return r.cfg.FitEvery > 0 && t-r.lastFit >= max(r.cfg.FitEvery, t/8), false
}

// sync brings the model up to the engine's completed evaluations.
func (r *refiner) sync(e *Engine) error {
	t := len(e.succ)
	if r.cfg.Policy == "random" {
		return nil
	}
	if r.cfg.Policy == "ada-bkb" {
		return r.syncAda(e)
	}
	for ; r.nObs < t; r.nObs++ {
		o := e.succ[r.nObs]
		v := e.reward(o.value)
		if r.cfg.Tradeoffs() {
			v = r.regionValue(e, r.nObs)
		}
		if r.skipStale(e, o.trial, v) {
			continue
		}
		restarts := r.region.Restarts
		r.trackRegion(e.enc[o.arm*e.e:(o.arm+1)*e.e], v)
		if r.region.Restarts != restarts {
			r.markPhaseStale(e)
		}
	}
	if r.lateLocal(t) {
		return r.syncLate(e, t)
	}
	due, cold := r.fitDue(t)
	if due {
		if err := r.refit(e, cold); err != nil {
			return err
		}
		return r.rebuild(e)
	}
	// Incremental: the observations since the last sync.
	have := r.observed()
	for i := have; i < t; i++ {
		o := e.succ[i]
		if err := r.observe(e.enc[o.arm*e.e:(o.arm+1)*e.e], r.toldValue(e.reward(o.value))); err != nil {
			return err
		}
	}
	return nil
}

// observed is the number of observations in the posterior.
func (r *refiner) observed() int {
	switch {
	case r.dtc != nil:
		return r.dtc.Len()
	case r.exact != nil:
		return r.exact.Len()
	}
	return 0
}

// trackRegion updates the trust region's schedule with the reward v of
// the point x. In a local phase the region follows the phase's own best
// point; a collapse of the region (TuRBO's restart) switches between the
// main phase, around the global incumbent, and a local phase around a new
// center (see suggest).
func (r *refiner) trackRegion(x []float64, v float64) {
	if math.IsInf(r.best, -1) {
		r.best = v
		return
	}
	ref := r.best
	if r.local != nil {
		ref = r.localBest
	}
	improved := r.improves(v, ref)
	r.best = math.Max(r.best, v)
	if r.local != nil && v > r.localBest {
		r.localBest = v
		r.local = slices.Clone(x)
	}
	if r.region.Update(improved) && r.cfg.Policy != "random" {
		if r.local != nil {
			r.local = nil // back to the global incumbent
		} else {
			r.restartDue = true
		}
	}
}

func (r *refiner) toldValue(v float64) float64 { return (r.warp.warpedReward(v) - r.shift) / r.scale }

// standardize sets the reward map from all observations.
func (r *refiner) standardize(e *Engine) {
	if r.cfg.RawValues {
		return
	}
	if r.cfg.warps() {
		r.standardizeWarped(e)
		return
	}
	var s, ss float64
	for _, o := range e.succ {
		v := e.reward(o.value)
		s += v
	}
	n := float64(len(e.succ))
	r.shift = s / n
	for _, o := range e.succ {
		v := e.reward(o.value) - r.shift
		ss += v * v
	}
	r.scale = 1
	if sd := math.Sqrt(ss / math.Max(n-1, 1)); sd > 1e-12*math.Max(1, math.Abs(r.shift)) {
		r.scale = sd
	}
	if r.threshold == 0 {
		r.threshold = 1e-3 * r.scale
	}
}

// refit standardizes the rewards and fits the ARD hyperparameters: cold
// (gp/hyper's default starts and screen, from the previous fit too) at
// doubling counts, warm (one L-BFGS run from the previous fit) otherwise,
// on a bounded subset for BKB. The seed is the study seed and t.
func (r *refiner) refit(e *Engine, cold bool) error {
	start := time.Now()
	defer func() { r.fitSecs += time.Since(start).Seconds() }()
	r.standardize(e)
	t := len(e.succ)
	if k := r.cfg.FitEvery; r.cfg.Fit == FitScalar && t >= max(k, 2) && t/k > r.lastFit/k {
		x := make([]float64, 0, t*e.e)
		y := make([]float64, t)
		for i, o := range e.succ {
			x = append(x, e.enc[o.arm*e.e:(o.arm+1)*e.e]...)
			y[i] = r.toldValue(e.reward(o.value))
		}
		res := fitLengthScale(r.cfg.Kernel, r.cfg.Lambda, e.e, x, y, e.lengthScale)
		res.Observations = t
		e.fits = append(e.fits, res)
		e.lengthScale, r.lastFit = res.LengthScale, t
	}
	r.ls = e.lengthScale
	if !r.cfg.fitsARD() {
		return nil
	}
	fam, err := r.cfg.Family()
	if err != nil {
		return err
	}
	x := mat.NewDense(t, e.e, nil)
	y := make([]float64, t)
	for i, o := range e.succ {
		x.SetRow(i, e.enc[o.arm*e.e:(o.arm+1)*e.e])
		y[i] = r.toldValue(e.reward(o.value))
	}
	opt := hyper.Options{Family: fam, Init: r.hp, Seed: r.cfg.Seed ^ (uint64(t) * 0x9e3779b97f4a7c15) ^ streamFit}
	if r.usesDTC() {
		opt.MaxPoints = fitPointsBKB
	}
	if !cold && r.hp != nil {
		opt.Starts, opt.Screen = 1, -1
	}
	res, err := hyper.Fit(x, y, opt)
	if err != nil {
		return fmt.Errorf("study: hyperparameter fit at %d observations: %w", t, err)
	}
	r.hp = &res.Params
	e.lengthScale = geoMean(res.LengthScales)
	r.lastFit = t
	if cold {
		r.lastFull = t
	}
	e.fits = append(e.fits, FitResult{Observations: t, LengthScale: geoMean(res.LengthScales), LogMarginal: res.LogMarginal,
		Evaluations: res.Evaluations, LengthScales: slices.Clone(res.LengthScales), SignalVariance: res.SignalVariance,
		NoiseVariance: res.NoiseVariance, Points: res.Points, Cold: cold, Warped: r.cfg.rules().UnwarpSticky && r.warp.Active()})
	return nil
}

func geoMean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

// kernelAndNoise returns the kernel and noise variance of the posterior:
// the fit, or the configured kernel and Lambda.
func (r *refiner) kernelAndNoise() (kernel.Kernel, float64, error) {
	if r.hp != nil {
		noise := r.hp.NoiseVariance
		if r.usesDTC() {
			// BKB's ridge: the dictionary size grows like the effective
			// dimension at lambda, so it is floored, at the configured
			// one in versions 2 and 3, at most at dtcNoiseFloorV4 in
			// version 4 (noise.go).
			floor := r.cfg.Lambda
			if r.cfg.rules().NoiseFloor {
				floor = math.Min(floor, dtcNoiseFloorV4)
			}
			noise = math.Max(noise, floor)
		}
		return r.hp.Kernel(), noise, nil
	}
	k, err := r.cfg.Kernel.build(r.ls)
	return k, r.cfg.Lambda, err
}

// rebuild makes the posterior afresh from every observation: for BKB the
// dictionary is first all observed points (the exact posterior), then
// resampled by its ridge leverage scores, which is the draw BKB's
// Algorithm 1 would make from an exact previous posterior. O(t^3) at a
// refit, O(t m^2) after.
func (r *refiner) rebuild(e *Engine) error {
	k, lambda, err := r.kernelAndNoise()
	if err != nil {
		return err
	}
	r.kern, r.lambda = k, lambda
	t := len(e.succ)
	r.rsSrc = rand.NewPCG(r.cfg.Seed^streamResample, uint64(t))
	r.rs = rand.New(r.rsSrc)
	// Version 5 starts the draw from the previous dictionary. Before
	// version 5 the previous posterior was dropped before it was read, so
	// every observed point entered S at a refit (the exact posterior,
	// O((A + t) t^2) every t/8 trials); those studies keep that to replay
	// as written.
	old := r.dtc
	fullDraw := !r.cfg.rules().DictionaryFromPosterior || r.noisyDictionary(t)
	if fullDraw {
		old = nil
	}
	r.dtc, r.exact = nil, nil
	if r.usesDTC() {
		// Version 5 keeps near-dependent points out of S, so that a change
		// of S never rebuilds the posterior (gp.DTC.SetDropNearDependent).
		core := r.cfg.coreOptions()
		if fullDraw && r.cfg.rules().NoisyLegacyCore && r.noisyDictionary(t) {
			core.LegacyCore = true
		}
		g, err := gp.NewDTCWith(k, e.e, lambda, core)
		if err != nil {
			return err
		}
		if err := g.SetCandidates(r.global); err != nil {
			return err
		}
		// The resampling starts from the previous dictionary's points (the
		// BKB posterior the study had, under the new kernel), or from all
		// observed points at the first build: O((A + t) m^2), not the
		// exact posterior's O((A + t) t^2).
		rowPoint, err := r.observeForDraw(g, e, nil, r.dictionaryKeys(old))
		if err != nil {
			return err
		}
		r.rowPoint = rowPoint
		if !fullDraw {
			// The draw uses the variances under the previous dictionary's
			// posterior: before version 5 it used those from before the
			// last Observe above, made with an empty dictionary (the
			// prior), so every observed point entered S and the refit
			// rebuilt the exact posterior, O(t^3) every t/8 trials.
			g.SetLeverageAfterObservation(true)
			defer g.SetLeverageAfterObservation(false)
		}
		if _, _, err := g.Resample(r.rs, r.cfg.Qbar); err != nil {
			return err
		}
		r.dtc, r.gain = g, 0
		return nil
	}
	g, err := gp.NewExact(k, e.e, lambda)
	if err != nil {
		return err
	}
	if err := g.SetCandidates(r.global); err != nil {
		return err
	}
	g.Reserve(max(r.cfg.Budget, t))
	for _, o := range e.succ {
		if err := g.Observe(e.enc[o.arm*e.e:(o.arm+1)*e.e], r.toldValue(e.reward(o.value))); err != nil {
			return err
		}
	}
	r.exact = g
	return nil
}

// observeForDraw observes in g the observations idx of e.succ (every one,
// in order, for nil) and sets g's dictionary to the rows of the points in
// prev (dictionaryKeys), or to every row when none is there (prev empty:
// the first build; or, for a local posterior, none of the near points was
// in the previous dictionary): the start of a draw by leverage (rebuild,
// rebuildLate). It returns each row's point. Rows are numbered as the
// points are first observed, so every row is also every row in order.
func (r *refiner) observeForDraw(g *gp.DTC, e *Engine, idx []int, prev map[string]bool) (map[int][]float64, error) {
	n := len(e.succ)
	if idx != nil {
		n = len(idx)
	}
	rowPoint := map[int][]float64{}
	var rows, all []int
	for k := range n {
		i := k
		if idx != nil {
			i = idx[k]
		}
		o := e.succ[i]
		x := e.enc[o.arm*e.e : (o.arm+1)*e.e]
		row, err := g.Observe(x, r.toldValue(e.reward(o.value)))
		if err != nil {
			return nil, err
		}
		if _, ok := rowPoint[row]; !ok {
			rowPoint[row] = x
			all = append(all, row)
			if prev[PointKey(x)] {
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 {
		rows = all
	}
	if _, _, err := g.SetDictionary(rows); err != nil {
		return nil, err
	}
	return rowPoint, nil
}

// dictionaryKeys returns the keys (PointKey) of the points in g's
// dictionary, g a posterior whose rows r.rowPoint maps (none for nil).
func (r *refiner) dictionaryKeys(g *gp.DTC) map[string]bool {
	keys := map[string]bool{}
	if g != nil {
		for _, row := range g.Dictionary() {
			keys[PointKey(r.rowPoint[row])] = true
		}
	}
	return keys
}

// globalPosterior returns the posterior means and variances (GP scale) of
// the global set, the posterior's candidates.
func (r *refiner) globalPosterior() (means, vars []float64) {
	if r.dtc != nil {
		means = r.dtc.Means()
		v := r.dtc.Variances()
		if len(r.gvar) != len(v) {
			r.gvar = make([]float64, len(v))
		}
		for i, x := range v {
			r.gvar[i] = r.lambda * x
		}
		return means, r.gvar
	}
	return r.exact.Means(), r.exact.Variances()
}

// observe adds one observation to the posterior (BKB: then resamples).
func (r *refiner) observe(x []float64, y float64) error {
	if r.dtc != nil {
		var pre float64
		if r.cfg.rules().Resparsify {
			_, pre, _ = r.dtc.Predict(x)
		}
		row, err := r.dtc.Observe(x, y)
		if err != nil {
			return err
		}
		r.rowPoint[row] = x
		if r.cfg.rules().Resparsify && !r.noisyDictionary(r.dtc.Len()) {
			// Resparsification when due (Calandriello et al. 2020, BBKB):
			// the dictionary drawn after observation t0 stays accurate
			// while 1 + sum of the variances sigma~^2_{t0}(x_s)/lambda of
			// the points observed since stays below the ratio threshold
			// C~ (their Lemma 1 bounds the posterior's distortion by it).
			// Redrawing S at every observation, as BKB's Algorithm 1
			// does, moves tens of points a step and rebuilds the
			// posterior, O((A + t) m^2), every step; here S is redrawn a
			// few times per hundred trials late in a run. pre is on the
			// 1/lambda scale, the sum measured against the current S.
			r.gain += pre
			if 1+r.gain < resparsifyRatio {
				return nil
			}
			r.gain = 0
			r.resparsified++
		}
		_, _, err = r.dtc.Resample(r.rs, r.cfg.Qbar)
		return err
	}
	return r.exact.Observe(x, y)
}

// predict returns the posterior mean and variance (GP scale) at x.
func (r *refiner) predict(x []float64) (float64, float64) {
	if r.dtc != nil {
		m, v, err := r.dtc.Predict(x)
		if err != nil {
			return math.NaN(), 0
		}
		return m, r.lambda * v
	}
	m, v, err := r.exact.Predict(x)
	if err != nil {
		return math.NaN(), 0
	}
	return m, v
}

// syncAda tells Ada-BKB the evaluations it has not seen; it is built at
// the first ask after the initial design, with the rewards standardized by
// the design.
func (r *refiner) syncAda(e *Engine) error {
	t := len(e.succ)
	if r.ada == nil {
		r.standardize(e)
		k, err := r.cfg.Kernel.build(r.cfg.Kernel.LengthScale)
		if err != nil {
			return err
		}
		beta, gpScale, err := r.cfg.betaSchedule()
		if err != nil {
			return err
		}
		a, err := bandit.NewAdaBKB(r.d, bandit.AdaBKBOptions{Options: bandit.Options{Kernel: k, Lambda: r.cfg.Lambda,
			Beta: beta, PaperScale: !gpScale, Qbar: r.cfg.Qbar, Seed: r.cfg.Seed, LegacyCore: r.cfg.legacyCore(), DeadPivots: r.cfg.deadPivots()}})
		if err != nil {
			return err
		}
		r.ada = a
	}
	for ; r.nObs < t; r.nObs++ {
		o := e.succ[r.nObs]
		if err := r.ada.Tell(e.enc[o.arm*e.e:(o.arm+1)*e.e], r.toldValue(e.reward(o.value))); err != nil {
			return err
		}
	}
	return nil
}

// stats reports the model's state.
func (r *refiner) stats() bandit.Stats {
	switch {
	case r.dtc != nil:
		return bandit.Stats{Observations: r.dtc.Len(), DictionarySize: r.dtc.DictionarySize(),
			DictionaryChanges: r.dtc.DictionaryChanges(), SumVariance: r.dtc.EffectiveDimension()}
	case r.exact != nil:
		return bandit.Stats{Observations: r.exact.Len(), DictionarySize: r.exact.Len()}
	case r.ada != nil:
		if s, ok := any(r.ada).(bandit.StatsReporter); ok {
			return s.Stats()
		}
	}
	return bandit.Stats{}
}
