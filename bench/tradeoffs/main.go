// Command tradeoffs runs one study of a constrained or multi-objective test
// problem with this project's policy (bkb, the default study, or random
// search) and prints one JSON object: at each checkpoint, the best
// feasible value and its gap to the known constrained optimum and the
// share of infeasible trials (constrained problems), or the hypervolume
// of the feasible trials against the problem's fixed reference point
// (multi-objective problems). optuna_tradeoffs.py prints the same fields
// for Optuna's samplers; side_by_side.sh runs both, alternating.
//
// Usage: tradeoffs -problem NAME -policy bkb|random -T 150 -seed 1 -at 50,150 [-mo-acquisition hvi|scalarize] [-trials FILE]
//
// -trials writes every trial's point and values to FILE as CSV (x1..xd,
// then the values), to see where the asks went; -cpuprofile writes a CPU
// profile of the run (go tool pprof).
//
// Problems (every objective minimized, a constraint feasible when <= 0):
//
//	branin-disk    Branin on [-5,10]x[0,15] under the disk constraint of
//	               Gardner et al. 2014: optimum 0.397887
//	gardner1       Gardner et al. 2014's first problem,
//	               cos(2x)cos(y) + sin(x) s.t. cos(x+y) <= 0.5 on [0,6]^2:
//	               optimum -2
//	gardner2       their second, sin(x) + y s.t. sin(x)sin(y) <= -0.95 on
//	               [0,6]^2 (1.8% of the box feasible): optimum asin(0.95) - 1
//	branin-currin  BraninCurrin (Belakaria, Deshwal and Doppa 2019) on
//	               [0,1]^2, reference point (18, 6)
//	zdt1, zdt2     Zitzler, Deb and Thiele 2000, d = 6, reference (11, 11)
//	dtlz2          Deb et al. 2002, d = 6, 3 objectives, reference 1.1 each
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bkb-go/bkb/pareto"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// problem is a test problem: values to minimize and constraint values.
type problem struct {
	lower, upper []float64
	objectives   int
	f            func(x []float64) (values, cons []float64)
	optimum      float64   // constrained optimum (one objective)
	ref          []float64 // hypervolume reference point (several)
	maxHV        float64   // the Pareto front's hypervolume against ref
}

func branin(x1, x2 float64) float64 {
	b, c, t := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
	u := x2 - b*x1*x1 + c*x1 - 6
	return u*u + 10*(1-t)*math.Cos(x1) + 10
}

func currin(u, v float64) float64 {
	v = math.Max(v, 1e-10)
	return (1 - math.Exp(-1/(2*v))) * (2300*u*u*u + 1900*u*u + 2092*u + 60) / (100*u*u*u + 500*u*u + 4*u + 20)
}

func box(d int, lo, hi float64) ([]float64, []float64) {
	l, h := make([]float64, d), make([]float64, d)
	for i := range l {
		l[i], h[i] = lo, hi
	}
	return l, h
}

func zdt(second func(f1, g float64) float64) func(x []float64) ([]float64, []float64) {
	return func(x []float64) ([]float64, []float64) {
		var s float64
		for _, v := range x[1:] {
			s += v
		}
		g := 1 + 9*s/float64(len(x)-1)
		return []float64{x[0], second(x[0], g)}, nil
	}
}

var problems = map[string]func() problem{
	"branin-disk": func() problem {
		return problem{lower: []float64{-5, 0}, upper: []float64{10, 15}, objectives: 1, optimum: 0.39788735772973816,
			f: func(x []float64) ([]float64, []float64) {
				return []float64{branin(x[0], x[1])}, []float64{(x[0]-2.5)*(x[0]-2.5) + (x[1]-7.5)*(x[1]-7.5) - 50}
			}}
	},
	"gardner1": func() problem {
		return problem{lower: []float64{0, 0}, upper: []float64{6, 6}, objectives: 1, optimum: -2,
			f: func(x []float64) ([]float64, []float64) {
				return []float64{math.Cos(2*x[0])*math.Cos(x[1]) + math.Sin(x[0])},
					[]float64{math.Cos(x[0])*math.Cos(x[1]) - math.Sin(x[0])*math.Sin(x[1]) - 0.5}
			}}
	},
	"gardner2": func() problem {
		return problem{lower: []float64{0, 0}, upper: []float64{6, 6}, objectives: 1, optimum: math.Asin(0.95) - 1,
			f: func(x []float64) ([]float64, []float64) {
				return []float64{math.Sin(x[0]) + x[1]}, []float64{math.Sin(x[0])*math.Sin(x[1]) + 0.95}
			}}
	},
	"branin-currin": func() problem {
		return problem{lower: []float64{0, 0}, upper: []float64{1, 1}, objectives: 2, ref: []float64{18, 6}, maxHV: 59.36011874867746,
			f: func(x []float64) ([]float64, []float64) {
				return []float64{branin(15*x[0]-5, 15*x[1]), currin(x[0], x[1])}, nil
			}}
	},
	"zdt1": func() problem {
		l, h := box(6, 0, 1)
		return problem{lower: l, upper: h, objectives: 2, ref: []float64{11, 11}, maxHV: 121 - 1.0/3,
			f: zdt(func(f1, g float64) float64 { return g * (1 - math.Sqrt(f1/g)) })}
	},
	"zdt2": func() problem {
		l, h := box(6, 0, 1)
		return problem{lower: l, upper: h, objectives: 2, ref: []float64{11, 11}, maxHV: 121 - 2.0/3,
			f: zdt(func(f1, g float64) float64 { return g * (1 - (f1/g)*(f1/g)) })}
	},
	"dtlz2": func() problem {
		l, h := box(6, 0, 1)
		return problem{lower: l, upper: h, objectives: 3, ref: []float64{1.1, 1.1, 1.1}, maxHV: 1.331 - math.Pi/6,
			f: func(x []float64) ([]float64, []float64) {
				var g float64
				for _, v := range x[2:] {
					g += (v - 0.5) * (v - 0.5)
				}
				a, b := x[0]*math.Pi/2, x[1]*math.Pi/2
				return []float64{(1 + g) * math.Cos(a) * math.Cos(b), (1 + g) * math.Cos(a) * math.Sin(b), (1 + g) * math.Sin(a)}, nil
			}}
	},
}

