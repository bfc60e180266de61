package gp

import (
	"fmt"
	"math"
)

// TargetWeights returns the weights w of the DTC posterior mean of
// another target observed at the same points as this posterior, under the
// same kernel, noise and dictionary: mu_j(x) = z(x)^T w with
// w = V^{-1} Z^T y_j (Calandriello et al. 2019, Eq. 4, with y_j for y).
// The posterior variance does not depend on the observed values, so it is
// the same for every target: one dictionary and one factor of V serve the
// objective, each constraint and each further objective of a study, at
// O(n (m d + m^2)) per target for n observations (each point's embedding
// is computed afresh) and O(m d + m^2) per prediction (PredictMeans).
//
// xs and ys are the observations of the other target, one per observation
// of this posterior (repeats included, in any order): xs[i] a point this
// posterior observed. The weights are valid until the next observation or
// change of the dictionary.
func (g *DTC) TargetWeights(xs [][]float64, ys []float64) ([]float64, error) {
	if len(xs) != len(ys) {
		return nil, fmt.Errorf("gp: %d points and %d values", len(xs), len(ys))
	}
	if len(xs) != g.nobs {
		return nil, fmt.Errorf("gp: %d observations of the other target, the posterior has %d", len(xs), g.nobs)
	}
	m := g.ny.Size()
	w := make([]float64, m)
	z := make([]float64, m)
	for i, x := range xs {
		if err := checkPoint(x, g.dim); err != nil {
			return nil, err
		}
		if math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			return nil, fmt.Errorf("gp: value %d is %v", i, ys[i])
		}
		g.ny.Embed(z, x)
		for a := range w {
			w[a] += z[a] * ys[i]
		}
	}
	if m > 0 {
		g.vf.Solve(w)
	}
	return w, nil
}

// PredictMeans writes into dst[j] the posterior mean z(x)^T ws[j] at x of
// each target whose weights TargetWeights returned, embedding x once.
func (g *DTC) PredictMeans(dst []float64, x []float64, ws [][]float64) error {
	if err := checkPoint(x, g.dim); err != nil {
		return err
	}
	if len(dst) < len(ws) {
		return fmt.Errorf("gp: %d means for %d targets", len(dst), len(ws))
	}
	m := g.ny.Size()
	z := make([]float64, m)
	g.ny.Embed(z, x)
	for j, w := range ws {
		if len(w) != m {
			return fmt.Errorf("gp: target %d has %d weights, the dictionary %d points (stale weights?)", j, len(w), m)
		}
		dst[j] = dot(z, w)
	}
	return nil
}
