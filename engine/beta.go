package engine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/kernel"
)

// betaSchedule parses Beta; gpScale reports whether BKB should use the
// GP-scale variance (true for constants and Srinivas' schedule, which are
// on the GP scale; false for the BKB theorem schedules).
func (c *Config) betaSchedule() (b acquisition.Beta, gpScale bool, err error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(c.Beta)), ":")
	xi := math.Sqrt(c.Lambda)
	switch name {
	case "srinivas", "gp-ucb":
		d := 0.1
		if hasArg {
			if d, err = strconv.ParseFloat(arg, 64); err != nil || !(d > 0 && d < 1) {
				return nil, false, fmt.Errorf("study: beta srinivas:DELTA needs 0 < DELTA < 1, got %q", arg)
			}
		}
		return acquisition.GPUCBFinite{Delta: d}, true, nil
	case "horizon":
		bs, ts, hasT := strings.Cut(arg, ":")
		v, perr := strconv.ParseFloat(bs, 64)
		h, terr := 0, error(nil)
		if hasT {
			h, terr = strconv.Atoi(ts)
		}
		if !hasArg || perr != nil || !(v >= 0) || math.IsInf(v, 0) || terr != nil || h < 0 {
			return nil, false, fmt.Errorf("study: beta horizon:B[:T] needs a number B >= 0 and a number of trials T >= 0, got %q", c.Beta)
		}
		return horizonBeta{B: v, Budget: h}, true, nil
	case "bkb-theorem", "theorem", "batch-bkb":
		if c.Policy != "bkb" {
			return nil, false, fmt.Errorf("study: beta %s is BKB's schedule; use it with policy bkb", name)
		}
		if name == "batch-bkb" {
			return acquisition.BatchBKB{F: 1, Delta: 0.1, Xi: xi}, false, nil
		}
		return acquisition.BKBTheorem{F: 1, Delta: 0.1, Eps: 0.5, Xi: xi}, false, nil
	}
	v, perr := strconv.ParseFloat(name, 64)
	if perr != nil || !(v >= 0) || math.IsInf(v, 0) {
		return nil, false, fmt.Errorf("study: beta must be a number >= 0, 'horizon:B[:T]', 'srinivas[:delta]', 'bkb-theorem' or 'batch-bkb', got %q", c.Beta)
	}
	return acquisition.Constant(v), true, nil
}

// horizonBeta is a UCB exploration that spends its exploration early:
// on the GP scale, after t observations,
//
//	beta_t = B max(1/4, min(1, 1.5 (1 - t/Budget))),
//
// B for the first third of the budget, then linearly down to B/4 at five
// sixths of it; B throughout without a budget. Budget is the study's
// budget when it was created ("horizon:B" is stored as "horizon:B:Budget"),
// so that an extended study replays its asks; past it, beta stays B/4. On
// growing candidates the bonus is further scaled by sqrt(1 - u), u the
// fraction of the prior variance the posterior leaves unexplained over the
// global set (refiner.unexplained), and floored at B/4 again.
//
// Why: an exploratory evaluation pays only through the evaluations that
// exploit what it taught, and with a known budget there are Budget - t of
// those left, so the value of the bonus falls to nothing at the last trial
// (the finite-horizon argument of Lam, Willcox and Wolpert, NeurIPS 2016,
// in its simplest linear form). A constant beta 2 kept exploring the
// unexplored corners of the box to the end: on Levy 10-d, Styblinski-Tang
// 10-d and Michalewicz it paid a higher cumulative regret than the fixed
// arm set while having found far better points (docs/optimizer.md). Early
// on, when the basin is chosen, the bonus is B, as before: a smaller beta
// early traps Hartmann 6 seeds in its second basin, and a decay from the
// first trial left 2 of 30 seeds of TestNotStuck in Hartmann 3's.
type horizonBeta struct {
	B      float64
	Budget int
}

// Beta returns B max(1/4, min(1, 1.5 (1 - T/Budget))).
func (h horizonBeta) Beta(s acquisition.State) float64 {
	if h.Budget <= 0 {
		return h.B
	}
	return h.B * math.Max(horizonFloor, math.Min(1, horizonShare*(1-float64(s.T)/float64(h.Budget))))
}

// newPolicy builds the configured policy on the encoded arms with the
// given kernel and noise variance.
func (c *Config) newPolicy(arms *mat.Dense, k kernel.Kernel, lambda float64) (bandit.Policy, error) {
	n, _ := arms.Dims()
	if c.Policy == "random" {
		return bandit.NewRandom(n, c.Seed)
	}
	if c.Policy == "ada-bkb" {
		return nil, errors.New("study: policy ada-bkb chooses points of the box, not arms: use candidates grow")
	}
	beta, gpScale, err := c.betaSchedule()
	if err != nil {
		return nil, err
	}
	opt := bandit.Options{Kernel: k, Lambda: lambda, Beta: beta, PaperScale: !gpScale, Qbar: c.Qbar,
		Incremental: c.Incremental, Seed: c.Seed, Reserve: c.Budget, LegacyCore: c.legacyCore(), DeadPivots: c.deadPivots(),
		Lazy: c.Lazy, Eliminate: c.Eliminate}
	switch c.Policy {
	case "bkb":
		return bandit.NewBKB(arms, opt)
	case "gp-ucb":
		return bandit.NewGPUCB(arms, opt)
	case "thompson":
		return bandit.NewThompson(arms, opt, false)
	case "bkb-thompson":
		return bandit.NewThompson(arms, opt, true)
	case "ei":
		return bandit.NewEI(arms, opt)
	case "bbkb":
		// Batched BKB (ICML 2020): adaptive batches for parallel workers;
		// Ask reports bandit.ErrBatchFull while a closed batch is running.
		return bandit.NewBBKB(arms, bandit.BBKBOptions{Options: opt, MinBatch: c.MinBatch})
	}
	return nil, fmt.Errorf("study: unknown policy %q", c.Policy)
}
