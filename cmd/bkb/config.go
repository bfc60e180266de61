package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/study"
)

// spec is a study as the command line sees it: the study's configuration
// and, stored in its Objective field, how to run the objective.
type spec struct {
	cfg study.Config
	obj objectiveSpec
}

// newSpec stores obj in cfg.
func newSpec(cfg study.Config, obj objectiveSpec) (*spec, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	cfg.Objective = raw
	return &spec{cfg: cfg, obj: obj}, nil
}

// specOf decodes the objective stored in a study's configuration.
func specOf(cfg study.Config) (*spec, error) {
	var obj objectiveSpec
	if len(cfg.Objective) == 0 {
		obj.Kind = "external"
	} else if err := json.Unmarshal(cfg.Objective, &obj); err != nil {
		return nil, fmt.Errorf("the study's objective is not a bkb objective: %v", err)
	}
	switch obj.Kind {
	case "builtin", "plugin", "external":
	default:
		return nil, fmt.Errorf("the study's objective has an unknown kind %q", obj.Kind)
	}
	return &spec{cfg: cfg, obj: obj}, nil
}

func (s *spec) minimize() bool { return s.cfg.Direction != study.Maximize }

// function returns the built-in function of the study, if any.
func (s *spec) function() *objectives.Function {
	if s.obj.Name == "" {
		return nil
	}
	f, err := objectives.Lookup(s.obj.Name)
	if err != nil {
		return nil
	}
	return f
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
	candidates  string
	fit         string
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
	warp        string
	fileWarp    string // the space file's "warp", if any
	maxFailures int
	minBatch    int
	version     int
	lazy        bool
	eliminate   bool
	costAware   bool
	tradeoffFlags
	pruner     string
	filePruner *pruner.Config // the space file's "pruner", if any
}

