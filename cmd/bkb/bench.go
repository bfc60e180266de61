package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/bench"
	"github.com/bkb-go/bkb/chart"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/study"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", "bench [flags]", stdout)
	policies := fs.StringSlice("policies", []string{"bkb", "gp-ucb", "thompson", "ei", "random"}, "policies to compare: "+strings.Join(study.PolicyNames(), ", "))
	objs := fs.StringSlice("objectives", []string{"branin", "hartmann3", "hartmann6"}, "built-in functions (see 'bkb objectives')")
	seeds := fs.Int("seeds", 5, "seeds per (objective, policy): 1..N; the seed draws the arms and the policy's randomness")
	nArms := fs.Int("arms", 1000, "uniform random arms over the function's domain")
	budget := fs.IntP("budget", "T", 300, "steps per run")
	noise := fs.Float64("noise", 0, "standard deviation of Gaussian observation noise")
	kern := fs.String("kernel", "rbf", "kernel: "+strings.Join(study.KernelNames(), ", "))
	ls := fs.Float64("length-scale", 0.2, "kernel length scale on the unit box")
	lambda := fs.Float64("lambda", 0.001, "GP noise variance on the standardized scale")
	beta := fs.String("beta", "", "UCB exploration (see bkb optimize --help); default "+study.DefaultBetaV3+" over the budget, as in optimize")
	qbar := fs.Float64("qbar", 2, "BKB oversampling parameter")
	incremental := fs.Bool("incremental", false, "BKB: incremental dictionary resampling")
	initN := fs.Int("init", 0, "initial random design size (default max(5, 2d), d the number of parameters)")
	configVersion := fs.Int("config-version", 0, fmt.Sprintf("configuration version of the runs, 1 to %d (default %d; 12 for the bandit's repeats of an evaluated arm, which version 13 leaves out on a noise-free objective)", study.LatestVersion, study.CurrentVersion))
	jobs := fs.IntP("jobs", "j", runtime.NumCPU(), "runs in parallel")
	csvPath := fs.String("csv", "", "write the table as CSV to this file")
	mdPath := fs.String("markdown", "", "write the table as Markdown to this file")
	plotPath := fs.String("plot", "", "draw mean cumulative regret curves to this PNG or SVG file")
	overwrite := fs.Bool("overwrite", false, "replace existing --csv, --markdown and --plot files (never a study journal)")
	progressMode := fs.String("progress", "auto", "progress display: auto, bar, lines or none")
	scale := fs.Bool("scale", false, "run the scaling experiment instead (time per step against t and the number of arms; docs/scaling.md)")
	scaleArms := fs.IntSlice("scale-arms", []int{1000, 10000, 100000}, "--scale: arm-set sizes")
	scaleT := fs.IntSlice("scale-t", []int{100, 500, 1000, 2000, 5000}, "--scale: steps t at which a row is reported")
	scaleVariants := fs.StringSlice("scale-variants", bench.Variants, "--scale: variants: "+strings.Join(bench.Variants, ", "))
	scaleBudget := fs.Duration("scale-budget", time.Minute, "--scale: time budget of one run; it stops at the first checkpoint past it")
	regret := fs.Bool("regret", false, "run the regret benchmark instead: simple and cumulative regret on continuous test functions, noise-free and noisy, against random search and the fixed-set policies (docs/optimizer.md); --markdown, --csv and --plot write its outputs")
	regretProblems := fs.StringSlice("regret-problems", []string{"branin:60", "hartmann3:200", "hartmann6:200/500"}, "--regret: problems as name[:dim]:T[/T...] (checkpoints)")
	regretOpt := fs.StringSlice("regret-optimizers", []string{"bkb", "bkb-fixed", "gp-ucb-fixed", "random"}, "--regret: optimizers (bench.RegretVariants, with /beta=, /kernel=, /init=, /n=, /lambda= modifiers)")
	regretSuite := fs.String("regret-suite", "", "--regret: run a half of the held-out suite, tune or heldout (its problems unless --regret-problems is given), and print the suite's summary against the peers (docs/robust.md)")
	regretPeers := fs.String("regret-peers", "", "--regret: JSON lines of peer runs (bench/peers/optuna_suite.py) to compare in the suite's summary")
	regretFrom := fs.StringSlice("regret-from", nil, "--regret: instead of running, read the runs of earlier --csv files and write their tables (with --regret-peers and --regret-suite, the suite's summary)")
	regretAgainst := fs.StringSlice("regret-against", nil, "--regret: print the summary comparing --regret-ours with these optimizers (with --regret-suite or --regret-peers the default is the peers, optuna-...)")
	regretOurs := fs.String("regret-ours", "bkb", "--regret-suite: the optimizer the summary compares with the peers")
	regretNoise := fs.Float64Slice("regret-noise", []float64{0}, "--regret and --long: noise standard deviations as fractions of the function's range over its box")
	firstSeed := fs.Int("first-seed", 1, "--regret and --long: the first seed; runs use seeds first-seed..first-seed+seeds-1 (fresh seeds to check a difference found on others)")
	long := fs.Bool("long", false, "run the long-study benchmark instead: the policy's CPU time per trial over the last tenth of runs of growing budgets, with simple regret and dictionary size (docs/scaling.md); use --jobs 1 or GOMAXPROCS=1 for the figures of the docs")
	longProblems := fs.StringSlice("long-problems", []string{"hartmann6", "ackley:10"}, "--long: problems as name[:dim]")
	longBudgets := fs.IntSlice("long-budgets", []int{500, 2000, 5000, 10000}, "--long: budgets T, one run per problem, budget and seed")
	longOpt := fs.String("long-optimizer", "bkb", "--long: the optimizer (as in --regret-optimizers)")
	var pf pruneFlags
	pf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkBenchFlags(fs); err != nil {
		return err
	}
	switch *progressMode {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("--progress must be auto, bar, lines or none, got %q", *progressMode)
	}
	for flag, path := range map[string]string{"--csv": *csvPath, "--markdown": *mdPath, "--plot": *plotPath} {
		if err := checkOutput(flag, path, *overwrite, ""); err != nil {
			return err
		}
	}
	if pf.on {
		n := *seeds
		if !fs.Changed("seeds") {
			n = 10
		}
		return runPruneBench(ctx, pf, n, *mdPath, stdout, stderr)
	}
	if *long || *regret {
		switch {
		case *firstSeed < 1:
			return usagef("--first-seed must be at least 1, got %d", *firstSeed)
		case *seeds <= 0:
			return usagef("--seeds must be positive, got %d", *seeds)
		}
		for _, nf := range *regretNoise {
			if !(nf >= 0) || math.IsInf(nf, 0) {
				return usagef("--regret-noise: each noise level must be finite and >= 0, got %v", nf)
			}
		}
	}
	if *long {
		j := *jobs
		if !fs.Changed("jobs") {
			j = 1
		}
		for _, t := range *longBudgets {
			if t <= 0 {
				return usagef("--long-budgets: each budget must be positive, got %d", t)
			}
		}
		var specs []string
		for _, p := range *longProblems {
			for _, t := range *longBudgets {
				specs = append(specs, fmt.Sprintf("%s:%d", p, t))
			}
		}
		// --regret-noise gives the long runs' noise too (noise-free by
		// default): the dictionary's growth differs with noise.
		return runRegret(ctx, specs, []string{*longOpt}, *regretNoise, *firstSeed, *seeds, j, regretOutputs{markdown: *mdPath, csv: *csvPath, progress: *progressMode}, true, stdout, stderr)
	}
	if *regret {
		j := *jobs
		if !fs.Changed("jobs") {
			j = 1 // policy times are only comparable one run at a time
		}
		if *plotPath != "" {
			if err := checkPlotExt(*plotPath); err != nil {
				return err
			}
		}
		problems := *regretProblems
		if *regretSuite != "" && !fs.Changed("regret-problems") {
			var err error
			if problems, err = bench.RobustSuite(*regretSuite); err != nil {
				return usageError{trimPkg(err)}
			}
		}
		out := regretOutputs{markdown: *mdPath, csv: *csvPath, plot: *plotPath, peers: *regretPeers, ours: *regretOurs, against: *regretAgainst, suite: *regretSuite != "" || *regretPeers != "" || len(*regretAgainst) > 0, from: *regretFrom, progress: *progressMode}
		return runRegret(ctx, problems, *regretOpt, *regretNoise, *firstSeed, *seeds, j, out, false, stdout, stderr)
	}
	if *scale {
		ls := *ls
		if !fs.Changed("length-scale") {
			ls = 0.2
		}
		return runScale(ctx, bench.ScaleConfig{Arms: *scaleArms, Checkpoints: *scaleT, Variants: *scaleVariants,
			LengthScale: ls, Seed: 1, Budget: *scaleBudget}, *mdPath, *progressMode, stdout, stderr)
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case *seeds <= 0:
		return usagef("--seeds must be positive, got %d", *seeds)
	case *nArms <= 0:
		return usagef("--arms must be positive, got %d", *nArms)
	case *budget <= 0:
		return usagef("--budget must be positive, got %d", *budget)
	case *jobs <= 0:
		return usagef("--jobs must be positive, got %d", *jobs)
	case len(*policies) == 0 || len(*objs) == 0:
		return usagef("--policies and --objectives must not be empty")
	case !(*noise >= 0) || math.IsInf(*noise, 0):
		return usagef("--noise must be finite and >= 0")
	}
	if *plotPath != "" {
		if err := checkPlotExt(*plotPath); err != nil {
			return err
		}
	}
	for i, p := range *policies {
		(*policies)[i] = strings.ToLower(strings.TrimSpace(p))
		if !contains(study.PolicyNames(), (*policies)[i]) {
			return usagef("unknown policy %q; valid: %s", p, strings.Join(study.PolicyNames(), ", "))
		}
	}
	// Validate everything before starting: one config per objective and
	// policy.
	base := map[string]*spec{}
	for _, name := range *objs {
		f, err := objectives.Lookup(name)
		if err != nil {
			return usageError{trimPkg(err)}
		}
		space, err := study.Box(nil, f.Lower, f.Upper)
		if err != nil {
			return usageError{trimPkg(err)}
		}
		for _, p := range *policies {
			cfg := study.Config{Space: space, Arms: study.Arms{Kind: "random", N: *nArms}, Candidates: study.CandidatesFixed,
				Kernel: study.Kernel{Name: *kern, LengthScale: *ls}, Lambda: *lambda, Qbar: *qbar, Beta: *beta,
				Incremental: *incremental, Budget: *budget, Init: *initN, Policy: p, Seed: 1, Version: *configVersion}
			if err := cfg.Normalize(); err != nil {
				return usageError{trimPkg(err)}
			}
			sp, err := newSpec(cfg, objectiveSpec{Kind: "builtin", Name: f.String(), Noise: *noise})
			if err != nil {
				return err
			}
			base[name+"/"+p] = sp
		}
	}

	var runs []*bench.GridRun
	for _, o := range *objs {
		for _, p := range *policies {
			for s := 1; s <= *seeds; s++ {
				runs = append(runs, &bench.GridRun{Objective: o, Policy: p, Seed: uint64(s)})
			}
		}
	}
	fmt.Fprintf(stderr, "bkb: bench %d runs: policies %s x objectives %s x %d seeds, %d arms, T=%d, %d jobs\n",
		len(runs), strings.Join(*policies, ","), strings.Join(*objs, ","), *seeds, *nArms, *budget, *jobs)
	start := time.Now()
	prog := newProgress(stderr, *progressMode, len(runs))
	prog.noun = "runs"
	var mu sync.Mutex
	done := 0
	work := make(chan *bench.GridRun)
	var wg sync.WaitGroup
	for w := 0; w < min(*jobs, len(runs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				sp := *base[r.Objective+"/"+r.Policy]
				sp.cfg.Seed, sp.cfg.Arms.Seed = r.Seed, r.Seed
				if f, err := objectives.Lookup(sp.obj.Name); err != nil {
					r.Err = err
				} else {
					r.Err = r.Play(ctx, sp.cfg, f, sp.obj.Noise)
				}
				mu.Lock()
				done++
				prog.update(done, 0, math.NaN(), 0)
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			break
		}
		work <- r
	}
	close(work)
	wg.Wait()
	prog.clear()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: bench stopped after %d of %d runs", errInterrupted, done, len(runs))
	}
	for _, r := range runs {
		if r.Err != nil {
			return fmt.Errorf("%s/%s seed %d: %v", r.Objective, r.Policy, r.Seed, r.Err)
		}
	}

	cells := bench.Aggregate(runs, *objs, *policies)
	header := []string{"objective", "policy", "cum regret (mean ± std)", "simple regret at T", "ms/step", "dict size"}
	rows := make([][]string, len(cells))
	for i, c := range cells {
		dict := "-"
		switch {
		case c.ExactDict:
			dict = fmt.Sprintf("%d (exact)", *budget)
		case !c.NoDict:
			dict = fmt.Sprintf("%.1f", c.DictMean)
		}
		rows[i] = []string{c.Objective, c.Policy, pm(c.CumMean, c.CumStd), pm(c.SimpleMean, c.SimpleStd),
			strconv.FormatFloat(c.MSMean, 'f', 3, 64), dict}
	}
	fmt.Fprintf(stdout, "Regret over T=%d steps, %d uniform random arms, %d seeds (regret in the function's units; lower is better):\n", *budget, *nArms, *seeds)
	t := newTable(stdout, header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d runs in %s\n", len(runs), fmtDuration(time.Since(start).Seconds()))
	if *csvPath != "" {
		b, err := bench.GridCSV(cells, *budget, *nArms)
		if err == nil {
			err = writeFileAtomic(*csvPath, b)
		}
		if err != nil {
			return fmt.Errorf("csv: %v", err)
		}
		fmt.Fprintf(stdout, "csv: %s\n", *csvPath)
	}
	if *mdPath != "" {
		if err := writeBenchMarkdown(*mdPath, header, rows, *budget, *nArms, *seeds); err != nil {
			return fmt.Errorf("markdown: %v", err)
		}
		fmt.Fprintf(stdout, "markdown: %s\n", *mdPath)
	}
	if *plotPath != "" {
		if err := plotBench(*plotPath, cells, *objs, *policies, *budget); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "plot: %s\n", *plotPath)
	}
	return nil
}

