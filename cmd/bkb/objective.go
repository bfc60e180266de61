package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/objectives/plugin"
	"github.com/bkb-go/bkb/study"
)

// evaluator returns the objective's own value at a trial's point.
type evaluator interface {
	eval(ctx context.Context, t *study.Trial) (float64, error)
	// restartNote says what became of the plugin after the failed
	// evaluation of a trial ("" if nothing), for the failure's message.
	restartNote(trial int) string
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
	return objectives.NoisyValue(ctx, b.f, b.noise, b.seed, trial, x)
}

func (b *builtin) restartNote(int) string { return "" }
func (b *builtin) Close() error           { return nil }

// pluginPool evaluates with a pool of plugin processes, one per worker.
type pluginPool struct {
	free        chan *plugin.Process
	all         []*plugin.Process
	maxRestarts int
	notes       sync.Map // trial -> restart note
}

func (p *pluginPool) eval(ctx context.Context, t *study.Trial) (float64, error) {
	var pr *plugin.Process
	select {
	case pr = <-p.free:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { p.free <- pr }()
	r, err := pr.EvaluateReporting(ctx, t.X, func(step int, value float64) (bool, error) {
		if err := t.Report(ctx, step, value); err != nil {
			return false, err
		}
		return t.ShouldPrune(), nil
	})
	v := r.Y
	if errors.Is(err, plugin.ErrPruned) {
		return 0, study.ErrPruned
	}
	if err == nil && r.Extra != nil {
		// Several objectives and constraint values: the study checks them
		// against its configuration.
		if r.Extra.Values != nil {
			t.SetValues(r.Extra.Values...)
		}
		if r.Extra.Constraints != nil {
			t.SetConstraints(r.Extra.Constraints...)
		}
	}
	// One-shot mode starts a fresh process per evaluation: no restarts.
	if err != nil && pr.Restartable() && restartsAfter(err) {
		if next := pr.Restarts() + 1; next <= p.maxRestarts {
			p.notes.Store(t.Number, fmt.Sprintf(" (restarting the plugin: restart %d of %d)", next, p.maxRestarts))
		} else {
			p.notes.Store(t.Number, fmt.Sprintf(" (no plugin restart left of %d)", p.maxRestarts))
		}
	}
	return v, err
}

func (p *pluginPool) restartNote(trial int) string {
	if n, ok := p.notes.LoadAndDelete(trial); ok {
		return n.(string)
	}
	return ""
}

func (p *pluginPool) Close() error {
	var errs []error
	for _, pr := range p.all {
		errs = append(errs, pr.Close())
	}
	return errors.Join(errs...)
}

// openObjective starts the objective of a study for workers parallel
// evaluations (a plugin process each). Plugin stderr lines go to stderr,
// prefixed with the program's name.
func openObjective(ctx context.Context, sp *spec, stderr io.Writer, workers int) (evaluator, error) {
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
		space := cfg.Space
		pc := plugin.Config{
			Command:     o.Command,
			Dir:         o.Dir,
			ParamNames:  space.Names(),
			Timeout:     timeout,
			MaxRestarts: restarts,
			Stderr:      stderr,
			OneShot:     o.OneShot,
			// Each value in its own type: an integer as a JSON integer, a
			// categorical as its label.
			Params: func(x []float64) ([]byte, error) {
				if err := space.Check(x); err != nil {
					return nil, err
				}
				return json.Marshal(space.ParamsOf(x))
			},
			Args: func(x []float64) ([]string, error) {
				if err := space.Check(x); err != nil {
					return nil, err
				}
				// A parameter not active at x is an empty argument: the
				// others keep their positions.
				return paramCells(space, x, space.FormatValue), nil
			},
		}
		pool := &pluginPool{free: make(chan *plugin.Process, max(workers, 1)), maxRestarts: o.MaxRestarts}
		for w := 0; w < max(workers, 1); w++ {
			p, err := plugin.Start(ctx, pc)
			if err != nil {
				pool.Close()
				return nil, err
			}
			pool.all = append(pool.all, p)
			pool.free <- p
		}
		return pool, nil
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
