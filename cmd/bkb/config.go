package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// studyConfig is everything that determines a study: it is stored in the
// journal header, and a resumed run, ask and status rebuild the arm set and
// the policy from it alone.
type studyConfig struct {
	Objective   objectiveSpec `json:"objective"`
	Space       spaceSpec     `json:"space"`
	Arms        armsSpec      `json:"arms"`
	Policy      string        `json:"policy"`
	Kernel      kernelSpec    `json:"kernel"`
	Lambda      float64       `json:"lambda"`
	Qbar        float64       `json:"qbar"`
	Beta        string        `json:"beta"`
	Incremental bool          `json:"incremental,omitempty"`
	Budget      int           `json:"budget"` // trials, failed ones included; 0: unlimited (ask/tell)
	Seed        uint64        `json:"seed"`
	Direction   string        `json:"direction"` // "minimize" or "maximize"
	Init        int           `json:"init"`      // initial design size; the y scale is fixed from it
	Standardize bool          `json:"standardize"`
	FitEvery    int           `json:"fit_every,omitempty"` // refit the length scale every k observations
	MaxFailures int           `json:"max_failures"`
}

// objectiveSpec says where values come from.
type objectiveSpec struct {
	Kind        string   `json:"kind"` // "builtin", "plugin" or "external" (ask/tell only)
	Name        string   `json:"name,omitempty"`
	Noise       float64  `json:"noise,omitempty"` // builtin: Gaussian noise std added to f
	Command     []string `json:"command,omitempty"`
	Dir         string   `json:"dir,omitempty"` // plugin working directory (absolute)
	OneShot     bool     `json:"one_shot,omitempty"`
	Timeout     string   `json:"timeout,omitempty"` // Go duration
	MaxRestarts int      `json:"max_restarts,omitempty"`
}

func (o objectiveSpec) String() string {
	switch o.Kind {
	case "builtin":
		return o.Name
	case "plugin":
		return "plugin " + strings.Join(o.Command, " ")
	}
	return "external (ask/tell)"
}

// spaceSpec is the search box with named parameters.
type spaceSpec struct {
	Names []string  `json:"names"`
	Lower []float64 `json:"lower"`
	Upper []float64 `json:"upper"`
}

func (s spaceSpec) dim() int { return len(s.Lower) }

// armsSpec says how the finite arm set is built from the box.
type armsSpec struct {
	Kind   string `json:"kind"` // sobol, lhs, random, grid, csv
	N      int    `json:"n,omitempty"`
	PerDim int    `json:"per_dim,omitempty"`
	File   string `json:"file,omitempty"`   // csv: absolute path
	SHA256 string `json:"sha256,omitempty"` // csv: content hash, checked on resume
	Seed   uint64 `json:"seed"`
}

// kernelSpec is the GP prior on the unit box.
type kernelSpec struct {
	Name        string  `json:"name"` // rbf, matern12, matern32, matern52
	LengthScale float64 `json:"length_scale"`
}

var (
	policyNames = []string{"bkb", "gp-ucb", "thompson", "ei", "random", "bkb-thompson"}
	armKinds    = []string{"sobol", "lhs", "random", "grid", "csv"}
	kernelNames = []string{"rbf", "matern12", "matern32", "matern52"}
)

// configFlags holds the flags shared by optimize and create-study.
type configFlags struct {
	objective   string
	noise       float64
	plugin      string
	oneShot     bool
	timeout     time.Duration
	maxRestarts int
	spaceFile   string
	lower       string
	upper       string
	names       []string
	arms        string
	n           int
	perDim      int
	armsFile    string
	armsSeed    uint64
	policy      string
	kernel      string
	lengthScale float64
	fitEvery    int
	lambda      float64
	qbar        float64
	beta        string
	incremental bool
	budget      int
	seed        uint64
	maximize    bool
	minimize    bool
	init        int
	noStd       bool
	maxFailures int
}