func pm(m, s float64) string {
	return fmt.Sprintf("%s ± %s", strconv.FormatFloat(m, 'g', 4, 64), strconv.FormatFloat(s, 'g', 3, 64))
}

func writeBenchMarkdown(path string, header []string, rows [][]string, budget, arms, seeds int) error {
	f := &bytes.Buffer{}
	fmt.Fprintf(f, "Regret over T=%d steps, %d uniform random arms, %d seeds (mean ± std over seeds; regret in the function's units).\n\n", budget, arms, seeds)
	t := newMarkdownTable(f, header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	return writeFileAtomic(path, f.Bytes())
}

// plotBench draws, for every objective, the cumulative regret (top row)
// and the simple regret (bottom row) of each policy against the step: the
// mean over seeds with a band of ± one standard deviation.
func plotBench(path string, cells []*bench.GridCell, objs, policies []string, budget int) error {
	var cumPanels, simplePanels []*plot.Plot
	for _, o := range objs {
		var cum, simple []chart.Series
		for _, pol := range policies {
			for _, c := range cells {
				if c.Objective == o && c.Policy == pol {
					cum = append(cum, chart.Series{Name: pol, Mean: c.Curve, Std: c.CurveStd})
					simple = append(simple, chart.Series{Name: pol, Mean: c.SimpleCurve, Std: c.SimpleSD})
				}
			}
		}
		p, err := chart.RegretPanel(o+": cumulative regret", "step t", cum, true)
		if err != nil {
			return err
		}
		cumPanels = append(cumPanels, p)
		if p, err = chart.RegretPanel(o+": simple regret", "step t", simple, false); err != nil {
			return err
		}
		simplePanels = append(simplePanels, p)
	}
	return savePanels(path, append(cumPanels, simplePanels...), len(objs), 4.5*vg.Inch, 3.4*vg.Inch)
}

// runScale runs bench.Scale and prints its table (and Markdown to mdPath).
func runScale(ctx context.Context, cfg bench.ScaleConfig, mdPath, progressMode string, stdout, stderr io.Writer) error {
	for _, v := range cfg.Variants {
		if _, ok := bench.VariantDoc[v]; !ok {
			return usagef("unknown scaling variant %q; valid: %s", v, strings.Join(bench.Variants, ", "))
		}
	}
	for _, a := range cfg.Arms {
		if a <= 0 {
			return usagef("--scale-arms must be positive, got %d", a)
		}
	}
	for _, t := range cfg.Checkpoints {
		if t <= 0 {
			return usagef("--scale-t must be positive, got %d", t)
		}
	}
	if progressMode != "none" {
		// Overall progress and a time estimate on every finished
		// checkpoint: a scaling run is long and otherwise silent.
		total := len(cfg.Variants) * len(cfg.Arms) * len(cfg.Checkpoints)
		start, done := time.Now(), 0
		cfg.Progress = func(line string) {
			done++
			elapsed := time.Since(start)
			left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
			fmt.Fprintf(stderr, "bkb: [%d/%d checkpoints, %s elapsed, about %s left] %s\n", done, total,
				elapsed.Round(time.Second), left.Round(time.Second), line)
		}
	}
	fmt.Fprintf(stderr, "bkb: scaling experiment: Hartmann 6 on %v random arms, variants %s, checkpoints %v, %v per run\n",
		cfg.Arms, strings.Join(cfg.Variants, ","), cfg.Checkpoints, cfg.Budget)
	rows, bw, err := bench.Scale(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d cores, measured read bandwidth %.1f GB/s; ratio = ms/step over one read of the A x m (A x t) matrix\n", runtime.NumCPU(), bw/1e9)
	t := newTable(stdout, []string{"variant", "A", "t", "ms/step", "m", "changes", "cum regret", "peak MB", "ratio"})
	for _, r := range rows {
		t.Append([]string{r.Variant, strconv.Itoa(r.Arms), strconv.Itoa(r.T), strconv.FormatFloat(1e3*r.SecondsPerStep, 'f', 3, 64),
			strconv.Itoa(r.DictionarySize), strconv.Itoa(r.Changes), strconv.FormatFloat(r.CumRegret, 'f', 1, 64),
			strconv.FormatFloat(float64(r.PeakHeapBytes)/1e6, 'f', 0, 64), strconv.FormatFloat(r.SecondsPerStep/r.PassSeconds, 'f', 2, 64)})
	}
	if err := t.Render(); err != nil {
		return err
	}
	if mdPath == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := bench.WriteScaleMarkdown(&buf, rows, bw); err != nil {
		return err
	}
	return writeFileAtomic(mdPath, buf.Bytes())
}

// benchModes are bench's benchmarks other than the default grid, by the
// flag that selects each, with the flags each reads besides --overwrite
// and --progress (a display setting every benchmark takes, whether it
// draws a bar or not); benchGridFlags are the default grid's.
var (
	benchModes = map[string][]string{
		"pruning": {"pruning-tasks", "pruning-trials", "pruning-methods", "pruning-optuna", "pruning-optuna-methods", "seeds", "markdown"},
		"long":    {"long-problems", "long-budgets", "long-optimizer", "regret-noise", "first-seed", "seeds", "jobs", "markdown", "csv"},
		"regret": {"regret-problems", "regret-optimizers", "regret-suite", "regret-peers", "regret-from", "regret-against", "regret-ours",
			"regret-noise", "first-seed", "seeds", "jobs", "markdown", "csv", "plot"},
		"scale": {"scale-arms", "scale-t", "scale-variants", "scale-budget", "length-scale", "markdown"},
	}
	benchGridFlags = []string{"policies", "objectives", "seeds", "arms", "budget", "noise", "kernel", "length-scale", "lambda", "beta",
		"qbar", "incremental", "init", "config-version", "jobs", "csv", "markdown", "plot"}
)

// checkBenchFlags refuses two benchmarks at once and a flag the chosen
// benchmark does not read (such as --first-seed with the default grid, or
// --plot with --long), which would otherwise be ignored without a word.
func checkBenchFlags(fs *pflag.FlagSet) error {
	mode, reads := "", benchGridFlags
	for _, m := range slices.Sorted(maps.Keys(benchModes)) {
		if on, _ := fs.GetBool(m); !on {
			continue
		}
		if mode != "" {
			return usagef("--%s and --%s are two benchmarks: give one", mode, m)
		}
		mode, reads = m, benchModes[m]
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil || f.Name == "overwrite" || f.Name == "progress" || f.Name == mode || slices.Contains(reads, f.Name) {
			return
		}
		if _, isMode := benchModes[f.Name]; isMode {
			return // --long=false and the like
		}
		what := "the default benchmark (no --long, --regret, --scale or --pruning)"
		if mode != "" {
			what = "--" + mode
		}
		err = usagef("--%s is not read by %s", f.Name, what)
	})
	return err
}
