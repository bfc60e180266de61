package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// Variants of the scaling experiment.
var Variants = []string{"gp-ucb-rebuild", "gp-ucb", "bkb-paper", "bkb-rebuild", "bkb"}

// VariantDoc says what each variant is.
var VariantDoc = map[string]string{
	"gp-ucb-rebuild": "GP-UCB, posterior recomputed from scratch every step (O(t^3 + A t^2))",
	"gp-ucb":         "GP-UCB, incremental Cholesky and rank-one arm updates (O(A t))",
	"bkb-paper":      "BKB as Calandriello et al. (COLT 2019) states it: fresh resampling, rebuild every step (O(A m^2))",
	"bkb-rebuild":    "BKB with incremental (coupled) resampling, rebuilt every step: same draws and arms as bkb",
	"bkb":            "BKB, incremental resampling and O(A m) incremental updates",
}

// ScaleConfig configures Scale.
type ScaleConfig struct {
	Arms        []int         // arm-set sizes
	Checkpoints []int         // steps t at which a row is reported; the run goes to the largest
	Variants    []string      // from Variants
	LengthScale float64       // RBF length scale on [0,1]^6 (default 0.3)
	Seed        uint64        // seeds arms, noise and policies
	Budget      time.Duration // per run: a run stops once past it, keeping the checkpoints it reached ("where feasible")
	// Progress, when set, receives one line per finished checkpoint.
	Progress func(string)
}

// ScaleRow is one line of the scaling table.
type ScaleRow struct {
	Variant        string
	Arms           int
	T              int
	SecondsPerStep float64 // mean over the window of steps before T
	DictionarySize int     // m at T (t for exact GP-UCB)
	Changes        int     // dictionary changes up to T
	CumRegret      float64
	PeakHeapBytes  uint64 // peak live heap during the run so far
	// PassSeconds is the time of one read of the A x m embedding (or the
	// A x t matrix for GP-UCB) at the measured bandwidth; the ratio of
	// SecondsPerStep to it is how close a step is to the memory limit.
	PassSeconds float64
}

// hartmann6 is the scaling experiment's objective: Hartmann 6 rewards on
// random arms of [0,1]^6, affinely scaled so that the arm-set mean is 0
// and the best arm is 3 (the UCB of an unexplored arm with beta = 3 and a
// unit prior), with Gaussian noise of standard deviation 0.05 on that scale.
type hartmann6 struct {
	r           *objectives.Reward
	shift, mult float64
}

func newHartmann6(arms *mat.Dense, seed uint64) (*hartmann6, error) {
	f := objectives.Hartmann6()
	r0, err := objectives.NewReward(f, 0, seed)
	if err != nil {
		return nil, err
	}
	n, _ := arms.Dims()
	var mean, best float64 = 0, math.Inf(-1)
	for i := 0; i < n; i++ {
		v := r0.Noiseless(arms.RawRowView(i))
		mean += v / float64(n)
		best = math.Max(best, v)
	}
	h := &hartmann6{shift: mean, mult: 3 / (best - mean)}
	h.r, err = objectives.NewReward(f, 0.05/h.mult, seed)
	return h, err
}

func (h *hartmann6) Evaluate(ctx context.Context, x []float64) (float64, error) {
	y, err := h.r.Evaluate(ctx, x)
	return (y - h.shift) * h.mult, err
}

func (h *hartmann6) noiseless(x []float64) float64 { return (h.r.Noiseless(x) - h.shift) * h.mult }

// NewPolicy builds a scaling-experiment variant on the arms.
func NewPolicy(variant string, arms *mat.Dense, lengthScale float64, seed uint64, reserve int) (bandit.Policy, error) {
	opt := bandit.Options{
		Kernel: kernel.RBF{LengthScale: lengthScale}, Lambda: 0.0025,
		Beta: acquisition.Constant(3), Qbar: 2, Seed: seed, Reserve: reserve,
	}
	switch variant {
	case "gp-ucb-rebuild":
		opt.Rebuild = true
		return bandit.NewGPUCB(arms, opt)
	case "gp-ucb":
		return bandit.NewGPUCB(arms, opt)
	case "bkb-paper":
		opt.Rebuild = true
		return bandit.NewBKB(arms, opt)
	case "bkb-rebuild":
		opt.Rebuild, opt.Incremental = true, true
		return bandit.NewBKB(arms, opt)
	case "bkb":
		opt.Incremental = true
		return bandit.NewBKB(arms, opt)
	}
	return nil, fmt.Errorf("bench: unknown variant %q (want one of %v)", variant, Variants)
}

