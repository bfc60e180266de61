package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/space"
)

// MaxAbsValue bounds the objective values a study accepts: a value beyond
// it would overflow the standardization (sums of squares of values), so
// Tell rejects it and Optimize records the trial as failed.
const MaxAbsValue = 1e150

// engine turns a study's configuration and its records (asks, enqueued
// points, completed and failed evaluations) into the next arm to evaluate.
// Its state is a deterministic function of the sequence of records, so
// replaying a study's records rebuilds exactly the state the process that
// wrote them had: a resumed run, a late worker and an uninterrupted run
// choose the same arms.
//
// The policy sees the arms encoded to the unit box (Space.Encode: so that
// the default length scale suits every space) and rewards standardized by
// an affine map fixed from the initial design: the first Init asks return
// distinct random arms, and the policy is built when Init evaluations have
// completed, with shift = mean and scale = standard deviation of their
// rewards (reward = value when maximizing, -value when minimizing). Later
// values are told as (reward - shift)/scale. The map is refreshed from all
// completed evaluations at Init*2^k completions and at every length-scale
// fit, and the policy rebuilt on every observation. A failed evaluation
// tells the policy nothing; its arm stays pending, so a GP policy never
// asks for it again.
type Engine struct {
	cfg   *Config
	space Space
	p, e  int // parameters and encoded coordinates per arm
	// cond is the space's compiled conditions (condition.go), nil for a
	// space without any: such a space takes none of their paths.
	cond *space.Plan

	vals []float64 // arm values, row-major n x p
	enc  []float64 // encoded arms, row-major n x e
	n    int
	byX  map[string]int

	design     *rand.Rand
	designSrc  *rand.PCG // design's source (snapshots save its state)
	designSeen map[int]bool

	policy      bandit.Policy
	dirty       bool // arms were added since the policy was built
	lengthScale float64
	shift       float64
	scale       float64
	warp        Warp // the output transform (warp.go), Kind "" without one

	succ    []observation // completed evaluations in completion order
	pending map[int]int   // trial -> arm of asked, unfinished trials
	waiting map[int]int   // trial -> arm of enqueued trials not asked yet
	failed  []int         // arms of failed evaluations
	// firstObs holds, per arm, the index in e.succ of its first
	// completed evaluation (-1: none) over e.succ[:observedUpTo];
	// repeatsEqual and repeatsDiffer say whether a later evaluation of a
	// configuration was equal to its first or differed (fresh.go).
	firstObs                    []int32
	observedUpTo                int
	repeatsEqual, repeatsDiffer bool

	// forecast returns the value told for a pruned trial with
	// tell=forecast (Study.prunedForecast); nil leaves the last value.
	forecast func(trial int) (float64, bool)

	// policySeconds is the time spent in the policy (asks, tells, fits).
	policySeconds float64
	// fits records the length-scale fits.
	fits []FitResult
	// diverged counts asks whose arm differs from what this engine chose.
	diverged int
	// rule names what chose the engine's last suggestion (suggest), and
	// firstDiverged the first trial of this replay whose stored ask
	// differs from the engine's choice with the rule that made it (not
	// in snapshots: a note for the error of a replay that cannot go on).
	rule          string
	firstDiverged struct {
		trial int
		rule  string
	}
	// ignored counts stored values outside ±MaxAbsValue, treated as failed.
	ignored int

	// ref is the model of a study whose candidates grow (version 2), nil
	// for a fixed arm set.
	ref *refiner
	// hp is the last ARD fit of a version 2 study on a fixed arm set.
	hp       *hyper.Params
	lastFull int // observations at hp's last cold fit
	// fitSeconds is the time spent in ARD fits of a fixed arm set.
	fitSeconds float64
	// batchArms and batches count the completed batches of the batched
	// policies that rebuilds replaced.
	batchArms, batches int
	// secondsOf returns a completed trial's evaluation seconds, as its
	// tell record holds them (SetSeconds): what a cost-aware study weighs.
	secondsOf func(trial int) float64
}

