package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	spacepkg "github.com/bkb-go/bkb/space"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
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
	// values noisy (noise.go); version 8 (LatestVersion) is the default
	// since its regret benchmark was rerun (docs/optimizer.md). Each
	// version's studies replay as written.
	CurrentVersion = 8
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
	// floored pivots (deadPivots off, gp.DTC.SetDeadPivots).
	LatestVersion = 8
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
	// max(5, d+1)).
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
	return c.normalizeTradeoffs()
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
		_, famErr := c.family()
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
		if _, err := c.family(); err != nil {
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

// family returns the gp/hyper family of an ARD fit.
func (c *Config) family() (hyper.Family, error) {
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

// betaSchedule parses Beta; gpScale reports whether BKB should use the
// GP-scale variance (true for constants and Srinivas' schedule, which are
// on the GP scale; false for the BKB theorem schedules).
func (c *Config) betaSchedule() (b acquisition.Beta, gpScale bool, err error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(c.Beta)), ":")
	xi := math.Sqrt(c.Lambda)
	switch name {
	case "srinivas", "gp-ucb":
		d := 0.1
		if hasArg {
			if d, err = strconv.ParseFloat(arg, 64); err != nil || !(d > 0 && d < 1) {
				return nil, false, fmt.Errorf("study: beta srinivas:DELTA needs 0 < DELTA < 1, got %q", arg)
			}
		}
		return acquisition.GPUCBFinite{Delta: d}, true, nil
	case "horizon":
		bs, ts, hasT := strings.Cut(arg, ":")
		v, perr := strconv.ParseFloat(bs, 64)
		h, terr := 0, error(nil)
		if hasT {
			h, terr = strconv.Atoi(ts)
		}
		if !hasArg || perr != nil || !(v >= 0) || math.IsInf(v, 0) || terr != nil || h < 0 {
			return nil, false, fmt.Errorf("study: beta horizon:B[:T] needs a number B >= 0 and a number of trials T >= 0, got %q", c.Beta)
		}
		return horizonBeta{B: v, Budget: h}, true, nil
	case "bkb-theorem", "theorem", "batch-bkb":
		if c.Policy != "bkb" {
			return nil, false, fmt.Errorf("study: beta %s is BKB's schedule; use it with policy bkb", name)
		}
		if name == "batch-bkb" {
			return acquisition.BatchBKB{F: 1, Delta: 0.1, Xi: xi}, false, nil
		}
		return acquisition.BKBTheorem{F: 1, Delta: 0.1, Eps: 0.5, Xi: xi}, false, nil
	}
	v, perr := strconv.ParseFloat(name, 64)
	if perr != nil || !(v >= 0) || math.IsInf(v, 0) {
		return nil, false, fmt.Errorf("study: beta must be a number >= 0, 'horizon:B[:T]', 'srinivas[:delta]', 'bkb-theorem' or 'batch-bkb', got %q", c.Beta)
	}
	return acquisition.Constant(v), true, nil
}

