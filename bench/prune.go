package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// CurveTask is the learning-curve benchmark of docs/pruning.md: each
// configuration x of a test function's box has the curve
//
//	y(x, s) = f(x) + c(u) exp(-s/tau(u)) + noise,  s = 0, 1, ..., Steps-1,
//
// with u = x scaled to the unit box, c(u) = 0.5 + 1.5 u_1 (how far the
// curve starts above its limit) and tau(u) = 2 + 10 u_d (how slowly it
// gets there): a configuration's early values rank it only roughly, and
// near the optimum of Hartmann 3 the curves are slow. The final value is
// y at the last step; the known answer is f's minimum plus the small
// residual c exp(-(Steps-1)/tau).
type CurveTask struct {
	Fn    *objectives.Function
	Len   int     // steps of a full trial
	Noise float64 // standard deviation of the noise of every report
}

// DefaultCurveTask is Hartmann 3 with 27 steps and noise 0.02.
func DefaultCurveTask() CurveTask {
	f, _ := objectives.Lookup("hartmann3")
	return CurveTask{Fn: f, Len: 27, Noise: 0.02}
}

// Value is the curve of x at step, with the noise of (seed, trial, step).
func (c CurveTask) Value(x []float64, step int, seed uint64, trial int) float64 {
	d := len(x)
	u0 := (x[0] - c.Fn.Lower[0]) / (c.Fn.Upper[0] - c.Fn.Lower[0])
	ud := (x[d-1] - c.Fn.Lower[d-1]) / (c.Fn.Upper[d-1] - c.Fn.Lower[d-1])
	amp, tau := 0.5+1.5*u0, 2+10*ud
	return c.Fn.Value(x) + amp*math.Exp(-float64(step)/tau) + c.Noise*CurveNoise(seed, trial, step)
}

