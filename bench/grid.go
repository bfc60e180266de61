package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"

	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// GridRun is one (objective, policy, seed) run of bkb bench's grid.
type GridRun struct {
	Objective, Policy string
	Seed              uint64

	Cum       []float64 // cumulative regret after each step
	SimpleAt  []float64 // simple regret after each step
	Simple    float64   // simple regret at T
	MSPerStep float64   // policy time per step, ms
	DictSize  int       // BKB: |S| at T; exact GPs: T; random: 0
	Err       error
}

// Play runs the study of cfg (its budget the number of steps) on the
// built-in function f with Gaussian noise of standard deviation noise, and
// measures the regret against the best arm of the study's arm set on the
// noise-free function.
func (r *GridRun) Play(ctx context.Context, cfg study.Config, f *objectives.Function, noise float64) error {
	s, err := study.Create(ctx, storage.NewMemory(), "bench", cfg)
	if err != nil {
		return err
	}
	arms := s.Arms()
	n, _ := arms.Dims()
	values := make([]float64, n)
	best := math.Inf(1)
	for i := range values {
		values[i] = f.Value(arms.RawRowView(i))
		best = math.Min(best, values[i])
	}
	budget := cfg.Budget
	r.Cum = make([]float64, budget)
	r.SimpleAt = make([]float64, budget)
	cum, played := 0.0, math.Inf(1)
	for t := 0; t < budget; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		tr, err := s.Ask(ctx)
		if err != nil {
			return err
		}
		y, err := objectives.NoisyValue(ctx, f, noise, cfg.Seed, tr.Number, tr.X)
		if err != nil {
			return err
		}
		if err := s.Tell(ctx, tr.Number, y); err != nil {
			return err
		}
		cum += values[tr.Arm] - best
		r.Cum[t] = cum
		played = math.Min(played, values[tr.Arm])
		r.SimpleAt[t] = played - best
	}
	info := s.Info()
	r.Simple = played - best
	r.MSPerStep = 1e3 * info.PolicySeconds / float64(budget)
	r.DictSize = info.Stats.DictionarySize
	return nil
}

// GridCell aggregates the runs of one (objective, policy).
type GridCell struct {
	Objective             string
	Policy                string
	Seeds                 int
	CumMean, CumStd       float64
	SimpleMean, SimpleStd float64
	MSMean                float64
	DictMean              float64
	// Curve and CurveStd are the mean and std of the cumulative regret
	// per step; SimpleCurve and SimpleSD of the simple regret.
	Curve, CurveStd       []float64
	SimpleCurve, SimpleSD []float64
	// ExactDict: the policy's posterior is exact (its "dictionary" is
	// every observation); NoDict: it has none (random search).
	ExactDict, NoDict bool
}

// Aggregate returns one cell per (objective, policy), in the order of
// objs then policies: the mean and std over seeds of the regrets, the
// time per step and the dictionary size, and the curves per step.
func Aggregate(runs []*GridRun, objs, policies []string) []*GridCell {
	var cells []*GridCell
	for _, o := range objs {
		for _, p := range policies {
			c := &GridCell{Objective: o, Policy: p}
			var cum, simple, ms, dict []float64
			var mine []*GridRun
			for _, r := range runs {
				if r.Objective != o || r.Policy != p {
					continue
				}
				c.Seeds++
				mine = append(mine, r)
				cum = append(cum, r.Cum[len(r.Cum)-1])
				simple = append(simple, r.Simple)
				ms = append(ms, r.MSPerStep)
				dict = append(dict, float64(r.DictSize))
			}
			if len(mine) > 0 {
				steps := len(mine[0].Cum)
				c.Curve, c.CurveStd = make([]float64, steps), make([]float64, steps)
				c.SimpleCurve, c.SimpleSD = make([]float64, steps), make([]float64, steps)
				at := make([]float64, len(mine))
				for t := range steps {
					for i, r := range mine {
						at[i] = r.Cum[t]
					}
					c.Curve[t], c.CurveStd[t] = MeanStd(at)
					for i, r := range mine {
						at[i] = r.SimpleAt[t]
					}
					c.SimpleCurve[t], c.SimpleSD[t] = MeanStd(at)
				}
			}
			c.CumMean, c.CumStd = MeanStd(cum)
			c.SimpleMean, c.SimpleStd = MeanStd(simple)
			c.MSMean = stat.Mean(ms, nil)
			c.DictMean = stat.Mean(dict, nil)
			c.ExactDict = p == "gp-ucb" || p == "thompson" || p == "ei"
			c.NoDict = p == "random"
			cells = append(cells, c)
		}
	}
	return cells
}

// MeanStd returns the mean and the sample standard deviation (0 for fewer
// than two values).
func MeanStd(x []float64) (float64, float64) {
	if len(x) < 2 {
		return stat.Mean(x, nil), 0
	}
	return stat.MeanStdDev(x, nil)
}

// GridCSV returns the cells as bkb bench's CSV.
func GridCSV(cells []*GridCell, budget, arms int) ([]byte, error) {
	var f bytes.Buffer
	w := csv.NewWriter(&f)
	_ = w.Write([]string{"objective", "policy", "seeds", "T", "arms", "cum_regret_mean", "cum_regret_std",
		"simple_regret_mean", "simple_regret_std", "ms_per_step", "dict_size_mean"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, c := range cells {
		dict := g(c.DictMean)
		if c.NoDict {
			dict = ""
		}
		_ = w.Write([]string{c.Objective, c.Policy, strconv.Itoa(c.Seeds), strconv.Itoa(budget), strconv.Itoa(arms),
			g(c.CumMean), g(c.CumStd), g(c.SimpleMean), g(c.SimpleStd), g(c.MSMean), dict})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return f.Bytes(), nil
}
