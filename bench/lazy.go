package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// LazyVariants are the policies of the lazy-UCB experiment: the
// scaling experiment's settings (RBF, lambda 0.0025, beta 3) with
// incremental or fresh resampling, full scan or lazy (bandit.Options.Lazy).
var LazyVariants = map[string]string{
	"bkb":            "BKB, incremental resampling, full scan",
	"bkb-lazy":       "BKB, incremental resampling, lazy",
	"bkb-lazy-elim":  "BKB, incremental resampling, lazy with elimination",
	"bkb-fresh":      "BKB, fresh resampling every step, full scan",
	"bkb-fresh-lazy": "BKB, fresh resampling every step, lazy",
	"gp-ucb":         "exact GP-UCB, full scan",
	"gp-ucb-lazy":    "exact GP-UCB, lazy",
	"bbkb":           "batched BKB (adaptive batches, ratio 2), incremental resampling, full scan",
	"bbkb-lazy":      "batched BKB (adaptive batches, ratio 2), incremental resampling, lazy",
	"bbkb4":          "batched BKB, at most 4 arms a batch (four workers), incremental resampling, full scan",
	"bbkb4-lazy":     "batched BKB, at most 4 arms a batch (four workers), incremental resampling, lazy",
}

// NewLazyPolicy builds a variant of LazyVariants with the settings of a
// setup (LazyConfig.Setup): "scale", the scaling experiment's (lambda
// 0.0025, beta 3, for rewards scaled to mean 0 and best 3); "standard",
// the bandit package's defaults (lambda 0.001, beta 2, for standardized
// rewards); "peer", the authors' batch-bkb settings.
func NewLazyPolicy(variant string, arms *mat.Dense, lengthScale float64, seed uint64, setup string) (bandit.Policy, error) {
	opt := bandit.Options{
		Kernel: kernel.RBF{LengthScale: lengthScale}, Lambda: 0.0025,
		Beta: acquisition.Constant(3), Qbar: 2, Seed: seed,
	}
	switch setup {
	case "scale", "":
	case "standard":
		opt.Lambda, opt.Beta = bandit.DefaultLambda, acquisition.Constant(2)
	case "peer":
		opt.Lambda, opt.Beta, opt.PaperScale = peerNoise*peerNoise, acquisition.BatchBKB{F: 1, Delta: 0.5, Xi: peerNoise}, true
	default:
		return nil, fmt.Errorf("bench: unknown setup %q (want scale, standard or peer)", setup)
	}
	switch variant {
	case "bkb", "bkb-lazy", "bkb-lazy-elim":
		opt.Incremental = true
		opt.Lazy = variant != "bkb"
		opt.Eliminate = variant == "bkb-lazy-elim"
		return bandit.NewBKB(arms, opt)
	case "bkb-fresh", "bkb-fresh-lazy":
		opt.Lazy = variant == "bkb-fresh-lazy"
		return bandit.NewBKB(arms, opt)
	case "gp-ucb", "gp-ucb-lazy":
		opt.Lazy = variant == "gp-ucb-lazy"
		return bandit.NewGPUCB(arms, opt)
	case "bbkb", "bbkb-lazy", "bbkb4", "bbkb4-lazy":
		// Asked and told one arm at a time: the batch grows with the
		// mean frozen and is observed when it closes (bandit.BBKB).
		opt.Incremental = true
		opt.Lazy = strings.HasSuffix(variant, "-lazy")
		b := bandit.BBKBOptions{Options: opt}
		if strings.HasPrefix(variant, "bbkb4") {
			b.MaxBatch = 4
		}
		return bandit.NewBBKB(arms, b)
	}
	return nil, fmt.Errorf("bench: unknown lazy variant %q", variant)
}

// peerNoise is the noise sd of the peer setup (batch_bkb_peer.py's 0.1
// as docs/scaling.md runs it).
const peerNoise = 0.1

// scaledFunction is a test function on random arms of its box, affinely
// scaled so that the arm-set mean is 0 and the best arm is 3, with
// Gaussian noise of standard deviation 0.05 on that scale (as the
// scaling experiment's Hartmann 6).
type scaledFunction struct {
	r           *objectives.Reward
	shift, mult float64
	best        float64
}

// With standard the values are standardized instead (mean 0, standard
// deviation 1 over the arm set, as the study layer standardizes) and the
// noise has the standard deviation sqrt(bandit.DefaultLambda).
// With setup "peer" the rewards are the raw function values (to
// maximize) with noise sd peerNoise, as the authors' peer script has them.
func newScaledFunction(f *objectives.Function, arms *mat.Dense, seed uint64, setup string) (*scaledFunction, error) {
	r0, err := objectives.NewReward(f, 0, seed)
	if err != nil {
		return nil, err
	}
	n, _ := arms.Dims()
	var mean, sq, best float64 = 0, 0, math.Inf(-1)
	for i := 0; i < n; i++ {
		v := r0.Noiseless(arms.RawRowView(i))
		mean += v / float64(n)
		sq += v * v / float64(n)
		best = math.Max(best, v)
	}
	h := &scaledFunction{shift: mean, mult: 3 / (best - mean)}
	noise := 0.05
	switch setup {
	case "standard":
		h.mult = 1 / math.Sqrt(math.Max(sq-mean*mean, 1e-300))
		noise = math.Sqrt(bandit.DefaultLambda)
	case "peer":
		h.shift, h.mult, noise = 0, 1, peerNoise
	}
	h.best = (best - mean) * h.mult
	h.r, err = objectives.NewReward(f, noise/h.mult, seed)
	return h, err
}