func (c *configFlags) register(fs *pflag.FlagSet, defaultBudget int) {
	fs.StringVarP(&c.objective, "objective", "f", "branin", "built-in test function to minimize (see 'bkb objectives'); ignored with --plugin")
	fs.Float64Var(&c.noise, "noise", 0, "standard deviation of Gaussian noise added to a built-in function")
	fs.StringVar(&c.plugin, "plugin", "", "plugin command line, e.g. 'python3 objectives/plugin/examples/python/branin.py' (or give it after --)")
	fs.BoolVar(&c.oneShot, "one-shot", false, "run the plugin once per evaluation (point as arguments and $BKB_X) instead of a long-lived process")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "per-evaluation timeout of a plugin")
	fs.IntVar(&c.maxRestarts, "max-restarts", 3, "plugin restarts allowed after crashes, timeouts or garbage before the run stops")
	fs.StringVar(&c.spaceFile, "space", "", `JSON search space: {"params":[{"name":"lr","low":0,"high":1},...]}`)
	fs.StringVar(&c.lower, "lower", "", "comma-separated lower bounds, one per dimension (default: the built-in function's domain)")
	fs.StringVar(&c.upper, "upper", "", "comma-separated upper bounds, one per dimension")
	fs.StringSliceVar(&c.names, "names", nil, "parameter names (default x1,x2,...)")
	fs.StringVar(&c.arms, "arms", "sobol", "arm set: sobol, lhs, random, grid or csv")
	fs.IntVarP(&c.n, "n", "n", 1024, "number of arms for sobol, lhs and random (grid: at most this many)")
	fs.IntVar(&c.perDim, "per-dim", 0, "grid points per dimension (default: the most that keeps the grid within -n)")
	fs.StringVar(&c.armsFile, "arms-file", "", "CSV of arms, one per line (implies --arms csv)")
	fs.Uint64Var(&c.armsSeed, "arms-seed", 0, "seed of the arm set (default: --seed)")
	fs.StringVarP(&c.policy, "policy", "p", "bkb", "policy: "+strings.Join(policyNames, ", "))
	fs.StringVar(&c.kernel, "kernel", "rbf", "kernel: "+strings.Join(kernelNames, ", "))
	fs.Float64Var(&c.lengthScale, "length-scale", 0.2, "kernel length scale, in units of the box scaled to [0,1]^d")
	fs.IntVar(&c.fitEvery, "fit-length-scale", 0, "refit the length scale by maximizing the log marginal likelihood every k observations (0: never)")
	fs.Float64Var(&c.lambda, "lambda", 0.001, "noise variance of the GP (the ridge) on the standardized scale; raise it (0.01-0.1) for noisy objectives")
	fs.Float64Var(&c.qbar, "qbar", 2, "BKB oversampling parameter")
	fs.StringVar(&c.beta, "beta", "2", "UCB exploration: a number, 'srinivas[:delta]', 'bkb-theorem' or 'batch-bkb'")
	fs.BoolVar(&c.incremental, "incremental", false, "BKB: incremental dictionary resampling instead of a fresh draw")
	fs.IntVarP(&c.budget, "budget", "T", defaultBudget, "number of evaluations (trials, failed ones included)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed: the same seed gives the same run")
	fs.BoolVar(&c.maximize, "maximize", false, "maximize the objective")
	fs.BoolVar(&c.minimize, "minimize", false, "minimize the objective (the default)")
	fs.IntVar(&c.init, "init", 0, "initial design size: random arms before the policy starts (default max(5, d+1))")
	fs.BoolVar(&c.noStd, "no-standardize", false, "tell the GP raw values instead of values standardized by the initial design")
	fs.IntVar(&c.maxFailures, "max-failures", 10, "stop the run after this many failed evaluations")
}

// configFlagNames lists the flags that define a study (ignored on resume).
var configFlagNames = []string{"objective", "noise", "plugin", "one-shot", "timeout", "max-restarts", "space", "lower", "upper", "names",
	"arms", "n", "per-dim", "arms-file", "arms-seed", "policy", "kernel", "length-scale", "fit-length-scale", "lambda", "qbar",
	"beta", "incremental", "seed", "maximize", "minimize", "init", "no-standardize", "max-failures"}

