package gp

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
