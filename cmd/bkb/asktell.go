package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// lockWait bounds how long ask and tell wait for a study that another
// process holds open.
const lockWait = 30 * time.Second

// openStudyWait is openStudy that retries while the study is locked by
// another process (parallel workers driving one study).
func openStudyWait(ctx context.Context, path string, stderr io.Writer) (*storage.Journal, *studyConfig, []storage.Record, error) {
	deadline := time.Now().Add(lockWait)
	delay := 5 * time.Millisecond
	for {
		j, cfg, recs, err := openStudy(path, stderr)
		if err == nil || !strings.Contains(err.Error(), "in use by another") || time.Now().After(deadline) {
			return j, cfg, recs, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, nil, errInterrupted
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func runCreateStudy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("create-study", "create-study --study FILE [flags] [-- plugin command]", stdout)
	var cf configFlags
	cf.register(fs, 0)
	path := fs.String("study", "", "journal file to create (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return usagef("create-study needs --study FILE")
	}
	var extra []string
	if fs.ArgsLenAtDash() == 0 {
		extra = fs.Args()
	} else if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := cf.build(fs, extra, true)
	if err != nil {
		return err
	}
	arms, err := cfg.buildArms()
	if err != nil {
		return err
	}
	j, err := createStudy(*path, cfg)
	if err != nil {
		return err
	}
	if err := j.Close(); err != nil {
		return err
	}
	n, _ := arms.Dims()
	budget := "no budget"
	if cfg.Budget > 0 {
		budget = fmt.Sprintf("budget %d", cfg.Budget)
	}
	fmt.Fprintf(stdout, "created study %s: %s %s with %s on %d %s arms, %s\n", *path, cfg.Direction, cfg.Objective.String(), cfg.Policy, n, cfg.Arms.Kind, budget)
	for i, name := range cfg.Space.Names {
		fmt.Fprintf(stdout, "  %s in [%s, %s]\n", name, fmtVal(cfg.Space.Lower[i]), fmtVal(cfg.Space.Upper[i]))
	}
	return nil
}

// askReply is what ask prints per point.
type askReply struct {
	Trial  int                `json:"trial"`
	Arm    int                `json:"arm"`
	X      []float64          `json:"x"`
	Params map[string]float64 `json:"params"`
}

func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ask", "ask --study FILE [--format json|tsv] [--count k]", stdout)
	path := fs.String("study", "", "study journal (required)")
	format := fs.String("format", "json", "output: json (one object per line) or tsv (trial, then the coordinates, tab-separated)")
	count := fs.IntP("count", "k", 1, "number of points to ask for (a batch: the policy accounts for the pending ones)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return usagef("ask needs --study FILE")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *format != "json" && *format != "tsv" {
		return usagef("--format must be json or tsv, got %q", *format)
	}
	if *count < 1 {
		return usagef("--count must be positive, got %d", *count)
	}
	j, cfg, records, err := openStudyWait(ctx, *path, stderr)
	if err != nil {
		return err
	}
	defer j.Close()
	arms, err := cfg.buildArms()
	if err != nil {
		return err
	}
	eng := newEngine(cfg, arms)
	trials, _, err := eng.replay(records)
	if err != nil {
		return fmt.Errorf("study %s: %w", *path, err)
	}
	for k := 0; k < *count; k++ {
		if cfg.Budget > 0 && len(trials) >= cfg.Budget {
			if k > 0 {
				break
			}
			return fmt.Errorf("study %s is complete: all %d trials of its budget have been asked", *path, cfg.Budget)
		}
		arm, err := eng.Ask()
		if err != nil {
			return err
		}
		x := append([]float64(nil), arms.RawRowView(arm)...)
		trial := len(trials)
		if err := j.Append(storage.Record{Kind: storage.KindAsk, Trial: trial, Arm: arm, X: x}); err != nil {
			return trimPkg(err)
		}
		trials = append(trials, &trialState{Trial: trial, Arm: arm, X: x, Status: "pending"})
		if *format == "tsv" {
			fields := []string{strconv.Itoa(trial)}
			for _, v := range x {
				fields = append(fields, strconv.FormatFloat(v, 'g', -1, 64))
			}
			fmt.Fprintln(stdout, strings.Join(fields, "\t"))
			continue
		}
		rep := askReply{Trial: trial, Arm: arm, X: x, Params: map[string]float64{}}
		for i, name := range cfg.Space.Names {
			rep.Params[name] = x[i]
		}
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
	}
	return nil
}

func runTell(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tell", "tell --study FILE --trial N (--value Y | --failed MESSAGE)", stdout)
	path := fs.String("study", "", "study journal (required)")
	trial := fs.Int("trial", -1, "trial number printed by ask (required)")
	value := fs.String("value", "", "the objective's value at the trial's point")
	failed := fs.String("failed", "", "record the trial as failed, with this message")
	seconds := fs.Float64("seconds", 0, "evaluation time to record, in seconds")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *path == "":
		return usagef("tell needs --study FILE")
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case !fs.Changed("trial") || *trial < 0:
		return usagef("tell needs --trial N (N >= 0, as printed by ask)")
	case fs.Changed("value") == fs.Changed("failed"):
		return usagef("tell needs exactly one of --value Y and --failed MESSAGE")
	case fs.Changed("failed") && strings.TrimSpace(*failed) == "":
		return usagef("--failed needs a message")
	case !(*seconds >= 0) || math.IsInf(*seconds, 0):
		return usagef("--seconds must be finite and >= 0")
	}
	var y float64
	if fs.Changed("value") {
		v, err := strconv.ParseFloat(strings.TrimSpace(*value), 64)
		if err != nil {
			return usagef("--value %q is not a number", *value)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return usagef("--value %q is not finite: record a failed evaluation with --failed MESSAGE", *value)
		}
		y = v
	}
	j, _, _, err := openStudyWait(ctx, *path, stderr)
	if err != nil {
		return err
	}
	defer j.Close()
	st := j.State()
	var t *storage.Record
	for i := range st.Pending {
		if st.Pending[i].Trial == *trial {
			t = &st.Pending[i]
		}
	}
	if t == nil {
		for _, c := range st.Completed {
			if c.Trial == *trial {
				status := "complete"
				if c.Kind == storage.KindFail {
					status = "failed"
				}
				return fmt.Errorf("trial %d is already %s", *trial, status)
			}
		}
		return fmt.Errorf("study %s has no trial %d (%d trials asked so far)", *path, *trial, st.NextTrial)
	}
	rec := storage.Record{Kind: storage.KindTell, Trial: t.Trial, Arm: t.Arm, X: t.X, Seconds: *seconds}
	if fs.Changed("failed") {
		rec.Kind, rec.Error = storage.KindFail, *failed
	} else {
		rec.Y = &y
	}
	if err := j.Append(rec); err != nil {
		return trimPkg(err)
	}
	return j.Close()
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", "status --study FILE [--json] [--trace FILE.csv] [--plot FILE.png]", stdout)
	path := fs.String("study", "", "study journal (required)")
	var of outputFlags
	of.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return usagef("status needs --study FILE")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := of.check(); err != nil {
		return err
	}
	h, records, err := storage.ReadFile(*path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return usagef("study %s does not exist", *path)
		}
		return usageError{trimPkg(err)}
	}
	cfg, err := decodeConfig(h.Config)
	if err != nil {
		return usagef("study %s: %v", *path, err)
	}
	var log trialLog
	for i, r := range records {
		if _, err := log.apply(i, r, math.MaxInt); err != nil {
			return fmt.Errorf("study %s: %w", *path, err)
		}
	}
	n := 0 // the number of arms, when the arm set can be rebuilt
	if arms, err := cfg.buildArms(); err == nil {
		n, _ = arms.Dims()
	}
	res := newResult(cfg, n, log.trials, of.top)
	res.Study = *path
	return writeOutputs(stdout, &of, res, cfg, log.trials)
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