// Scale runs the scaling experiment and returns its rows, and the measured
// memory bandwidth in bytes per second.
func Scale(ctx context.Context, cfg ScaleConfig) ([]ScaleRow, float64, error) {
	if len(cfg.Arms) == 0 || len(cfg.Checkpoints) == 0 {
		return nil, 0, errors.New("bench: scaling needs arm sizes and checkpoints")
	}
	if cfg.LengthScale == 0 {
		cfg.LengthScale = 0.3
	}
	if len(cfg.Variants) == 0 {
		cfg.Variants = Variants
	}
	if cfg.Budget == 0 {
		cfg.Budget = time.Minute
	}
	tmax := 0
	for _, t := range cfg.Checkpoints {
		tmax = max(tmax, t)
	}
	bw := MemoryBandwidth(256<<20, 0, 5)
	var rows []ScaleRow
	for _, a := range cfg.Arms {
		box := objectives.Box{Lower: make([]float64, 6), Upper: []float64{1, 1, 1, 1, 1, 1}}
		arms, err := objectives.Uniform(box, a, cfg.Seed)
		if err != nil {
			return rows, bw, err
		}
		for _, v := range cfg.Variants {
			rs, err := scaleRun(ctx, cfg, v, arms, tmax, bw)
			rows = append(rows, rs...)
			if err != nil {
				return rows, bw, fmt.Errorf("%s, %d arms: %w", v, a, err)
			}
		}
	}
	return rows, bw, nil
}

func scaleRun(ctx context.Context, cfg ScaleConfig, variant string, arms *mat.Dense, tmax int, bw float64) ([]ScaleRow, error) {
	a, _ := arms.Dims()
	obj, err := newHartmann6(arms, cfg.Seed)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	p, err := NewPolicy(variant, arms, cfg.LengthScale, cfg.Seed, 0)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var rows []ScaleRow
	var peak uint64
	start := time.Now()
	ck := map[int]bool{}
	for _, t := range cfg.Checkpoints {
		ck[t] = true
	}
	var window []float64
	progress := func(st bandit.Step) {
		window = append(window, st.Seconds)
		if st.T%50 == 0 || ck[st.T] {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base {
				peak = max(peak, ms.HeapAlloc-base)
			}
		}
		if !ck[st.T] {
			if time.Since(start) > cfg.Budget {
				cancel() // the next checkpoint is out of reach: "where feasible"
			}
			return
		}
		w := window[max(0, len(window)-max(10, len(window)/10)):]
		var s float64
		for _, v := range w {
			s += v
		}
		cols := st.DictionarySize
		row := ScaleRow{Variant: variant, Arms: a, T: st.T, SecondsPerStep: s / float64(len(w)),
			DictionarySize: st.DictionarySize, Changes: st.DictionaryChanges, CumRegret: st.CumRegret,
			PeakHeapBytes: peak, PassSeconds: float64(a) * float64(cols) * 8 / bw}
		rows = append(rows, row)
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf("%-15s A=%-7d t=%-5d %9.3f ms/step  m=%-5d changes=%-6d regret=%.1f", variant, a, st.T, 1e3*row.SecondsPerStep, row.DictionarySize, row.Changes, row.CumRegret))
		}
		window = window[:0]
		if time.Since(start) > cfg.Budget {
			cancel()
		}
	}
	_, err = bandit.Run(ctx, p, arms, obj, bandit.RunOptions{Steps: tmax, Noiseless: obj.noiseless, Progress: progress})
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = nil // stopped at the budget: "where feasible"
	}
	return rows, err
}
