package objectives

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Reward turns a Function (to be minimised) into a noisy Objective to be
// maximised, the observation model of GP-UCB and BKB:
//
//	y = -f(x) + eps,  eps ~ N(0, NoiseStd^2) independently per call.
//
// The noise comes from math/rand/v2's PCG generator seeded by NewReward, so
// the same seed and the same sequence of calls give the same rewards.
//
// A Reward holds generator state and is NOT safe for concurrent use: call
// Evaluate from one goroutine at a time (or give each goroutine its own
// Reward with its own seed). Noiseless, Optimum and Dim are safe to call
// concurrently.
type Reward struct {
	f        *Function
	noiseStd float64
	rng      *rand.Rand
}

// NewReward returns the reward -f(x) + N(0, noiseStd^2) with noise drawn
// from a generator seeded with seed. noiseStd = 0 gives the noiseless
// reward. It is an error if f is nil or uninitialised, or noiseStd is
// negative, NaN or infinite.
func NewReward(f *Function, noiseStd float64, seed uint64) (*Reward, error) {
	if f == nil || f.f == nil {
		return nil, errors.New("objectives: NewReward: nil or uninitialised function")
	}
	if !(noiseStd >= 0) || math.IsInf(noiseStd, 0) {
		return nil, fmt.Errorf("objectives: NewReward: noise std must be finite and >= 0, got %v", noiseStd)
	}
	fc := *f // later changes to *f's scalar fields do not affect the reward
	return &Reward{f: &fc, noiseStd: noiseStd, rng: newRand(seed, streamReward)}, nil
}

// Evaluate returns -f(x) plus fresh Gaussian noise. It returns an error,
// and draws no noise, if ctx is done, x has the wrong dimension, or some
// coordinate of x is NaN or infinite.
func (r *Reward) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkPoint(r.f.Name, x, r.f.Dim); err != nil {
		return 0, err
	}
	y := -r.f.f(x)
	if r.noiseStd > 0 {
		y += r.noiseStd * r.rng.NormFloat64()
	}
	return y, nil
}

// checkPoint reports a point of the wrong dimension or with a non-finite
// coordinate.
func checkPoint(name string, x []float64, dim int) error {
	if len(x) != dim {
		return fmt.Errorf("objectives: %s: point has dimension %d, want %d", name, len(x), dim)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("objectives: %s: coordinate %d of the point is %v", name, i, v)
		}
	}
	return nil
}

// Noiseless returns -f(x), the expected reward. It panics if len(x) is not
// Dim(), like Function.Value.
func (r *Reward) Noiseless(x []float64) float64 { return -r.f.Value(x) }

// Optimum returns the largest expected reward, -f.MinValue.
func (r *Reward) Optimum() float64 { return -r.f.MinValue }

// Dim returns the input dimension.
func (r *Reward) Dim() int { return r.f.Dim }

// NoiseStd returns the standard deviation of the observation noise.
func (r *Reward) NoiseStd() float64 { return r.noiseStd }

// Function returns the underlying test function.
func (r *Reward) Function() *Function { return r.f }