func (c *configFlags) register(fs *pflag.FlagSet, defaultBudget int) {
	fs.StringVarP(&c.objective, "objective", "f", "branin", "built-in test function to minimize (see 'bkb objectives'); with a plugin, its box is the search space")
	fs.Float64Var(&c.noise, "noise", 0, "standard deviation of Gaussian noise added to a built-in function")
	fs.StringVar(&c.plugin, "plugin", "", "plugin command line, e.g. 'python3 objectives/plugin/examples/python/branin.py' (or give it after --)")
	fs.BoolVar(&c.oneShot, "one-shot", false, "run the plugin once per evaluation (point as arguments and $BKB_X) instead of a long-lived process")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "per-evaluation timeout of a plugin")
	fs.IntVar(&c.maxRestarts, "max-restarts", 3, "plugin restarts allowed after crashes, timeouts or garbage before the run stops")
	fs.StringVar(&c.spaceFile, "space", "", `JSON search space: {"params":[{"name":"lr","type":"float","low":1e-4,"high":0.1,"log":true},{"name":"layers","type":"int","low":1,"high":8},{"name":"act","type":"categorical","choices":["relu","tanh"]}]}`)
	fs.StringVar(&c.lower, "lower", "", "comma-separated lower bounds, one per dimension (default: the built-in function's domain)")
	fs.StringVar(&c.upper, "upper", "", "comma-separated upper bounds, one per dimension")
	fs.StringSliceVar(&c.names, "names", nil, "parameter names (default x1,x2,...)")
	fs.StringVar(&c.arms, "arms", study.DefaultArms, "arm set: "+strings.Join(study.ArmKinds(), ", "))
	fs.IntVarP(&c.n, "n", "n", 0, fmt.Sprintf("number of arms for sobol, lhs and random (default %d); grid: at most this many (default %d)", study.DefaultArmCountV2, study.DefaultArmCount))
	fs.IntVar(&c.perDim, "per-dim", 0, "grid points per dimension (default: the most that keeps the grid within -n)")
	fs.StringVar(&c.armsFile, "arms-file", "", "CSV of arms, one per line (implies --arms csv)")
	fs.Uint64Var(&c.armsSeed, "arms-seed", 0, "seed of the arm set (default: --seed)")
	fs.StringVarP(&c.policy, "policy", "p", study.DefaultPolicy, "policy: "+strings.Join(study.PolicyNames(), ", "))
	fs.StringVar(&c.kernel, "kernel", study.DefaultKernel, "kernel: "+strings.Join(study.KernelNames(), ", "))
	fs.Float64Var(&c.lengthScale, "length-scale", study.DefaultLengthScale, "kernel length scale, in units of the box scaled to [0,1]^d")
	fs.IntVar(&c.fitEvery, "fit-length-scale", 0, "refit the length scale by maximizing the log marginal likelihood every k observations (0: never)")
	fs.StringVar(&c.candidates, "candidates", "", "fixed (the arm set only) or grow (trust regions and polish around the best points); default grow, fixed for --arms csv and grid (docs/optimizer.md)")
	fs.StringVar(&c.fit, "fit", "", "hyperparameter fit: ard (per-dimension length scales, signal and noise variance; default for rbf and matern52), scalar (--fit-length-scale) or none")
	fs.Float64Var(&c.lambda, "lambda", study.DefaultLambda, "noise variance of the GP (the ridge) on the standardized scale; raise it (0.01-0.1) for noisy objectives")
	fs.Float64Var(&c.qbar, "qbar", study.DefaultQbar, "BKB oversampling parameter")
	fs.StringVar(&c.beta, "beta", "", "UCB exploration: a number, 'horizon:B' (B for the first third of the budget, then down to B/4), 'srinivas[:delta]', 'bkb-theorem' or 'batch-bkb' (default "+study.DefaultBetaV3+", docs/optimizer.md)")
	fs.BoolVar(&c.incremental, "incremental", false, "BKB: incremental dictionary resampling instead of a fresh draw")
	fs.IntVarP(&c.budget, "budget", "T", defaultBudget, "number of evaluations (trials, failed ones included)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed: the same seed gives the same run")
	fs.BoolVar(&c.maximize, "maximize", false, "maximize the objective")
	fs.BoolVar(&c.minimize, "minimize", false, "minimize the objective (the default)")
	fs.IntVar(&c.init, "init", 0, "initial design size: random arms before the policy starts (default max(5, 2d), d the number of parameters)")
	fs.BoolVar(&c.noStd, "no-standardize", false, "tell the GP raw values instead of values standardized by the initial design")
	fs.StringVar(&c.warp, "warp", "", "transform of the values the GP is told: auto (a Box-Cox power fitted by likelihood, for values that span orders of magnitude; the default of new studies, from version 6 on), log or none (an affine map; the default of versions 1 to 5): docs/robust.md")
	fs.IntVar(&c.maxFailures, "max-failures", 10, "stop the run after this many failed evaluations (0: never)")
	fs.IntVar(&c.version, "config-version", 0, fmt.Sprintf("configuration version of a new study, 1 to %d (default %d: the long-study engine of docs/long-studies.md, with output warping and local steps, docs/robust.md, the rules for many parameters of docs/tuning.md, two rules for noisy values, a local posterior late in long studies and asks that do not repeat an observed configuration, on growing candidates and fixed arm sets; 12 repeats the arms of a fixed set; 11 does not leave out observed configurations at all; 10 lacks the local posterior; 9 lacks the two rules for noisy values; 8 asks version 9's points at 10 parameters or fewer; 4 gives the defaults before them, docs/optimizer.md)", study.LatestVersion, study.CurrentVersion))
	fs.StringVar(&c.pruner, "pruner", "none", "stop trials early on their reported values: none, median, asha, hyperband, bound or curve, with settings as in 'median:startup=5,warmup=0,interval=1' (docs/pruning.md)")
	fs.IntVar(&c.minBatch, "min-batch", 0, "policy bbkb: keep a batch open until it holds this many arms (optimize: default --workers; 0: the paper's batch rule alone)")
	fs.BoolVar(&c.lazy, "lazy", false, "policies bkb, gp-ucb and bbkb on a fixed arm set: read only the arms that can win, the same points as the full scan for gp-ucb (docs/scaling.md)")
	fs.BoolVar(&c.eliminate, "eliminate", false, "with --lazy: drop for good the arms whose UCB is below the largest lower confidence bound")
	fs.BoolVar(&c.costAware, "cost-aware", false, "policies bkb and gp-ucb: while evaluation times vary more than 4-fold, prefer points predicted to evaluate faster, less so as the budget is spent (cost cooling, Lee et al. 2020); the asks then depend on the recorded seconds (docs/tuning.md)")
	// Withdrawn for new studies (study.ErrLazyWithdrawn): kept so that a
	// command that gives them gets the reason, not "unknown flag".
	_ = fs.MarkHidden("lazy")
	_ = fs.MarkHidden("eliminate")
	c.tradeoffFlags.register(fs)
}

