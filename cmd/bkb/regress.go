package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/online"
)

const regressUsage = `Usage: bkb regress [flags]

Runs online kernel learners over a data stream in one prequential pass
(predict x_t, then learn y_t), optionally over several random orders, and
prints the online MSE (regression) or mistake rate in percent
(classification), the dictionary or feature count and the time per pass,
next to the paper's figure where the papers report one.

Streams: a CSV dataset (--data: a file, or the name of one of the papers'
datasets, read from ../shared/data; elevators and german are built in);
synthetic:friedman:d=D and synthetic:gp:d=D (Friedman's function #1 and a
GP-prior sample in D dimensions), synthetic:relevant:d=D:k=K (a GP-prior
sample on K of D inputs); synthetic:<objective> (x uniform over a
built-in objective's box, y = f(x) + noise); sim000 (Jézéquel et al.'s (NeurIPS 2019) greedy
adversary, n = 80, d = 5, with the regret against the best kernel
predictor); and blocks003[:b=500][:r=10] (Wen et al.'s (IJCAI 2024) block streams on
--data).

Defaults. A named paper dataset (elevators, parkinsons, protein, german,
spambase) gets its paper's width, preprocessing and learners. Anything else
(a file path, a synthetic stream) gets defaults chosen from the data: the
kernel width is selected online for regression (--width-mix: a mix of
experts at 1/4, 1/2, 1 and 2 times the median distance between inputs,
features scaled to [-1, 1], weighted by their past losses) and is the
median distance for classification; targets are scaled to [0, 1]
robustly (targets beyond 10 IQR of the quartiles are clipped, and
reported); the task is binary classification when the targets take two
integer values (0/1, -1/+1; --task overrides); regression learners predict
the running mean plus their kernel part; every learner's dictionary is
capped at --dict-budget. On regression data with 5 or more inputs the mix also
has experts on inputs rescaled by per-input length scales (--ard): an ARD
Gaussian process fitted by marginal likelihood (Rasmussen and Williams
2006) on the rows seen so far, at 50, 100, 200, ..., 1600 rows, so that a
learner finds the few inputs that matter among many; the learned relevance
of each input is printed after the table. The chosen width, scaling and
budget are printed on stderr, with warnings for a constant target or a
very short stream.

Learners (--learners, comma-separated, or "all"): mean (the running mean,
the baseline), krr, kawv, pkawv-taylor, pkrr-taylor, pkawv-nystrom,
pkrr-nystrom, aogd-ald, nons-ald, pros-n-kons, con-kons, forks, dsg, fogd,
nogd, each optionally with parameters "name:key=value:...", e.g.
pkawv-taylor:m=3, fogd:d=1000:eta=0.01, nons-ald:mu=5, forks:rank=20,
con-kons:alpha=1:gamma=5, krr:width=2:lambda=0.1.

On Ctrl-C the learners that finished every order are printed (and written
with --csv) and bkb exits with 130.

Examples:
  bkb regress --data elevators --orders 10
  bkb regress --data german --learners fogd,nogd,forks --orders 20
  bkb regress --data mydata.csv --width-mix
  bkb regress --stream synthetic:friedman:d=16 --n 16000 --dict-budget 200
  bkb regress --stream sim000 --learners all

Flags:
`

// regressOptions are the flags of bkb regress.
type regressOptions struct {
	data, dataDir, stream, learners, format, profile, targets, progress string
	task, csvPath                                                       string
	overwrite                                                           bool
	orders, n, budget                                                   int
	seed                                                                uint64
	width, noise                                                        float64
	raw, center                                                         bool
	mix, ard                                                            string
}

