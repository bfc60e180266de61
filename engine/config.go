package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/pruner"
)

// Defaults of a study, the same for Go callers and the command line: a
// zero field of Config takes these values in Config.Normalize.
const (
	DefaultPolicy      = "bkb"
	DefaultArms        = "sobol"
	DefaultArmCount    = 1024
	DefaultKernel      = "rbf"
	DefaultLengthScale = 0.2                  // on the unit box
	DefaultLambda      = bandit.DefaultLambda // GP noise variance on the standardized scale
	DefaultQbar        = 2.0
	DefaultBeta        = "2" // UCB exploration on the GP scale, for every policy

	// CurrentVersion is the configuration version Normalize gives a new
	// study. Version 1 (every journal written before versions existed, see
	// DecodeConfig) is a fixed arm set with one length scale; version 2
	// adds growing candidates (Candidates), fitted ARD hyperparameters (Fit)
	// and its own defaults (DefaultBetaV2, DefaultKernelV2, ...); version 3
	// changes the default exploration to the budget-aware DefaultBetaV3
	// (version 2 studies keep their stored constant beta and replay as
	// before); version 4 floors BKB's fitted noise at 1e-5 instead of
	// Lambda and explores differently where the box is covered and the
	// values noisy (noise.go); version 8 was the default from its regret
	// benchmark's rerun (docs/optimizer.md); version 9, which asks version 8's points at 10 parameters or fewer and is
	// better on every row above 20 of docs/tuning.md (a mixed space of 31
	// encoded coordinates included), was the default next; version 10, which closes the noisy Trid regression of versions
	// 5-9 and keeps long noisy studies from switching their warp at every
	// refit, no row of docs/optimizer.md differing from version 9's at p <
	// 0.05, was the default next; version 11, which asks version 10's
	// points up to a third of the budget and runs a local posterior from
	// there (late.go: a late trial's cost stops growing with t), was the
	// default next; version 12, which asks version 11's points except where
	// version 11 would evaluate an observed configuration again (fresh.go:
	// 109 of 110 runs of docs/optimizer.md identical at each of 0 and 1%
	// noise, 108 at 10%), was the default next; version 13, which asks
	// version 12's points on growing candidates and does not evaluate an
	// arm of a fixed set again either (27 of the door matrix's 45 trials on
	// 64 arms repeated an arm in version 12, 1 in version 13), is the
	// default since. Each version's studies replay as written.
	CurrentVersion = 13
	// LatestVersion is the newest version a study can ask for
	// (Config.Version). Version 5, the long-study engine, redraws BKB's
	// dictionary only when the variance gained since the last draw is large
	// (BBKB's resparsification rule, refine.go), draws it at a refit from
	// the previous dictionary's posterior (version 4 put every observed
	// point into S there), uses gp's exact core for near-dependent points
	// (gp.DTC.SetLegacyCore off) and keeps them out of S
	// (gp.DTC.SetDropNearDependent): docs/long-studies.md. Version 6 adds
	// to version 5 the warp of the values by default (Warp auto, warp.go)
	// and local quadratic steps once a third of the budget is spent
	// (localstep.go): docs/robust.md. Version 7 is version 6 made robust
	// to heavy noise (noiseRobust): while the fitted noise is heavy, BKB's
	// dictionary follows version 4's rule up to noisyDictionaryMax
	// observations and the values are not warped (noise.go,
	// docs/robust.md). Version 8 is version 7 with the warp's test made
	// on the start of the study (the initial design's skewness and the
	// first warpDecisionPoints evaluations, warp.go) and the exact core's
	// floored pivots (deadPivots off, gp.DTC.SetDeadPivots). Version 9 is
	// version 8 for many parameters: an initial design of at most initCap
	// points and, above highDim encoded coordinates, asks that are
	// trust-region candidates only, in a region that shrinks after
	// highDimFailureTol failures (docs/tuning.md). Version 10 is version 9
	// with two rules for noisy values: a study whose warped values were
	// fitted as heavily noisy stays unwarped (unwarpedForGood), and while
	// the dictionary follows version 4's rule under heavy noise the
	// posterior takes version 4's exact core too (NoisyLegacyCore).
	// Version 11 is version 10 with a local posterior from lateStart
	// observations on (LateLocal, late.go): docs/long-studies.md.
	// Version 12 is version 11 whose asks do not repeat an observed
	// configuration unless the noise is heavy (FreshAsks, fresh.go):
	// docs/tuning.md. Version 13 is version 12 with the same rule on fixed
	// candidate sets (FreshArms, bandit.FreshAsker): docs/versions.md.
	LatestVersion = 13
	// DefaultFitEvery is the warm refit period of version 2 (see Fit).
	DefaultFitEvery = 10
	// DefaultArmCountV2 is the default number of sobol, lhs and random
	// arms from version 2 on: the global space-filling set, which growing
	// candidates refine (a grid keeps DefaultArmCount).
	DefaultArmCountV2 = 512
)

