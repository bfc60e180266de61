package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/study"
)

// studyName is the name a journal file's study gets: its base name
// without extension.
func studyName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func runOptimize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("optimize", "optimize [flags] [-- plugin command and arguments]", stdout)
	var cf configFlags
	cf.register(fs, 60)
	var of outputFlags
	of.register(fs, true)
	var w where
	w.register(fs, "journal file: every evaluation is appended and synced to it (JSON lines)")
	resume := fs.Bool("resume", false, "continue the study in --study from its journal (an ask/tell study too: give its plugin command and --budget)")
	var ws warmStart
	ws.register(fs)
	workers := fs.IntP("workers", "w", 1, "evaluations in flight: a plugin process each; a free worker gets a new point at once, the policy conditioning on the pending ones")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	extra, err := commandAfterDash(fs)
	if err != nil {
		return err
	}
	if err := of.check(w.journal()); err != nil {
		return err
	}
	if *workers < 1 {
		return usagef("--workers must be positive, got %d", *workers)
	}
	if of.quiet {
		of.progress = "none"
	}

	var s *study.Study
	var sp *spec
	closeStore := func() error { return nil }
	if *resume {
		if w.study == "" {
			return usagef("--resume needs --study FILE")
		}
		if err := w.check("optimize --resume"); err != nil {
			return err
		}
		var ignored []string
		for _, n := range configFlagNames {
			if fs.Changed(n) {
				ignored = append(ignored, "--"+n)
			}
		}
		if ws.enqueue != "" || ws.importCSV != "" {
			return usagef("--enqueue and --import apply when a study is created, not on --resume (they would be added again on every resume)")
		}
		pluginCmd := extra
		if cf.plugin != "" {
			if len(extra) > 0 {
				return usagef("give the plugin command either with --plugin or after --, not both")
			}
			if pluginCmd, err = splitCommand(cf.plugin); err != nil {
				return usagef("--plugin: %v", err)
			}
		}
		ignored = slices.DeleteFunc(ignored, func(f string) bool {
			return len(pluginCmd) > 0 && (f == "--plugin" || f == "--timeout" || f == "--one-shot" || f == "--max-restarts")
		})
		opts := study.Options{Stale: study.Requeue}
		if fs.Changed("budget") {
			if cf.budget <= 0 {
				return usagef("--budget must be positive, got %d", cf.budget)
			}
			opts.Budget = cf.budget
		}
		var err error
		if s, sp, closeStore, err = loadStudy(ctx, w, withNotes(opts, stderr)); err != nil {
			return err
		}
		if opts.Budget > 0 {
			// A larger budget extends the study for good, so that status,
			// studies, workers and the server agree with this run.
			prev, err := study.StoredBudget(ctx, s.Storage(), s.Name())
			if err == nil && opts.Budget > max(prev, s.CreationConfig().Budget) {
				if err := s.Extend(ctx, opts.Budget); err != nil && !errors.Is(err, study.ErrNoAttributes) {
					return fmt.Errorf("study %s: %v", w, trimPkg(err))
				}
			}
		}
		if len(ignored) > 0 {
			fmt.Fprintf(stderr, "bkb: warning: ignoring %v on --resume: the study's own configuration is used\n", ignored)
		}
		if len(pluginCmd) > 0 {
			// The plugin given on resume replaces the stored one for this
			// run (as in bkb worker): an ask/tell study gets an objective,
			// a moved plugin its new path.
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			sp.obj = objectiveSpec{Kind: "plugin", Command: pluginCmd, Dir: dir, OneShot: cf.oneShot,
				Timeout: cf.timeout.String(), MaxRestarts: cf.maxRestarts}
		}
		if s.Config().Budget <= 0 {
			return usagef("study %s has no budget (an ask/tell study): give --budget N (the total number of trials)", w)
		}
		if sp.obj.Kind == "external" {
			return usagef("study %s has no objective (an ask/tell study): give the plugin command after -- (or --plugin) to continue it with optimize", w)
		}
	} else {
		var err error
		if sp, err = cf.build(fs, extra, false); err != nil {
			return err
		}
		if sp.cfg.Policy == "bbkb" && *workers > 1 && !fs.Changed("min-batch") {
			// One arm per worker: the paper's rule alone closes batches
			// of one or two arms early in a run (docs/parallel.md).
			sp.cfg.MinBatch = *workers
		}
		if w.study != "" {
			if err := w.check("optimize"); err != nil {
				return err
			}
		}
		if _, err := os.Stat(w.journal()); w.journal() != "" && err == nil {
			return usagef("study %s already exists: continue it with --resume, or choose another file", w)
		}
	}
	// Start the objective before creating the journal, so that a plugin
	// that cannot start leaves no empty study behind.
	obj, err := openObjective(ctx, sp, stderr, *workers)
	if err != nil {
		return err
	}
	defer obj.Close()
	if !*resume {
		if err := ws.check(); err != nil {
			return err
		}
		if s, closeStore, err = createStudy(ctx, w, sp); err != nil {
			return err
		}
		if err := ws.apply(ctx, s, stderr); err != nil {
			closeStore()
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
		fmt.Fprintf(stderr, "bkb: resuming %s: %d of %d trials done, %d pending to re-evaluate\n", w, c.done(), cfg.Budget, c.pending)
	default:
		arms := fmt.Sprintf("on %d %s arms", info.Arms, cfg.Arms.Kind)
		if cfg.GrowsCandidates() {
			arms = fmt.Sprintf("from %d %s points, candidates growing where the optimum may be", cfg.Arms.N, cfg.Arms.Kind)
		}
		fmt.Fprintf(stderr, "bkb: %s %s (%d parameters) with %s %s, budget %d, seed %d\n",
			cfg.Direction, sp.obj.String(), cfg.Space.Dim(), cfg.Policy, arms, cfg.Budget, cfg.Seed)
	}

	prog := newProgress(stderr, of.progress, cfg.Budget)
	best, bestTrial := math.NaN(), -1
	for _, t := range trials {
		if t.State == study.Complete && !t.Infeasible && study.Better(t.Value, best, cfg.Direction) {
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
			if !t.Infeasible && study.Better(t.Value, best, cfg.Direction) {
				best, bestTrial = t.Value, t.Number
			}
		case study.Pruned:
			c.pruned++
		case study.Failed:
			c.failed++
			if !of.quiet {
				prog.clear()
				fmt.Fprintln(stderr, oneLine(fmt.Sprintf("bkb: trial %d failed: %s%s", t.Number, t.Error, obj.restartNote(t.Number))))
			}
		}
		prog.update(c.done(), c.failed, best, bestTrial)
	}
	runErr := s.Run(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
		return obj.eval(ctx, t)
	}, study.RunOptions{Fatal: fatalEvalError, OnTrial: onTrial, Workers: *workers, OnLate: func(_ int, note string) {
		prog.clear()
		fmt.Fprintln(stderr, oneLine("bkb: "+note))
	}})
	prog.clear()
	elapsed := time.Since(start).Seconds()
	switch {
	case runErr == nil:
	case ctx.Err() != nil:
		runErr = fmt.Errorf("%w after %d trials%s", errInterrupted, c.done(), resumeHint(w, "; continue with"))
	case errors.Is(runErr, study.ErrTooManyFailures):
		runErr = fmt.Errorf("%v%s", trimPkg(runErr), resumeHint(w, "; fix the objective and continue with"))
	case errors.Is(runErr, study.ErrNoCompleteTrial):
		runErr = trimPkg(runErr)
	case errors.Is(runErr, study.ErrReplay):
		runErr = replayFailed(w, runErr)
	default:
		runErr = fmt.Errorf("%v%s", trimPkg(runErr), resumeHint(w, "; fix the plugin and continue with"))
	}

	info = s.Info()
	res := newResult(sp, info.Arms, s.Trials(), of.top)
	res.Study = w.String()
	res.Seconds = elapsed
	if evals > 0 {
		res.PolicyMS = 1e3 * (info.PolicySeconds - policyStart) / float64(evals)
	}
	res.LengthScale = info.LengthScale
	res.Fits = info.Fits
	res.Numerics = info.Stats
	res.Warp = info.Warp
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
type stateCounts struct{ complete, failed, pruned, pending int }