// build validates the flags and returns the study configuration. extra is
// the plugin command given after "--", if any. external makes a study with
// no objective (create-study without --plugin).
func (c *configFlags) build(fs *pflag.FlagSet, extra []string, external bool) (*studyConfig, error) {
	cfg := &studyConfig{Seed: c.seed, Budget: c.budget, Lambda: c.lambda, Qbar: c.qbar, Beta: c.beta,
		Incremental: c.incremental, MaxFailures: c.maxFailures, Standardize: !c.noStd, FitEvery: c.fitEvery}
	if c.maximize && c.minimize {
		return nil, usagef("--maximize and --minimize are exclusive")
	}
	cfg.Direction = "minimize"
	if c.maximize {
		cfg.Direction = "maximize"
	}
	if c.budget < 0 || (!external && c.budget == 0) {
		return nil, usagef("--budget must be positive, got %d", c.budget)
	}
	if c.maxFailures < 0 {
		return nil, usagef("--max-failures must be >= 0, got %d", c.maxFailures)
	}
	if c.fitEvery < 0 {
		return nil, usagef("--fit-length-scale must be >= 0, got %d", c.fitEvery)
	}

	// Objective.
	cmdline := extra
	if c.plugin != "" {
		if len(extra) > 0 {
			return nil, usagef("give the plugin command either with --plugin or after --, not both")
		}
		var err error
		if cmdline, err = splitCommand(c.plugin); err != nil {
			return nil, usagef("--plugin: %v", err)
		}
	}
	var fn *objectives.Function
	switch {
	case len(cmdline) > 0:
		if c.timeout <= 0 {
			return nil, usagef("--timeout must be positive, got %v", c.timeout)
		}
		if c.maxRestarts < 0 {
			return nil, usagef("--max-restarts must be >= 0, got %d", c.maxRestarts)
		}
		dir, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Objective = objectiveSpec{Kind: "plugin", Command: cmdline, Dir: dir, OneShot: c.oneShot,
			Timeout: c.timeout.String(), MaxRestarts: c.maxRestarts}
	case external && !fs.Changed("objective"):
		cfg.Objective = objectiveSpec{Kind: "external"}
	default:
		f, err := objectives.Lookup(c.objective)
		if err != nil {
			return nil, usageError{trimPkg(err)}
		}
		if !(c.noise >= 0) || math.IsInf(c.noise, 0) {
			return nil, usagef("--noise must be finite and >= 0, got %v", c.noise)
		}
		fn = f
		kind := "builtin"
		if external {
			// create-study --objective NAME: the function gives the space;
			// the values come from the user.
			kind = "external"
		}
		cfg.Objective = objectiveSpec{Kind: kind, Name: f.String(), Noise: c.noise}
		if external {
			cfg.Objective.Noise = 0
		}
	}

	// Space.
	space, err := c.space(fs, fn)
	if err != nil {
		return nil, err
	}
	cfg.Space = space

	// Arms.
	cfg.Arms = armsSpec{Kind: strings.ToLower(c.arms), N: c.n, PerDim: c.perDim, Seed: c.seed}
	if fs.Changed("arms-seed") {
		cfg.Arms.Seed = c.armsSeed
	}
	if c.armsFile != "" {
		if fs.Changed("arms") && cfg.Arms.Kind != "csv" {
			return nil, usagef("--arms-file needs --arms csv, got --arms %s", c.arms)
		}
		cfg.Arms.Kind = "csv"
		abs, err := filepath.Abs(c.armsFile)
		if err != nil {
			return nil, err
		}
		cfg.Arms.File = abs
		cfg.Arms.N, cfg.Arms.PerDim = 0, 0
	}
	switch cfg.Arms.Kind {
	case "sobol", "lhs", "random":
		if c.n <= 0 {
			return nil, usagef("-n must be positive, got %d", c.n)
		}
		cfg.Arms.PerDim = 0
	case "grid":
		if c.perDim < 0 || (c.perDim == 0 && c.n <= 0) {
			return nil, usagef("--per-dim must be positive, got %d", c.perDim)
		}
		if c.perDim == 0 {
			cfg.Arms.PerDim = max(int(math.Floor(math.Pow(float64(c.n), 1/float64(space.dim()))+1e-9)), 1)
		}
		cfg.Arms.N = 0
	case "csv":
		if c.armsFile == "" {
			return nil, usagef("--arms csv needs --arms-file FILE")
		}
	default:
		return nil, usagef("unknown arm set %q; valid: %s", c.arms, strings.Join(armKinds, ", "))
	}

	// Policy and kernel.
	cfg.Policy = strings.ToLower(c.policy)
	if !contains(policyNames, cfg.Policy) {
		return nil, usagef("unknown policy %q; valid: %s", c.policy, strings.Join(policyNames, ", "))
	}
	cfg.Kernel = kernelSpec{Name: strings.ToLower(c.kernel), LengthScale: c.lengthScale}
	if _, err := cfg.Kernel.build(); err != nil {
		return nil, usageError{err}
	}
	if !(c.lambda > 0) || math.IsInf(c.lambda, 0) {
		return nil, usagef("--lambda must be positive, got %v", c.lambda)
	}
	if !(c.qbar > 0) || math.IsInf(c.qbar, 0) {
		return nil, usagef("--qbar must be positive, got %v", c.qbar)
	}
	if _, _, err := cfg.betaSchedule(); err != nil {
		return nil, usageError{err}
	}
	cfg.Init = c.init
	if c.init < 0 {
		return nil, usagef("--init must be >= 0, got %d", c.init)
	}
	if c.init == 0 {
		cfg.Init = max(5, space.dim()+1)
	}
	return cfg, nil
}