// configFlagNames lists the flags that define a study (ignored on resume).
var configFlagNames = []string{"objective", "noise", "plugin", "one-shot", "timeout", "max-restarts", "space", "lower", "upper", "names",
	"arms", "n", "per-dim", "arms-file", "arms-seed", "policy", "kernel", "length-scale", "fit-length-scale", "lambda", "qbar",
	"beta", "incremental", "seed", "maximize", "minimize", "init", "no-standardize", "max-failures", "candidates", "fit", "min-batch", "config-version", "warp",
	"directions", "constraints", "pruner", "mo-acquisition", "lazy", "eliminate", "cost-aware"}

// build validates the flags and returns the study. extra is the plugin
// command given after "--", if any. external makes a study with no
// objective (create-study without --plugin).
func (c *configFlags) build(fs *pflag.FlagSet, extra []string, external bool) (*spec, error) {
	cfg := study.Config{Seed: c.seed, Budget: c.budget, Lambda: c.lambda, Qbar: c.qbar, Beta: c.beta,
		Incremental: c.incremental, MaxFailures: c.maxFailures, RawValues: c.noStd, FitEvery: c.fitEvery, Init: c.init,
		Policy: c.policy, Kernel: study.Kernel{Name: c.kernel, LengthScale: c.lengthScale}, Candidates: c.candidates, Fit: c.fit, MinBatch: c.minBatch, Version: c.version, Warp: c.warp,
		Lazy: c.lazy, Eliminate: c.eliminate, CostAware: c.costAware}
	if c.maximize && c.minimize {
		return nil, usagef("--maximize and --minimize are exclusive")
	}
	if c.version < 0 || c.version > study.LatestVersion {
		return nil, usagef("--config-version must be 1 to %d, got %d", study.LatestVersion, c.version)
	}
	cfg.Direction = study.Minimize
	if c.maximize {
		cfg.Direction = study.Maximize
	}
	switch {
	case c.budget < 0 || (!external && c.budget == 0):
		return nil, usagef("--budget must be positive, got %d", c.budget)
	case c.maxFailures < 0:
		return nil, usagef("--max-failures must be >= 0, got %d", c.maxFailures)
	case c.fitEvery < 0:
		return nil, usagef("--fit-length-scale must be >= 0, got %d", c.fitEvery)
	case c.init < 0:
		return nil, usagef("--init must be >= 0, got %d", c.init)
	case !(c.lambda > 0) || math.IsInf(c.lambda, 0):
		return nil, usagef("--lambda must be positive, got %v", c.lambda)
	case !(c.qbar > 0) || math.IsInf(c.qbar, 0):
		return nil, usagef("--qbar must be positive, got %v", c.qbar)
	case !(c.lengthScale > 0) || math.IsInf(c.lengthScale, 0):
		return nil, usagef("--length-scale must be positive, got %v", c.lengthScale)
	}

	// Objective.
	var obj objectiveSpec
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
		obj = objectiveSpec{Kind: "plugin", Command: cmdline, Dir: dir, OneShot: c.oneShot,
			Timeout: c.timeout.String(), MaxRestarts: c.maxRestarts}
		if fs.Changed("objective") {
			// -f NAME with a plugin: the plugin is evaluated on the
			// function's box (e.g. a wrapper around it, or a model tuned
			// over the same domain).
			f, err := objectives.Lookup(c.objective)
			if err != nil {
				return nil, usageError{trimPkg(err)}
			}
			fn = f
		}
	case external && !fs.Changed("objective"):
		obj = objectiveSpec{Kind: "external"}
	default:
		f, err := objectives.Lookup(c.objective)
		if err != nil {
			return nil, usageError{trimPkg(err)}
		}
		if !(c.noise >= 0) || math.IsInf(c.noise, 0) {
			return nil, usagef("--noise must be finite and >= 0, got %v", c.noise)
		}
		fn = f
		obj = objectiveSpec{Kind: "builtin", Name: f.String(), Noise: c.noise}
		if external {
			// create-study --objective NAME: the function gives the space;
			// the values come from the user.
			obj = objectiveSpec{Kind: "external", Name: f.String()}
		}
	}

	// Arms.
	cfg.Arms = study.Arms{Kind: strings.ToLower(c.arms), N: c.n, PerDim: c.perDim, Seed: c.seed}
	if !fs.Changed("n") {
		cfg.Arms.N = 0 // the library's default: 512 sobol, lhs or random points; a grid of at most 1024
	}
	if fs.Changed("arms-seed") {
		cfg.Arms.Seed = c.armsSeed
	}
	if c.armsFile != "" {
		if fs.Changed("arms") && cfg.Arms.Kind != "csv" {
			return nil, usagef("--arms-file needs --arms csv, got --arms %s", c.arms)
		}
		abs, err := filepath.Abs(c.armsFile)
		if err != nil {
			return nil, err
		}
		cfg.Arms = study.Arms{Kind: "csv", File: abs, Seed: cfg.Arms.Seed}
	}
	if !fs.Changed("arms") && cfg.Arms.Kind == study.DefaultArms {
		cfg.Arms.Kind = "" // the library's default: sobol, or lhs past its dimension
	}
	switch cfg.Arms.Kind {
	case "", "sobol", "lhs", "random":
		if fs.Changed("n") && c.n <= 0 {
			return nil, usagef("-n must be positive, got %d", c.n)
		}
		cfg.Arms.PerDim = 0
	case "grid":
		if c.perDim < 0 || (c.perDim == 0 && fs.Changed("n") && c.n <= 0) {
			return nil, usagef("--per-dim must be positive, got %d", c.perDim)
		}
	case "csv":
		if c.armsFile == "" {
			return nil, usagef("--arms csv needs --arms-file FILE")
		}
	default:
		return nil, usagef("unknown arm set %q; valid: %s", c.arms, strings.Join(study.ArmKinds(), ", "))
	}

	// Space.
	space, err := c.space(fs, fn)
	if err != nil {
		return nil, err
	}
	cfg.Space = space
	if c.fileWarp != "" {
		if fs.Changed("warp") && !strings.EqualFold(c.warp, c.fileWarp) {
			return nil, usagef("--warp %s and the space file's \"warp\": %q differ: give one", c.warp, c.fileWarp)
		}
		cfg.Warp = c.fileWarp
	}
	if err := c.tradeoffFlags.apply(fs, &cfg); err != nil {
		return nil, err
	}
	if cfg.Pruner, err = c.prunerConfig(fs); err != nil {
		return nil, err
	}
	if err := cfg.Normalize(); err != nil {
		return nil, usageError{trimPkg(err)}
	}
	return newSpec(cfg, obj)
}