// horizonBeta is a UCB exploration that spends its exploration early:
// on the GP scale, after t observations,
//
//	beta_t = B max(1/4, min(1, 1.5 (1 - t/Budget))),
//
// B for the first third of the budget, then linearly down to B/4 at five
// sixths of it; B throughout without a budget. Budget is the study's
// budget when it was created ("horizon:B" is stored as "horizon:B:Budget"),
// so that an extended study replays its asks; past it, beta stays B/4. On
// growing candidates the bonus is further scaled by sqrt(1 - u), u the
// fraction of the prior variance the posterior leaves unexplained over the
// global set (refiner.unexplained), and floored at B/4 again.
//
// Why: an exploratory evaluation pays only through the evaluations that
// exploit what it taught, and with a known budget there are Budget - t of
// those left, so the value of the bonus falls to nothing at the last trial
// (the finite-horizon argument of Lam, Willcox and Wolpert, NeurIPS 2016,
// in its simplest linear form). A constant beta 2 kept exploring the
// unexplored corners of the box to the end: on Levy 10-d, Styblinski-Tang
// 10-d and Michalewicz it paid a higher cumulative regret than the fixed
// arm set while having found far better points (docs/optimizer.md). Early
// on, when the basin is chosen, the bonus is B, as before: a smaller beta
// early traps Hartmann 6 seeds in its second basin, and a decay from the
// first trial left 2 of 30 seeds of TestNotStuck in Hartmann 3's.
type horizonBeta struct {
	B      float64
	Budget int
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

// Beta returns B max(1/4, min(1, 1.5 (1 - T/Budget))).
func (h horizonBeta) Beta(s acquisition.State) float64 {
	if h.Budget <= 0 {
		return h.B
	}
	return h.B * math.Max(horizonFloor, math.Min(1, horizonShare*(1-float64(s.T)/float64(h.Budget))))
}

// newPolicy builds the configured policy on the encoded arms with the
// given kernel and noise variance.
func (c *Config) newPolicy(arms *mat.Dense, k kernel.Kernel, lambda float64) (bandit.Policy, error) {
	n, _ := arms.Dims()
	if c.Policy == "random" {
		return bandit.NewRandom(n, c.Seed)
	}
	if c.Policy == "ada-bkb" {
		return nil, errors.New("study: policy ada-bkb chooses points of the box, not arms: use candidates grow")
	}
	beta, gpScale, err := c.betaSchedule()
	if err != nil {
		return nil, err
	}
	opt := bandit.Options{Kernel: k, Lambda: lambda, Beta: beta, PaperScale: !gpScale, Qbar: c.Qbar,
		Incremental: c.Incremental, Seed: c.Seed, Reserve: c.Budget, LegacyCore: c.legacyCore(), DeadPivots: c.deadPivots(),
		Lazy: c.Lazy, Eliminate: c.Eliminate}
	switch c.Policy {
	case "bkb":
		return bandit.NewBKB(arms, opt)
	case "gp-ucb":
		return bandit.NewGPUCB(arms, opt)
	case "thompson":
		return bandit.NewThompson(arms, opt, false)
	case "bkb-thompson":
		return bandit.NewThompson(arms, opt, true)
	case "ei":
		return bandit.NewEI(arms, opt)
	case "bbkb":
		// Batched BKB (ICML 2020): adaptive batches for parallel workers;
		// Ask reports bandit.ErrBatchFull while a closed batch is running.
		return bandit.NewBBKB(arms, bandit.BBKBOptions{Options: opt, MinBatch: c.MinBatch})
	}
	return nil, fmt.Errorf("study: unknown policy %q", c.Policy)
}

// BuildArms returns the candidate set of the configuration: one valid point
// per row (a value per parameter), without duplicates. A CSV file whose
// content changed since the study was created (Arms.SHA256) is an error;
// the hash of a new study's file is recorded in c.
func (c *Config) BuildArms() (*mat.Dense, error) {
	p := c.Space.Dim()
	if c.Arms.Kind == "csv" {
		return c.loadCSVArms()
	}
	unitBox := objectives.Box{Lower: make([]float64, p), Upper: make([]float64, p)}
	for i := range unitBox.Upper {
		unitBox.Upper[i] = 1
	}
	var u *mat.Dense
	var err error
	switch c.Arms.Kind {
	case "sobol":
		u, err = objectives.Sobol(unitBox, c.Arms.N, c.Arms.Seed)
	case "lhs":
		u, err = objectives.LatinHypercube(unitBox, c.Arms.N, c.Arms.Seed)
	case "random":
		u, err = objectives.Uniform(unitBox, c.Arms.N, c.Arms.Seed)
	case "grid":
		u, err = objectives.Grid(unitBox, c.Arms.PerDim)
	default:
		return nil, fmt.Errorf("study: unknown arm set %q", c.Arms.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("study: %s arms: %w", c.Arms.Kind, err)
	}
	n, _ := u.Dims()
	out := make([]float64, 0, n*p)
	seen := make(map[string]bool, n)
	x := make([]float64, p)
	cond := c.Space.Plan() // nil without conditions
	for i := 0; i < n; i++ {
		c.Space.FromUnit(x, u.RawRowView(i))
		if cond != nil {
			// Design points that differ only where parameters are
			// inactive are one point (condition.go).
			cond.Canonicalize(x)
		}
		key := pointKey(x)
		if seen[key] {
			continue // a discrete space has fewer points than the design
		}
		seen[key] = true
		out = append(out, x...)
	}
	return mat.NewDense(len(out)/p, p, out), nil
}

// pointKey identifies a point exactly.
func pointKey(x []float64) string {
	b := make([]byte, 0, 8*len(x))
	for _, v := range x {
		b = strconv.AppendUint(b, math.Float64bits(v), 36)
		b = append(b, ',')
	}
	return string(b)
}

// MaxArmsFile bounds the size of an arms CSV file.
const MaxArmsFile = 1 << 30

// loadCSVArms reads a CSV of arms: one point per line, a value per
// parameter in the space's order (a categorical by its label or index),
// optional header line, '#' comments.
func (c *Config) loadCSVArms() (*mat.Dense, error) {
	f, err := os.Open(c.Arms.File)
	if err != nil {
		return nil, fmt.Errorf("study: arms file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("study: arms file %s is not a regular file", c.Arms.File)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxArmsFile+1))
	if err != nil {
		return nil, fmt.Errorf("study: arms file: %w", err)
	}
	if len(b) > MaxArmsFile {
		return nil, fmt.Errorf("study: arms file %s is larger than %d bytes", c.Arms.File, MaxArmsFile)
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if c.Arms.SHA256 != "" && c.Arms.SHA256 != hash {
		return nil, fmt.Errorf("study: arms file %s changed since the study was created (SHA-256 differs)", c.Arms.File)
	}
	c.Arms.SHA256 = hash
	return ReadPoints(bytes.NewReader(b), c.Space, c.Arms.File)
}

// ReadPoints reads CSV points of space (see Config.Arms csv); name labels
// errors. Duplicate points are dropped.
func ReadPoints(r io.Reader, space Space, name string) (*mat.Dense, error) {
	if space.Continuous() {
		// Numbers only: the arm-set CSV format of objectives.LoadCSV
		// (comments, header, BOM), checked against the space.
		arms, err := objectives.LoadCSV(r, space.Dim())
		if err != nil {
			return nil, fmt.Errorf("study: %s: %v", name, strings.TrimPrefix(err.Error(), "objectives: "))
		}
		n, _ := arms.Dims()
		for i := 0; i < n; i++ {
			if err := space.Check(arms.RawRowView(i)); err != nil {
				return nil, fmt.Errorf("study: %s: arm %d: %v", name, i+1, trimStudy(err))
			}
		}
		return arms, nil
	}
	rows, err := readCSV(r, space, name, false)
	if err != nil {
		return nil, err
	}
	p := space.Dim()
	out := make([]float64, 0, len(rows)*p)
	seen := map[string]bool{}
	for _, row := range rows {
		if k := pointKey(row.X); !seen[k] {
			seen[k] = true
			out = append(out, row.X...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("study: %s: no points", name)
	}
	return mat.NewDense(len(out)/p, p, out), nil
}

// CSVRow is a parsed CSV line: a point and, with values, its value.
// CSVRow is one row of a CSV of points (and values): its line, point and
// value.
type CSVRow struct {
	Line  int
	X     []float64
	Value float64
}

// readCSV parses points (and with withValue a last column of values).
// The first line is a header if any of its fields is not a valid level;
// a header may name the columns in any order.
func readCSV(r io.Reader, space Space, name string, withValue bool) ([]CSVRow, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	p := space.Dim()
	want := p
	if withValue {
		want++
	}
	var rows []CSVRow
	order := make([]int, p) // column of each parameter
	for i := range order {
		order[i] = i
	}
	valueCol := p
	statusCol := -1 // a "status" column (bkb export): rows not complete are skipped
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("study: %s: %w", name, err)
		}
		if first && withValue && isCSVHeader(rec, space) && slices.ContainsFunc(rec, func(f string) bool { return strings.TrimSpace(f) == "value" }) {
			// A header with a "value" column may have other columns too
			// (the trace of bkb export and optimize --trace): they are
			// ignored, and with a "status" column only complete rows count.
			want = len(rec)
			for j, f := range rec {
				switch strings.TrimSpace(f) {
				case "value":
					valueCol = j
				case "status":
					statusCol = j
				}
			}
			for i, prm := range space.Params {
				order[i] = slices.IndexFunc(rec, func(f string) bool { return strings.TrimSpace(f) == prm.Name })
			}
			continue
		}
		if len(rec) != want {
			return nil, fmt.Errorf("study: %s:%d: %d fields, want %d (%s)", name, line, len(rec), want, strings.Join(csvColumns(space, withValue), ","))
		}
		if statusCol >= 0 && strings.TrimSpace(rec[statusCol]) != "complete" {
			continue
		}
		if first && isCSVHeader(rec, space) {
			cols := map[string]int{}
			for j, f := range rec {
				cols[strings.TrimSpace(f)] = j
			}
			for i, prm := range space.Params {
				j, ok := cols[prm.Name]
				if !ok {
					return nil, fmt.Errorf("study: %s:%d: header has no column %q", name, line, prm.Name)
				}
				order[i] = j
				delete(cols, prm.Name)
			}
			if withValue {
				if len(cols) != 1 {
					return nil, fmt.Errorf("study: %s:%d: header needs one value column besides the parameters", name, line)
				}
				for _, j := range cols {
					valueCol = j
				}
			}
			continue
		}
		row := CSVRow{Line: line, X: make([]float64, p)}
		var blank []bool // conditional parameters left empty
		for i, prm := range space.Params {
			if prm.Condition != nil && strings.TrimSpace(rec[order[i]]) == "" {
				// Not active at this point (checked below): bkb export
				// leaves it empty.
				if blank == nil {
					blank = make([]bool, p)
				}
				blank[i] = true
				row.X[i] = prm.Placeholder()
				continue
			}
			v, err := prm.ParseLevel(rec[order[i]])
			if err != nil {
				return nil, fmt.Errorf("study: %s:%d: %v", name, line, err)
			}
			row.X[i] = v
		}
		if space.Conditional() {
			if err := spacepkg.CheckBlanks(space, row.X, blank); err != nil {
				return nil, fmt.Errorf("study: %s:%d: %v", name, line, err)
			}
		}
		if err := space.Check(row.X); err != nil {
			return nil, fmt.Errorf("study: %s:%d: %v", name, line, strings.TrimPrefix(err.Error(), "study: "))
		}
		if withValue {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[valueCol]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("study: %s:%d: value %q is not a finite number", name, line, rec[valueCol])
			}
			row.Value = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func csvColumns(space Space, withValue bool) []string {
	cols := space.Names()
	if withValue {
		cols = append(cols, "value")
	}
	return cols
}

// isCSVHeader reports whether a first CSV line names columns: it contains
// every parameter name.
func isCSVHeader(rec []string, space Space) bool {
	names := map[string]bool{}
	for _, f := range rec {
		names[strings.TrimSpace(f)] = true
	}
	for _, p := range space.Params {
		if !names[p.Name] {
			return false
		}
	}
	return true
}