func (c stateCounts) done() int { return c.complete + c.failed + c.pruned }

func countStates(trials []study.TrialResult) stateCounts {
	var c stateCounts
	for _, t := range trials {
		switch t.State {
		case study.Complete:
			c.complete++
		case study.Failed:
			c.failed++
		case study.Pruned:
			c.pruned++
		default:
			c.pending++
		}
	}
	return c
}

// writeOutputs prints the result and writes the trace and the plot.
func writeOutputs(stdout io.Writer, of *outputFlags, res *result, sp *spec, trials []study.TrialResult) error {
	silent := of.quiet && of.summaryOnly && !of.json
	if silent {
		stdout = io.Discard
	}
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
		if err := plotStudyScale(of.plot, sp, trials, of.plotLog); err != nil {
			return err
		}
		if !of.json {
			fmt.Fprintf(stdout, "plot: %s\n", of.plot)
		}
	}
	return nil
}

// warmStart holds the flags that add known points to a new study.
type warmStart struct{ enqueue, importCSV string }

func (ws *warmStart) register(fs *pflag.FlagSet) {
	fs.StringVar(&ws.enqueue, "enqueue", "", "CSV of points to evaluate first, one per line, a column per parameter (header optional): a warm start from points known to be good")
	fs.StringVar(&ws.importCSV, "import", "", "CSV of earlier evaluations: a column per parameter, then the value (header optional; the CSV of bkb export and --trace reads as it is); they count against the budget")
}