// Version 2 defaults, chosen by the benchmark of docs/optimizer.md.
var (
	// DefaultBetaV2 is the UCB exploration of version 2 (on the GP scale,
	// in units of the fitted posterior standard deviation).
	DefaultBetaV2 = "2"
	// DefaultKernelV2 is the kernel family of version 2's ARD fits.
	DefaultKernelV2 = "rbf"
	// DefaultBetaV3 is the UCB exploration of version 3: beta 2 on the GP
	// scale for the first third of the budget, then decaying linearly to
	// 0.5, scaled down (not below 0.5) where the posterior is still wide
	// over the whole box (see horizonBeta); 2 without a budget.
	DefaultBetaV3 = "horizon:2"
)

// Candidate modes (Config.Candidates).
const (
	// CandidatesFixed keeps the arm set exactly as built (plus enqueued
	// and imported points).
	CandidatesFixed = "fixed"
	// CandidatesGrow grows candidates where the optimum is: trust regions
	// around the incumbent and the best UCB points, and a continuous polish
	// of the acquisition (refine.go).
	CandidatesGrow = "grow"
)

// Fit modes (Config.Fit).
const (
	// FitNone keeps the kernel's length scale.
	FitNone = "none"
	// FitScalar refits one length scale every FitEvery evaluations
	// (version 1's --fit-length-scale).
	FitScalar = "scalar"
	// FitARD fits per-coordinate length scales, signal and noise variance
	// (gp/hyper, MAP) at doubling counts and warm every FitEvery.
	FitARD = "ard"
)

// Policies, arm sets and kernels a Config may name (unexported so that no
// caller can change what Normalize accepts; the functions below return
// copies).
var (
	policyNames = []string{"bkb", "gp-ucb", "thompson", "ei", "random", "bkb-thompson", "bbkb", "ada-bkb"}
	armKinds    = []string{"sobol", "lhs", "random", "grid", "csv"}
	kernelNames = []string{"rbf", "matern12", "matern32", "matern52"}
)

// PolicyNames returns the policies a Config may name, in a new slice.
func PolicyNames() []string { return slices.Clone(policyNames) }

// ArmKinds returns the arm sets a Config may name, in a new slice.
func ArmKinds() []string { return slices.Clone(armKinds) }

// KernelNames returns the kernels a Config may name, in a new slice.
func KernelNames() []string { return slices.Clone(kernelNames) }

// Direction says whether a study minimizes or maximizes its objective.
type Direction string

// Directions.
const (
	Minimize Direction = "minimize"
	Maximize Direction = "maximize"
)

