package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/objectives/plugin"
	"github.com/bkb-go/bkb/study"
)

// evaluator returns the objective's own value at a trial's point.
type evaluator interface {
	eval(ctx context.Context, t *study.Trial) (float64, error)
	// restartNote says what became of the plugin after the last failed
	// evaluation ("" if nothing), for the failure's message.
	restartNote(msg string) string
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

func (b *builtin) eval(ctx context.Context, t *study.Trial) (float64, error) {
	return b.value(ctx, t.Number, t.X)
}

func (b *builtin) value(ctx context.Context, trial int, x []float64) (float64, error) {
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

func (b *builtin) restartNote(string) string { return "" }
func (b *builtin) Close() error              { return nil }

// pluginEval evaluates an external plugin program.
type pluginEval struct {
	p           *plugin.Process
	oneShot     bool
	maxRestarts int
	note        string
}

func (p *pluginEval) eval(ctx context.Context, t *study.Trial) (float64, error) {
	v, err := p.p.Evaluate(ctx, t.X)
	p.note = ""
	if err != nil && !p.oneShot && restartsAfter(err) {
		// One-shot mode starts a fresh process per evaluation: no restarts.
		if next := p.p.Restarts() + 1; next <= p.maxRestarts {
			p.note = fmt.Sprintf(" (restarting the plugin: restart %d of %d)", next, p.maxRestarts)
		} else {
			p.note = fmt.Sprintf(" (no plugin restart left of %d)", p.maxRestarts)
		}
	}
	return v, err
}

func (p *pluginEval) restartNote(string) string { return p.note }
func (p *pluginEval) Close() error              { return p.p.Close() }

// openObjective starts the objective of cfg. Plugin stderr lines go to
// stderr, prefixed with the program's name.
func openObjective(ctx context.Context, sp *spec, stderr io.Writer) (evaluator, error) {
	o, cfg := sp.obj, sp.cfg
	switch o.Kind {
	case "builtin":
		f, err := objectives.Lookup(o.Name)
		if err != nil {
			return nil, trimPkg(err)
		}
		if f.Dim != cfg.Space.Dim() {
			return nil, fmt.Errorf("%s is %d-dimensional but the study has %d parameters", f.Name, f.Dim, cfg.Space.Dim())
		}
		return &builtin{f: f, noise: o.Noise, seed: cfg.Seed}, nil
	case "plugin":
		timeout, err := time.ParseDuration(o.Timeout)
		if err != nil || timeout <= 0 {
			return nil, fmt.Errorf("bad plugin timeout %q in the study configuration", o.Timeout)
		}
		restarts := o.MaxRestarts
		if restarts == 0 {
			restarts = -1 // plugin.Config: negative means no restart
		}
		p, err := plugin.Start(ctx, plugin.Config{
			Command:     o.Command,
			Dir:         o.Dir,
			ParamNames:  cfg.Space.Names(),
			Timeout:     timeout,
			MaxRestarts: restarts,
			Stderr:      stderr,
			OneShot:     o.OneShot,
		})
		if err != nil {
			return nil, err
		}
		return &pluginEval{p: p, oneShot: o.OneShot, maxRestarts: o.MaxRestarts}, nil
	case "external":
		return nil, errors.New("this study has no objective (it was created for ask/tell): drive it with 'bkb ask' and 'bkb tell'")
	}
	return nil, fmt.Errorf("unknown objective kind %q in the study configuration", o.Kind)
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
