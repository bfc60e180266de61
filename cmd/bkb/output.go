package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/study"
)

// outputFlags are the output options of optimize and status.
type outputFlags struct {
	json      bool
	trace     string
	plot      string
	top       int
	progress  string
	quiet     bool
	overwrite bool
	// summaryOnly: quiet silences the summary on stdout (status), not
	// only progress and warnings on stderr (optimize).
	summaryOnly bool
	plotLog     bool
}

func (o *outputFlags) register(fs *pflag.FlagSet, withProgress bool) {
	fs.BoolVar(&o.json, "json", false, "print the result as JSON on stdout instead of a table")
	fs.StringVar(&o.trace, "trace", "", "write every trial to this CSV file (a new file, or one bkb wrote, with --overwrite)")
	fs.StringVar(&o.plot, "plot", "", "draw the best value so far against the trial to this PNG or SVG file")
	fs.BoolVar(&o.plotLog, "plot-log", false, "--plot: the value axis on a log scale (positive values only)")
	fs.BoolVar(&o.overwrite, "overwrite", false, "replace existing --trace and --plot files (never a study journal)")
	fs.IntVar(&o.top, "top", 5, "number of best points in the table")
	if withProgress {
		fs.StringVar(&o.progress, "progress", "auto", "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or none")
		fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress and no warnings about failed trials")
	} else {
		o.summaryOnly = true
		fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on stdout but --json (write --trace and --plot only)")
	}
}

// check validates the output flags before anything runs; studyPath is
// the study's journal, which no output may replace.
func (o *outputFlags) check(studyPath string) error {
	if err := checkOutput("--trace", o.trace, o.overwrite, studyPath); err != nil {
		return err
	}
	if err := checkOutput("--plot", o.plot, o.overwrite, studyPath); err != nil {
		return err
	}
	if o.trace != "" && o.trace == o.plot {
		return usagef("--trace and --plot name the same file %s", o.trace)
	}
	if o.top < 0 {
		return usagef("--top must be >= 0, got %d", o.top)
	}
	switch o.progress {
	case "", "auto", "bar", "lines", "none":
	default:
		return usagef("--progress must be auto, bar, lines or none, got %q", o.progress)
	}
	if o.plot != "" {
		if err := checkPlotExt(o.plot); err != nil {
			return err
		}
	}
	return nil
}

func checkPlotExt(path string) error {
	switch strings.ToLower(extOf(path)) {
	case ".png", ".svg", ".pdf", ".jpg", ".jpeg":
		return nil
	}
	return usagef("plot file %q: the name must end in .png or .svg (or .pdf, .jpg)", path)
}