func regressFlagSet(o *regressOptions, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("regress", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, regressUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.data, "data", "elevators", "dataset name (resolved as <data-dir>/<name>.csv.gz) or CSV path (gzip or plain, no header, target last); german for blocks003")
	fs.StringVar(&o.dataDir, "data-dir", "", "directory of the named datasets (default: ../shared/data, then the copies of elevators and german built into bkb)")
	fs.StringVar(&o.stream, "stream", "", "stream: empty (the dataset), synthetic:<objective>, synthetic:friedman:d=D, synthetic:gp:d=D, synthetic:relevant:d=D:k=K, sim000 or blocks003[:b=500][:r=10]")
	fs.StringVar(&o.learners, "learners", "", `comma-separated learner specs, or "all" (default: the paper's table for the dataset)`)
	fs.IntVar(&o.orders, "orders", 1, "number of random orders (seeds seed, seed+1, ...); the tables report mean and std")
	fs.Uint64Var(&o.seed, "seed", 1, "base seed of the orders, the learners' randomness and synthetic streams")
	fs.IntVar(&o.n, "n", 0, "use only the first n examples of each order (synthetic: number of points, default 2000; sim000: rounds, default 80)")
	fs.Float64Var(&o.width, "kernel-width", 0, "Gaussian kernel width sigma, exp(-|x-y|^2/(2 sigma^2)) (default: the paper's value for a named paper dataset, else the median distance between inputs)")
	fs.StringVar(&o.profile, "profile", "", "paper defaults to use: 000 (targets to [-1, 1]), 002 (targets to [0, 1]), 003 or 003-blocks (default: the paper's for a named paper dataset, else 002 for regression, 003 for classification)")
	fs.StringVar(&o.task, "task", "auto", "auto (two distinct target values: binary classification, else regression), regression or classification")
	fs.IntVar(&o.budget, "dict-budget", 0, "dictionary budget J: 0 caps the growing ALD/KORS dictionaries at 800; J > 0 caps every learner's atoms, support vectors or frequencies at J; -1: no cap")
	// --budget is the number of trials in optimize: the old name of
	// --dict-budget is still accepted, but not listed.
	fs.IntVar(&o.budget, "budget", 0, "")
	_ = fs.MarkHidden("budget")
	fs.StringVar(&o.csvPath, "csv", "", "also write the table as CSV to this file (written on interrupt too, with the learners that finished)")
	fs.BoolVar(&o.overwrite, "overwrite", false, "replace an existing --csv file (never a study journal)")
	fs.Float64Var(&o.noise, "noise", 0.1, "noise standard deviation of synthetic streams")
	fs.BoolVar(&o.raw, "raw-features", false, "do not rescale features to [-1, 1]")
	fs.StringVar(&o.mix, "width-mix", "auto", "select the kernel width online: every learner becomes an exponentially weighted mix of experts at width w/4, w/2, w, 2w (w: --kernel-width or the median distance); krr, kawv, pkawv-*, pkrr-* also mix lambda in {0.01, 0.1}; experts far behind the leader are dropped during the pass. auto: on for regression data without a paper's settings or --kernel-width; on (or plain --width-mix); off")
	fs.Lookup("width-mix").NoOptDefVal = "on"
	fs.StringVar(&o.ard, "ard", "auto", "per-input relevance: every regression learner's mix also gets experts on inputs rescaled by ARD length scales fitted by marginal likelihood on past rows (at rows 50, 100, 200, ..., 1600), and the learned relevances are printed. auto: on for regression data with 5 or more inputs and no paper's settings; on; off (--ard off): isotropic kernels only")
	fs.BoolVar(&o.center, "center", true, "outside the papers' datasets, regression learners predict the running mean of past targets plus their kernel part")
	fs.StringVar(&o.targets, "target-transform", "auto", "auto (exp for the named elevators dataset, whose stored targets are log Goal), exp or none")
	fs.StringVar(&o.format, "format", "table", "output format: table, csv or markdown")
	fs.StringVar(&o.progress, "progress", "auto", "progress lines on stderr: auto (runs longer than 2 s), lines or none")
	return fs
}

// runRegress implements "bkb regress".
func runRegress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o regressOptions
	fs := regressFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bkb: regress: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if err := checkOutput("--csv", o.csvPath, o.overwrite, ""); err != nil {
		fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
		return exitUsage
	}
	if strings.HasPrefix(o.stream, "blocks003") && !fs.Changed("data") {
		o.data = "german" // Wen et al.'s (IJCAI 2024) block streams are built from german
	}
	exp, err := o.experiment()
	if err != nil {
		fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
		return exitUsage
	}
	var prog *regressProgress
	if o.progress != "none" {
		prog = &regressProgress{w: stderr, always: o.progress == "lines", start: time.Now()}
	}
	var cb func(string, int, int, int)
	if prog != nil {
		cb = prog.update
	}
	rows, err := exp.Run(ctx, cb)
	for _, n := range exp.Notes {
		fmt.Fprintf(stderr, "regress: %s\n", n)
	}
	for _, w := range exp.Warnings {
		fmt.Fprintf(stderr, "bkb: regress: warning: %s\n", w)
	}
	code := exitOK
	if err != nil {
		var de *online.DataError
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(stderr, "bkb: regress: interrupted; %d learner(s) finished every order and are shown\n", len(rows))
			code = exitInterrupt
		case errors.As(err, &de):
			fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
			return exitUsage
		default:
			fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
			code = exitFailure
		}
		if len(rows) == 0 {
			return code
		}
	}
	if err := writeRegress(stdout, o.format, exp, rows); err != nil {
		fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
		return exitFailure
	}
	if exp.Relevance != nil {
		w := stdout
		if o.format == "csv" {
			w = stderr // stdout is one CSV table
		}
		writeRelevance(w, exp)
	}
	if o.csvPath != "" {
		if err := writeRegressCSVFile(o.csvPath, exp, rows); err != nil {
			fmt.Fprintf(stderr, "bkb: regress: %v\n", err)
			return exitFailure
		}
	}
	return code
}

