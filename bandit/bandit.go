// Package bandit provides GP bandit policies over a finite arm set, driven
// through an ask/tell interface (as in Optuna's study design) so that a
// user's own loop can call them: GP-UCB on the exact posterior, BKB
// (budgeted kernel bandits, Calandriello et al. (COLT 2019)) on the DTC posterior with
// ridge-leverage-score dictionary resampling, Thompson sampling, expected
// improvement and random search as baselines, and a runner that plays a
// policy against an objective and records the trace.
package bandit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// Policy chooses arms and learns from their rewards. Rewards are
// maximised. Any arm may be told at any time, including arms the policy
// did not ask for (a user's own choices, or a warm start from earlier
// evaluations).
type Policy interface {
	// Ask returns the next arm to evaluate. Arms asked for and not yet
	// told are pending: a UCB policy conditions its variances on them, so
	// consecutive Asks form a batch (GP-BUCB style).
	Ask() (arm int, err error)
	// Tell records the reward y observed at arm.
	Tell(arm int, y float64) error
	// Name identifies the policy ("gp-ucb", "bkb", ...).
	Name() string
}

// Stats is what a policy reports about its state. Its JSON names are
// snake_case (`bkb status --json`'s "model"); UnmarshalJSON also reads the
// Go field names, which snapshots written before the tags carry.
type Stats struct {
	Observations      int     `json:"observations"`
	DictionarySize    int     `json:"dictionary_size"`    // BKB: |S|; exact posteriors: the number of observations
	DictionaryChanges int     `json:"dictionary_changes"` // BKB: points that entered or left S so far
	SumVariance       float64 `json:"sum_variance"`       // sum of posterior variances at observed points (d_eff estimate)
	Jitter            int     `json:"jitter"`             // pivots that needed jitter
	VarianceClamps    int     `json:"variance_clamps"`    // variances that rounding made negative, set to 0
	RetryJitter       int     `json:"retry_jitter"`       // diagonal entries jittered by factorization retries
	// RowsRead counts the arms' posterior rows the policy read or
	// computed so far: A per observation for a full scan (one pass over
	// the embedding), the working set's rows per pass plus the rows
	// computed for visited arms with Options.Lazy.
	RowsRead int64 `json:"rows_read,omitempty"`
	// RowsComputed counts rows computed from scratch for arms a lazy
	// policy visited (included in RowsRead); WorkingSet is the number of
	// arms whose rows a lazy policy keeps current.
	RowsComputed int64 `json:"rows_computed,omitempty"`
	WorkingSet   int   `json:"working_set,omitempty"`
	// ArmsEliminated counts arms removed for good by Options.Eliminate.
	ArmsEliminated int `json:"arms_eliminated,omitempty"`
	// BoundViolations counts arms whose exact UCB exceeded the lazy
	// bound, found by Options.LazyCheck (always 0 without it).
	BoundViolations int `json:"bound_violations,omitempty"`
}

// UnmarshalJSON reads the snake_case names, and the Go field names of
// the JSON written before Stats had tags (the readable part of older
// study snapshots).
func (s *Stats) UnmarshalJSON(b []byte) error {
	type tagged Stats
	var t tagged
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	var old struct {
		Observations, DictionarySize, DictionaryChanges *int
		SumVariance                                     *float64
		Jitter, VarianceClamps, RetryJitter             *int
		RowsRead, RowsComputed                          *int64
		WorkingSet, ArmsEliminated, BoundViolations     *int
	}
	// The Go names differ from the tags only by underscores and case:
	// json matches names case-insensitively, so "observations" would
	// fill Observations here too; only a name with an underscore tells
	// the two apart, and either way the values agree.
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	*s = Stats(t)
	setInt := func(dst *int, v *int) {
		if v != nil && *dst == 0 {
			*dst = *v
		}
	}
	setInt(&s.Observations, old.Observations)
	setInt(&s.DictionarySize, old.DictionarySize)
	setInt(&s.DictionaryChanges, old.DictionaryChanges)
	if old.SumVariance != nil && s.SumVariance == 0 {
		s.SumVariance = *old.SumVariance
	}
	setInt(&s.Jitter, old.Jitter)
	setInt(&s.VarianceClamps, old.VarianceClamps)
	setInt(&s.RetryJitter, old.RetryJitter)
	if old.RowsRead != nil && s.RowsRead == 0 {
		s.RowsRead = *old.RowsRead
	}
	if old.RowsComputed != nil && s.RowsComputed == 0 {
		s.RowsComputed = *old.RowsComputed
	}
	setInt(&s.WorkingSet, old.WorkingSet)
	setInt(&s.ArmsEliminated, old.ArmsEliminated)
	setInt(&s.BoundViolations, old.BoundViolations)
	return nil
}