// space resolves the box and parameter names from --space, --lower/--upper
// and the built-in function's domain.
func (c *configFlags) space(fs *pflag.FlagSet, fn *objectives.Function) (spaceSpec, error) {
	var s spaceSpec
	switch {
	case c.spaceFile != "":
		if fs.Changed("lower") || fs.Changed("upper") {
			return s, usagef("give the bounds either with --space or with --lower/--upper, not both")
		}
		var err error
		if s, err = readSpaceFile(c.spaceFile); err != nil {
			return s, err
		}
	case fs.Changed("lower") || fs.Changed("upper"):
		if !fs.Changed("lower") || !fs.Changed("upper") {
			return s, usagef("--lower and --upper go together")
		}
		var err error
		if s.Lower, err = parseFloats("--lower", c.lower); err != nil {
			return s, err
		}
		if s.Upper, err = parseFloats("--upper", c.upper); err != nil {
			return s, err
		}
	case fn != nil:
		s.Lower, s.Upper = fn.Lower, fn.Upper
	case c.armsFile != "":
		// The bounding box of the CSV arms, filled in by buildArms.
		s.Names = c.names
		return s, nil
	default:
		return s, usagef("no search space: give --space FILE, --lower/--upper, or --arms-file")
	}
	if err := (objectives.Box{Lower: s.Lower, Upper: s.Upper}).Validate(); err != nil {
		return s, usagef("bad bounds: %v", trimPkg(err))
	}
	if fn != nil && s.dim() != fn.Dim {
		return s, usagef("%s is %d-dimensional but the bounds have %d dimensions", fn.Name, fn.Dim, s.dim())
	}
	if len(c.names) > 0 {
		if len(s.Names) > 0 && fs.Changed("names") {
			return s, usagef("give the parameter names either in --space or with --names, not both")
		}
		s.Names = c.names
	}
	if len(s.Names) == 0 {
		s.Names = defaultNames(s.dim())
	}
	if err := checkNames(s.Names, s.dim()); err != nil {
		return s, err
	}
	return s, nil
}

// parseFloats parses a comma-separated list of numbers.
func parseFloats(flag, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, usagef("%s: %q is not a number", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}

func defaultNames(d int) []string {
	names := make([]string, d)
	for i := range names {
		names[i] = "x" + strconv.Itoa(i+1)
	}
	return names
}

func checkNames(names []string, d int) error {
	if len(names) != d {
		return usagef("%d parameter names for %d dimensions", len(names), d)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" {
			return usagef("empty parameter name")
		}
		if seen[n] {
			return usagef("duplicate parameter name %q", n)
		}
		seen[n] = true
	}
	return nil
}

// spaceFile is the JSON search-space format.
type spaceFile struct {
	Params []struct {
		Name string   `json:"name"`
		Low  *float64 `json:"low"`
		High *float64 `json:"high"`
	} `json:"params"`
}