// writeRegressCSVFile writes the rows as CSV to path.
func writeRegressCSVFile(path string, exp *online.Experiment, rows []online.Row) error {
	var b bytes.Buffer
	if err := writeRegress(&b, "csv", exp, rows); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}

func (o *regressOptions) experiment() (*online.Experiment, error) {
	switch o.format {
	case "table", "csv", "markdown", "md":
	default:
		return nil, fmt.Errorf("--format must be table, csv or markdown, got %q", o.format)
	}
	switch o.mix {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("--width-mix must be auto, on or off, got %q", o.mix)
	}
	switch o.ard {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("--ard must be auto, on or off, got %q", o.ard)
	}
	switch o.progress {
	case "auto", "lines", "none":
	default:
		return nil, fmt.Errorf("--progress must be auto, lines or none, got %q", o.progress)
	}
	switch o.targets {
	case "auto", "exp", "none":
	default:
		return nil, fmt.Errorf("--target-transform must be auto, exp or none, got %q", o.targets)
	}
	if o.orders < 1 {
		return nil, fmt.Errorf("--orders must be >= 1, got %d", o.orders)
	}
	if o.n < 0 {
		return nil, fmt.Errorf("--n must be >= 0, got %d", o.n)
	}
	if o.width < 0 || math.IsNaN(o.width) || math.IsInf(o.width, 0) {
		return nil, fmt.Errorf("--kernel-width must be positive, got %v", o.width)
	}
	if !(o.noise >= 0) || math.IsInf(o.noise, 0) {
		return nil, fmt.Errorf("--noise must be finite and >= 0, got %v", o.noise)
	}
	switch o.task {
	case "auto", "regression", "classification":
	default:
		return nil, fmt.Errorf("--task must be auto, regression or classification, got %q", o.task)
	}
	if o.budget < -1 {
		return nil, fmt.Errorf("--dict-budget must be -1 (none), 0 (default) or a positive J, got %d", o.budget)
	}
	switch online.Profile(o.profile) {
	case "", online.Profile000, online.Profile002, online.Profile003, online.Profile003Blocks:
	default:
		return nil, fmt.Errorf("--profile must be 000, 002, 003 or 003-blocks, got %q", o.profile)
	}
	s := o.stream
	var learners []string
	switch strings.TrimSpace(o.learners) {
	case "":
	case "all":
		learners = append(learners, online.LearnerNames...)
	default:
		for _, l := range strings.Split(o.learners, ",") {
			if l = strings.TrimSpace(l); l != "" {
				learners = append(learners, l)
			}
		}
	}
	exp := &online.Experiment{
		Data: o.data, DataDir: o.dataDir, Stream: s, Learners: learners, Orders: o.orders,
		Seed: o.seed, N: o.n, Width: o.width, Profile: online.Profile(o.profile), Noise: o.noise,
		RawFeatures: o.raw, TargetTransform: o.targets, Task: o.task, Budget: o.budget, NoCenter: !o.center, WidthMix: o.mix == "on", NoWidthMix: o.mix == "off",
		ARD: o.ard,
	}
	// Check the stream, objective and every learner spec before a long run
	// starts: these are usage errors (exit 2).
	if err := exp.Validate(); err != nil {
		return nil, err
	}
	if s == "sim000" || strings.HasPrefix(s, "synthetic:") {
		return exp, nil
	}
	if _, err := online.ResolveData(exp.Data, o.dataDir); err != nil {
		return nil, err
	}
	return exp, nil
}

// regressProgress prints one line per learner and order on stderr, at most
// every 2 seconds, once the run has lasted 2 seconds (or always).
type regressProgress struct {
	mu      sync.Mutex
	w       io.Writer
	always  bool
	start   time.Time
	last    time.Time
	printed bool
}