// StatsReporter is implemented by policies that report Stats.
type StatsReporter interface {
	Stats() Stats
}

// DefaultLambda is the noise variance (ridge) of every policy when none is
// given: the study layer's and the CLI's default too, on standardized
// values.
const DefaultLambda = 0.001

// Options configures the GP policies. The zero value of every field is
// replaced by a default that works on arms scaled to the unit box.
type Options struct {
	// Kernel is the prior covariance; default RBF with length scale 0.2
	// times the mean side of the arms' bounding box.
	Kernel kernel.Kernel
	// Lambda is the noise variance (the ridge); default 0.01.
	Lambda float64
	// Beta is the UCB exploration schedule; default Constant(2). It
	// multiplies the posterior standard deviation on the GP scale for every
	// policy (for BKB sqrt(lambda)*sigma~), so the same Beta means the same
	// thing for GP-UCB and BKB, as in the study layer and the CLI.
	Beta acquisition.Beta
	// PaperScale makes BKB's UCB multiply sigma~ itself, the 1/lambda scale
	// of Calandriello et al. (COLT 2019) (its Theorem 4.1 schedule, acquisition.BKBTheorem and
	// BatchBKB, are on that scale).
	PaperScale bool
	// Qbar is BKB's oversampling parameter (default 2; theory:
	// 6 alpha log(4T/delta)/eps^2).
	Qbar float64
	// Incremental selects BKB's incremental (coupled-threshold) resampling
	// instead of a fresh draw every step.
	Incremental bool
	// Seed seeds every random choice: the same seed gives the same arms.
	Seed uint64
	// Reserve preallocates for this many observations.
	Reserve int
	// Rebuild recomputes the posterior from scratch after every
	// observation (O(A t^2) for GP-UCB, O(A m^2) for BKB), as the papers
	// state the algorithms, instead of updating it incrementally. The arms
	// chosen are the same; only the cost differs. For benchmarks.
	Rebuild bool
	// LegacyCore makes a DTC posterior take its decisions on
	// near-dependent inducing points as before they had one rule
	// (gp.DTC.SetLegacyCore): studies of configuration versions up to 4
	// replay with it.
	LegacyCore bool
	// DeadPivots makes a DTC posterior drop every near-dependent
	// inducing point below rounding instead of flooring its pivot
	// (gp.DTC.SetDeadPivots): studies of configuration versions 5 to 7
	// replay with it.
	DeadPivots bool
	// Lazy makes a UCB policy (GP-UCB, BKB or BBKB) read only the arms
	// that can win: it keeps the rows of a working set of arms current
	// and, for every other arm, an upper bound of its UCB that is cheap to
	// carry forward; an Ask visits the arms whose bound is above the best
	// UCB in the working set, best bound first, computing their rows
	// (lazy.go, bbkb_lazy.go, docs/scaling.md). For GP-UCB the bound is
	// proven and the arms chosen are the full scan's; for BKB and BBKB the
	// part of the bound that covers dictionary changes is measured, see
	// LazyCheck.
	Lazy bool
	// Eliminate (with Lazy) removes for good every arm whose UCB is below
	// the largest lower confidence bound mu - beta sigma: it can never be
	// the best arm when the confidence bounds hold.
	Eliminate bool
	// LazyCheck (with Lazy) computes every arm's exact UCB at every Ask
	// (BBKB: at the start of every batch) and counts the arms above their
	// bound in Stats.BoundViolations: a debug check, O(A m^2) per step.
	LazyCheck bool
}

func (o *Options) defaults(arms *mat.Dense) {
	if o.Kernel == nil {
		r, c := arms.Dims()
		var side float64
		for j := 0; j < c; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 0; i < r; i++ {
				v := arms.At(i, j)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			side += hi - lo
		}
		side /= float64(c)
		if !(side > 0) {
			side = 1
		}
		o.Kernel = kernel.RBF{LengthScale: 0.2 * side}
	}
	if o.Lambda == 0 {
		o.Lambda = DefaultLambda
	}
	if o.Beta == nil {
		o.Beta = acquisition.Constant(2)
	}
	if o.Qbar == 0 {
		o.Qbar = 2
	}
}

