package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// journal appends records to a study file, or only keeps them in memory
// when there is none.
type journal struct {
	j *storage.Journal
}

func (j *journal) append(r storage.Record) error {
	if j.j == nil {
		return nil
	}
	return j.j.Append(r)
}

func (j *journal) close() error {
	if j.j == nil {
		return nil
	}
	return j.j.Close()
}

// openStudy opens an existing study journal for appending and decodes its
// configuration.
func openStudy(path string, stderr io.Writer) (*storage.Journal, *studyConfig, []storage.Record, error) {
	j, records, err := storage.Open(path)
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, nil, nil, fmt.Errorf("study %s is in use by another bkb process", path)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil, usagef("study %s does not exist (create it with 'bkb create-study' or 'bkb optimize --study')", path)
		}
		return nil, nil, nil, usageError{trimPkg(err)}
	}
	if msg := j.Recovered(); msg != "" {
		fmt.Fprintf(stderr, "bkb: warning: %s\n", trimPkg(errors.New(msg)))
	}
	cfg, err := decodeConfig(j.Header().Config)
	if err != nil {
		j.Close()
		return nil, nil, nil, usagef("study %s: %v", path, err)
	}
	return j, cfg, records, nil
}

// createStudy writes a new journal with cfg in its header.
func createStudy(path string, cfg *studyConfig) (*storage.Journal, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, usagef("study %s already exists: continue it with --resume, or choose another file", path)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	j, err := storage.Create(path, storage.Header{Config: raw})
	if err != nil {
		return nil, trimPkg(err)
	}
	return j, nil
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
	if err := of.check(); err != nil {
		return err
	}
	if of.quiet {
		of.progress = "none"
	}

	var cfg *studyConfig
	var records []storage.Record
	jr := &journal{}
	defer jr.close()
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
		j, c, recs, err := openStudy(*studyPath, stderr)
		if err != nil {
			return err
		}
		jr.j, cfg, records = j, c, recs
		if len(ignored) > 0 {
			fmt.Fprintf(stderr, "bkb: warning: ignoring %v on --resume: the study's own configuration is used\n", ignored)
		}
		if fs.Changed("budget") {
			if cf.budget <= 0 {
				return usagef("--budget must be positive, got %d", cf.budget)
			}
			cfg.Budget = cf.budget
		}
		if cfg.Budget <= 0 {
			return usagef("study %s has no budget (an ask/tell study): give --budget", *studyPath)
		}
	} else {
		var err error
		if cfg, err = cf.build(fs, extra, false); err != nil {
			return err
		}
		if _, err := os.Stat(*studyPath); *studyPath != "" && err == nil {
			return usagef("study %s already exists: continue it with --resume, or choose another file", *studyPath)
		}
	}
	arms, err := cfg.buildArms()
	if err != nil {
		return err
	}
	// Start the objective before creating the journal, so that a plugin
	// that cannot start leaves no empty study behind.
	obj, err := openObjective(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer obj.Close()
	if !*resume && *studyPath != "" {
		j, err := createStudy(*studyPath, cfg)
		if err != nil {
			return err
		}
		jr.j = j
	}
	eng := newEngine(cfg, arms)
	trials, diverged, err := eng.replay(records)
	if err != nil {
		return fmt.Errorf("study %s: %w", *studyPath, err)
	}
	if diverged > 0 {
		fmt.Fprintf(stderr, "bkb: warning: %d asks in the journal differ from what this build would choose; continuing from the journal's arms\n", diverged)
	}

	n, d := arms.Dims()
	switch {
	case of.quiet:
	case *resume:
		done := 0
		for _, t := range trials {
			if t.Status != "pending" {
				done++
			}
		}
		fmt.Fprintf(stderr, "bkb: resuming %s: %d of %d trials done, %d pending to re-evaluate\n", *studyPath, done, cfg.Budget, len(trials)-done)
	default:
		fmt.Fprintf(stderr, "bkb: %s %s (%d-d) with %s on %d %s arms, budget %d, seed %d\n",
			cfg.Direction, cfg.Objective.String(), d, cfg.Policy, n, cfg.Arms.Kind, cfg.Budget, cfg.Seed)
	}

	prog := newProgress(stderr, of.progress, cfg.Budget)
	best, bestTrial, failed, finished := math.NaN(), -1, 0, 0
	for _, t := range trials {
		switch t.Status {
		case "complete":
			finished++
			if better(t.Value, best, cfg.minimize()) {
				best, bestTrial = t.Value, t.Trial
			}
		case "failed":
			finished++
			failed++
		}
	}
	start := time.Now()
	policyStart := eng.PolicySeconds
	evals := 0

	// evaluate runs one trial to completion (or failure) and journals it.
	evaluate := func(t *trialState) error {
		t0 := time.Now()
		v, err := obj.eval(ctx, t.Trial, t.X)
		secs := time.Since(t0).Seconds()
		evals++
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w after %d trials%s", errInterrupted, finished, resumeHint(*studyPath, "; continue with"))
			}
			if fatalEvalError(err) {
				return fmt.Errorf("trial %d: %v%s", t.Trial, err, resumeHint(*studyPath, "; fix the plugin and continue with"))
			}
			if err := jr.append(storage.Record{Kind: storage.KindFail, Trial: t.Trial, Arm: t.Arm, X: t.X, Error: err.Error(), Seconds: secs}); err != nil {
				return trimPkg(err)
			}
			t.Status, t.Error, t.Seconds = "failed", err.Error(), secs
			failed++
			finished++
			if !of.quiet {
				prog.clear()
				msg := fmt.Sprintf("bkb: trial %d failed: %v", t.Trial, err)
				if restartsAfter(err) {
					if next := obj.restarts() + 1; next <= cfg.Objective.MaxRestarts {
						msg += fmt.Sprintf(" (restarting the plugin: restart %d of %d)", next, cfg.Objective.MaxRestarts)
					} else {
						msg += fmt.Sprintf(" (no plugin restart left of %d)", cfg.Objective.MaxRestarts)
					}
				}
				fmt.Fprintln(stderr, oneLine(msg))
			}
			if cfg.MaxFailures > 0 && failed >= cfg.MaxFailures {
				return fmt.Errorf("stopping: %d trials failed (--max-failures %d)%s", failed, cfg.MaxFailures, resumeHint(*studyPath, "; fix the objective and continue with"))
			}
			return nil
		}
		if err := jr.append(storage.Record{Kind: storage.KindTell, Trial: t.Trial, Arm: t.Arm, X: t.X, Y: &v, Seconds: secs}); err != nil {
			return trimPkg(err)
		}
		t.Status, t.Value, t.Seconds = "complete", v, secs
		finished++
		if better(v, best, cfg.minimize()) {
			best, bestTrial = v, t.Trial
		}
		if err := eng.Tell(t.Trial, t.Arm, v); err != nil {
			return err
		}
		return nil
	}

	runErr := func() error {
		// Trials asked but never completed (a killed run) are evaluated
		// first, at their own arm.
		for _, t := range trials {
			if t.Status == "pending" {
				if err := evaluate(t); err != nil {
					return err
				}
				prog.update(finished, failed, best, bestTrial)
			}
		}
		for len(trials) < cfg.Budget {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%w after %d trials%s", errInterrupted, finished, resumeHint(*studyPath, "; continue with"))
			}
			arm, err := eng.Ask()
			if err != nil {
				return err
			}
			t := &trialState{Trial: len(trials), Arm: arm, X: append([]float64(nil), arms.RawRowView(arm)...), Status: "pending", Value: math.NaN()}
			if err := jr.append(storage.Record{Kind: storage.KindAsk, Trial: t.Trial, Arm: arm, X: t.X}); err != nil {
				return trimPkg(err)
			}
			trials = append(trials, t)
			if err := evaluate(t); err != nil {
				return err
			}
			prog.update(finished, failed, best, bestTrial)
		}
		return nil
	}()
	prog.clear()
	elapsed := time.Since(start).Seconds()

	res := newResult(cfg, n, trials, of.top)
	res.Study = *studyPath
	res.Seconds = elapsed
	if evals > 0 {
		res.PolicyMS = 1e3 * (eng.PolicySeconds - policyStart) / float64(evals)
	}
	res.LengthScale = eng.lengthScale
	res.Fits = eng.Fits
	res.setBestArm(cfg, eng)
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if err := writeOutputs(stdout, &of, res, cfg, trials); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// writeOutputs prints the result and writes the trace and the plot.
func writeOutputs(stdout io.Writer, of *outputFlags, res *result, cfg *studyConfig, trials []*trialState) error {
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
		if err := writeTraceCSV(of.trace, cfg, trials); err != nil {
			return fmt.Errorf("trace: %v", err)
		}
		if !of.json {
			fmt.Fprintf(stdout, "trace: %s\n", of.trace)
		}
	}
	if of.plot != "" && res.Complete > 0 {
		if err := plotStudy(of.plot, cfg, trials); err != nil {
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
