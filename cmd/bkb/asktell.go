package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/study"
)

func runCreateStudy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("create-study", "create-study --study FILE [flags] [-- plugin command]", stdout)
	var cf configFlags
	cf.register(fs, 0)
	var w where
	w.register(fs, "journal file to create (required)")
	var ws warmStart
	ws.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("create-study"); err != nil {
		return err
	}
	extra, err := commandAfterDash(fs)
	if err != nil {
		return err
	}
	sp, err := cf.build(fs, extra, true)
	if err != nil {
		return err
	}
	if err := ws.check(); err != nil {
		return err
	}
	s, closeStore, err := createStudy(ctx, w, sp)
	if err != nil {
		return err
	}
	if err := ws.apply(ctx, s, stderr); err != nil {
		closeStore()
		return err
	}
	if err := closeStore(); err != nil {
		return err
	}
	cfg := s.Config()
	budget := "no budget"
	if cfg.Budget > 0 {
		budget = fmt.Sprintf("budget %d", cfg.Budget)
	}
	fmt.Fprintf(stdout, "created study %s: %s %s with %s on %d %s arms, %s\n", w, cfg.Direction, sp.obj.String(), cfg.Policy, s.Info().Arms, cfg.Arms.Kind, budget)
	for _, p := range cfg.Space.Params {
		fmt.Fprintf(stdout, "  %s\n", describeParam(p))
	}
	return nil
}

// describeParam formats a parameter for people.
func describeParam(p study.Param) string {
	switch {
	case p.Type == study.TypeCategorical:
		return fmt.Sprintf("%s in %v", p.Name, p.Choices)
	case p.Type == study.TypeInt && p.Log:
		return fmt.Sprintf("%s: integer in [%s, %s], log scale", p.Name, fmtVal(p.Low), fmtVal(p.High))
	case p.Type == study.TypeInt:
		return fmt.Sprintf("%s: integer in [%s, %s]", p.Name, fmtVal(p.Low), fmtVal(p.High))
	case p.Step > 0:
		return fmt.Sprintf("%s in [%s, %s], step %s", p.Name, fmtVal(p.Low), fmtVal(p.High), fmtVal(p.Step))
	case p.Log:
		return fmt.Sprintf("%s in [%s, %s], log scale", p.Name, fmtVal(p.Low), fmtVal(p.High))
	}
	return fmt.Sprintf("%s in [%s, %s]", p.Name, fmtVal(p.Low), fmtVal(p.High))
}

// maxAskCount bounds ask --count: a batch larger than any study's
// evaluations in flight is a typing mistake, and each ask is a stored record.
const maxAskCount = 10000

// decimalRE is a decimal number: no hexadecimal, no digit separators.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// parseDecimal parses a value typed by a user or a script: a decimal
// number, or nan/inf (which the caller refuses with its own message).
// strconv.ParseFloat alone also takes 0x1p3 and 1_000.
func parseDecimal(s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
	default:
		if !decimalRE.MatchString(s) {
			return 0, fmt.Errorf("%q is not a decimal number", s)
		}
	}
	return strconv.ParseFloat(s, 64)
}

// askReply is what ask prints per point.
type askReply struct {
	Trial  int          `json:"trial"`
	Arm    int          `json:"arm"`
	X      []float64    `json:"x"`
	Params study.Params `json:"params"`
}

func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ask", "ask --study FILE [--format json|tsv] [--count k] [--budget T]", stdout)
	var w where
	w.register(fs, "study journal (required)")
	format := fs.String("format", "json", "output: json (one object per line) or tsv (trial, then the parameter values, tab-separated)")
	count := fs.IntP("count", "k", 1, "number of points to ask for (a batch: the policy accounts for the pending ones)")
	budget := fs.IntP("budget", "T", 0, "total number of trials to allow for this ask, past the study's own budget (0: the study's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *budget < 0 {
		return usagef("--budget must be >= 0, got %d", *budget)
	}
	if err := w.check("ask"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *format != "json" && *format != "tsv" {
		return usagef("--format must be json or tsv, got %q", *format)
	}
	if *count < 1 || *count > maxAskCount {
		return usagef("--count must be between 1 and %d, got %d", maxAskCount, *count)
	}
	// The trials ask hands out are evaluated outside bkb, by a process
	// that outlives this one: they name no worker, so they are never
	// taken for the trials of a stopped worker. Trials a killed optimize
	// run left pending are handed out again.
	s, _, closeStore, err := loadStudy(ctx, w, withNotes(study.Options{Worker: "external", Stale: study.Requeue, Budget: *budget, SnapshotEveryAsk: true}, stderr))
	if err != nil {
		return err
	}
	defer closeStore()
	// One process per ask (or per --count asks): each due ask saves a
	// snapshot (SnapshotEveryAsk), so that the next process restores it.
	space := s.Config().Space
	for k := 0; k < *count; k++ {
		t, err := s.Ask(ctx)
		if errors.Is(err, study.ErrComplete) && k > 0 {
			break
		}
		if errors.Is(err, study.ErrComplete) {
			return fmt.Errorf("%v; give --budget N, a larger total number of trials, to ask past it", trimPkg(err))
		}
		if errors.Is(err, study.ErrReplay) {
			return replayFailed(w, err)
		}
		if err != nil {
			return trimPkg(err)
		}
		if *format == "tsv" {
			fields := append([]string{strconv.Itoa(t.Number)}, paramCells(space, t.X, space.FormatValue)...)
			fmt.Fprintln(stdout, strings.Join(fields, "\t"))
			continue
		}
		b, err := json.Marshal(askReply{Trial: t.Number, Arm: t.Arm, X: t.X, Params: t.Params})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
	}
	return nil
}