// Config is everything that determines a study. It is stored with the
// study, so that every process that loads the study (a resumed run, a
// worker on another machine, `bkb ask`) rebuilds the same candidates and
// policy from it, and the same events give the same suggestions. The zero
// value of every field means its default (see Normalize).
type Config struct {
	// Version selects the behavior of the study: 0 in a new Config means
	// CurrentVersion, whichever door creates it (Go, the command line,
	// HTTP); a stored configuration without a version (DecodeConfig) is 1.
	Version   int       `json:"version"`
	Space     Space     `json:"space"`
	Direction Direction `json:"direction"`
	// Policy is one of PolicyNames().
	Policy string `json:"policy"`
	// Arms is how the candidate set is built from the space.
	Arms Arms `json:"arms"`
	// Kernel is the GP prior on the encoded unit box.
	Kernel Kernel `json:"kernel"`
	// Lambda is the GP noise variance on the standardized scale.
	Lambda float64 `json:"lambda"`
	// Qbar is BKB's oversampling parameter.
	Qbar float64 `json:"qbar"`
	// Beta is the UCB exploration: a number (the GP scale, for every
	// policy), "srinivas[:delta]", "bkb-theorem" or "batch-bkb".
	Beta string `json:"beta"`
	// Incremental selects BKB's incremental dictionary resampling.
	Incremental bool `json:"incremental,omitempty"`
	// Budget caps the number of trials, failed ones included (0: none).
	Budget int `json:"budget"`
	// Seed seeds the arm set (unless Arms.Seed is set), the initial design
	// and the policy: the same seed gives the same study.
	Seed uint64 `json:"seed"`
	// Init is the size of the initial design: distinct random arms asked
	// before the policy starts (0: max(5, 2d) for d parameters; version 1:
	// max(5, d+1); version 9: min(max(5, 2d), initCap)).
	Init int `json:"init"`
	// RawValues tells the GP raw values instead of values standardized by
	// the initial design.
	RawValues bool `json:"raw_values,omitempty"`
	// Warp is the transform of the values the GP is told: WarpAuto (a
	// Box-Cox power fitted by likelihood, warp.go; the default from
	// version 6), WarpNone (an affine map; the default before) or WarpLog.
	Warp string `json:"warp,omitempty"`
	// FitEvery refits the length scale every k completed evaluations
	// (0: never in version 1; DefaultFitEvery in version 2).
	FitEvery int `json:"fit_every,omitempty"`
	// Candidates is CandidatesFixed or CandidatesGrow (version 2; default
	// grow for space-filling arms, fixed for csv and grid arms, which stay
	// exactly the user's set unless this asks for refinement, and for
	// policy bbkb).
	Candidates string `json:"candidates,omitempty"`
	// Fit is FitNone, FitScalar or FitARD (version 2; default ard, with
	// the kernel family of Kernel.Name, rbf or matern52, every
	// DefaultFitEvery; scalar when FitEvery is set without Fit; none for
	// the other kernels).
	Fit string `json:"fit,omitempty"`
	// MaxFailures stops Optimize after this many failed trials (0: never).
	MaxFailures int `json:"max_failures"`
	// MinBatch (policy bbkb only) keeps a batch open until it holds this
	// many arms (bandit.BBKBOptions.MinBatch): with W parallel workers,
	// MinBatch = W keeps every worker busy where the paper's ratio rule
	// alone would close batches of one or two arms and leave the others
	// waiting. 0: the paper's rule alone.
	MinBatch int `json:"min_batch,omitempty"`
	// Pruner stops trials early on their intermediate values (see
	// Trial.Report and docs/pruning.md); zero: no pruning.
	Pruner pruner.Config `json:"pruner,omitzero"`
	// Objective is opaque to the study: a tool that runs the objective
	// itself (the command line) stores here how to run it.
	Objective json.RawMessage `json:"objective,omitempty"`
	// Directions, with two or more entries, makes the study optimize
	// several objectives (tradeoffs.go): each evaluation tells one value
	// per entry, and the study's result is its Pareto front. Direction is
	// then Directions[0]. One entry is the same as Direction.
	Directions []Direction `json:"directions,omitempty"`
	// Constraints is the number of constraint values c_j(x) each
	// evaluation tells beside its value (tradeoffs.go): a point is
	// feasible when every one is <= 0. 0: no constraints.
	Constraints int `json:"constraints,omitempty"`
	// MOAcquisition is the acquisition of a study with several objectives
	// (tradeoffs.go): MOHypervolume, the optimistic hypervolume
	// improvement (the default of new studies), or MOScalarize, random
	// hypervolume scalarizations with UCB (the rule of every study stored
	// before this field existed, which DecodeConfig keeps). Empty with one
	// objective.
	MOAcquisition string `json:"mo_acquisition,omitempty"`
	// Lazy makes a UCB policy on a fixed arm set (bkb, gp-ucb, bbkb) read
	// only the arms that can win (bandit.Options.Lazy, lazy.go). Withdrawn
	// for new studies (ErrLazyWithdrawn); studies stored with it replay as
	// written.
	Lazy bool `json:"lazy,omitempty"`
	// Eliminate (with Lazy) removes for good the arms whose UCB is below
	// the largest lower confidence bound (bandit.Options.Eliminate).
	Eliminate bool `json:"eliminate,omitempty"`
	// CostAware weighs each ask's candidates against their predicted
	// evaluation seconds while the seconds vary widely (costaware.go;
	// cost cooling after Lee et al. 2020). It needs a budget, a UCB
	// policy that grows candidates (bkb or gp-ucb) and one objective
	// without constraints. The asks then depend on the seconds the
	// records hold: a replay asks what the run asked, a rerun only as long
	// as its evaluations take the same time.
	CostAware bool `json:"cost_aware,omitempty"`
}