// observation is one completed evaluation.
type observation struct {
	trial, arm int
	value      float64 // the objective's own value
	// values are every objective's values (several objectives), cons the
	// constraint values (constrained studies); nil otherwise.
	values, cons []float64
}

// New builds the arm set of cfg (normalized) and an engine on it.
func New(cfg *Config) (*Engine, error) {
	arms, err := cfg.BuildArms()
	if err != nil {
		return nil, err
	}
	p := cfg.Space.Dim()
	src := rand.NewPCG(cfg.Seed, 0x64_65_73_69_67_6e) // "design"
	e := &Engine{cfg: cfg, space: cfg.Space, p: p, e: cfg.Space.EncodedDim(), byX: map[string]int{},
		design: rand.New(src), designSrc: src,
		designSeen: map[int]bool{}, lengthScale: cfg.Kernel.LengthScale, scale: 1,
		pending: map[int]int{}, waiting: map[int]int{}, cond: cfg.Space.Plan()}
	e.firstDiverged.trial = -1
	n, _ := arms.Dims()
	for i := 0; i < n; i++ {
		e.addArm(arms.RawRowView(i))
	}
	if cfg.grows() {
		e.ref = newRefiner(cfg, mat.NewDense(e.n, e.e, slices.Clone(e.enc[:e.n*e.e])))
	}
	return e, nil
}

// addArm appends the point x (valid) and returns its index.
func (e *Engine) addArm(x []float64) int {
	i := e.n
	e.vals = append(e.vals, x...)
	e.enc = append(e.enc, make([]float64, e.e)...)
	e.space.Encode(e.enc[i*e.e:(i+1)*e.e], x)
	e.byX[PointKey(x)] = i
	e.n++
	if e.policy != nil {
		e.dirty = true
	}
	return i
}

// ArmOf returns the arm of the point x, adding it to the arm set if it is
// not there (an enqueued or imported point).
func (e *Engine) ArmOf(x []float64) (int, error) {
	if i, ok := e.byX[PointKey(x)]; ok {
		return i, nil
	}
	if err := e.space.Check(x); err != nil {
		return -1, err
	}
	return e.addArm(x), nil
}

// Point returns the values of arm i (aliasing the engine's storage).
func (e *Engine) Point(i int) []float64 { return e.vals[i*e.p : (i+1)*e.p] }

// reward maps a value to the maximized reward.
func (e *Engine) reward(v float64) float64 {
	if e.cfg.minimize() {
		return -v
	}
	return v
}

// told is the value told to the policy.
func (e *Engine) told(v float64) float64 {
	return (e.warp.warpedReward(e.reward(v)) - e.shift) / e.scale
}

// timed adds the time since start to the policy time.
func (e *Engine) timed(start time.Time) { e.policySeconds += time.Since(start).Seconds() }

// Suggest returns the next arm and marks it pending in the policy.
func (e *Engine) Suggest() (int, error) {
	defer e.timed(time.Now())
	if e.ref != nil {
		if len(e.succ) < e.cfg.Init {
			e.rule = "the initial design"
			return e.designArm(), nil
		}
		if a := e.localArm(); a >= 0 {
			e.rule = "a local quadratic step"
			return a, nil // version 6's local quadratic step (localstep.go)
		}
		e.rule = "the growing candidates of policy " + e.cfg.Policy
		u, err := e.ref.suggest(e)
		if err != nil {
			return -1, err
		}
		x := make([]float64, e.p)
		e.space.Decode(x, u)
		if e.cond != nil {
			e.cond.Canonicalize(x) // Decode's placeholders are not exact
		}
		return e.ArmOf(x)
	}
	if e.policy == nil && len(e.succ) >= e.cfg.Init {
		if err := e.activate(); err != nil {
			return -1, err
		}
	}
	if e.policy == nil {
		e.rule = "the initial design"
		return e.designArm(), nil
	}
	if err := e.ensurePolicy(); err != nil {
		return -1, err
	}
	e.rule = "policy " + e.cfg.Policy
	if f, ok := e.policy.(bandit.FreshAsker); ok && e.freshArms() {
		return f.AskFresh() // version 13 (fresh.go)
	}
	return e.policy.Ask()
}