func (p *regressProgress) update(learner string, order, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.always && now.Sub(p.start) < 2*time.Second {
		return
	}
	if done < total && now.Sub(p.last) < 2*time.Second {
		return
	}
	p.last = now
	p.printed = true
	fmt.Fprintf(p.w, "regress: %s order %d: %d/%d (%.0f%%), %s elapsed\n",
		learner, order, done, total, 100*float64(done)/float64(max(total, 1)), now.Sub(p.start).Round(time.Second))
}

func fmtScore(task online.Task, v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	if task == online.Classification {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 5, 64)
}

func fmtOpt(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// writeRegress prints the rows as a table (like Li and Liao's (ICML 2023) Table 3), CSV or
// Markdown.
func writeRegress(w io.Writer, format string, exp *online.Experiment, rows []online.Row) error {
	task := online.Regression
	hasRegret, hasPaper, hasNote := false, false, false
	for _, r := range rows {
		if r.N > 0 {
			task = r.Task
		}
		hasRegret = hasRegret || !math.IsNaN(r.Regret)
		hasPaper = hasPaper || r.Paper != nil
		hasNote = hasNote || r.Note != ""
	}
	metric := "MSE"
	if task == online.Classification {
		metric = "mistakes %"
	}
	header := []string{"learner", metric, "std", "J/D", "s/pass", "cpu s/pass"}
	if hasRegret {
		header = append(header, "regret", "AWV bound")
	}
	if hasPaper {
		header = append(header, "paper "+metric, "paper std", "paper J/D", "paper s")
	}
	if hasNote {
		header = append(header, "note")
	}
	var body [][]string
	for _, r := range rows {
		row := []string{r.Learner, fmtScore(task, r.Score), fmtScore(task, r.Std),
			fmtOpt(r.Size, 0), fmtOpt(r.Seconds, 3), fmtOpt(r.CPUSeconds, 3)}
		if hasRegret {
			row = append(row, fmtOpt(r.Regret, 2), fmtOpt(r.Bound, 2))
		}
		if hasPaper {
			if p := r.Paper; p != nil {
				size := "-"
				if p.Size > 0 {
					size = fmtOpt(p.Size, 0)
				}
				row = append(row, fmtScore(task, p.Score), fmtScore(task, p.Std), size, fmtOpt(p.Seconds, 3))
			} else {
				row = append(row, "-", "-", "-", "-")
			}
		}
		if hasNote {
			row = append(row, r.Note)
		}
		body = append(body, row)
	}
	n, orders := 0, 0
	if len(rows) > 0 {
		n, orders = rows[0].N, rows[0].Orders
	}
	title := fmt.Sprintf("%s: n = %d, %d order(s), seed %d", exp.Key(), n, orders, exp.Seed)
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(append([]string{"stream", "n", "orders"}, header...)); err != nil {
			return err
		}
		for _, row := range body {
			if err := cw.Write(append([]string{exp.Key(), strconv.Itoa(n), strconv.Itoa(orders)}, row...)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "md":
		fmt.Fprintf(w, "%s\n\n", title)
		t := tablewriter.NewTable(w,
			tablewriter.WithRenderer(renderer.NewMarkdown()),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAlignment(tw.AlignRight),
		)
		t.Header(header)
		if err := t.Bulk(body); err != nil {
			return err
		}
		return t.Render()
	}
	fmt.Fprintln(w, title)
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
	t.Header(header)
	if err := t.Bulk(body); err != nil {
		return err
	}
	return t.Render()
}

// writeRelevance prints the relevance fit of the first order: the inputs
// the fit finds relevant, most relevant first, with their length scales,
// then the names of the others.
func writeRelevance(w io.Writer, exp *online.Experiment) {
	f := exp.Relevance
	rel := f.Relevance()
	keep := f.Relevant()
	slices.SortStableFunc(keep, func(a, b int) int { return cmp.Compare(rel[b], rel[a]) })
	fmt.Fprintf(w, "\nInput relevance, 1/length scale of the ARD fit by marginal likelihood on rows 1-%d of order 1 (%d of them; inputs as the learners see them, scaled to [-1, 1] unless --raw-features):\n", f.Rows, f.Points)
	width := 0
	for _, j := range keep {
		width = max(width, len(exp.InputNames[j]))
	}
	for _, j := range keep {
		fmt.Fprintf(w, "  %-*s  relevance %8.4g  length scale %8.4g\n", width, exp.InputNames[j], rel[j], f.LengthScales[j])
	}
	var dropped []string
	for j, r := range rel {
		if r == 0 {
			dropped = append(dropped, exp.InputNames[j])
		}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(w, "  nearly irrelevant (length scale over 3 times the input's range): %s\n", strings.Join(dropped, ", "))
	}
}
