package gp

import (
	"fmt"
	"math"
)

// Normal is the randomness a posterior sample draws from; *rand.Rand of
// math/rand/v2 satisfies it.
type Normal interface {
	NormFloat64() float64
}

// SampleWeights writes into dst (length DictionarySize()) a draw of the
// DTC posterior's weights, w ~ N(V^{-1} Z^T W ybar, lambda V^{-1}) on the
// GP scale, and returns dst. With the Nystrom residual drawn independently
// per point (SampleAt), f(x) = z(x)^T w + sqrt(k(x,x) - ||z(x)||^2) eta_x is
// a draw from the DTC posterior jointly over any set of points: its
// covariance is lambda z(x)^T V^{-1} z(x') between distinct points and the
// posterior variance lambda sigma~^2(x) at each (Eq. 4, Calandriello et al. (COLT 2019)). This is
// what Thompson sampling over correlated candidates needs, where
// independent per-point draws (acquisition.Thompson) explore like a UCB
// with a bonus growing with the number of candidates. O(m^2).
func (g *DTC) SampleWeights(dst []float64, src Normal) []float64 {
	m := g.ny.Size()
	if len(dst) != m {
		panic(fmt.Sprintf("gp: weights have length %d, want %d", len(dst), m))
	}
	for i := range dst {
		dst[i] = src.NormFloat64()
	}
	// V = R R^T: u = R^{-T} xi has covariance R^{-T} R^{-1} = V^{-1}.
	g.vf.SolveLT(dst)
	s := math.Sqrt(g.lambda)
	for i := range dst {
		dst[i] = g.beta[i] + s*dst[i]
	}
	return dst
}

// SampleAt returns, for weights w from SampleWeights, the linear part
// z(x)^T w of the sample at x and the Nystrom residual
// k(x,x) - ||z(x)||^2 >= 0, the variance of its independent part.
// O(m d + m^2).
func (g *DTC) SampleAt(x, w []float64) (linear, residual float64, err error) {
	if err := checkPoint(x, g.dim); err != nil {
		return 0, 0, err
	}
	m := g.ny.Size()
	if len(w) != m {
		return 0, 0, fmt.Errorf("gp: weights have length %d, want %d (the dictionary changed since SampleWeights?)", len(w), m)
	}
	z := g.buf(&g.w3, m)
	res := g.ny.Embed(z, x)
	return dot(z, w), math.Max(res, 0), nil
}

// SampleCandidates writes into linear and residual (length
// NumCandidates(), either may be nil) the parts of the sample with
// weights w at every candidate, as SampleAt. O(A m).
func (g *DTC) SampleCandidates(linear, residual, w []float64) {
	m := g.ny.Size()
	if len(w) != m {
		panic(fmt.Sprintf("gp: weights have length %d, want %d", len(w), m))
	}
	g.flush()
	for i := 0; i < g.nc; i++ {
		row := g.r.slot(i)[:m]
		if linear != nil {
			linear[i] = dot(row, w)
		}
		if residual != nil {
			residual[i] = math.Max(g.r.kdiag[i]-dot(row, row), 0)
		}
	}
}