// designArm returns a random arm not handed out or pending before (any arm
// once all have been).
func (e *Engine) designArm() int {
	if len(e.designSeen) >= e.n {
		return e.design.IntN(e.n)
	}
	for {
		a := e.design.IntN(e.n)
		if !e.designSeen[a] {
			e.designSeen[a] = true
			return a
		}
	}
}

// activate fixes the reward scale from the initial design and builds the
// policy on what has been observed so far.
func (e *Engine) activate() error {
	e.standardize(min(len(e.succ), max(e.cfg.Init, 1)))
	if k := e.cfg.FitEvery; (e.cfg.fitsARD() || k > 0 && len(e.succ) >= max(k, 2)) && e.cfg.Policy != "random" {
		if err := e.fit(); err != nil {
			return err
		}
	}
	return e.rebuild()
}

// restandardizeDue reports whether t completed evaluations is a point of
// the doubling schedule Init*2^k (k >= 1) at which the affine map of
// rewards is refreshed from all observations and the policy rebuilt. The
// rebuilds cost O(A t^2) for an exact GP, about what the run itself costs.
func (e *Engine) restandardizeDue(t int) bool {
	n0 := max(e.cfg.Init, 1)
	if t <= n0 || t%n0 != 0 {
		return false
	}
	q := t / n0
	return q&(q-1) == 0
}

// standardize sets the affine map of rewards from the first k completed
// evaluations: mean 0 and standard deviation 1.
func (e *Engine) standardize(k int) {
	if e.cfg.RawValues || k == 0 {
		return
	}
	r := make([]float64, k)
	for i, o := range e.succ[:k] {
		r[i] = e.reward(o.value)
	}
	if e.cfg.warps() {
		e.warp, e.shift, e.scale = standardizeWarped(e.cfg.Warp, r, e.cfg.warpTest())
		return
	}
	e.shift = stat.Mean(r, nil)
	e.scale = 1
	if k > 1 {
		if sd := stat.StdDev(r, nil); sd > 1e-12*math.Max(1, math.Abs(e.shift)) {
			e.scale = sd
		}
	}
}

// ensurePolicy rebuilds the policy if arms were added since it was built.
func (e *Engine) ensurePolicy() error {
	if e.dirty {
		return e.rebuild()
	}
	return nil
}

// rebuild makes a fresh policy with the current length scale, tells it
// every completed evaluation and marks the arms of pending trials and
// failed evaluations pending.
func (e *Engine) rebuild() error {
	arms := mat.NewDense(e.n, e.e, e.enc[:e.n*e.e])
	k, err := e.cfg.Kernel.build(e.lengthScale)
	if err != nil {
		return err
	}
	lambda := e.cfg.Lambda
	if e.hp != nil {
		k, lambda = e.hp.Kernel(), e.hp.NoiseVariance
		if e.cfg.Policy == "bkb" || e.cfg.Policy == "bkb-thompson" || e.cfg.Policy == "bbkb" {
			lambda = math.Max(lambda, e.cfg.Lambda)
		}
	}
	p, err := e.cfg.newPolicy(arms, k, lambda)
	if err != nil {
		return err
	}
	for _, o := range e.succ {
		if err := p.Tell(o.arm, e.told(o.value)); err != nil {
			return err
		}
	}
	if b, ok := e.policy.(interface{ BatchStats() bandit.BatchStats }); ok {
		// A batched policy's completed batches outlive its rebuilds.
		st := b.BatchStats()
		e.batchArms, e.batches = e.batchArms+st.Arms, e.batches+st.Batches
	}
	e.policy, e.dirty = p, false
	for _, arm := range e.pendingArms() {
		if err := e.markPending(arm); err != nil {
			return err
		}
	}
	return nil
}

