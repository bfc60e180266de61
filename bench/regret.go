package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bkb-go/bkb/internal/cputime"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// RegretVariant is one optimizer of the regret benchmark: a function that
// completes a study configuration (space, budget and seed are set).
type RegretVariant struct {
	Name   string
	Config func(c *study.Config)
}

// RegretVariants are the optimizers of the regret benchmark
// (docs/optimizer.md), by name:
//   - "bkb": the current defaults (version 13: growing candidates, ARD
//     fits, BKB, exploration decaying with the budget, noise handling, the
//     long-study engine, output warping, local steps, the rules for many
//     parameters, version 10's two rules for noisy values, a local
//     posterior late in long studies and asks that do not repeat an
//     observed configuration);
//   - "bkb-v4": version 4, the defaults before version 8;
//   - "bkb-v3": version 3 defaults (BKB's fitted noise floored at 1e-3,
//     no noise handling);
//   - "bkb-v2": version 2 defaults (constant beta 2), the previous ones;
//   - "bkb-v5": version 5 (resparsification when due, the exact
//     core for near-dependent points; docs/long-studies.md);
//   - "bkb-v6": version 6 (version 5 with output warping and local
//     quadratic steps; docs/robust.md);
//   - "bkb-v7": version 7 (version 6 with version 4's dictionary
//     rule and no warp while the fitted noise is heavy; docs/robust.md);
//   - "bkb-v8": version 8 (version 7 with the warp's
//     test made on the first evaluations; docs/robust.md);
//   - "bkb-v9": version 9 (version 8 with an initial design of at most
//     20 points and, above 20 coordinates, unpolished trust-region asks
//     in a region that shrinks sooner; docs/tuning.md);
//   - "bkb-v10": version 10 (version 9 with values that stay unwarped
//     once a warped fit reads the noise as heavy, and version 4's exact
//     core under heavy noise; docs/long-studies.md, docs/tuning.md);
//   - "bkb-v11": version 11 (version 10 with a local posterior late in
//     long studies; docs/long-studies.md);
//   - "bkb-v12": version 12 (version 11 whose asks do not repeat an
//     observed configuration; docs/tuning.md);
//   - "bkb-v13": version 13 (version 12 whose asks of a fixed arm set do
//     not repeat an evaluated arm either; docs/versions.md);
//   - "bkb-matern": "bkb" with the Matern 5/2 ARD kernel instead of RBF;
//   - "gp-ucb": the current defaults with GP-UCB (exact posterior);
//   - "ada-bkb": Ada-BKB (bandit.AdaBKB) on the encoded box;
//   - "bkb-fixed": today's (version 1) fixed-set BKB, 4,096 Sobol arms;
//   - "gp-ucb-fixed": version 1 GP-UCB on the same 4,096 arms;
//   - "random": uniform random search over the box (version 2 random).
var RegretVariants = map[string]RegretVariant{
	"bkb":          {"bkb", func(c *study.Config) {}},
	"bkb-v2":       {"bkb-v2", func(c *study.Config) { c.Version = 2 }},
	"bkb-v3":       {"bkb-v3", func(c *study.Config) { c.Version = 3 }},
	"bkb-v4":       {"bkb-v4", func(c *study.Config) { c.Version = 4 }},
	"bkb-v5":       {"bkb-v5", func(c *study.Config) { c.Version = 5 }},
	"bkb-v6":       {"bkb-v6", func(c *study.Config) { c.Version = 6 }},
	"bkb-v7":       {"bkb-v7", func(c *study.Config) { c.Version = 7 }},
	"bkb-v8":       {"bkb-v8", func(c *study.Config) { c.Version = 8 }},
	"bkb-v9":       {"bkb-v9", func(c *study.Config) { c.Version = 9 }},
	"bkb-v10":      {"bkb-v10", func(c *study.Config) { c.Version = 10 }},
	"bkb-v11":      {"bkb-v11", func(c *study.Config) { c.Version = 11 }},
	"bkb-v12":      {"bkb-v12", func(c *study.Config) { c.Version = 12 }},
	"bkb-v13":      {"bkb-v13", func(c *study.Config) { c.Version = 13 }},
	"bkb-matern":   {"bkb-matern", func(c *study.Config) { c.Kernel.Name = "matern52" }},
	"gp-ucb":       {"gp-ucb", func(c *study.Config) { c.Policy = "gp-ucb" }},
	"ada-bkb":      {"ada-bkb", func(c *study.Config) { c.Policy = "ada-bkb" }},
	"bkb-fixed":    {"bkb-fixed", func(c *study.Config) { c.Version = 1; c.Arms = study.Arms{Kind: "sobol", N: 4096} }},
	"gp-ucb-fixed": {"gp-ucb-fixed", func(c *study.Config) { c.Version = 1; c.Policy = "gp-ucb"; c.Arms = study.Arms{Kind: "sobol", N: 4096} }},
	"random":       {"random", func(c *study.Config) { c.Policy = "random" }},
}

