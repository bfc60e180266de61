package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// ParallelConfig is the parallel-workers experiment: a study whose
// evaluations take Delay each, run with one worker and with Workers
// workers, for each policy and seed.
type ParallelConfig struct {
	Function string        // built-in function, e.g. "hartmann6"
	Budget   int           // trials per run
	Delay    time.Duration // time one evaluation takes
	Workers  int           // workers of the parallel runs
	Seeds    int           // seeds FirstSeed..FirstSeed+Seeds-1
	// FirstSeed is the first seed (default 1).
	FirstSeed int
	Policies  []string // policies, each run with one worker and with Workers
	// NoSequential skips the one-worker runs (for quick iterations on
	// the parallel path; the summary then has no reference row).
	NoSequential bool
	// NoiseFrac adds Gaussian noise of standard deviation NoiseFrac times
	// the function's range (Range) to every value told, drawn from (seed,
	// trial number) so that the draws do not depend on which worker
	// evaluates which trial. The simple regret stays on the noise-free f.
	NoiseFrac float64
	// PaperBatches runs bbkb with the paper's batch rule alone; by default
	// its parallel runs keep batches open to one arm per worker
	// (study.Config.MinBatch = Workers).
	PaperBatches bool
}

// ParallelRun is one run of the experiment.
type ParallelRun struct {
	Policy   string
	Workers  int
	Seed     uint64
	Seconds  float64 // wall time
	PolicyMS float64 // policy time per trial (all workers' asks and tells)
	Simple   float64 // simple regret at the budget
	Batch    float64 // average batch size (bbkb), 0 otherwise
}

// RunParallel runs the experiment, writing a line per run to progress.
func RunParallel(ctx context.Context, cfg ParallelConfig, progress io.Writer) ([]ParallelRun, error) {
	f, err := objectives.Lookup(cfg.Function)
	if err != nil {
		return nil, err
	}
	space, err := study.Box(nil, f.Lower, f.Upper)
	if err != nil {
		return nil, err
	}
	var sd float64
	if cfg.NoiseFrac > 0 {
		sd = cfg.NoiseFrac * Range(f)
	}
	var runs []ParallelRun
	first := max(cfg.FirstSeed, 1)
	for seed := first; seed < first+cfg.Seeds; seed++ {
		type variant struct {
			policy  string
			workers int
		}
		var variants []variant
		for _, p := range cfg.Policies {
			if !cfg.NoSequential {
				variants = append(variants, variant{p, 1})
			}
			variants = append(variants, variant{p, cfg.Workers})
		}
		for _, v := range variants {
			sc := study.Config{Space: space, Budget: cfg.Budget, Seed: uint64(seed), Policy: v.policy}
			if v.policy == "bbkb" && v.workers > 1 && !cfg.PaperBatches {
				sc.MinBatch = v.workers
			}
			s, err := study.Create(ctx, storage.NewMemory(), "parallel", sc)
			if err != nil {
				return nil, err
			}
			// The simple regret is on the noise-free f of the evaluated
			// points (with noise the best told value is luck).
			var mu sync.Mutex
			bestF := math.Inf(1)
			start := time.Now()
			err = s.Run(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
				select {
				case <-time.After(cfg.Delay):
				case <-ctx.Done():
					return 0, ctx.Err()
				}
				y := f.Value(t.X)
				mu.Lock()
				bestF = math.Min(bestF, y)
				mu.Unlock()
				if sd > 0 {
					y += sd * rand.New(rand.NewPCG(uint64(seed), noiseStream^uint64(t.Number))).NormFloat64()
				}
				return y, nil
			}, study.RunOptions{Workers: v.workers})
			if err != nil {
				return nil, err
			}
			info := s.Info()
			r := ParallelRun{Policy: v.policy, Workers: v.workers, Seed: uint64(seed), Seconds: time.Since(start).Seconds(),
				PolicyMS: 1e3 * info.PolicySeconds / float64(cfg.Budget), Simple: bestF - f.MinValue}
			if b, ok := s.BatchSize(); ok {
				r.Batch = b
			}
			runs = append(runs, r)
			if progress != nil {
				fmt.Fprintf(progress, "%s workers=%d seed=%d: %.1f s, policy %.2f ms/trial, simple regret %.3g, batch %.2f\n",
					r.Policy, r.Workers, r.Seed, r.Seconds, r.PolicyMS, r.Simple, r.Batch)
			}
		}
	}
	return runs, nil
}

// BasinRegret is the simple regret from which a Hartmann 6 run counts as
// ended outside the global optimum's basin: the second basin is 0.12 above
// the minimum, and a run in the global basin ends within 0.01 of it.
const BasinRegret = 0.05

// ParallelSummary is the median over seeds of one (policy, workers).
type ParallelSummary struct {
	Policy                        string
	Workers                       int
	Seconds, PolicyMS, Batch      float64
	SimpleMedian, SimpleQ1, SimQ3 float64
	Simple                        []float64 // per seed, in seed order
	// Basin counts the seeds whose simple regret is at least BasinRegret.
	Basin int
	// U and P are the Mann-Whitney test (two-sided) of the simple regrets
	// against the reference (the one-worker runs); NaN for the reference.
	U, P float64
}

// SummarizeParallel groups runs by (policy, workers) and tests each
// group's simple regrets against those of the same policy with one worker.
func SummarizeParallel(runs []ParallelRun) []ParallelSummary {
	refs := map[string][]float64{}
	for _, r := range runs {
		if r.Workers == 1 {
			refs[r.Policy] = append(refs[r.Policy], r.Simple)
		}
	}
	return summarize(runs, func(p string) []float64 { return refs[p] })
}

// SummarizeParallelRef is SummarizeParallel with the reference simple
// regrets given, for every policy (none: no test).
func SummarizeParallelRef(runs []ParallelRun, ref []float64) []ParallelSummary {
	return summarize(runs, func(string) []float64 { return ref })
}

func summarize(runs []ParallelRun, refOf func(policy string) []float64) []ParallelSummary {
	type key struct {
		p string
		w int
	}
	groups := map[key][]ParallelRun{}
	var order []key
	for _, r := range runs {
		k := key{r.Policy, r.Workers}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	med := func(v []float64) float64 { sort.Float64s(v); return quantile(v, 0.5) }
	var out []ParallelSummary
	for _, k := range order {
		var secs, ms, batch, simple []float64
		basin := 0
		for _, r := range groups[k] {
			secs, ms, batch, simple = append(secs, r.Seconds), append(ms, r.PolicyMS), append(batch, r.Batch), append(simple, r.Simple)
			if r.Simple >= BasinRegret {
				basin++
			}
		}
		perSeed := slices.Clone(simple)
		sort.Float64s(simple)
		s := ParallelSummary{Policy: k.p, Workers: k.w, Seconds: med(secs), PolicyMS: med(ms), Batch: med(batch),
			SimpleMedian: quantile(simple, 0.5), SimpleQ1: quantile(simple, 0.25), SimQ3: quantile(simple, 0.75),
			Simple: perSeed, Basin: basin, U: math.NaN(), P: math.NaN()}
		if ref := refOf(k.p); len(ref) > 0 && k.w != 1 {
			s.U, s.P, _ = MannWhitney(perSeed, ref)
		}
		out = append(out, s)
	}
	return out
}

// quantile of sorted v by linear interpolation.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (pos-float64(i))*(v[i+1]-v[i])
}