// checkpoint is the state of a run after T trials.
type checkpoint struct {
	T int `json:"t"`
	// Constrained problems.
	BestFeasible    *float64 `json:"best_feasible,omitempty"`
	Gap             *float64 `json:"gap,omitempty"`
	InfeasibleShare *float64 `json:"infeasible_share,omitempty"`
	// Multi-objective problems.
	Hypervolume *float64 `json:"hypervolume,omitempty"`
	MaxHV       float64  `json:"max_hypervolume,omitempty"`
}

type output struct {
	Tool        string       `json:"tool"`
	Problem     string       `json:"problem"`
	Policy      string       `json:"policy"`
	Acquisition string       `json:"mo_acquisition,omitempty"`
	Seed        uint64       `json:"seed"`
	T           int          `json:"T"`
	Checkpoints []checkpoint `json:"checkpoints"`
	CPUSeconds  float64      `json:"cpu_seconds"`
	Seconds     float64      `json:"seconds"`
}

func main() {
	name := flag.String("problem", "branin-disk", "problem")
	policy := flag.String("policy", "bkb", "bkb or random")
	T := flag.Int("T", 150, "trials")
	seed := flag.Uint64("seed", 1, "seed")
	at := flag.String("at", "", "checkpoints, comma-separated (default T)")
	acq := flag.String("mo-acquisition", "", "several objectives: hvi or scalarize (default: the study's)")
	trialsFile := flag.String("trials", "", "write every trial's point and values to this CSV file")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tradeoffs:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*name, *policy, *T, *seed, *at, *acq, *trialsFile); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "tradeoffs:", err)
		os.Exit(1)
	}
}

func run(name, policy string, T int, seed uint64, at, acq, trialsFile string) error {
	mk, ok := problems[name]
	if !ok {
		return fmt.Errorf("unknown problem %q", name)
	}
	p := mk()
	checks := []int{T}
	if at != "" {
		checks = nil
		for _, s := range strings.Split(at, ",") {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > T {
				return fmt.Errorf("checkpoint %q", s)
			}
			checks = append(checks, n)
		}
	}
	sp, err := study.Box(nil, p.lower, p.upper)
	if err != nil {
		return err
	}
	cfg := study.Config{Space: sp, Budget: T, Seed: seed, Policy: policy}
	if p.objectives > 1 {
		cfg.Directions = make([]study.Direction, p.objectives)
		for i := range cfg.Directions {
			cfg.Directions[i] = study.Minimize
		}
		cfg.MOAcquisition = acq
	} else {
		cfg.Constraints = 1
	}
	ctx := context.Background()
	s, err := study.Create(ctx, storage.NewMemory(), name, cfg)
	if err != nil {
		return err
	}
	start, cpu0 := time.Now(), cpuSeconds()
	err = s.Run(ctx, func(_ context.Context, t *study.Trial) (float64, error) {
		vals, cons := p.f(t.X)
		if len(vals) > 1 {
			t.SetValues(vals...)
		}
		if cons != nil {
			t.SetConstraints(cons...)
		}
		return vals[0], nil
	}, study.RunOptions{})
	if err != nil {
		return err
	}
	out := output{Tool: "bkb", Problem: name, Policy: policy, Seed: seed, T: T, Acquisition: s.Config().MOAcquisition,
		Seconds: time.Since(start).Seconds(), CPUSeconds: cpuSeconds() - cpu0}
	trials := s.Trials()
	if trialsFile != "" {
		if err := writeTrials(trialsFile, trials); err != nil {
			return err
		}
	}
	for _, n := range checks {
		c := checkpoint{T: n}
		if p.objectives == 1 {
			best, infeasible := math.Inf(1), 0
			for _, t := range trials[:n] {
				if t.Infeasible {
					infeasible++
				} else if t.State == study.Complete {
					best = math.Min(best, t.Value)
				}
			}
			share := float64(infeasible) / float64(n)
			c.InfeasibleShare = &share
			if !math.IsInf(best, 1) {
				gap := best - p.optimum
				c.BestFeasible, c.Gap = &best, &gap
			}
		} else {
			var pts [][]float64
			for _, t := range trials[:n] {
				if t.State == study.Complete {
					pts = append(pts, t.Values)
				}
			}
			hv, err := pareto.Hypervolume(pts, p.ref)
			if err != nil {
				return err
			}
			c.Hypervolume, c.MaxHV = &hv, p.maxHV
		}
		out.Checkpoints = append(out.Checkpoints, c)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// writeTrials writes the points and values of trials as CSV to path.
func writeTrials(path string, trials []study.TrialResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	for _, t := range trials {
		var row []string
		for _, v := range append(slices.Clone(t.X), t.Values...) {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := w.Write(row); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