// ParseVariant returns the variant named name, with optional
// modifiers after slashes: "bkb/beta=3/kernel=rbf/init=20/n=2048",
// "bkb/policy=bkb-thompson", "bkb/warp=auto".
func ParseVariant(name string) (RegretVariant, error) {
	parts := strings.Split(name, "/")
	v, ok := RegretVariants[parts[0]]
	if !ok {
		return v, fmt.Errorf("bench: unknown optimizer %q", parts[0])
	}
	base := v.Config
	var mods []func(c *study.Config)
	for _, m := range parts[1:] {
		k, val, _ := strings.Cut(m, "=")
		switch k {
		case "beta":
			mods = append(mods, func(c *study.Config) { c.Beta = val })
		case "kernel":
			mods = append(mods, func(c *study.Config) { c.Kernel.Name = val })
		case "policy":
			mods = append(mods, func(c *study.Config) { c.Policy = val })
		case "warp":
			mods = append(mods, func(c *study.Config) { c.Warp = val })
		case "init", "n", "fit_every":
			n, err := strconv.Atoi(val)
			if err != nil {
				return v, fmt.Errorf("bench: %s: %v", m, err)
			}
			mods = append(mods, func(c *study.Config) {
				switch k {
				case "init":
					c.Init = n
				case "n":
					c.Arms.N = n
				default:
					c.FitEvery = n
				}
			})
		case "lambda":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return v, fmt.Errorf("bench: %s: %v", m, err)
			}
			mods = append(mods, func(c *study.Config) { c.Lambda = f })
		default:
			return v, fmt.Errorf("bench: unknown modifier %q", m)
		}
	}
	return RegretVariant{Name: name, Config: func(c *study.Config) {
		base(c)
		for _, m := range mods {
			m(c)
		}
	}}, nil
}

// RegretProblem is a test function with an observation noise level.
type RegretProblem struct {
	F *objectives.Function
	// NoiseFrac is the noise standard deviation as a fraction of the
	// function's range over its box (Range).
	NoiseFrac float64
}

// Name is "hartmann6" or "hartmann6+1%".
func (p RegretProblem) Name() string {
	if p.NoiseFrac == 0 {
		return p.F.String()
	}
	return fmt.Sprintf("%s+%g%%", p.F.String(), 100*p.NoiseFrac)
}

// Range estimates max f - min f over the function's box: the largest of
// 16,384 Sobol points (seed 1) minus the known minimum.
func Range(f *objectives.Function) float64 {
	pts, err := objectives.Sobol(f.Domain(), 16384, 1)
	if err != nil {
		return 1
	}
	n, _ := pts.Dims()
	hi := math.Inf(-1)
	for i := 0; i < n; i++ {
		hi = math.Max(hi, f.Value(pts.RawRowView(i)))
	}
	return hi - f.MinValue
}