func readSpaceFile(path string) (spaceSpec, error) {
	var s spaceSpec
	b, err := os.ReadFile(path)
	if err != nil {
		return s, usageError{err}
	}
	var sf spaceFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return s, usagef("space file %s: %v (want {\"params\":[{\"name\":\"x\",\"low\":0,\"high\":1},...]})", path, err)
	}
	if len(sf.Params) == 0 {
		return s, usagef("space file %s: no parameters", path)
	}
	for i, p := range sf.Params {
		if p.Name == "" {
			return s, usagef("space file %s: parameter %d has no name", path, i+1)
		}
		if p.Low == nil || p.High == nil {
			return s, usagef("space file %s: parameter %q needs both \"low\" and \"high\"", path, p.Name)
		}
		s.Names = append(s.Names, p.Name)
		s.Lower = append(s.Lower, *p.Low)
		s.Upper = append(s.Upper, *p.High)
	}
	if err := (objectives.Box{Lower: s.Lower, Upper: s.Upper}).Validate(); err != nil {
		return s, usagef("space file %s: bad bounds: %v", path, trimPkg(err))
	}
	return s, checkNames(s.Names, s.dim())
}

// buildArms builds the arm set of cfg (filling in the space of a CSV-only
// study on first use). On resume a CSV whose content changed is an error.
func (cfg *studyConfig) buildArms() (*mat.Dense, error) {
	box := objectives.Box{Lower: cfg.Space.Lower, Upper: cfg.Space.Upper}
	var arms *mat.Dense
	var err error
	switch cfg.Arms.Kind {
	case "sobol":
		arms, err = objectives.Sobol(box, cfg.Arms.N, cfg.Arms.Seed)
	case "lhs":
		arms, err = objectives.LatinHypercube(box, cfg.Arms.N, cfg.Arms.Seed)
	case "random":
		arms, err = objectives.Uniform(box, cfg.Arms.N, cfg.Arms.Seed)
	case "grid":
		arms, err = objectives.Grid(box, cfg.Arms.PerDim)
	case "csv":
		return cfg.loadCSVArms()
	default:
		return nil, fmt.Errorf("unknown arm set %q", cfg.Arms.Kind)
	}
	if err != nil {
		return nil, usageError{trimPkg(err)}
	}
	return arms, nil
}

func (cfg *studyConfig) loadCSVArms() (*mat.Dense, error) {
	b, err := os.ReadFile(cfg.Arms.File)
	if err != nil {
		return nil, usageError{err}
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if cfg.Arms.SHA256 != "" && cfg.Arms.SHA256 != hash {
		return nil, fmt.Errorf("arms file %s changed since the study was created (SHA-256 differs)", cfg.Arms.File)
	}
	cfg.Arms.SHA256 = hash
	arms, err := objectives.LoadCSV(bytes.NewReader(b), cfg.Space.dim())
	if err != nil {
		return nil, usagef("arms file %s: %v", cfg.Arms.File, trimPkg(err))
	}
	n, d := arms.Dims()
	if cfg.Space.dim() == 0 {
		// Bounding box of the arms, widened where an arm coordinate is constant.
		lo, hi := make([]float64, d), make([]float64, d)
		for j := 0; j < d; j++ {
			lo[j], hi[j] = math.Inf(1), math.Inf(-1)
			for i := 0; i < n; i++ {
				lo[j], hi[j] = math.Min(lo[j], arms.At(i, j)), math.Max(hi[j], arms.At(i, j))
			}
			if !(hi[j] > lo[j]) {
				lo[j], hi[j] = lo[j]-0.5, hi[j]+0.5
			}
		}
		cfg.Space.Lower, cfg.Space.Upper = lo, hi
		if len(cfg.Space.Names) == 0 {
			cfg.Space.Names = defaultNames(d)
		}
		if err := checkNames(cfg.Space.Names, d); err != nil {
			return nil, err
		}
	}
	return arms, nil
}

// build returns the kernel.
func (k kernelSpec) build() (kernel.Kernel, error) {
	if !(k.LengthScale > 0) || math.IsInf(k.LengthScale, 0) {
		return nil, fmt.Errorf("--length-scale must be positive, got %v", k.LengthScale)
	}
	switch k.Name {
	case "rbf", "gaussian", "se":
		return kernel.RBF{LengthScale: k.LengthScale}, nil
	case "matern12":
		return kernel.Matern{Nu: 0.5, LengthScale: k.LengthScale}, nil
	case "matern32":
		return kernel.Matern{Nu: 1.5, LengthScale: k.LengthScale}, nil
	case "matern52", "matern":
		return kernel.Matern{Nu: 2.5, LengthScale: k.LengthScale}, nil
	}
	return nil, fmt.Errorf("unknown kernel %q; valid: %s", k.Name, strings.Join(kernelNames, ", "))
}

// betaSchedule parses cfg.Beta; gpScale reports whether BKB should use the
// GP-scale variance (true for constants and Srinivas' schedule, which are
// on the GP scale; false for the BKB theorem schedules).
func (cfg *studyConfig) betaSchedule() (b acquisition.Beta, gpScale bool, err error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(cfg.Beta)), ":")
	xi := math.Sqrt(cfg.Lambda)
	switch name {
	case "srinivas", "gp-ucb":
		d := 0.1
		if hasArg {
			if d, err = strconv.ParseFloat(arg, 64); err != nil || !(d > 0 && d < 1) {
				return nil, false, fmt.Errorf("--beta srinivas:DELTA needs 0 < DELTA < 1, got %q", arg)
			}
		}
		return acquisition.GPUCBFinite{Delta: d}, true, nil
	case "bkb-theorem", "theorem", "batch-bkb":
		if cfg.Policy != "bkb" {
			return nil, false, fmt.Errorf("--beta %s is BKB's schedule; use it with --policy bkb", name)
		}
		if name == "batch-bkb" {
			return acquisition.BatchBKB{F: 1, Delta: 0.1, Xi: xi}, false, nil
		}
		return acquisition.BKBTheorem{F: 1, Delta: 0.1, Eps: 0.5, Xi: xi}, false, nil
	}
	v, perr := strconv.ParseFloat(name, 64)
	if perr != nil || !(v >= 0) || math.IsInf(v, 0) {
		return nil, false, fmt.Errorf("--beta must be a number >= 0, 'srinivas[:delta]', 'bkb-theorem' or 'batch-bkb', got %q", cfg.Beta)
	}
	return acquisition.Constant(v), true, nil
}