// CurveNoise is a standard normal draw determined by (seed, trial, step):
// splitmix64 (Steele, Lea and Flood 2014) then Box-Muller, so that the
// Optuna driver (bench/peerprune) draws the same noise.
func CurveNoise(seed uint64, trial, step int) float64 {
	h := splitmix(seed ^ splitmix(uint64(trial)<<20^uint64(step)))
	u1 := (float64(h>>11) + 0.5) / (1 << 53)
	u2 := (float64(splitmix(h)>>11) + 0.5) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// PruneTask is a family of learning curves for RunPrune.
type PruneTask interface {
	// Name names the task in tables.
	Name() string
	// Space is the search space.
	Space() (study.Space, error)
	// Steps is the number of steps of a full trial.
	Steps() int
	// Start begins the trial's curve at x: the returned function gives
	// the value at steps 0, 1, ... in order.
	Start(x []float64, seed uint64, trial int) func(step int) float64
}

// Name implements PruneTask.
func (c CurveTask) Name() string { return c.Fn.Name }

// Space implements PruneTask: the function's box.
func (c CurveTask) Space() (study.Space, error) { return study.Box(nil, c.Fn.Lower, c.Fn.Upper) }

// Steps implements PruneTask.
func (c CurveTask) Steps() int { return c.Len }

// Start implements PruneTask.
func (c CurveTask) Start(x []float64, seed uint64, trial int) func(int) float64 {
	return func(step int) float64 { return c.Value(x, step, seed, trial) }
}

// PruneRun is one run of the learning-curve benchmark.
type PruneRun struct {
	Pruner string
	Seed   uint64
	Trials int // trials started
	Pruned int
	Steps  int // reports made: the steps spent
	// Best is the best final value (the last step's) of a complete trial.
	Best float64
}

// RunPrune runs a study of the default policy with the pruner spec (as
// for pruner.ParseFlag) on task, one trial at a time: trials trials, or,
// with stepBudget > 0, trials until stepBudget steps are spent (at most
// 10*trials trials; the study then has no budget, hence a constant
// exploration instead of one that decays over the budget).
func RunPrune(ctx context.Context, task PruneTask, spec string, seed uint64, trials, stepBudget int) (PruneRun, error) {
	pc, err := pruner.ParseFlag(spec)
	if err != nil {
		return PruneRun{}, err
	}
	space, err := task.Space()
	if err != nil {
		return PruneRun{}, err
	}
	budget, studyBudget := trials, trials
	if stepBudget > 0 {
		budget, studyBudget = 10*trials, 0
	}
	s, err := study.Create(ctx, storage.NewMemory(), "curve", study.Config{Space: space, Budget: studyBudget, Seed: seed, Pruner: pc})
	if err != nil {
		return PruneRun{}, err
	}
	run := PruneRun{Pruner: spec, Seed: seed, Best: math.Inf(1)}
	for run.Trials < budget && (stepBudget <= 0 || run.Steps < stepBudget) {
		tr, err := s.Ask(ctx)
		if err != nil {
			return run, err
		}
		run.Trials++
		pruned, last := false, 0.0
		curve := task.Start(tr.X, seed, tr.Number)
		for step := range task.Steps() {
			last = curve(step)
			run.Steps++
			if err := tr.Report(ctx, step, last); err != nil {
				return run, err
			}
			if tr.ShouldPrune() {
				pruned = true
				break
			}
		}
		if pruned {
			run.Pruned++
			err = s.Prune(ctx, tr.Number)
		} else {
			run.Best = math.Min(run.Best, last)
			err = s.Tell(ctx, tr.Number, last)
		}
		if err != nil {
			return run, err
		}
	}
	if math.IsInf(run.Best, 1) {
		return run, errors.New("bench: no trial completed")
	}
	return run, nil
}

// PruneRow summarizes the runs of one method over seeds.
type PruneRow struct {
	Method                 string
	Runs                   int
	Steps, Trials, Pruned  float64 // medians
	StepsMin, StepsMax     int
	Best, BestMin, BestMax float64 // median, min and max of the best final value
	StepsRatio             float64 // the reference's median steps over this method's
	BestP                  float64 // two-sided Mann-Whitney p-value of Best against the reference; NaN for it
}

// SummarizePrune turns runs (by method) into rows; ref names the method
// the others are compared with (no pruning).
func SummarizePrune(methods []string, runs map[string][]PruneRun, ref string) []PruneRow {
	med := func(rs []PruneRun, f func(PruneRun) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return Median(v)
	}
	refRuns := runs[ref]
	refSteps := med(refRuns, func(r PruneRun) float64 { return float64(r.Steps) })
	var refBest []float64
	for _, r := range refRuns {
		refBest = append(refBest, r.Best)
	}
	var rows []PruneRow
	for _, m := range methods {
		rs := runs[m]
		if len(rs) == 0 {
			continue
		}
		row := PruneRow{Method: m, Runs: len(rs), StepsMin: math.MaxInt, BestMin: math.Inf(1), BestMax: math.Inf(-1)}
		row.Steps = med(rs, func(r PruneRun) float64 { return float64(r.Steps) })
		row.Trials = med(rs, func(r PruneRun) float64 { return float64(r.Trials) })
		row.Pruned = med(rs, func(r PruneRun) float64 { return float64(r.Pruned) })
		row.Best = med(rs, func(r PruneRun) float64 { return r.Best })
		var best []float64
		for _, r := range rs {
			row.StepsMin, row.StepsMax = min(row.StepsMin, r.Steps), max(row.StepsMax, r.Steps)
			row.BestMin, row.BestMax = math.Min(row.BestMin, r.Best), math.Max(row.BestMax, r.Best)
			best = append(best, r.Best)
		}
		row.StepsRatio = refSteps / row.Steps
		row.BestP = math.NaN()
		if m != ref && len(refBest) > 0 {
			if _, p, err := MannWhitney(best, refBest); err == nil {
				row.BestP = p
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WritePruneMarkdown writes the rows as a Markdown table.
func WritePruneMarkdown(w io.Writer, rows []PruneRow) error {
	var b strings.Builder
	b.WriteString("| method | runs | steps (median) | steps saved | trials | pruned | best final (median) | [min, max] | p vs bkb none |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, r := range rows {
		p := "—"
		if !math.IsNaN(r.BestP) {
			p = fmt.Sprintf("%.2f", r.BestP)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.2fx | %.0f | %.0f | %.5g | [%.5g, %.5g] | %s |\n",
			r.Method, r.Runs, r.Steps, r.StepsRatio, r.Trials, r.Pruned, r.Best, r.BestMin, r.BestMax, p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PruneMethods are the pruners of the benchmark, as pruner.ParseFlag
// specs, by name: none, Optuna's default median rule, ASHA and Hyperband
// on the 27 steps (rungs at steps 1, 3 and 9), each telling the model a
// pruned trial's last value (the default), and with "-nothing" telling
// it nothing.
var PruneMethods = map[string]string{
	"none":              "none",
	"median":            "median",
	"asha":              "asha:min=1,eta=3",
	"hyperband":         "hyperband:min=1,max=27,eta=3",
	"median-nothing":    "median:tell=nothing",
	"asha-nothing":      "asha:min=1,eta=3,tell=nothing",
	"hyperband-nothing": "hyperband:min=1,max=27,eta=3,tell=nothing",
	"bound":             "bound",
	"bound-nothing":     "bound:tell=nothing",
	"curve":             "curve",
	"curve-nothing":     "curve:tell=nothing",
	"curve-forecast":    "curve:tell=forecast",
	"curve-rank3":       "curve:rank=3",
	"curve-w5":          "curve:warmup=5",
	"curve-rank2":       "curve:rank=2",
	"curve-w5r2":        "curve:warmup=5,rank=2",
	"curve-w2":          "curve:warmup=2",
}

// SortedPruneMethods lists PruneMethods in the table's order.
func SortedPruneMethods(names []string) []string {
	order := []string{"none", "median", "median-nothing", "asha", "asha-nothing", "hyperband", "hyperband-nothing", "bound", "bound-nothing", "curve", "curve-nothing", "curve-forecast", "curve-rank3"}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		if ia < 0 {
			ia = len(order)
		}
		if ib < 0 {
			ib = len(order)
		}
		return ia - ib
	})
	return out
}
