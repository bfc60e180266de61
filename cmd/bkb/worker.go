package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// runWorker joins an existing study and evaluates its trials until the
// budget is reached: any number of workers, in any number of processes on
// any number of machines (PostgreSQL), share one study. Every suggestion
// is computed from the stored events, so a worker that joins late, or
// restarts, asks what a single uninterrupted worker would have asked.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", "worker --study FILE | --storage postgres://... --study NAME [flags] [-- plugin command]", stdout)
	var w where
	w.register(fs, "the study to work on: its journal file")
	workers := fs.IntP("workers", "w", 1, "evaluations in flight in this process (a plugin process each)")
	stale := fs.String("stale", "fail", "what becomes of a trial whose worker stopped heartbeating: fail (record it failed) or requeue (evaluate it again)")
	fs.DurationVar(&w.grace, "grace", time.Minute, "PostgreSQL: a trial without a heartbeat for this long is stale (heartbeats go every grace/6)")
	timeout := fs.Duration("timeout", 0, "per-evaluation timeout of the plugin (default: the study's)")
	progress := fs.String("progress", "lines", "progress display: lines or none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("worker"); err != nil {
		return err
	}
	extra, err := commandAfterDash(fs)
	if err != nil {
		return err
	}
	if *workers < 1 {
		return usagef("--workers must be positive, got %d", *workers)
	}
	opts := study.Options{Stale: study.FailStale}
	switch *stale {
	case "fail":
	case "requeue":
		opts.Stale = study.Requeue
	default:
		return usagef("--stale must be fail or requeue, got %q", *stale)
	}
	if *progress != "lines" && *progress != "none" {
		return usagef("--progress must be lines or none, got %q", *progress)
	}
	if w.grace <= 0 {
		return usagef("--grace must be positive, got %v", w.grace)
	}
	s, sp, closeStore, err := loadStudy(ctx, w, withNotes(opts, stderr))
	if err != nil {
		return err
	}
	defer closeStore()
	cfg := s.Config()
	if cfg.Budget <= 0 {
		return usagef("study %s has no budget: workers stop at a study's budget (create it with --budget)", w)
	}
	if len(extra) > 0 {
		// The plugin's path may differ between machines: the command
		// given here replaces the stored one.
		dir, err := os.Getwd()
		if err != nil {
			return err
		}
		sp.obj.Kind, sp.obj.Command, sp.obj.Dir, sp.obj.Name = "plugin", extra, dir, ""
		if sp.obj.Timeout == "" {
			sp.obj.Timeout = time.Minute.String()
		}
	}
	if *timeout > 0 {
		sp.obj.Timeout = timeout.String()
	}
	obj, err := openObjective(ctx, sp, stderr, *workers)
	if err != nil {
		return err
	}
	defer obj.Close()
	if *progress == "lines" {
		c := countStates(s.Trials())
		fmt.Fprintf(stderr, "bkb: worker on %s: %d of %d trials done, %s here\n", w, c.done(), cfg.Budget, plural(*workers, "1 worker", "%d workers"))
	}
	best := math.NaN()
	done := 0
	err = s.Run(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
		return obj.eval(ctx, t)
	}, study.RunOptions{Workers: *workers, Fatal: fatalEvalError, HeartbeatEvery: w.grace / 6, WaitPending: true, OnLate: func(_ int, note string) {
		fmt.Fprintln(stderr, oneLine("bkb: "+note))
	}, OnTrial: func(t study.TrialResult) {
		done++
		if *progress != "lines" {
			return
		}
		switch t.State {
		case study.Complete:
			if study.Better(t.Value, best, cfg.Direction) {
				best = t.Value
			}
			fmt.Fprintf(stderr, "bkb: trial %d: %s (best here %s)\n", t.Number, fmtVal(t.Value), fmtVal(best))
		case study.Failed:
			fmt.Fprintln(stderr, oneLine(fmt.Sprintf("bkb: trial %d failed: %s%s", t.Number, t.Error, obj.restartNote(t.Number))))
		case study.Pruned:
			fmt.Fprintln(stderr, prunedLine(t))
		}
	}})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return fmt.Errorf("%w after %d trials in this worker (its running trials are evaluated again by the next worker that asks)", errInterrupted, done)
	case errors.Is(err, study.ErrNoCompleteTrial):
		return trimPkg(err)
	case errors.Is(err, study.ErrReplay):
		return replayFailed(w, err)
	default:
		return trimPkg(err)
	}
	if *progress == "lines" {
		c := countStates(s.Trials())
		fmt.Fprintf(stderr, "bkb: %s: %d trials done (%d complete, %d failed, %d pruned); this worker evaluated %d\n", w, c.done(), c.complete, c.failed, c.pruned, done)
	}
	return nil
}