// newPolicy builds the configured policy on arms (unit-box coordinates)
// with the given length scale.
func (cfg *studyConfig) newPolicy(arms *mat.Dense, lengthScale float64) (bandit.Policy, error) {
	n, _ := arms.Dims()
	if cfg.Policy == "random" {
		return bandit.NewRandom(n, cfg.Seed)
	}
	ks := cfg.Kernel
	ks.LengthScale = lengthScale
	k, err := ks.build()
	if err != nil {
		return nil, err
	}
	beta, gpScale, err := cfg.betaSchedule()
	if err != nil {
		return nil, err
	}
	opt := bandit.Options{Kernel: k, Lambda: cfg.Lambda, Beta: beta, GPScale: gpScale, Qbar: cfg.Qbar,
		Incremental: cfg.Incremental, Seed: cfg.Seed, Reserve: cfg.Budget}
	switch cfg.Policy {
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
	}
	return nil, fmt.Errorf("unknown policy %q", cfg.Policy)
}

// function returns the built-in function of the study, if any.
func (cfg *studyConfig) function() *objectives.Function {
	if cfg.Objective.Name == "" {
		return nil
	}
	f, err := objectives.Lookup(cfg.Objective.Name)
	if err != nil {
		return nil
	}
	return f
}

func (cfg *studyConfig) minimize() bool { return cfg.Direction != "maximize" }

// decodeConfig reads a journal header's config.
func decodeConfig(raw json.RawMessage) (*studyConfig, error) {
	var cfg studyConfig
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("the journal header has no bkb configuration")
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("the journal header's configuration is not a bkb study: %v", err)
	}
	if cfg.Policy == "" || cfg.Arms.Kind == "" || cfg.Objective.Kind == "" {
		return nil, errors.New("the journal header's configuration is not a bkb study (no policy, arms or objective)")
	}
	if cfg.Arms.Kind != "csv" {
		if err := (objectives.Box{Lower: cfg.Space.Lower, Upper: cfg.Space.Upper}).Validate(); err != nil {
			return nil, fmt.Errorf("the journal header's search space is invalid: %v", trimPkg(err))
		}
	}
	return &cfg, nil
}

// splitCommand splits a command line on white space, honouring single and
// double quotes and backslash escapes (no other shell syntax).
func splitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inArg = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape in %q", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	return args, nil
}

// trimPkg drops a leading "objectives: " from library errors: the CLI
// prefixes its own "bkb: ".
func trimPkg(err error) error {
	msg := err.Error()
	for _, p := range []string{"objectives: ", "study: ", "storage: ", "bandit: ", "kernel: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