// validate checks the options every GP policy shares (after defaults):
// the kernel, the beta schedule and qbar.
func (o *Options) validate() error {
	if err := kernel.Validate(o.Kernel); err != nil {
		return err
	}
	if v, ok := o.Beta.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if !(o.Qbar > 0) {
		return fmt.Errorf("bandit: qbar must be positive, got %v", o.Qbar)
	}
	return nil
}

func checkArms(arms *mat.Dense) error {
	if arms == nil {
		return errors.New("bandit: nil arm set")
	}
	if r, c := arms.Dims(); r == 0 || c == 0 {
		return fmt.Errorf("bandit: empty arm set (%d x %d)", r, c)
	}
	return nil
}

func checkReward(arm, n int, y float64) error {
	if arm < 0 || arm >= n {
		return fmt.Errorf("bandit: arm %d out of range [0,%d)", arm, n)
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("bandit: arm %d: reward is %v", arm, y)
	}
	return nil
}

// posterior is what the GP policies need of gp.Exact and gp.DTC.
type posterior interface {
	ObserveCandidate(i int, y float64) error
	Means() []float64
	Variances() []float64
	ConditionalVariances(dst []float64, pending []int) error
	Len() int
	NumCandidates() int
	Jitter() (float64, int)
}

// Score selects the acquisition a GP policy maximises.
type Score int

const (
	// ScoreUCB is mean + beta * sd.
	ScoreUCB Score = iota
	// ScoreThompson is a draw from each arm's marginal posterior.
	ScoreThompson
	// ScoreEI is expected improvement over the best posterior mean at an
	// observed arm.
	ScoreEI
)

// GP is a GP bandit policy: an exact (GP-UCB) or DTC (BKB) posterior over
// the arms and an acquisition score. Create it with NewGPUCB, NewBKB,
// NewThompson or NewEI.
type GP struct {
	name    string
	opt     Options
	post    posterior
	dtc     *gp.DTC // non-nil for BKB
	score   Score
	rng     *rand.Rand
	arms    int
	kappa2  float64
	scores  []float64
	condvar []float64
	pending []int
	sumVar  float64 // sum of variances at observed arms, for exact posteriors
	count   []int
	lz      *lazyState // non-nil with Options.Lazy
	reads   int64      // rows read by full-scan passes
	fresh   bool       // within AskFresh: told arms are left out
}

func newGP(name string, arms *mat.Dense, opt Options, useDTC bool, score Score) (*GP, error) {
	if err := checkArms(arms); err != nil {
		return nil, err
	}
	opt.defaults(arms)
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if opt.Lazy && (score != ScoreUCB || opt.Rebuild) {
		return nil, errors.New("bandit: Lazy needs a UCB policy (GP-UCB or BKB) without Rebuild")
	}
	if (opt.Eliminate || opt.LazyCheck) && !opt.Lazy {
		return nil, errors.New("bandit: Eliminate and LazyCheck need Lazy")
	}
	if opt.Lazy {
		return newLazyGP(name, arms, opt, useDTC)
	}
	n, d := arms.Dims()
	p := &GP{name: name, opt: opt, score: score, arms: n,
		rng:    rand.New(rand.NewPCG(opt.Seed, 0x62_6b_62)),
		scores: make([]float64, n), condvar: make([]float64, n), count: make([]int, n)}
	if useDTC {
		g, err := gp.NewDTC(opt.Kernel, d, opt.Lambda)
		if err != nil {
			return nil, err
		}
		if err := g.SetCandidates(arms); err != nil {
			return nil, err
		}
		g.SetRebuildAlways(opt.Rebuild)
		g.SetLegacyCore(opt.LegacyCore)
		g.SetDeadPivots(opt.DeadPivots)
		p.post, p.dtc = g, g
	} else {
		g, err := gp.NewExact(opt.Kernel, d, opt.Lambda)
		if err != nil {
			return nil, err
		}
		if err := g.SetCandidates(arms); err != nil {
			return nil, err
		}
		if opt.Reserve > 0 {
			g.Reserve(opt.Reserve)
		}
		p.post = g
	}
	diag := make([]float64, n)
	kernel.Diagonal(diag, opt.Kernel, arms)
	for _, v := range diag {
		p.kappa2 = math.Max(p.kappa2, v)
	}
	return p, nil
}

