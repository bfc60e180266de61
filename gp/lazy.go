package gp

import "math"

// Accessors for policies that keep only part of the arm set as candidates
// and bound the posterior of the others (bandit's lazy UCB).

// LearnedVariance returns z(x_i)^T V^{-1} z(x_i) for candidate i, the part
// of its variance sigma~^2 (1/lambda scale) that observations reduce; the
// rest, (k(x,x) - ||z||^2)/lambda, is the Nystrom residual, which only a
// dictionary change moves. An observation at x_i with reward y moves the
// mean of every x by (z(x)^T V^{-1} z_i)(y - mu~(x_i))/(1 + z_i^T V^{-1} z_i)
// and lowers z(x)^T V^{-1} z(x) by the square of the first factor over
// the denominator; a lazy policy's bound on the mean's motion uses it.
// O(m^2).
func (g *DTC) LearnedVariance(i int) float64 {
	g.flush()
	m := g.ny.Size()
	if m == 0 {
		return 0
	}
	q := g.r.load(g.buf(&g.w3, m), i, m)
	g.vf.SolveL(q)
	return dot(q, q)
}

// Observed returns how many times candidate i was observed.
func (g *DTC) Observed(i int) int { return g.count[i] }

// Basis identifies the basis of the embedding: it changes whenever a
// dictionary change or a rebuild changes the coordinates z(x), and only
// then. Between two equal values, V only grows (observations are rank-one
// updates) and mu~(x) = z(x)^T w with the same z(x).
func (g *DTC) Basis() int { return g.changes + g.rebuilds }

// Weights appends the weights w = V^{-1} Z^T W ybar of the posterior mean
// mu~(x) = z(x)^T w to dst.
func (g *DTC) Weights(dst []float64) []float64 { return append(dst, g.beta...) }

// WeightDistance returns ||w - w0||_V = sqrt((w - w0)^T V (w - w0)) for
// weights w0 taken (Weights) in the same Basis. For every x,
// |mu~(x) - z(x)^T w0| <= sqrt(z(x)^T V^{-1} z(x)) ||w - w0||_V
// (Cauchy-Schwarz in the V inner product). O(m^2).
func (g *DTC) WeightDistance(w0 []float64) float64 {
	m := len(g.beta)
	if len(w0) != m {
		return math.Inf(1)
	}
	d := g.buf(&g.w3, m)
	for i := range d {
		d[i] = g.beta[i] - w0[i]
	}
	// ||L^T d||^2 with V = L L^T.
	var s float64
	y := make([]float64, m)
	for i := 0; i < m; i++ {
		row := g.vf.Row(i)
		di := d[i]
		for j, l := range row {
			y[j] += l * di
		}
	}
	for _, v := range y {
		s += v * v
	}
	return math.Sqrt(s)
}