// RegretRun is one (problem, variant, seed) run.
type RegretRun struct {
	Problem, Variant string
	Seed             uint64
	// Simple[i] is the simple regret after Checkpoints[i] evaluations:
	// the smallest noise-free value f(x) over the evaluated points minus
	// the minimum; Cum[i] the cumulative regret sum f(x_t) - min.
	Checkpoints []int
	Simple, Cum []float64
	// SimpleTrace[t-1] and CumTrace[t-1] are the simple and cumulative
	// regret after t evaluations, for every t up to the last checkpoint.
	SimpleTrace, CumTrace []float64
	// Seconds: policy time per trial (total, hyperparameter fits,
	// candidate growth and scoring), averaged over the run.
	PolicyMS, FitMS, CandMS float64
	// PolicyMSEnd is the policy time per trial over the last tenth of the
	// run (the cost at t near T, where it is largest).
	PolicyMSEnd float64
	// CPUMS and CPUMSEnd are the same on the process's CPU clock (Ask and
	// Tell, the objective's evaluations included: microseconds for the
	// test functions), which other processes on a loaded machine do not
	// inflate; meaningful one run at a time (--jobs 1), 0 where the system
	// cannot tell.
	CPUMS, CPUMSEnd float64
	// Dictionary is the model's dictionary size at the end (BKB: |S|).
	Dictionary int
	Wall       time.Duration
}

// noiseStream ("noise") seeds the observation noise of the benchmarks.
const noiseStream = 0x6e6f697365

// RunRegret runs one variant on one problem for the largest checkpoint,
// noise drawn from seed, on an in-memory study.
func RunRegret(ctx context.Context, p RegretProblem, v RegretVariant, seed uint64, checkpoints []int, rng float64) (RegretRun, error) {
	return RunRegretWith(ctx, p, v, seed, checkpoints, rng, RegretOptions{})
}

// RegretOptions are RunRegretWith's options.
type RegretOptions struct {
	// OnTrial, if not nil, is called after each trial is told (a
	// progress display: a long run is minutes of trials). It runs on the
	// run's goroutine, inside the measured CPU time: keep it cheap.
	OnTrial func()
}

// RunRegretWith is RunRegret with options.
func RunRegretWith(ctx context.Context, p RegretProblem, v RegretVariant, seed uint64, checkpoints []int, rng float64, opt RegretOptions) (RegretRun, error) {
	T := slices.Max(checkpoints)
	f := p.F
	space, err := study.Box(nil, f.Lower, f.Upper)
	if err != nil {
		return RegretRun{}, err
	}
	cfg := study.Config{Space: space, Budget: T, Seed: seed}
	v.Config(&cfg)
	start := time.Now()
	s, err := study.Create(ctx, storage.NewMemory(), "regret", cfg)
	if err != nil {
		return RegretRun{}, err
	}
	noise := rand.New(rand.NewPCG(seed, noiseStream))
	sd := p.NoiseFrac * rng
	run := RegretRun{Problem: p.Name(), Variant: v.Name, Seed: seed, Checkpoints: checkpoints}
	best, cum := math.Inf(1), 0.0
	endFrom := T - max(T/10, 1)
	var atEnd float64
	cpu0, cpuOK := cputime.Process()
	var cpuEnd time.Duration
	for t := 1; t <= T; t++ {
		if t == endFrom+1 {
			atEnd = s.Costs().Policy
			cpuEnd, _ = cputime.Process()
		}
		// A run of thousands of trials stops at Ctrl-C or SIGTERM within
		// a trial: the in-memory study does not look at ctx.
		if err := ctx.Err(); err != nil {
			return run, err
		}
		tr, err := s.Ask(ctx)
		if err != nil {
			return run, err
		}
		y := f.Value(tr.X)
		best = math.Min(best, y-f.MinValue)
		cum += y - f.MinValue
		if sd > 0 {
			y += sd * noise.NormFloat64()
		}
		if err := s.Tell(ctx, tr.Number, y); err != nil {
			return run, err
		}
		if opt.OnTrial != nil {
			opt.OnTrial()
		}
		run.SimpleTrace = append(run.SimpleTrace, best)
		run.CumTrace = append(run.CumTrace, cum)
		if slices.Contains(checkpoints, t) {
			run.Simple = append(run.Simple, best)
			run.Cum = append(run.Cum, cum)
		}
	}
	c := s.Costs()
	run.PolicyMS, run.FitMS, run.CandMS = 1e3*c.Policy/float64(T), 1e3*c.Fit/float64(T), 1e3*c.Candidates/float64(T)
	run.PolicyMSEnd = 1e3 * (c.Policy - atEnd) / float64(T-endFrom)
	if cpu1, _ := cputime.Process(); cpuOK {
		run.CPUMS = float64((cpu1 - cpu0).Microseconds()) / 1e3 / float64(T)
		run.CPUMSEnd = float64((cpu1 - cpuEnd).Microseconds()) / 1e3 / float64(T-endFrom)
	}
	run.Dictionary = s.Info().Stats.DictionarySize
	run.Wall = time.Since(start)
	return run, nil
}

