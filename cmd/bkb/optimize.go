package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// studyName is the name a journal file's study gets: its base name
// without extension.
func studyName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// loadStudy opens the study of a journal file and decodes its objective.
func loadStudy(ctx context.Context, path string, opts study.Options) (*study.Study, *spec, func() error, error) {
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		return nil, nil, nil, usageError{trimPkg(err)}
	}
	s, err := study.Load(ctx, st, "", opts) // the file's study, whatever its name
	if err != nil {
		st.Close()
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil, nil, nil, usagef("study %s does not exist (create it with 'bkb create-study' or 'bkb optimize --study')", path)
		case ctx.Err() != nil:
			return nil, nil, nil, errInterrupted
		}
		return nil, nil, nil, usagef("study %s: %v", path, trimPkg(err))
	}
	sp, err := specOf(s.Config())
	if err != nil {
		st.Close()
		return nil, nil, nil, usagef("study %s: %v", path, err)
	}
	return s, sp, st.Close, nil
}

// createStudy creates the study of sp on a new journal file (in memory
// when path is empty).
func createStudy(ctx context.Context, path string, sp *spec) (*study.Study, func() error, error) {
	var st storage.Storage = storage.NewMemory()
	name := "bkb"
	if path != "" {
		js, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			return nil, nil, usageError{trimPkg(err)}
		}
		st, name = js, studyName(path)
	}
	s, err := study.Create(ctx, st, name, sp.cfg)
	if err != nil {
		st.Close()
		if errors.Is(err, storage.ErrExists) {
			return nil, nil, usagef("study %s already exists: continue it with --resume, or choose another file", path)
		}
		return nil, nil, usageError{trimPkg(err)}
	}
	return s, st.Close, nil
}