func (h *scaledFunction) evaluate(x []float64) float64 {
	y, _ := h.r.Evaluate(context.Background(), x)
	return (y - h.shift) * h.mult
}

func (h *scaledFunction) noiseless(x []float64) float64 { return (h.r.Noiseless(x) - h.shift) * h.mult }

// LazyConfig configures LazyRun.
type LazyConfig struct {
	Function    string // "hartmann3" or "hartmann6"
	Arms, T     int
	LengthScale float64
	Seed        uint64
	Variant     string
	// Setup is "scale" (the scaling experiment's rewards and settings),
	// "standard" (standardized rewards, the bandit defaults) or "peer"
	// (the authors' batch-bkb settings, see bench/peerbkb: raw rewards,
	// noise sd 0.1, lambda 0.01, the batch-bkb beta with F = 1 and
	// delta = 0.5 on the paper's scale, qbar 2).
	Setup    string
	From, To int // the window of steps for the per-step averages (1-based, inclusive)
	// Arrays, when set, is the arm set to use (else uniform on the box).
	Arrays *mat.Dense
	// Progress, when set, receives a line every 50 steps.
	Progress func(string)
}

// LazyResult is one run of LazyRun.
type LazyResult struct {
	Config LazyConfig
	// RowsPerStep is the mean over the window of the rows read (or
	// computed) per step, as a fraction of A.
	RowsPerStep float64
	// ComputedPerStep is the part computed from scratch for visited arms.
	ComputedPerStep float64
	// StepCPU is the mean CPU seconds of a step over the window (Ask and
	// Tell, the process's user+system time: run with GOMAXPROCS=1).
	StepCPU         float64
	CumRegret       float64
	DictionarySize  int
	WorkingSet      int
	Eliminated      int
	Violations      int
	PeakHeapBytes   uint64 // peak live heap in use during the run, beyond the arms
	EmbeddingBytes  float64
	TotalCPUSeconds float64
}

// LazyRun plays one variant and counts the rows it reads.
func LazyRun(cfg LazyConfig) (LazyResult, error) {
	f, err := objectives.Lookup(cfg.Function)
	if err != nil {
		return LazyResult{}, err
	}
	arms := cfg.Arrays
	if arms == nil {
		if arms, err = objectives.Uniform(f.Domain(), cfg.Arms, cfg.Seed); err != nil {
			return LazyResult{}, err
		}
	}
	obj, err := newScaledFunction(f, arms, cfg.Seed, cfg.Setup)
	if err != nil {
		return LazyResult{}, err
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	p, err := NewLazyPolicy(cfg.Variant, arms, cfg.LengthScale, cfg.Seed, cfg.Setup)
	if err != nil {
		return LazyResult{}, err
	}
	st := p.(bandit.StatsReporter)
	res := LazyResult{Config: cfg}
	var peak uint64
	var rows0, comp0 int64
	var cpu0, cpuAll float64
	start := cpuSeconds()
	lastPeak := time.Now()
	for s := 1; s <= cfg.T; s++ {
		if s == cfg.From {
			s0 := st.Stats()
			rows0, comp0, cpu0 = s0.RowsRead, s0.RowsComputed, cpuSeconds()
		}
		arm, err := p.Ask()
		if err != nil {
			return res, fmt.Errorf("step %d: %w", s, err)
		}
		if err := p.Tell(arm, obj.evaluate(arms.RawRowView(arm))); err != nil {
			return res, fmt.Errorf("step %d: %w", s, err)
		}
		res.CumRegret += obj.best - obj.noiseless(arms.RawRowView(arm))
		if s == cfg.To {
			s1 := st.Stats()
			n := float64(cfg.To - cfg.From + 1)
			res.RowsPerStep = float64(s1.RowsRead-rows0) / n / float64(cfg.Arms)
			res.ComputedPerStep = float64(s1.RowsComputed-comp0) / n / float64(cfg.Arms)
			res.StepCPU = (cpuSeconds() - cpu0) / n
		}
		if cfg.Progress != nil && s%50 == 0 {
			s1 := st.Stats()
			cfg.Progress(fmt.Sprintf("step %d: rows read %d (computed %d), working set %d, m %d, cum. regret %.1f, CPU %.1f s",
				s, s1.RowsRead, s1.RowsComputed, s1.WorkingSet, s1.DictionarySize, res.CumRegret, cpuSeconds()-start))
		}
		if s%25 == 0 || time.Since(lastPeak) > time.Second {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			lastPeak = time.Now()
		}
	}
	cpuAll = cpuSeconds() - start
	s1 := st.Stats()
	res.DictionarySize, res.WorkingSet = s1.DictionarySize, s1.WorkingSet
	res.Eliminated, res.Violations = s1.ArmsEliminated, s1.BoundViolations
	if peak > base {
		res.PeakHeapBytes = peak - base
	}
	res.EmbeddingBytes = float64(cfg.Arms) * float64(s1.DictionarySize) * 8
	res.TotalCPUSeconds = cpuAll
	return res, nil
}