// pendingArms lists the arms of pending trials (in trial order) and of
// failed evaluations.
func (e *Engine) pendingArms() []int {
	trials := make([]int, 0, len(e.pending))
	for t := range e.pending {
		trials = append(trials, t)
	}
	slices.Sort(trials)
	arms := make([]int, 0, len(trials)+len(e.failed))
	for _, t := range trials {
		arms = append(arms, e.pending[t])
	}
	return append(arms, e.failed...)
}

// markPending marks arm pending in the policy (or seen by the design).
func (e *Engine) markPending(arm int) error {
	if e.policy == nil {
		e.designSeen[arm] = true
		return nil
	}
	if m, ok := e.policy.(interface{ MarkPending(int) error }); ok {
		return m.MarkPending(arm)
	}
	return nil
}

// tell records a completed evaluation.
func (e *Engine) tell(trial, arm int, value float64) error {
	defer e.timed(time.Now())
	e.succ = append(e.succ, observation{trial: trial, arm: arm, value: value})
	if e.policy == nil || e.ref != nil {
		return nil
	}
	if e.dirty {
		// The rebuild tells the new observation too.
		return e.rebuild()
	}
	if err := e.policy.Tell(arm, e.told(value)); err != nil {
		return err
	}
	if e.cfg.Policy == "random" {
		return nil
	}
	t := len(e.succ)
	fitDue := e.cfg.FitEvery > 0 && t%e.cfg.FitEvery == 0
	cold := e.cfg.fitsARD() && t >= 2*e.lastFull
	if fitDue || cold || (!e.cfg.RawValues && e.restandardizeDue(t)) {
		// The y scale is refreshed from every observation.
		e.standardize(t)
		if fitDue || cold {
			if err := e.fit(); err != nil {
				return err
			}
		}
		return e.rebuild()
	}
	return nil
}

// fit refits the length scale (version 2 with Fit ard: the ARD
// hyperparameters, see fitARD).
func (e *Engine) fit() error {
	if e.cfg.fitsARD() {
		return e.fitARD()
	}
	x := make([]float64, 0, len(e.succ)*e.e)
	y := make([]float64, len(e.succ))
	for i, o := range e.succ {
		x = append(x, e.enc[o.arm*e.e:(o.arm+1)*e.e]...)
		y[i] = e.told(o.value)
	}
	res := fitLengthScale(e.cfg.Kernel, e.cfg.Lambda, e.e, x, y, e.lengthScale)
	res.Observations = len(e.succ)
	e.fits = append(e.fits, res)
	e.lengthScale = res.LengthScale
	return nil
}

// Stats returns the policy's statistics (zero before the policy starts or
// for random search).
func (e *Engine) Stats() bandit.Stats {
	if e.ref != nil {
		return e.ref.stats()
	}
	if s, ok := e.policy.(bandit.StatsReporter); ok {
		return s.Stats()
	}
	return bandit.Stats{}
}