func runOptimize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("optimize", "optimize [flags] [-- plugin command and arguments]", stdout)
	var cf configFlags
	cf.register(fs, 60)
	var of outputFlags
	of.register(fs, true)
	studyPath := fs.String("study", "", "journal file: every evaluation is appended and synced to it (JSON lines)")
	resume := fs.Bool("resume", false, "continue the study in --study from its journal")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var extra []string
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		if dash > 0 {
			return usagef("unexpected argument %q (a plugin command goes after --)", fs.Args()[0])
		}
		extra = fs.Args()
		if len(extra) == 0 {
			return usagef("no plugin command after --")
		}
	} else if fs.NArg() > 0 {
		return usagef("unexpected argument %q (a plugin command goes after --, or in --plugin)", fs.Arg(0))
	}
	if err := of.check(*studyPath); err != nil {
		return err
	}
	if of.quiet {
		of.progress = "none"
	}

	var s *study.Study
	var sp *spec
	closeStore := func() error { return nil }
	if *resume {
		if *studyPath == "" {
			return usagef("--resume needs --study FILE")
		}
		var ignored []string
		for _, n := range configFlagNames {
			if fs.Changed(n) {
				ignored = append(ignored, "--"+n)
			}
		}
		if len(extra) > 0 {
			ignored = append(ignored, "the plugin command")
		}
		opts := study.Options{Stale: study.Requeue}
		if fs.Changed("budget") {
			if cf.budget <= 0 {
				return usagef("--budget must be positive, got %d", cf.budget)
			}
			opts.Budget = cf.budget
		}
		var err error
		if s, sp, closeStore, err = loadStudy(ctx, *studyPath, opts); err != nil {
			return err
		}
		if len(ignored) > 0 {
			fmt.Fprintf(stderr, "bkb: warning: ignoring %v on --resume: the study's own configuration is used\n", ignored)
		}
		if s.Config().Budget <= 0 {
			return usagef("study %s has no budget (an ask/tell study): give --budget", *studyPath)
		}
	} else {
		var err error
		if sp, err = cf.build(fs, extra, false); err != nil {
			return err
		}
		if _, err := os.Stat(*studyPath); *studyPath != "" && err == nil {
			return usagef("study %s already exists: continue it with --resume, or choose another file", *studyPath)
		}
	}
	// Start the objective before creating the journal, so that a plugin
	// that cannot start leaves no empty study behind.
	obj, err := openObjective(ctx, sp, stderr)
	if err != nil {
		return err
	}
	defer obj.Close()
	if !*resume {
		if s, closeStore, err = createStudy(ctx, *studyPath, sp); err != nil {
			return err
		}
	}
	defer closeStore()
	cfg := s.Config()
	info := s.Info()
	if info.Diverged > 0 {
		fmt.Fprintf(stderr, "bkb: warning: %d asks in the journal differ from what this build would choose; continuing from the journal's points\n", info.Diverged)
	}
	if info.Ignored > 0 {
		fmt.Fprintf(stderr, "bkb: warning: %d values in the journal are beyond ±%g and are treated as failed trials\n", info.Ignored, study.MaxAbsValue)
	}

	trials := s.Trials()
	c := countStates(trials)
	switch {
	case of.quiet:
	case *resume:
		fmt.Fprintf(stderr, "bkb: resuming %s: %d of %d trials done, %d pending to re-evaluate\n", *studyPath, c.done(), cfg.Budget, c.pending)
	default:
		fmt.Fprintf(stderr, "bkb: %s %s (%d parameters) with %s on %d %s arms, budget %d, seed %d\n",
			cfg.Direction, sp.obj.String(), cfg.Space.Dim(), cfg.Policy, info.Arms, cfg.Arms.Kind, cfg.Budget, cfg.Seed)
	}

	prog := newProgress(stderr, of.progress, cfg.Budget)
	best, bestTrial := math.NaN(), -1
	for _, t := range trials {
		if t.State == study.Complete && study.Better(t.Value, best, cfg.Direction) {
			best, bestTrial = t.Value, t.Number
		}
	}
	start := time.Now()
	policyStart := info.PolicySeconds
	evals := 0
	onTrial := func(t study.TrialResult) {
		evals++
		switch t.State {
		case study.Complete:
			c.complete++
			if study.Better(t.Value, best, cfg.Direction) {
				best, bestTrial = t.Value, t.Number
			}
		case study.Failed:
			c.failed++
			if !of.quiet {
				prog.clear()
				fmt.Fprintln(stderr, oneLine(fmt.Sprintf("bkb: trial %d failed: %s%s", t.Number, t.Error, obj.restartNote(t.Error))))
			}
		}
		prog.update(c.done(), c.failed, best, bestTrial)
	}
	runErr := s.Run(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
		return obj.eval(ctx, t)
	}, study.RunOptions{Fatal: fatalEvalError, OnTrial: onTrial})
	prog.clear()
	elapsed := time.Since(start).Seconds()
	switch {
	case runErr == nil:
	case ctx.Err() != nil:
		runErr = fmt.Errorf("%w after %d trials%s", errInterrupted, c.done(), resumeHint(*studyPath, "; continue with"))
	case errors.Is(runErr, study.ErrTooManyFailures):
		runErr = fmt.Errorf("%v%s", trimPkg(runErr), resumeHint(*studyPath, "; fix the objective and continue with"))
	case errors.Is(runErr, study.ErrNoCompleteTrial):
		runErr = trimPkg(runErr)
	default:
		runErr = fmt.Errorf("%v%s", trimPkg(runErr), resumeHint(*studyPath, "; fix the plugin and continue with"))
	}

	info = s.Info()
	res := newResult(sp, info.Arms, s.Trials(), of.top)
	res.Study = *studyPath
	res.Seconds = elapsed
	if evals > 0 {
		res.PolicyMS = 1e3 * (info.PolicySeconds - policyStart) / float64(evals)
	}
	res.LengthScale = info.LengthScale
	res.Fits = info.Fits
	res.Numerics = info.Stats
	res.setBestArm(sp, s)
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if err := writeOutputs(stdout, &of, res, sp, s.Trials()); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// stateCounts counts trials by state.
type stateCounts struct{ complete, failed, pending int }

func (c stateCounts) done() int { return c.complete + c.failed }

func countStates(trials []study.TrialResult) stateCounts {
	var c stateCounts
	for _, t := range trials {
		switch t.State {
		case study.Complete:
			c.complete++
		case study.Failed:
			c.failed++
		default:
			c.pending++
		}
	}
	return c
}

// writeOutputs prints the result and writes the trace and the plot.
func writeOutputs(stdout io.Writer, of *outputFlags, res *result, sp *spec, trials []study.TrialResult) error {
	var err error
	if of.json {
		err = res.writeJSON(stdout)
	} else {
		err = res.writeText(stdout)
	}
	if err != nil {
		return err
	}
	if of.trace != "" {
		if err := writeTraceCSV(of.trace, sp, trials); err != nil {
			return fmt.Errorf("trace: %v", err)
		}
		if !of.json {
			fmt.Fprintf(stdout, "trace: %s\n", of.trace)
		}
	}
	if of.plot != "" && res.Complete > 0 {
		if err := plotStudy(of.plot, sp, trials); err != nil {
			return err
		}
		if !of.json {
			fmt.Fprintf(stdout, "plot: %s\n", of.plot)
		}
	}
	return nil
}

// resumeHint tells how to continue a stopped run.
func resumeHint(studyPath, lead string) string {
	if studyPath == "" {
		return " (run with --study FILE to make a run resumable)"
	}
	return fmt.Sprintf("%s: bkb optimize --study %s --resume", lead, studyPath)
}