// spaceFileWarp takes the optional top-level "warp" key (a study setting,
// Config.Warp, beside the parameters) out of the space file b, returning
// the file without it for study.ReadSpace. A file without the key is
// returned unchanged.
func spaceFileWarp(b []byte) ([]byte, string, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return b, "", nil // ReadSpace reports what is wrong
	}
	raw, ok := top["warp"]
	if !ok {
		return b, "", nil
	}
	var w string
	if err := json.Unmarshal(raw, &w); err != nil || w == "" {
		return nil, "", fmt.Errorf(`"warp" must be one of "auto", "none" or "log", got %s`, raw)
	}
	delete(top, "warp")
	rest, err := json.Marshal(top)
	return rest, w, err
}

// space resolves the search space from --space, --lower/--upper, the
// built-in function's domain, or the bounding box of --arms-file.
func (c *configFlags) space(fs *pflag.FlagSet, fn *objectives.Function) (study.Space, error) {
	var s study.Space
	var lower, upper []float64
	switch {
	case c.spaceFile != "":
		if fs.Changed("lower") || fs.Changed("upper") {
			return s, usagef("give the bounds either with --space or with --lower/--upper, not both")
		}
		if fs.Changed("names") {
			return s, usagef("give the parameter names either in --space or with --names, not both")
		}
		b, err := readSpaceFile(c.spaceFile)
		if err != nil {
			return s, usageError{err}
		}
		if b, c.fileWarp, err = spaceFileWarp(b); err != nil {
			return s, usagef("space file %s: %v", c.spaceFile, err)
		}
		if b, c.filePruner, err = splitPruner(b); err != nil {
			return s, usagef("space file %s: %v", c.spaceFile, err)
		}
		s, err = c.tradeoffFlags.readSpace(bytes.NewReader(b))
		if err != nil {
			return s, usagef("space file %s: %v", c.spaceFile, err)
		}
		if fn != nil && s.Dim() != fn.Dim {
			return s, usagef("%s is %d-dimensional but the space has %d parameters", fn.Name, fn.Dim, s.Dim())
		}
		return s, nil
	case fs.Changed("lower") || fs.Changed("upper"):
		if !fs.Changed("lower") || !fs.Changed("upper") {
			return s, usagef("--lower and --upper go together")
		}
		var err error
		if lower, err = parseFloats("--lower", c.lower); err != nil {
			return s, err
		}
		if upper, err = parseFloats("--upper", c.upper); err != nil {
			return s, err
		}
	case fn != nil:
		lower, upper = fn.Lower, fn.Upper
	case c.armsFile != "":
		var err error
		if lower, upper, err = csvBounds(c.armsFile); err != nil {
			return s, err
		}
	default:
		return s, usagef("no search space: give --space FILE, --lower/--upper, or --arms-file")
	}
	if err := (objectives.Box{Lower: lower, Upper: upper}).Validate(); err != nil {
		return s, usagef("bad bounds: %v", trimPkg(err))
	}
	if fn != nil && len(lower) != fn.Dim {
		return s, usagef("%s is %d-dimensional but the bounds have %d dimensions", fn.Name, fn.Dim, len(lower))
	}
	names := c.names
	if len(names) > 0 && len(names) != len(lower) {
		return s, usagef("%d parameter names for %d dimensions", len(names), len(lower))
	}
	s, err := study.Box(names, lower, upper)
	if err != nil {
		return s, usageError{trimPkg(err)}
	}
	return s, nil
}

// csvBounds returns the bounding box of a CSV of arms, widened where a
// coordinate is constant.
func csvBounds(path string) (lo, hi []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usageError{err}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, nil, usagef("arms file %s is not a regular file", path)
	}
	// Streamed: LoadCSV refuses a line of too many columns while reading it.
	arms, err := objectives.LoadCSV(bufio.NewReader(io.LimitReader(f, study.MaxArmsFile)), 0)
	if err != nil {
		return nil, nil, usagef("arms file %s: %v", path, trimPkg(err))
	}
	n, d := arms.Dims()
	lo, hi = make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			lo[j], hi[j] = math.Min(lo[j], arms.At(i, j)), math.Max(hi[j], arms.At(i, j))
		}
		if !(hi[j] > lo[j]) {
			lo[j], hi[j] = lo[j]-0.5, hi[j]+0.5
		}
	}
	return lo, hi, nil
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