// check reports a missing file before the study is created.
func (ws *warmStart) check() error {
	for flag, path := range map[string]string{"--enqueue": ws.enqueue, "--import": ws.importCSV} {
		if path == "" {
			continue
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			return usagef("%s %s: not a readable file", flag, path)
		}
	}
	return nil
}

// apply imports and enqueues the files' points into the new study s.
func (ws *warmStart) apply(ctx context.Context, s *study.Study, stderr io.Writer) error {
	if ws.importCSV != "" {
		f, err := os.Open(ws.importCSV)
		if err != nil {
			return usageError{err}
		}
		n, err := s.ImportCSV(ctx, f, ws.importCSV)
		f.Close()
		if err != nil {
			return usagef("--import: %v (the study was created without them)", trimPkg(err))
		}
		fmt.Fprintf(stderr, "bkb: imported %s from %s\n", plural(n, "1 evaluation", "%d evaluations"), ws.importCSV)
	}
	if ws.enqueue != "" {
		f, err := os.Open(ws.enqueue)
		if err != nil {
			return usageError{err}
		}
		space := s.Config().Space
		pts, err := study.ReadPoints(f, space, ws.enqueue)
		f.Close()
		if err != nil {
			return usagef("--enqueue: %v (the study was created without them)", trimPkg(err))
		}
		n, _ := pts.Dims()
		for i := range n {
			if _, err := s.Enqueue(ctx, space.ParamsOf(pts.RawRowView(i))); err != nil {
				return fmt.Errorf("--enqueue: %v", trimPkg(err))
			}
		}
		fmt.Fprintf(stderr, "bkb: enqueued %s from %s, evaluated first\n", plural(n, "1 point", "%d points"), ws.enqueue)
	}
	return nil
}

// resumeHint tells how to continue a stopped run.
// replayFailed is the error of a study whose stored records do not replay:
// the journal's fault (an edited or damaged file), not the plugin's, so
// exit 2 with a message about the journal.
func replayFailed(w where, err error) error {
	return usagef("study %s: its stored records do not replay: %v; the journal (or database) was changed or damaged since bkb wrote it (restore it from a copy, or start a new study)", w, trimPkg(err))
}

func resumeHint(w where, lead string) string {
	switch {
	case w.study == "":
		return " (run with --study FILE to make a run resumable)"
	case w.postgres():
		return fmt.Sprintf("%s: bkb optimize --storage %s --study %s --resume", lead, redactURL(w.storage), w.study)
	}
	return fmt.Sprintf("%s: bkb optimize --study %s --resume", lead, w.study)
}