// NewGPUCB returns GP-UCB on the exact posterior: O(A t) per step.
func NewGPUCB(arms *mat.Dense, opt Options) (*GP, error) {
	return newGP("gp-ucb", arms, opt, false, ScoreUCB)
}

// NewBKB returns BKB (Calandriello et al., COLT 2019, Alg. 1): UCB on the DTC posterior, with
// the dictionary resampled by posterior variance after every observation.
// A step costs O(A m) when the dictionary does not change.
func NewBKB(arms *mat.Dense, opt Options) (*GP, error) {
	return newGP("bkb", arms, opt, true, ScoreUCB)
}

// NewThompson returns Thompson sampling from each arm's marginal posterior,
// exact (dtc false) or BKB's DTC posterior with resampling (dtc true).
func NewThompson(arms *mat.Dense, opt Options, dtc bool) (*GP, error) {
	name := "thompson"
	if dtc {
		name = "bkb-thompson"
	}
	return newGP(name, arms, opt, dtc, ScoreThompson)
}

// NewEI returns expected improvement on the exact posterior.
func NewEI(arms *mat.Dense, opt Options) (*GP, error) {
	return newGP("ei", arms, opt, false, ScoreEI)
}

// Name returns the policy name.
func (p *GP) Name() string { return p.name }

// Means returns the posterior mean of every arm (aliasing internal state).
// With Options.Lazy it computes every arm's posterior (O(A m^2)).
func (p *GP) Means() []float64 {
	if p.lz != nil {
		m, _ := p.lazyPosterior()
		return m
	}
	return p.post.Means()
}

// Variances returns the posterior variance of every arm on the GP scale
// (for BKB, lambda*sigma~^2). It allocates for BKB.
// With Options.Lazy it computes every arm's posterior (O(A m^2)).
func (p *GP) Variances() []float64 {
	var v []float64
	if p.lz != nil {
		_, v = p.lazyPosterior()
	} else {
		v = p.post.Variances()
	}
	if p.dtc == nil {
		return v
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = p.opt.Lambda * x
	}
	return out
}

// Posterior returns the underlying *gp.Exact or *gp.DTC. With
// Options.Lazy its candidates are the working set, not the arm set.
func (p *GP) Posterior() any { return p.post }

// Stats reports the policy's state.
func (p *GP) Stats() Stats {
	_, j := p.post.Jitter()
	s := Stats{Observations: p.post.Len(), DictionarySize: p.post.Len(), SumVariance: p.sumVar, Jitter: j}
	if n, ok := p.post.(interface{ Numerics() gp.Numerics }); ok {
		nu := n.Numerics()
		s.VarianceClamps, s.RetryJitter = nu.VarianceClamps, nu.RetryJitter
	}
	if p.dtc != nil {
		s.DictionarySize = p.dtc.DictionarySize()
		s.DictionaryChanges = p.dtc.DictionaryChanges()
		s.SumVariance = p.dtc.EffectiveDimension()
	}
	s.RowsRead = p.reads
	if p.lz != nil {
		p.lz.stats(&s)
	}
	return s
}

func (p *GP) beta() float64 {
	s := acquisition.State{T: p.post.Len(), Arms: p.arms, Lambda: p.opt.Lambda, Kappa2: p.kappa2, SumVar: p.Stats().SumVariance}
	b := p.opt.Beta.Beta(s)
	if p.dtc != nil && !p.opt.PaperScale {
		b *= math.Sqrt(p.opt.Lambda)
	}
	return b
}

