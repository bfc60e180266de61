package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/bench"
)

// pruneFlags are the flags of bkb bench --pruning.
type pruneFlags struct {
	on      bool
	tasks   []string
	trials  int
	methods []string
	optuna  string
	oMeth   []string
}

func (p *pruneFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&p.on, "pruning", false, "run the learning-curve benchmark instead: steps spent and best final value with no pruner, median, ASHA and Hyperband, for a fixed number of trials and for a fixed step budget (docs/pruning.md); --seeds (default 10), --markdown")
	fs.StringSliceVar(&p.tasks, "pruning-tasks", []string{"hartmann3", "elevators"}, "--pruning: tasks: hartmann3 (synthetic curves converging to Hartmann 3) and elevators (SGD epochs on the elevators data)")
	fs.IntVar(&p.trials, "pruning-trials", 40, "--pruning: trials per run; the step budget is this many full trials")
	fs.StringSliceVar(&p.methods, "pruning-methods", []string{"none", "median", "asha", "hyperband", "bound"}, "--pruning: pruners (none, median, asha, hyperband, bound, curve; median-nothing, asha-nothing, hyperband-nothing, bound-nothing, curve-nothing tell the model nothing about pruned trials)")
	fs.StringVar(&p.optuna, "pruning-optuna", "", "--pruning: path of bench/peerprune/optuna_prune.py: run Optuna 3.1 (TPE) on the same curves with /usr/bin/python3, side by side")
	fs.StringSliceVar(&p.oMeth, "pruning-optuna-methods", []string{"none", "median", "hyperband"}, "--pruning: Optuna's pruners (none, median, asha, hyperband)")
}

// runPruneBench runs the learning-curve benchmark: one table for a fixed
// number of trials, one for a fixed step budget.
func runPruneBench(ctx context.Context, p pruneFlags, seeds int, mdPath string, stdout, stderr io.Writer) error {
	switch {
	case seeds <= 0:
		return usagef("--seeds must be positive, got %d", seeds)
	case p.trials < 2:
		return usagef("--pruning-trials must be at least 2, got %d", p.trials)
	}
	for _, m := range p.oMeth {
		if m != "none" && m != "median" && m != "asha" && m != "hyperband" {
			return usagef("unknown Optuna pruner %q (want none, median, asha or hyperband)", m)
		}
	}
	for _, m := range p.methods {
		if _, ok := bench.PruneMethods[m]; !ok {
			return usagef("unknown pruner %q in the methods (want none, median, asha, hyperband, bound or curve, or one of them with -nothing)", m)
		}
	}
	methods := bench.SortedPruneMethods(p.methods)
	var md bytes.Buffer
	for _, name := range p.tasks {
		var task bench.PruneTask
		switch name {
		case "hartmann3":
			c := bench.DefaultCurveTask()
			task = c
			fmt.Fprintf(&md, "Task hartmann3: synthetic learning curves converging to Hartmann 3 (%d steps, noise %g), %d seeds; known minimum %.5f.\n\n", c.Steps(), c.Noise, seeds, c.Fn.MinValue)
		case "elevators":
			t, err := bench.NewSGDTask()
			if err != nil {
				return err
			}
			task = t
			ls, err := t.LeastSquaresMSE()
			if err != nil {
				return err
			}
			fmt.Fprintf(&md, "Task elevators: validation MSE of linear least squares by mini-batch SGD, one epoch per step (%d epochs), %d seeds; the least-squares fit's validation MSE is %.5f.\n\n", t.Steps(), seeds, ls)
		default:
			return usagef("--pruning-tasks: unknown task %q (want hartmann3 or elevators)", name)
		}
		if err := pruneTables(ctx, &md, task, name, methods, p, seeds, stderr); err != nil {
			return err
		}
	}
	if _, err := stdout.Write(md.Bytes()); err != nil {
		return err
	}
	if mdPath != "" {
		if err := writeFileAtomic(mdPath, md.Bytes()); err != nil {
			return fmt.Errorf("bench --pruning: %v", err)
		}
	}
	return nil
}

// pruneTables writes the two tables of one task.
func pruneTables(ctx context.Context, md *bytes.Buffer, task bench.PruneTask, name string, methods []string, p pruneFlags, seeds int, stderr io.Writer) error {
	budget := p.trials * task.Steps()
	for _, mode := range []struct {
		title      string
		stepBudget int
	}{{fmt.Sprintf("Same trials: %d per run", p.trials), 0}, {fmt.Sprintf("Same step budget: %d steps per run (%d full trials)", budget, p.trials), budget}} {
		runs := map[string][]bench.PruneRun{}
		var names []string
		for _, m := range methods {
			label := "bkb " + m
			names = append(names, label)
			for seed := 1; seed <= seeds; seed++ {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("%w: %v", errInterrupted, err)
				}
				r, err := bench.RunPrune(ctx, task, bench.PruneMethods[m], uint64(seed), p.trials, mode.stepBudget)
				if err != nil {
					return fmt.Errorf("bench --pruning: %s %s seed %d: %v", name, m, seed, err)
				}
				runs[label] = append(runs[label], r)
				fmt.Fprintf(stderr, "bkb: %s, %s, %s seed %d: %d steps, %d trials, %d pruned, best %.6g\n", name, mode.title, label, seed, r.Steps, r.Trials, r.Pruned, r.Best)
			}
		}
		if p.optuna != "" {
			oruns, err := runOptunaPrune(ctx, p, name, seeds, mode.stepBudget)
			if err != nil {
				return err
			}
			for _, m := range p.oMeth {
				label := "optuna tpe " + m
				names = append(names, label)
				runs[label] = oruns[m]
			}
		}
		rows := bench.SummarizePrune(names, runs, "bkb none")
		fmt.Fprintf(md, "%s, %s:\n\n", name, mode.title)
		if err := bench.WritePruneMarkdown(md, rows); err != nil {
			return err
		}
		md.WriteString("\n")
	}
	return nil
}

// runOptunaPrune runs the Optuna driver and reads its runs by method.
func runOptunaPrune(ctx context.Context, p pruneFlags, task string, seeds, stepBudget int) (map[string][]bench.PruneRun, error) {
	if _, err := os.Stat(p.optuna); err != nil {
		return nil, usagef("--pruning-optuna: %v", err)
	}
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", p.optuna, "--task", task, "--methods", strings.Join(p.oMeth, ","),
		"--seeds", strconv.Itoa(seeds), "--trials", strconv.Itoa(p.trials), "--step-budget", strconv.Itoa(stepBudget))
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench --pruning: the Optuna driver failed: %v: %s", err, oneLine(errb.String()))
	}
	runs := map[string][]bench.PruneRun{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Method string  `json:"method"`
			Seed   uint64  `json:"seed"`
			Trials int     `json:"trials"`
			Pruned int     `json:"pruned"`
			Steps  int     `json:"steps"`
			Best   float64 `json:"best"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("bench --pruning: the Optuna driver wrote %q: %v", sc.Text(), err)
		}
		runs[r.Method] = append(runs[r.Method], bench.PruneRun{Pruner: r.Method, Seed: r.Seed, Trials: r.Trials, Pruned: r.Pruned, Steps: r.Steps, Best: r.Best})
	}
	return runs, nil
}