// Arms says how the finite candidate set is built from the space.
type Arms struct {
	Kind   string `json:"kind"`              // one of ArmKinds()
	N      int    `json:"n,omitempty"`       // sobol, lhs, random: number of points
	PerDim int    `json:"per_dim,omitempty"` // grid: points per parameter
	File   string `json:"file,omitempty"`    // csv: absolute path
	SHA256 string `json:"sha256,omitempty"`  // csv: content hash, checked on load
	Seed   uint64 `json:"seed"`
}

// Kernel is the GP prior's covariance on the encoded unit box.
type Kernel struct {
	Name        string  `json:"name"` // one of KernelNames()
	LengthScale float64 `json:"length_scale"`
}

// UnmarshalJSON reads a configuration, including those of journals written
// before typed spaces ("standardize": false is RawValues). A missing
// version stays 0, which Normalize makes CurrentVersion: a configuration
// sent by a client (HTTP, Python) is a new study. Only DecodeConfig, which
// reads a stored study, takes a missing version as 1.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var p struct {
		plain
		Standardize *bool `json:"standardize"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Config(p.plain)
	if p.Standardize != nil && !*p.Standardize {
		c.RawValues = true
	}
	return nil
}

// Normalize fills in defaults and validates the configuration. A stored
// configuration is normalized, so that later changes of the defaults do
// not change existing studies.
func (c *Config) Normalize() error {
	if err := c.Space.Validate(); err != nil {
		return err
	}
	if c.Version == 0 {
		c.Version = CurrentVersion
	}
	if err := c.Pruner.Normalize(); err != nil {
		return fmt.Errorf("study: %w", err)
	}
	if c.Version < 1 || c.Version > LatestVersion {
		return fmt.Errorf("study: configuration version %d (this build knows 1 to %d)", c.Version, LatestVersion)
	}
	v2 := c.rules().Refine
	if err := c.normalizeDirections(); err != nil {
		return err
	}
	switch c.Direction {
	case "":
		c.Direction = Minimize
	case Minimize, Maximize:
	default:
		return fmt.Errorf("study: direction %q (want minimize or maximize)", c.Direction)
	}
	if c.Policy == "" {
		c.Policy = DefaultPolicy
	}
	c.Policy = strings.ToLower(c.Policy)
	if !slices.Contains(policyNames, c.Policy) {
		return fmt.Errorf("study: unknown policy %q; valid: %s", c.Policy, strings.Join(policyNames, ", "))
	}
	if c.Arms.Kind == "" {
		c.Arms.Kind = DefaultArms
		switch {
		case c.Arms.File != "":
			c.Arms.Kind = "csv"
		case c.Space.Dim() > objectives.MaxSobolDim:
			// Sobol points are built for at most MaxSobolDim
			// parameters: a larger space gets a Latin hypercube by
			// default (the stored kind keeps the study's arms).
			c.Arms.Kind = "lhs"
		}
	}
	c.Arms.Kind = strings.ToLower(c.Arms.Kind)
	switch c.Arms.Kind {
	case "sobol", "lhs", "random":
		if c.Arms.N == 0 {
			c.Arms.N = DefaultArmCount
			if v2 {
				c.Arms.N = DefaultArmCountV2
			}
		}
		if c.Arms.N < 0 {
			return fmt.Errorf("study: number of arms must be positive, got %d", c.Arms.N)
		}
		if c.Arms.Kind == "sobol" && c.Space.Dim() > objectives.MaxSobolDim {
			return fmt.Errorf("study: Sobol arms support at most %d parameters, the space has %d: use arms lhs or random", objectives.MaxSobolDim, c.Space.Dim())
		}
	case "grid":
		if c.Arms.PerDim < 0 {
			return fmt.Errorf("study: grid points per parameter must be positive, got %d", c.Arms.PerDim)
		}
		if c.Arms.PerDim == 0 {
			n := c.Arms.N
			if n <= 0 {
				n = DefaultArmCount
			}
			c.Arms.PerDim = max(int(math.Floor(math.Pow(float64(n), 1/float64(c.Space.Dim()))+1e-9)), 1)
		}
		c.Arms.N = 0
	case "csv":
		if c.Arms.File == "" {
			return errors.New("study: csv arms need a file")
		}
	default:
		return fmt.Errorf("study: unknown arm set %q; valid: %s", c.Arms.Kind, strings.Join(armKinds, ", "))
	}
	if c.Arms.Seed == 0 {
		c.Arms.Seed = c.Seed
	}
	if c.Kernel.Name == "" {
		c.Kernel.Name = DefaultKernel
		if v2 {
			c.Kernel.Name = DefaultKernelV2
		}
	}
	c.Kernel.Name = strings.ToLower(c.Kernel.Name)
	if c.Kernel.LengthScale == 0 {
		c.Kernel.LengthScale = DefaultLengthScale
	}
	if _, err := c.Kernel.build(c.Kernel.LengthScale); err != nil {
		return err
	}
	if c.Lambda == 0 {
		c.Lambda = DefaultLambda
	}
	if !(c.Lambda > 0) || math.IsInf(c.Lambda, 0) {
		return fmt.Errorf("study: lambda must be positive, got %v", c.Lambda)
	}
	if c.Qbar == 0 {
		c.Qbar = DefaultQbar
	}
	if !(c.Qbar > 0) || math.IsInf(c.Qbar, 0) {
		return fmt.Errorf("study: qbar must be positive, got %v", c.Qbar)
	}
	if c.Beta == "" {
		c.Beta = DefaultBeta
		switch {
		case c.rules().HorizonBeta:
			c.Beta = DefaultBetaV3
		case v2:
			c.Beta = DefaultBetaV2
		}
	}
	if name, arg, _ := strings.Cut(strings.ToLower(strings.TrimSpace(c.Beta)), ":"); name == "horizon" && c.Budget > 0 && !strings.Contains(arg, ":") {
		// The horizon is the budget at creation, stored with the beta: a
		// process that extends the study (Options.Budget) replays the
		// asks made under the old budget as they were made.
		c.Beta = fmt.Sprintf("horizon:%s:%d", arg, c.Budget)
	}
	if _, _, err := c.betaSchedule(); err != nil {
		return err
	}
	switch {
	case c.Budget < 0:
		return fmt.Errorf("study: budget must be >= 0, got %d", c.Budget)
	case c.Init < 0:
		return fmt.Errorf("study: init must be >= 0, got %d", c.Init)
	case c.FitEvery < 0:
		return fmt.Errorf("study: fit_every must be >= 0, got %d", c.FitEvery)
	case c.MaxFailures < 0:
		return fmt.Errorf("study: max_failures must be >= 0, got %d", c.MaxFailures)
	case c.MinBatch < 0:
		return fmt.Errorf("study: min_batch must be >= 0, got %d", c.MinBatch)
	case c.MinBatch > 0 && c.Policy != "bbkb":
		return fmt.Errorf("study: min_batch is for policy bbkb, not %s", c.Policy)
	}
	if c.Init == 0 {
		c.Init = max(5, c.Space.Dim()+1)
		if v2 {
			c.Init = max(5, 2*c.Space.Dim())
		}
		if c.rules().InitCap {
			c.Init = min(c.Init, initCap)
		}
	}
	if err := c.normalizeWarp(); err != nil {
		return err
	}
	if err := c.normalizeV2(); err != nil {
		return err
	}
	if err := c.normalizeLazy(); err != nil {
		return err
	}
	if err := c.normalizeTradeoffs(); err != nil {
		return err
	}
	return c.checkCostAware()
}

// normalizeV2 fills and checks the fields of version 2 (Candidates, Fit,
// FitEvery); a version 1 configuration may not set them.
func (c *Config) normalizeV2() error {
	if !c.rules().Refine {
		if c.Candidates != "" && c.Candidates != CandidatesFixed || c.Fit != "" || c.Policy == "ada-bkb" {
			return errors.New("study: candidates, fit and policy ada-bkb need configuration version 2")
		}
		return nil
	}
	if c.Candidates == "" {
		c.Candidates = CandidatesGrow
		if c.Arms.Kind == "csv" || c.Arms.Kind == "grid" || c.Policy == "bbkb" {
			c.Candidates = CandidatesFixed
		}
	}
	c.Candidates = strings.ToLower(c.Candidates)
	if c.Candidates != CandidatesFixed && c.Candidates != CandidatesGrow {
		return fmt.Errorf("study: candidates %q (want %s or %s)", c.Candidates, CandidatesFixed, CandidatesGrow)
	}
	if c.Policy == "bbkb" && c.Candidates != CandidatesFixed {
		return errors.New("study: policy bbkb batches over a fixed arm set: use candidates fixed")
	}
	if c.Policy == "ada-bkb" {
		if !c.Space.Continuous() {
			return errors.New("study: policy ada-bkb needs a space of floats without steps (it partitions the box)")
		}
		if c.Candidates != CandidatesGrow {
			return errors.New("study: policy ada-bkb chooses its own points: it needs candidates grow")
		}
	}
	if c.Fit == "" {
		// An explicit FitEvery without Fit is version 1's scalar fit (the
		// command line's --fit-length-scale); kernels without an ARD
		// family keep their length scale.
		_, famErr := c.Family()
		switch {
		case c.FitEvery > 0:
			c.Fit = FitScalar
		case famErr != nil:
			c.Fit = FitNone
		default:
			c.Fit = FitARD
		}
	}
	c.Fit = strings.ToLower(c.Fit)
	switch c.Fit {
	case FitNone, FitScalar:
	case FitARD:
		if _, err := c.Family(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("study: fit %q (want %s, %s or %s)", c.Fit, FitNone, FitScalar, FitARD)
	}
	if c.FitEvery == 0 && c.Fit == FitARD {
		c.FitEvery = DefaultFitEvery
	}
	return nil
}

// Family returns the gp/hyper Family of an ARD fit.
func (c *Config) Family() (hyper.Family, error) {
	switch c.Kernel.Name {
	case "rbf", "gaussian", "se":
		return hyper.RBF, nil
	case "matern52", "matern":
		return hyper.Matern52, nil
	}
	return 0, fmt.Errorf("study: fit ard needs kernel rbf or matern52, got %q", c.Kernel.Name)
}

// grows reports whether the candidates grow (version 2).
// legacyCore reports whether BKB's posterior keeps the numerics of
// configuration versions up to 4 on near-dependent points
// (gp.DTC.SetLegacyCore), so that stored studies replay as written.
func (c *Config) legacyCore() bool { return c.rules().LegacyCore }

// deadPivots reports whether a DTC posterior drops every near-dependent
// point below rounding (gp.DTC.SetDeadPivots), the exact core of
// versions 5 to 7; version 8 floors their pivots instead.
func (c *Config) deadPivots() bool { return c.rules().DeadPivots }

// noiseRobust reports whether the study takes version 7's rules for
// heavily noisy values (noise.go): version 4's dictionary rule and no
// warp while the fitted noise is heavy.
func (c *Config) noiseRobust() bool { return c.rules().NoiseRobust }

// warpTest returns which evaluations the test of Warp auto reads: all of
// them before version 8; from version 8 the initial design's skewness and
// the first warpDecisionPoints (warp.go).
func (c *Config) warpTest() warpTest {
	if !c.rules().WarpTestAtStart {
		return warpTest{}
	}
	return warpTest{design: c.Init, points: warpDecisionPoints(c.Init)}
}

func (c *Config) grows() bool { return c.rules().Refine && c.Candidates == CandidatesGrow }

// GrowsCandidates reports whether the study's candidates grow where the
// optimum may be (version 2, Candidates "grow"), rather than staying the
// arm set.
func (c Config) GrowsCandidates() bool { return c.grows() }

// fitsARD reports whether the hyperparameters are fitted by gp/hyper.
func (c *Config) fitsARD() bool { return c.rules().Refine && c.Fit == FitARD }

// minimize reports whether the study minimizes.
func (c *Config) minimize() bool { return c.Direction != Maximize }

// build returns the kernel with length scale l.
func (k Kernel) build(l float64) (kernel.Kernel, error) {
	if !(l > 0) || math.IsInf(l, 0) {
		return nil, fmt.Errorf("study: length scale must be positive, got %v", l)
	}
	switch k.Name {
	case "rbf", "gaussian", "se":
		return kernel.RBF{LengthScale: l}, nil
	case "matern12":
		return kernel.Matern{Nu: 0.5, LengthScale: l}, nil
	case "matern32":
		return kernel.Matern{Nu: 1.5, LengthScale: l}, nil
	case "matern52", "matern":
		return kernel.Matern{Nu: 2.5, LengthScale: l}, nil
	}
	return nil, fmt.Errorf("study: unknown kernel %q; valid: %s", k.Name, strings.Join(kernelNames, ", "))
}

// horizonShare sets where horizonBeta starts to decay: it is B while
// 1 - t/Budget >= 1/horizonShare, the first third of the budget.
// horizonFloor is the least share of B it keeps: with noisy values the
// posterior variance at an evaluated point never vanishes, and a beta near
// 0 repeats the posterior-mean maximizer (10% noise on Levy 10-d: median
// simple regret 17.4 without the floor, 9.6 with it, 14 for the fixed set).
const (
	horizonShare = 1.5
	horizonFloor = 0.25
)
