package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/objectives/plugin"
)

// evaluator returns the objective's own value at x for a trial.
type evaluator interface {
	eval(ctx context.Context, trial int, x []float64) (float64, error)
	restarts() int
	Close() error
}

// builtin evaluates a test function, with optional Gaussian noise drawn
// from a generator seeded by (seed, trial): a resumed run sees the same
// noise as an uninterrupted one.
type builtin struct {
	f     *objectives.Function
	noise float64
	seed  uint64
}

func (b *builtin) eval(ctx context.Context, trial int, x []float64) (float64, error) {
	if b.noise == 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return b.f.Value(x), nil
	}
	r, err := objectives.NewReward(b.f, b.noise, b.seed^(uint64(trial+1)*0x9e3779b97f4a7c15))
	if err != nil {
		return 0, err
	}
	y, err := r.Evaluate(ctx, x)
	return -y, err // Reward maximizes -f
}

func (b *builtin) restarts() int { return 0 }
func (b *builtin) Close() error  { return nil }

// pluginEval evaluates an external plugin program.
type pluginEval struct {
	p *plugin.Process
}

func (p *pluginEval) eval(ctx context.Context, _ int, x []float64) (float64, error) {
	return p.p.Evaluate(ctx, x)
}

func (p *pluginEval) restarts() int { return p.p.Restarts() }
func (p *pluginEval) Close() error  { return p.p.Close() }

// openObjective starts the objective of cfg. Plugin stderr lines go to
// stderr, prefixed with the program's name.
func openObjective(ctx context.Context, cfg *studyConfig, stderr io.Writer) (evaluator, error) {
	switch cfg.Objective.Kind {
	case "builtin":
		f, err := objectives.Lookup(cfg.Objective.Name)
		if err != nil {
			return nil, trimPkg(err)
		}
		if f.Dim != cfg.Space.dim() {
			return nil, fmt.Errorf("%s is %d-dimensional but the study has %d dimensions", f.Name, f.Dim, cfg.Space.dim())
		}
		return &builtin{f: f, noise: cfg.Objective.Noise, seed: cfg.Seed}, nil
	case "plugin":
		timeout, err := time.ParseDuration(cfg.Objective.Timeout)
		if err != nil || timeout <= 0 {
			return nil, fmt.Errorf("bad plugin timeout %q in the study configuration", cfg.Objective.Timeout)
		}
		restarts := cfg.Objective.MaxRestarts
		if restarts == 0 {
			restarts = -1 // plugin.Config: negative means no restart
		}
		p, err := plugin.Start(ctx, plugin.Config{
			Command:     cfg.Objective.Command,
			Dir:         cfg.Objective.Dir,
			ParamNames:  cfg.Space.Names,
			Timeout:     timeout,
			MaxRestarts: restarts,
			Stderr:      stderr,
			OneShot:     cfg.Objective.OneShot,
		})
		if err != nil {
			return nil, err
		}
		return &pluginEval{p: p}, nil
	case "external":
		return nil, errors.New("this study has no objective (it was created for ask/tell): drive it with 'bkb ask' and 'bkb tell'")
	}
	return nil, fmt.Errorf("unknown objective kind %q in the study configuration", cfg.Objective.Kind)
}

// fatalEvalError reports whether an evaluation error should stop the run
// (the trial is then left pending, to be re-evaluated on resume) rather
// than be recorded as a failed trial.
func fatalEvalError(err error) bool {
	switch plugin.KindOf(err) {
	case plugin.KindCrash, plugin.KindTimeout, plugin.KindGarbage, plugin.KindPluginError, plugin.KindNonFinite:
		return false
	case 0:
		// A built-in function's error (context cancellation) is fatal.
		return true
	}
	return true
}

// restartsAfter reports whether the plugin is restarted after err.
func restartsAfter(err error) bool {
	switch plugin.KindOf(err) {
	case plugin.KindCrash, plugin.KindTimeout, plugin.KindGarbage:
		return true
	}
	return false
}