func extOf(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 && !strings.ContainsAny(path[i:], `/\`) {
		return path[i:]
	}
	return ""
}

// point is one evaluated point in a result.
type point struct {
	Trial  int          `json:"trial"`
	Evals  int          `json:"evaluations"` // complete trials at this arm
	Arm    int          `json:"arm"`
	Value  float64      `json:"value"`
	X      []float64    `json:"x"`
	Params study.Params `json:"params"`
}

// result is what optimize and status report.
type result struct {
	Study        string   `json:"study,omitempty"`
	Objective    string   `json:"objective"`
	Direction    string   `json:"direction"`
	Policy       string   `json:"policy"`
	Arms         int      `json:"arms"`
	Budget       int      `json:"budget"`
	Trials       int      `json:"trials"`
	Complete     int      `json:"complete"`
	Failed       int      `json:"failed"`
	Pruned       int      `json:"pruned,omitempty"`
	Pending      int      `json:"pending"`
	Best         *point   `json:"best"`
	Top          []point  `json:"top"`
	KnownOptimum *float64 `json:"known_optimum,omitempty"`
	BestArm      *float64 `json:"best_arm_value,omitempty"` // best value over the arm set (built-ins)
	// Gap is the best point's noise-free value minus the known minimum
	// (built-ins): with --noise the best observed value may lie below the
	// minimum, its noise-free value never does.
	Gap         *float64          `json:"gap,omitempty"`
	Seconds     float64           `json:"seconds,omitempty"`
	PolicyMS    float64           `json:"policy_ms_per_trial,omitempty"`
	LengthScale float64           `json:"length_scale"`
	Fits        []study.FitResult `json:"length_scale_fits,omitempty"`
	Numerics    bandit.Stats      `json:"model"`
	// ModelAsOf, when positive, says that the model's fields (model,
	// length_scale_fits) come from the study's newest snapshot, taken
	// after its first ModelAsOf records (status).
	ModelAsOf int         `json:"model_as_of_records,omitempty"`
	Warp      *study.Warp `json:"warp,omitempty"`
	Error     string      `json:"error,omitempty"`
	tradeoffResult

	space study.Space
	noisy bool // a built-in function with --noise
}

// newResult summarizes trials.
func newResult(sp *spec, nArms int, trials []study.TrialResult, top int) *result {
	cfg := sp.cfg
	r := &result{Objective: sp.obj.String(), Direction: string(cfg.Direction), Policy: cfg.Policy, Arms: nArms,
		Budget: cfg.Budget, Trials: len(trials), LengthScale: cfg.Kernel.LengthScale, space: cfg.Space, Top: []point{},
		noisy: sp.obj.Noise > 0}
	var done []study.TrialResult
	for _, t := range trials {
		switch t.State {
		case study.Complete:
			r.Complete++
			if !t.Infeasible {
				done = append(done, t) // the best points are feasible
			}
		case study.Failed:
			r.Failed++
		case study.Pruned:
			r.Pruned++
		default:
			r.Pending++
		}
	}
	// Sorted by index, not by moving the results: a stable sort moves
	// its elements O(n log n) times, and a TrialResult is a large struct.
	order := make([]int, len(done))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case study.Better(done[a].Value, done[b].Value, cfg.Direction):
			return -1
		case study.Better(done[b].Value, done[a].Value, cfg.Direction):
			return 1
		}
		return 0
	})
	sorted := make([]study.TrialResult, len(done))
	for i, k := range order {
		sorted[i] = done[k]
	}
	done = sorted
	// One row per point (policies may evaluate a point again), with the
	// best of its values.
	evals := map[string]int{}
	for _, t := range done {
		evals[pointKey(t.X)]++
	}
	seen := map[string]bool{}
	i := -1
	for _, t := range done {
		key := pointKey(t.X)
		if seen[key] {
			continue
		}
		seen[key] = true
		i++
		if i >= max(top, 1) {
			break
		}
		p := point{Trial: t.Number, Evals: evals[key], Arm: t.Arm, Value: t.Value, X: t.X, Params: t.Params}
		if i == 0 {
			b := p
			r.Best = &b
		}
		if i < top {
			r.Top = append(r.Top, p)
		}
	}
	_ = r.setTradeoffs(cfg, trials) // errors only on non-finite values, which a study never stores
	if cfg.Objectives() >= 2 {
		// Several objectives have no best point: the Pareto front is the result.
		r.Best, r.Top = nil, []point{}
	}
	if f := sp.function(); f != nil && sp.minimize() && cfg.Objectives() == 1 {
		opt := f.MinValue
		r.KnownOptimum = &opt
		if r.Best != nil && len(r.Best.X) == f.Dim {
			gap := r.Best.Value - opt
			if sp.obj.Noise > 0 {
				gap = f.Value(r.Best.X) - opt
			}
			r.Gap = &gap
		}
	}
	return r
}

// setBestArm records the best value over the arm set (built-ins only).
func (r *result) setBestArm(sp *spec, s *study.Study) {
	f := sp.function()
	if f == nil || sp.obj.Kind != "builtin" || sp.cfg.GrowsCandidates() {
		return // grown candidates have no "best arm": they go where the optimum is
	}
	arms := s.Arms()
	if arms == nil {
		return
	}
	n, _ := arms.Dims()
	best := math.NaN()
	for i := 0; i < n; i++ {
		if v := f.Value(arms.RawRowView(i)); study.Better(v, best, sp.cfg.Direction) {
			best = v
		}
	}
	r.BestArm = &best
}

// fmtParam formats parameter k's value compactly for a table.
func (r *result) fmtParam(k int, v float64) string {
	if r.space.Params[k].Type == study.TypeFloat {
		return fmtVal(v)
	}
	return r.space.FormatValue(k, v)
}

// fmtVal formats a value compactly.
func fmtVal(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// newTable returns an ASCII table writer on w.
func newTable(w io.Writer, header []string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
	t.Header(header)
	return t
}

// newMarkdownTable returns a Markdown table writer on w.
func newMarkdownTable(w io.Writer, header []string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(header)
	return t
}

// writeText prints the best-points table and a summary.
func (r *result) writeText(w io.Writer) error {
	if len(r.Top) > 0 {
		fmt.Fprintf(w, "%s of %s (%s %s):\n", plural(len(r.Top), "Best point", "Best %d points"), plural(r.Complete, "1 complete trial", "%d complete trials"), r.Direction, r.Objective)
		header := append([]string{"rank", "trial", "value", "evals"}, r.space.Names()...)
		t := newTable(w, header)
		for i, p := range r.Top {
			row := []string{strconv.Itoa(i + 1), strconv.Itoa(p.Trial), fmtVal(p.Value), strconv.Itoa(p.Evals)}
			row = append(row, paramCells(r.space, p.X, r.fmtParam)...)
			if err := t.Append(row); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if r.Best != nil {
		fmt.Fprintf(w, "best value %s at trial %d:", fmtVal(r.Best.Value), r.Best.Trial)
		active := r.space.Active(r.Best.X)
		for k, v := range r.Best.X {
			if active[k] {
				fmt.Fprintf(w, " %s=%s", r.space.Params[k].Name, r.fmtParam(k, v))
			}
		}
		fmt.Fprintln(w)
	} else if len(r.Directions) >= 2 {
		// The Pareto front follows.
	} else if r.Complete > 0 && r.Feasible != nil {
		fmt.Fprintf(w, "no feasible trial: %s a constraint (a value > 0), so there is no best value\n", plural(r.Complete, "the one complete trial violates", "all %d complete trials violate"))
	} else {
		fmt.Fprintln(w, "no trial has completed yet")
	}
	if err := r.writeTradeoffsText(w); err != nil {
		return err
	}
	if r.KnownOptimum != nil {
		fmt.Fprintf(w, "known minimum %s", fmtVal(*r.KnownOptimum))
		if r.BestArm != nil {
			fmt.Fprintf(w, "; best arm of the %d: %s", r.Arms, fmtVal(*r.BestArm))
		}
		if r.Gap != nil {
			noiseFree := ""
			if r.noisy {
				noiseFree = " (noise-free value at the best point)"
			}
			fmt.Fprintf(w, "; gap %s%s", fmtVal(*r.Gap), noiseFree)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d trials: %d complete, %d failed", r.Trials, r.Complete, r.Failed)
	if r.Pruned > 0 {
		fmt.Fprintf(w, ", %d pruned", r.Pruned)
	}
	if r.Pending > 0 {
		fmt.Fprintf(w, ", %d pending", r.Pending)
	}
	if r.Seconds > 0 {
		fmt.Fprintf(w, " in %s (policy %.2f ms/trial)", fmtDuration(r.Seconds), r.PolicyMS)
	}
	fmt.Fprintln(w)
	if len(r.Fits) > 0 {
		f := r.Fits[len(r.Fits)-1]
		if len(f.LengthScales) > 0 {
			fmt.Fprintf(w, "fitted ARD length scales")
			names := encodedNames(r.space)
			for k, l := range f.LengthScales {
				name := fmt.Sprintf("#%d", k+1)
				if len(names) == len(f.LengthScales) {
					name = names[k]
				}
				fmt.Fprintf(w, " %s=%s", name, fmtVal(l))
			}
			fmt.Fprintf(w, ", signal variance %s, noise variance %s (%d fits; last at %d observations)\n",
				fmtVal(f.SignalVariance), fmtVal(f.NoiseVariance), len(r.Fits), f.Observations)
		} else {
			fmt.Fprintf(w, "length scale %s (fitted %d times; last at %d observations, log marginal likelihood %.4g)\n",
				fmtVal(f.LengthScale), len(r.Fits), f.Observations, f.LogMarginal)
		}
	}
	if r.Warp != nil {
		fmt.Fprintf(w, "output warp: %s\n", r.Warp)
	}
	if n := r.Numerics; n.VarianceClamps > 0 || n.Jitter > 0 || n.RetryJitter > 0 {
		fmt.Fprintf(w, "numerics: %d negative variances clamped to 0, %d pivots jittered, %d factorizations retried with jitter (ill-conditioned kernel matrix: try a shorter length scale or a larger lambda)\n",
			n.VarianceClamps, n.Jitter, n.RetryJitter)
	}
	if r.Study != "" {
		fmt.Fprintf(w, "study: %s\n", r.Study)
	}
	return nil
}

// encodedNames names the GP coordinates of the space: a float or integer
// parameter by its name, each one-hot coordinate of a categorical as
// name=choice.
func encodedNames(space study.Space) []string {
	var names []string
	for _, p := range space.Params {
		if p.Type != study.TypeCategorical {
			names = append(names, p.Name)
			continue
		}
		for _, c := range p.Choices {
			names = append(names, fmt.Sprintf("%s=%v", p.Name, c))
		}
	}
	if len(names) != space.EncodedDim() {
		return nil
	}
	return names
}

func (r *result) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func fmtDuration(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// writeTraceCSV writes one row per trial.
func writeTraceCSV(path string, sp *spec, trials []study.TrialResult) error {
	b, err := traceCSV(sp, trials)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b)
}

// traceCSV returns the trials as bkb export's CSV (study.ExportCSV), with
// the simple regret of a built-in function of known minimum.
func traceCSV(sp *spec, trials []study.TrialResult) ([]byte, error) {
	var known *objectives.Function
	if sp.obj.Kind == "builtin" {
		known = sp.function()
	}
	return study.ExportCSV(sp.cfg, trials, known)
}

// traceJSON returns the trials as bkb export's JSON (study.ExportJSON).
func traceJSON(sp *spec, trials []study.TrialResult) ([]byte, error) {
	return study.ExportJSON(sp.cfg, trials)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress draws a one-line bar with \r on a terminal, or a plain line
// every 10% (and at least every 10 s) otherwise.
type progress struct {
	w         io.Writer
	mode      string // bar, lines or none
	total     int
	start     time.Time
	lastLine  time.Time
	lastPct   int
	drawn     bool
	lastWidth int
	noun      string // what is counted: "trials" or "runs"
}

func newProgress(w io.Writer, mode string, total int) *progress {
	if mode == "" || mode == "auto" {
		mode = "lines"
		if isTerminal(w) {
			mode = "bar"
		}
	}
	now := time.Now()
	return &progress{w: w, mode: mode, total: total, start: now, lastLine: now, lastPct: -1, noun: "trials"}
}

// update reports done trials out of total, with the best value so far.
func (p *progress) update(done, failed int, best float64, bestTrial int) {
	if p == nil || p.mode == "none" || p.total <= 0 {
		return
	}
	el := time.Since(p.start)
	bestS := ""
	if !math.IsNaN(best) {
		bestS = fmt.Sprintf(", best %s (trial %d)", fmtVal(best), bestTrial)
	}
	fail := ""
	if failed > 0 {
		fail = fmt.Sprintf(", %d failed", failed)
	}
	pct := 100 * done / p.total
	switch p.mode {
	case "bar":
		if done < p.total && p.drawn && time.Since(p.lastLine) < 50*time.Millisecond {
			return // at most 20 redraws a second
		}
		p.lastLine = time.Now()
		const width = 30
		fill := width * done / p.total
		eta := ""
		if done > 0 && done < p.total {
			rem := time.Duration(float64(el) / float64(done) * float64(p.total-done))
			eta = " eta " + rem.Round(100*time.Millisecond).String()
		}
		line := fmt.Sprintf("\r[%s%s] %3d%% %d/%d %s%s%s, %s%s", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
			pct, done, p.total, p.noun, bestS, fail, el.Round(100*time.Millisecond), eta)
		pad := ""
		if n := len(line); n < p.lastWidth {
			pad = strings.Repeat(" ", p.lastWidth-n)
		}
		p.lastWidth = len(line)
		fmt.Fprint(p.w, line+pad)
		p.drawn = true
	case "lines":
		// A line per 10% once a second has passed since the last one, at
		// least one every 10 s, and the last one: a quick run prints one.
		since := time.Since(p.lastLine)
		if done < p.total && !(pct/10 != p.lastPct/10 && since >= time.Second) && since < 10*time.Second {
			return
		}
		p.lastPct, p.lastLine = pct, time.Now()
		fmt.Fprintf(p.w, "bkb: %3d%% %d/%d %s%s%s, %s\n", pct, done, p.total, p.noun, bestS, fail, el.Round(10*time.Millisecond))
	}
}

// clear ends the bar's line, before other output.
func (p *progress) clear() {
	if p != nil && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
		p.lastWidth = 0
	}
}

// plural picks one for n == 1 and formats many with n otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// pointKey returns a map key that is equal for two points exactly when
// their coordinates are the same float64s (the bits, not a formatting:
// a status of 10,000 trials spent a fifth of its time in fmt.Sprint).
func pointKey(x []float64) string {
	b := make([]byte, 0, 8*len(x))
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}

// paramCells formats the values of the point x, one cell per parameter of
// space, by format; a parameter not active at x (a conditional space) is
// an empty cell, as its value is only a placeholder.
func paramCells(space study.Space, x []float64, format func(k int, v float64) string) []string {
	active := space.Active(x)
	out := make([]string, len(x))
	for k, v := range x {
		if active[k] {
			out[k] = format(k, v)
		}
	}
	return out
}