// Median returns the median of v (NaN for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RegretReference is the optimizer the regret table tests every other one
// against: fixed-set BKB, which the defaults must never be worse than.
const RegretReference = "bkb-fixed"

// WriteRegretMarkdown writes one row per (problem, variant, checkpoint):
// medians over seeds of simple and cumulative regret with [min, max] of the
// simple regret, the policy time per trial split into fits and
// candidates, and, where RegretReference ran on the same problem and
// seeds, the two-sided Mann-Whitney p-values of the simple and of the
// cumulative regret against it: with 10 seeds a median can move a long
// way by chance (the medians alone do not say which differences are
// real).
func WriteRegretMarkdown(w io.Writer, runs []RegretRun) error {
	// Runs of one problem with different budgets (hartmann6:500 and
	// hartmann6:1000) are different runs: the budget is part of the key,
	// and of the problem's name in the table when a problem has several.
	type key struct {
		prob, variant string
		budget, k     int
	}
	budgets := map[string]map[int]bool{}
	for _, r := range runs {
		if budgets[r.Problem] == nil {
			budgets[r.Problem] = map[int]bool{}
		}
		budgets[r.Problem][slices.Max(r.Checkpoints)] = true
	}
	var keys []key
	group := map[key][]RegretRun{}
	for _, r := range runs {
		for k := range r.Checkpoints {
			kk := key{r.Problem, r.Variant, slices.Max(r.Checkpoints), k}
			if _, ok := group[kk]; !ok {
				keys = append(keys, kk)
			}
			group[kk] = append(group[kk], r)
		}
	}
	at := func(rs []RegretRun, k int) (simple, cum []float64) {
		for _, r := range rs {
			simple = append(simple, r.Simple[k])
			cum = append(cum, r.Cum[k])
		}
		return simple, cum
	}
	if _, err := fmt.Fprintf(w, "| problem | optimizer | T | seeds | simple regret, median [min, max] | cum. regret, median | policy ms/trial (fit, candidates) | ms/trial, last tenth | p vs %s (simple, cum.) |\n", RegretReference); err != nil {
		return err
	}
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|---|---:|---|")
	for _, kk := range keys {
		rs := group[kk]
		simple, cum := at(rs, kk.k)
		var pol, fit, cand, end []float64
		for _, r := range rs {
			pol, fit, cand = append(pol, r.PolicyMS), append(fit, r.FitMS), append(cand, r.CandMS)
			end = append(end, r.PolicyMSEnd)
		}
		ptext := ""
		if ref, ok := group[key{kk.prob, RegretReference, kk.budget, kk.k}]; ok && kk.variant != RegretReference {
			rs, rc := at(ref, kk.k)
			_, ps, err1 := MannWhitney(simple, rs)
			_, pc, err2 := MannWhitney(cum, rc)
			if err1 == nil && err2 == nil {
				ptext = fmt.Sprintf("%.2g, %.2g", ps, pc)
			}
		}
		prob := kk.prob
		if len(budgets[kk.prob]) > 1 {
			prob = fmt.Sprintf("%s (budget %d)", kk.prob, kk.budget)
		}
		_, err := fmt.Fprintf(w, "| %s | %s | %d | %d | %.3g [%.2g, %.2g] | %.4g | %.1f (%.1f, %.1f) | %.1f | %s |\n", prob, kk.variant,
			rs[0].Checkpoints[kk.k], len(rs), Median(simple), slices.Min(simple), slices.Max(simple), Median(cum),
			Median(pol), Median(fit), Median(cand), Median(end), ptext)
		if err != nil {
			return err
		}
	}
	return nil
}