// Apply advances the engine by one stored record (validated by the
// storage against the records before it). An ask of a new trial is asked
// of the engine again, so that its random state follows the run that wrote
// the record; an ask whose arm is not the one the engine chooses (a study
// written by another build) is counted in diverged and its arm used all
// the same.
func (e *Engine) Apply(r Event) error {
	if r.Kind == KindReport {
		return nil // an intermediate value: the model is told final values only
	}
	if err := e.space.Check(r.X); err != nil {
		return fmt.Errorf("trial %d: %s record: %v (the study's records do not fit its search space)", r.Trial, r.Kind, TrimStudy(err))
	}
	arm, err := e.ArmOf(r.X)
	if err != nil {
		return err
	}
	if r.Arm >= 0 && r.Arm != arm && r.Arm < e.n && PointKey(e.Point(r.Arm)) == PointKey(r.X) {
		arm = r.Arm // an arm set with a point twice (a CSV file's duplicate rows): the record's copy
	}
	if r.Arm >= 0 && r.Arm != arm {
		if d := e.firstDiverged; d.trial >= 0 {
			return fmt.Errorf("trial %d: replay diverged: the %s record's point is candidate %d of the run that wrote it and candidate %d of this replay; "+
				"the replay first chose another point than the records at trial %d (by %s), so its candidates differ from then on "+
				"(configuration version %d: the records and the study's header should determine every choice)", r.Trial, r.Kind, r.Arm, arm, d.trial, d.rule, e.cfg.Version)
		}
		return fmt.Errorf("trial %d: %s record for arm %d, but its point is arm %d of this study's arm set (was the arm set changed?)", r.Trial, r.Kind, r.Arm, arm)
	}
	switch r.Kind {
	case KindEnqueue:
		e.waiting[r.Trial] = arm
	case KindAsk:
		if _, ok := e.pending[r.Trial]; ok {
			return nil // asked again: a trial whose worker stopped
		}
		if _, ok := e.waiting[r.Trial]; ok {
			delete(e.waiting, r.Trial)
			if err := e.markPending(arm); err != nil {
				return err
			}
		} else {
			got, err := e.Suggest()
			if err != nil {
				return err
			}
			if got != arm {
				if e.firstDiverged.trial < 0 {
					e.firstDiverged.trial, e.firstDiverged.rule = r.Trial, e.rule
				}
				e.diverged++
				if err := e.markPending(arm); err != nil {
					return err
				}
			}
		}
		e.pending[r.Trial] = arm
	case KindTell:
		delete(e.pending, r.Trial)
		if v := *r.Y; math.Abs(v) > MaxAbsValue {
			e.ignored++
			e.failed = append(e.failed, arm)
			return nil
		}
		err := e.tell(r.Trial, arm, *r.Y)
		if n := len(e.succ); n > 0 && e.succ[n-1].trial == r.Trial {
			e.succ[n-1].values, e.succ[n-1].cons = r.Values, r.Constraints
		}
		return err
	case KindFail, KindPrune:
		if r.Kind == KindPrune && e.cfg.Pruner.Tell == pruner.TellForecast && r.Y != nil && e.forecast != nil {
			// The GP is told the trial's curve extrapolated to the
			// final step (docs/pruning.md).
			if v, ok := e.forecast(r.Trial); ok && math.Abs(v) <= MaxAbsValue {
				delete(e.pending, r.Trial)
				return e.tell(r.Trial, arm, v)
			}
		}
		if r.Kind == KindPrune && (e.cfg.Pruner.Tell == pruner.TellLast || e.cfg.Pruner.Tell == pruner.TellForecast) && r.Y != nil && math.Abs(*r.Y) <= MaxAbsValue {
			// The GP is told the last reported value: an upper bound
			// of the final value of a curve that goes down (a
			// pessimistic, censored observation; docs/pruning.md).
			delete(e.pending, r.Trial)
			return e.tell(r.Trial, arm, *r.Y)
		}
		// Otherwise a pruned trial is held like a failed one: the GP is
		// not told its partial value, and its point stays marked pending
		// so the policy does not suggest it again (docs/pruning.md).
		delete(e.pending, r.Trial)
		e.failed = append(e.failed, arm)
		// A batched policy must not wait for a result that never comes.
		if d, ok := e.policy.(interface{ Drop(int) error }); ok {
			return d.Drop(arm)
		}
	}
	return nil
}

// TrimStudy drops the package prefix of an error of this package, for
// messages that add their own context.
func TrimStudy(err error) string { return strings.TrimPrefix(err.Error(), "study: ") }

// Event is a stored record as the engine reads it (package study converts
// storage records): the engine does not know where studies are kept.
type Event struct {
	Kind        string // KindEnqueue, KindAsk, KindTell, KindFail, KindPrune or KindReport
	Trial, Arm  int
	X           []float64
	Y           *float64 // tell: the value; prune: the last reported value, if any
	Values      []float64
	Constraints []float64
}

// Event kinds: the kinds of the records of package storage.
const (
	KindEnqueue = "enqueue"
	KindAsk     = "ask"
	KindTell    = "tell"
	KindFail    = "fail"
	KindPrune   = "prune"
	KindReport  = "report"
)