// Ask returns the next arm: the first is uniform at random (Calandriello et al., COLT 2019,
// Alg. 1), later ones maximise the score, ties to the lowest index.
func (p *GP) Ask() (int, error) {
	if len(p.pending) >= p.arms {
		return -1, fmt.Errorf("bandit: all %d arms are pending (asked and not told); tell a reward before asking again", p.arms)
	}
	var arm int
	if p.post.Len() == 0 && len(p.pending) == 0 {
		arm = p.rng.IntN(p.arms)
		if p.lz != nil && p.lz.win[arm] < 0 {
			// Pending arms are in the working set.
			if _, err := p.lz.add([]int{arm}); err != nil {
				return -1, err
			}
		}
	} else if p.lz != nil {
		var err error
		if arm, err = p.lazyAsk(); err != nil {
			return -1, err
		}
	} else {
		vars := p.post.Variances()
		if len(p.pending) > 0 {
			if err := p.post.ConditionalVariances(p.condvar, p.pending); err != nil {
				return -1, err
			}
			vars = p.condvar
		}
		means := p.post.Means()
		switch p.score {
		case ScoreUCB:
			acquisition.UCB(p.scores, means, vars, p.beta())
		case ScoreThompson:
			scale := 1.0
			if p.dtc != nil {
				scale = math.Sqrt(p.opt.Lambda)
			}
			acquisition.Thompson(p.scores, means, vars, scale, p.rng)
		case ScoreEI:
			best := math.Inf(-1)
			for i, c := range p.count {
				if c > 0 {
					best = math.Max(best, means[i])
				}
			}
			if math.IsInf(best, -1) {
				best = 0
			}
			acquisition.ExpectedImprovement(p.scores, means, vars, best, 0)
		}
		// A pending arm is never asked for twice. For the exact posterior
		// conditioning already shrinks its variance to about lambda; for
		// the DTC posterior the residual (k(x,x) - ||z||^2)/lambda of an arm
		// outside the dictionary does not shrink until a resample adds it,
		// so without this a batch could repeat an arm.
		for _, a := range p.pending {
			p.scores[a] = math.Inf(-1)
		}
		if p.fresh {
			skipTold(p.scores, p.told)
		}
		arm = acquisition.Argmax(p.scores)
		if arm < 0 {
			return -1, errors.New("bandit: every score is NaN")
		}
		if sc := p.scores[arm]; math.IsInf(sc, 0) {
			return -1, fmt.Errorf("bandit: best score is %v (arm %d): the posterior overflowed; rescale the rewards", sc, arm)
		}
	}
	p.pending = append(p.pending, arm)
	return arm, nil
}

// Tell records reward y at arm; for BKB it then resamples the dictionary.
func (p *GP) Tell(arm int, y float64) error {
	if err := checkReward(arm, p.arms, y); err != nil {
		return err
	}
	for k, a := range p.pending {
		if a == arm {
			p.pending = append(p.pending[:k], p.pending[k+1:]...)
			break
		}
	}
	if p.lz != nil {
		return p.lazyTell(arm, y)
	}
	p.reads += int64(p.arms)
	if p.dtc == nil {
		p.sumVar += p.post.Variances()[arm]
	}
	if err := p.post.ObserveCandidate(arm, y); err != nil {
		return fmt.Errorf("bandit: arm %d: %w", arm, err)
	}
	if ex, ok := p.post.(*gp.Exact); ok && p.opt.Rebuild {
		if err := ex.Rebuild(); err != nil {
			return fmt.Errorf("bandit: arm %d: %w", arm, err)
		}
	}
	p.count[arm]++
	if p.dtc != nil {
		var err error
		if p.opt.Incremental {
			_, _, err = p.dtc.ResampleIncremental(p.rng, p.opt.Qbar)
		} else {
			_, _, err = p.dtc.Resample(p.rng, p.opt.Qbar)
		}
		if err != nil {
			return fmt.Errorf("bandit: resampling after arm %d: %w", arm, err)
		}
	}
	return nil
}

// Random is uniform random search over the arms, the baseline every GP
// policy must beat.
type Random struct {
	rng  *rand.Rand
	arms int
	// told marks the arms with a told reward (nTold of them), for
	// AskFresh.
	told  []bool
	nTold int
}

// NewRandom returns random search over n arms.
func NewRandom(n int, seed uint64) (*Random, error) {
	if n <= 0 {
		return nil, fmt.Errorf("bandit: empty arm set (%d arms)", n)
	}
	return &Random{rng: rand.New(rand.NewPCG(seed, 0x72_6e_64)), arms: n, told: make([]bool, n)}, nil
}

// Ask returns a uniformly random arm.
func (r *Random) Ask() (int, error) { return r.rng.IntN(r.arms), nil }

// Tell checks the reward and marks arm told (for AskFresh).
func (r *Random) Tell(arm int, y float64) error {
	if err := checkReward(arm, r.arms, y); err != nil {
		return err
	}
	if !r.told[arm] {
		r.told[arm] = true
		r.nTold++
	}
	return nil
}

// Name returns "random".
func (r *Random) Name() string { return "random" }