func runTell(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tell", "tell --study FILE --trial N (--value Y | --values Y1,Y2,... | --failed MESSAGE | --pruned) [--constraints C1,C2,...]", stdout)
	var w where
	w.register(fs, "study journal (required)")
	trial := fs.Int("trial", -1, "trial number printed by ask (required)")
	value := fs.String("value", "", "the objective's value at the trial's point")
	failed := fs.String("failed", "", "record the trial as failed, with this message")
	values := fs.String("values", "", "a study with several objectives: every objective's value, comma-separated, in the study's order")
	cons := fs.String("constraints", "", "a constrained study: the constraint values c_j(x), comma-separated (feasible when every one is <= 0)")
	seconds := fs.Float64("seconds", 0, "evaluation time to record, in seconds")
	pruned := fs.Bool("pruned", false, "record the trial as pruned (stopped early, as bkb report said)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("tell"); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case !fs.Changed("trial") || *trial < 0:
		return usagef("tell needs --trial N (N >= 0, as printed by ask)")
	case btoi(fs.Changed("value"))+btoi(fs.Changed("values"))+btoi(fs.Changed("failed"))+btoi(*pruned) != 1:
		return usagef("tell needs exactly one of --value Y, --values Y1,Y2,..., --failed MESSAGE and --pruned")
	case fs.Changed("constraints") && (fs.Changed("failed") || *pruned):
		return usagef("--constraints goes with a value, not with --failed or --pruned")
	case fs.Changed("failed") && strings.TrimSpace(*failed) == "":
		return usagef("--failed needs a message")
	case !(*seconds >= 0) || *seconds > serve.MaxSeconds:
		return usagef("--seconds %g: want a finite time >= 0 and at most %g seconds", *seconds, serve.MaxSeconds)
	}
	var y float64
	if fs.Changed("value") {
		v, err := parseDecimal(*value)
		if err != nil {
			return usagef("--value %q is not a number: want a decimal number like 0.25, -3 or 1.5e-3", *value)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return usagef("--value %q is not finite: record a failed evaluation with --failed MESSAGE", *value)
		}
		if math.Abs(v) > study.MaxAbsValue {
			return usagef("--value %q is beyond ±%g, the range a study accepts: record a failed evaluation with --failed MESSAGE, or rescale", *value, study.MaxAbsValue)
		}
		y = v
	}
	var o study.Outcome
	var err error
	if fs.Changed("values") {
		if o.Values, err = parseValueList("--values", *values); err != nil {
			return err
		}
		y = o.Values[0]
	}
	if fs.Changed("constraints") {
		if o.Constraints, err = parseValueList("--constraints", *cons); err != nil {
			return err
		}
	}
	s, _, closeStore, err := loadStudy(ctx, w, study.Options{Worker: "external"})
	if err != nil {
		return err
	}
	defer closeStore()
	if *pruned {
		if err := s.Prune(ctx, *trial); err != nil {
			return trimPkg(err)
		}
		return closeStore()
	}
	o.Value, o.Seconds = y, *seconds
	if fs.Changed("failed") {
		o.Failed = *failed
	}
	if err := s.TellOutcome(ctx, *trial, o); err != nil {
		return trimPkg(err)
	}
	return closeStore()
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", "status --study FILE [--json] [--trace FILE.csv] [--plot FILE.png]", stdout)
	var w where
	w.register(fs, "study journal (required)")
	var of outputFlags
	of.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("status"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := of.check(w.journal()); err != nil {
		return err
	}
	s, sp, closeStore, err := loadStudy(ctx, w, study.Options{})
	if err != nil {
		return err
	}
	defer closeStore()
	info := s.Info()
	if info.AsOf == 0 {
		// No snapshot to read the model from (a study of several
		// objectives or with constraints, an exact GP, a fixed arm set
		// keep none): build it from the records, as an ask would.
		if info, err = s.ModelInfo(ctx); err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			return fmt.Errorf("study %s: %v", w, trimPkg(err))
		}
	}
	// One list of the trials for both (a copy of every trial: 100,000
	// of them on a long study).
	trials := s.Trials()
	res := newResult(sp, info.Arms, trials, of.top)
	res.Study = w.String()
	res.LengthScale, res.Fits, res.Numerics, res.Warp = info.LengthScale, info.Fits, info.Stats, info.Warp
	res.ModelAsOf = info.AsOf
	return writeOutputs(stdout, &of, res, sp, trials)
}

func runObjectives(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("objectives", "objectives", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	t := newTable(stdout, []string{"name", "dim", "domain", "minimum"})
	for _, name := range objectives.Names() {
		f, err := objectives.Lookup(name)
		if err != nil {
			return err
		}
		dom := fmt.Sprintf("[%s, %s]^%d", fmtVal(f.Lower[0]), fmtVal(f.Upper[0]), f.Dim)
		for i := range f.Lower {
			if f.Lower[i] != f.Lower[0] || f.Upper[i] != f.Upper[0] {
				parts := make([]string, f.Dim)
				for k := range parts {
					parts[k] = fmt.Sprintf("[%s, %s]", fmtVal(f.Lower[k]), fmtVal(f.Upper[k]))
				}
				dom = strings.Join(parts, " x ")
				break
			}
		}
		if err := t.Append([]string{f.String(), strconv.Itoa(f.Dim), dom, fmtVal(f.MinValue)}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "ackley, levy, rosenbrock and styblinskitang take a dimension: --objective ackley:5")
	return nil
}