// runCopy copies a study between a journal file and PostgreSQL (either
// way, or between two of either): every record, as stored.
func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("copy", "copy --from FILE|postgres://... --to FILE|postgres://... [--study NAME]", stdout)
	from := fs.String("from", "", "the study's journal file, or a PostgreSQL URL (with --study)")
	to := fs.String("to", "", "a new journal file, or a PostgreSQL URL (with --study)")
	name := fs.String("study", "", "the study's name in PostgreSQL (default: the journal's study name)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return usagef("copy needs --from and --to")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	side := func(loc string) where {
		if isConnString(loc) {
			return where{storage: loc, study: *name}
		}
		return where{study: loc}
	}
	src, dst := side(*from), side(*to)
	if (src.postgres() || dst.postgres()) && *name == "" && src.postgres() {
		return usagef("copy from PostgreSQL needs --study NAME")
	}
	sst, sname, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer sst.Close()
	h, err := sst.Study(ctx, sname)
	if err != nil {
		return usagef("copy: %s: %v", src, trimPkg(err))
	}
	// A study is copied only if it replays: records that contradict each
	// other are not spread to another storage.
	if _, err := study.Load(ctx, sst, sname); err != nil {
		return usagef("copy: %s: %v", src, trimPkg(err))
	}
	if dst.postgres() && dst.study == "" {
		dst.study = h.Name
		if dst.study == "" {
			dst.study = studyName(src.study)
		}
	}
	if !dst.postgres() {
		if _, err := os.Stat(dst.study); err == nil {
			return usagef("copy: %s exists: copy into a new file", dst.study)
		}
	}
	dstStore, _, err := dst.open(ctx)
	if err != nil {
		return err
	}
	defer dstStore.Close()
	// Copy names the study in both storages; a journal accepts any name.
	cname := h.Name
	if dst.postgres() {
		cname = dst.study
	}
	if err := storage.CopyAs(ctx, dstStore, sst, sname, cname); err != nil {
		return fmt.Errorf("copy %s to %s: %v", src, dst, trimPkg(err))
	}
	recs, _ := sst.Records(ctx, sname, 0)
	fmt.Fprintf(stdout, "copied study %q: %d records from %s to %s\n", cname, len(recs), src, dst)
	return nil
}

// runExport writes a study's trials as CSV (the trace of optimize
// --trace) or JSON, to a file or stdout, from a journal or PostgreSQL.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export --study FILE | --storage postgres://... --study NAME --out FILE.csv|FILE.json|-", stdout)
	var w where
	w.register(fs, "the study's journal file")
	out := fs.String("out", "", "file to write (a new file, or one to replace with --overwrite), or - for stdout")
	format := fs.String("format", "", "csv or json (default: from the --out name: json for .json, else csv)")
	overwrite := fs.Bool("overwrite", false, "replace an existing --out file (never a study journal)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("export"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usagef("export needs --out FILE.csv, --out FILE.json or --out - (stdout)")
	}
	switch *format {
	case "":
		*format = "csv"
		if strings.EqualFold(extOf(*out), ".json") {
			*format = "json"
		}
	case "csv", "json":
	default:
		return usagef("--format must be csv or json, got %q", *format)
	}
	if *out != "-" {
		if err := checkOutput("--out", *out, *overwrite, w.journal()); err != nil {
			return err
		}
	}
	s, sp, closeStore, err := loadStudy(ctx, w, study.Options{})
	if err != nil {
		return err
	}
	defer closeStore()
	trials := s.Trials()
	var data []byte
	if *format == "json" {
		data, err = traceJSON(sp, trials)
	} else {
		data, err = traceCSV(sp, trials)
	}
	if err != nil {
		return fmt.Errorf("export: %v", err)
	}
	if *out == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeFileAtomic(*out, data); err != nil {
		return fmt.Errorf("export: %v", err)
	}
	fmt.Fprintf(stdout, "exported %d trials of %s to %s (%s)\n", len(trials), w, *out, *format)
	return nil
}
