// Package objectives provides the black-box rewards that the bandit and
// Bayesian-optimisation algorithms of this module are benchmarked on, and the
// builders of the finite arm sets they choose from.
//
// There are three kinds of objectives:
//
//   - Function: a standard synthetic test function to be minimised, with its
//     standard domain and known global minimum (Branin, Hartmann, Ackley, ...),
//     as defined in the "Virtual Library of Simulation Experiments" of
//     S. Surjanovic and D. Bingham, https://www.sfu.ca/~ssurjano/optimization.html.
//     Lookup finds one by name.
//   - Reward: a Function turned into a noisy reward to be maximised,
//     y = -f(x) + N(0, sigma^2), as the bandit algorithms expect.
//   - GPSample: a function drawn from a zero-mean Gaussian-process prior on a
//     finite arm set, the synthetic setting of Calandriello et al. (2019),
//     "Gaussian process optimization with adaptive sketching: scalable and no
//     regret" (BKB), Fig. 2.
//
// Arm sets are n x d matrices, one arm per row: full grids (Grid), i.i.d.
// uniform points (Uniform), scrambled Sobol points (Sobol), Latin hypercubes
// (LatinHypercube), or points read from a CSV file (LoadCSV).
//
// Every builder and constructor validates its input and returns an error
// rather than panicking; only the methods documented as such (Function.Value
// with a point of the wrong dimension) panic on programmer errors.
package objectives

import "context"

// Objective is a black-box reward to be MAXIMISED. Evaluate returns the
// (possibly noisy) reward observed at x. Implementations must not retain or
// modify x. External plugin processes implement it too, so Evaluate may block,
// and must return promptly with ctx's error once ctx is done.
type Objective interface {
	Evaluate(ctx context.Context, x []float64) (float64, error)
}

// ObjectiveFunc adapts an ordinary function to the Objective interface.
type ObjectiveFunc func(ctx context.Context, x []float64) (float64, error)

// Evaluate returns f(ctx, x).
func (f ObjectiveFunc) Evaluate(ctx context.Context, x []float64) (float64, error) {
	return f(ctx, x)
}
