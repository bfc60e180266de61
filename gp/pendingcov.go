package gp

import (
	"fmt"

	"github.com/bkb-go/bkb/kernel"
)

// CrossCovariance predicts at a point together with its posterior
// covariances with a fixed set of points (the pending evaluations of
// parallel workers, whose hallucinated observations GP-BUCB conditions on;
// Desautels et al. 2014). The fixed points' embeddings are computed once,
// so a prediction costs about what Predict costs plus O(p m) for p points.
// It reflects the posterior when it was made; it is not safe for
// concurrent use.
type CrossCovariance struct {
	dim    int
	k      kernel.Kernel
	pts    [][]float64
	emb    [][]float64 // per point: DTC z_p, Exact L^{-1} k_t(p)
	proj   [][]float64 // per point (DTC): L_V^{-1} z_p
	z, q   []float64
	lambda float64
	dtc    *DTC
	exact  *Exact
}

// CrossCovariance returns the covariances with pts of the DTC posterior
// on the 1/lambda scale of Variances:
//
//	c~(x, p) = (k(x,p) - z(x)^T z(p))/lambda + z(x)^T V^{-1} z(p),
//
// whose diagonal is sigma~^2. lambda*c~ is a covariance function,
// so hallucinated observations can be conditioned on through it whether
// or not the points are in the dictionary. O(p (m d + m^2)).
func (g *DTC) CrossCovariance(pts [][]float64) (*CrossCovariance, error) {
	c := &CrossCovariance{dim: g.dim, k: g.k, lambda: g.lambda, dtc: g}
	m := g.ny.Size()
	for _, p := range pts {
		if err := checkPoint(p, g.dim); err != nil {
			return nil, err
		}
		z := make([]float64, m)
		g.ny.Embed(z, p)
		q := append([]float64(nil), z...)
		g.vf.SolveL(q)
		c.pts, c.emb, c.proj = append(c.pts, p), append(c.emb, z), append(c.proj, q)
	}
	c.z, c.q = make([]float64, m), make([]float64, m)
	return c, nil
}

// CrossCovariance returns the exact posterior's covariances with pts,
// c_t(x, p) = k(x,p) - k_t(x)^T (K_t + lambda I)^{-1} k_t(p), as
// Covariance computes them. O(p t^2).
func (g *Exact) CrossCovariance(pts [][]float64) (*CrossCovariance, error) {
	c := &CrossCovariance{dim: g.dim, k: g.k, lambda: g.lambda, exact: g}
	t := g.Len()
	for _, p := range pts {
		if err := checkPoint(p, g.dim); err != nil {
			return nil, err
		}
		c.pts, c.emb = append(c.pts, p), append(c.emb, g.embed(make([]float64, t), p))
	}
	c.z = make([]float64, t)
	return c, nil
}

// Len is the number of fixed points.
func (c *CrossCovariance) Len() int { return len(c.pts) }

// Between returns the covariance of fixed points a and b.
func (c *CrossCovariance) Between(a, b int) float64 {
	kab := c.k.Eval(c.pts[a], c.pts[b])
	if c.dtc != nil {
		return (kab-dot(c.emb[a], c.emb[b]))/c.lambda + dot(c.proj[a], c.proj[b])
	}
	return kab - dot(c.emb[a], c.emb[b])
}

// Predict returns the posterior mean and variance at x, as the
// posterior's Predict does, and writes into dst (length Len()) the
// covariances of x with the fixed points.
func (c *CrossCovariance) Predict(x, dst []float64) (mean, variance float64, err error) {
	if err := checkPoint(x, c.dim); err != nil {
		return 0, 0, err
	}
	if len(dst) != len(c.pts) {
		return 0, 0, fmt.Errorf("gp: destination has length %d, want %d", len(dst), len(c.pts))
	}
	if g := c.dtc; g != nil {
		res := g.ny.Embed(c.z, x)
		copy(c.q, c.z)
		g.vf.SolveL(c.q)
		for a, p := range c.pts {
			dst[a] = (c.k.Eval(x, p)-dot(c.z, c.emb[a]))/c.lambda + dot(c.q, c.proj[a])
		}
		return dot(c.z, g.beta), max(res, 0)/c.lambda + dot(c.q, c.q), nil
	}
	g := c.exact
	z := g.embed(c.z, x)
	for a, p := range c.pts {
		dst[a] = c.k.Eval(x, p) - dot(z, c.emb[a])
	}
	return dot(z, g.alpha), max(0, kernel.Diag(c.k, x)-dot(z, z)), nil
}
