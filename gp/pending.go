package gp

import (
	"fmt"
	"sync/atomic"

	"github.com/bkb-go/bkb/internal/chol"
)

// ConditionalVariances writes into dst (length NumCandidates) the
// posterior variance of every candidate conditioned on additional noisy
// observations at the pending candidates, whose values are not known yet.
// A GP's variance does not depend on the observed values, so this is exact
// (the "hallucination" of GP-BUCB, Desautels et al. 2014):
//
//	var'(x) = var(x) - c(x,P) (C_PP + lambda I)^{-1} c(P,x)
//
// with c the current posterior covariance. O(A p (t + p)) for p pending.
func (g *Exact) ConditionalVariances(dst []float64, pending []int) error {
	c := g.cand
	if c == nil {
		return fmt.Errorf("gp: no candidate set")
	}
	if err := checkPending(dst, pending, c.n()); err != nil {
		return err
	}
	p := len(pending)
	if p == 0 {
		copy(dst, c.vari)
		return nil
	}
	t := g.Len()
	prow := make([]float64, p*t) // c(x) of the pending candidates
	for a, ia := range pending {
		c.load(prow[a*t:(a+1)*t], ia, t)
	}
	cpp := make([]float64, p*p)
	for a, ia := range pending {
		for b, ib := range pending[:a+1] {
			v := g.k.Eval(c.point(ia), c.point(ib)) - dot(prow[a*t:(a+1)*t], prow[b*t:(b+1)*t])
			cpp[a*p+b], cpp[b*p+a] = v, v
		}
		cpp[a*p+a] += g.lambda
	}
	var f chol.Factor
	if err := f.Factorize(cpp, p, p); err != nil {
		return fmt.Errorf("gp: covariance of pending candidates: %w", err)
	}
	_, jit := f.Jitter()
	g.condJitter += jit
	var clamped atomic.Int64
	defer func() { g.clamps += int(clamped.Load()) }()
	parallelFor(c.n(), func(lo, hi int) {
		w := make([]float64, p)
		for i := lo; i < hi; i++ {
			x := c.point(i)
			for a, ia := range pending {
				w[a] = g.k.Eval(x, c.point(ia)) - c.dotRow(i, prow[a*t:(a+1)*t])
			}
			f.SolveL(w)
			v := c.vari[i] - dot(w, w)
			if v < 0 {
				v = 0
				clamped.Add(1)
			}
			dst[i] = v
		}
	})
	return nil
}

// ConditionalVariances writes into dst the DTC variance sigma~^2 of every
// candidate conditioned on additional observations at the pending
// candidates (their values unknown): V' = V + Z_P^T Z_P, so
//
//	sigma~'^2(x) = sigma~^2(x) - w^T (I + Z_P V^{-1} Z_P^T)^{-1} w,
//	w = Z_P V^{-1} z(x).
//
// These are the fantasy rank-one updates BBKB uses to choose a batch.
// O(A m p + p m^2).
func (g *DTC) ConditionalVariances(dst []float64, pending []int) error {
	g.flush()
	if err := checkPending(dst, pending, g.nc); err != nil {
		return err
	}
	r := g.r
	p, m := len(pending), g.ny.Size()
	if p == 0 || m == 0 {
		copy(dst, r.vari[:g.nc])
		return nil
	}
	gcols := make([]float64, p*m) // row a: V^{-1} z_a
	zp := make([]float64, p*m)
	for a, ia := range pending {
		r.load(zp[a*m:(a+1)*m], ia, m)
		g.solveV(gcols[a*m:(a+1)*m], zp[a*m:(a+1)*m])
	}
	cpp := make([]float64, p*p)
	for a := range pending {
		for b := 0; b <= a; b++ {
			v := dot(zp[a*m:(a+1)*m], gcols[b*m:(b+1)*m])
			cpp[a*p+b], cpp[b*p+a] = v, v
		}
		cpp[a*p+a]++
	}
	var f chol.Factor
	if err := f.Factorize(cpp, p, p); err != nil {
		return fmt.Errorf("gp: covariance of pending candidates: %w", err)
	}
	_, jit := f.Jitter()
	g.condJitter += jit
	var clamped atomic.Int64
	defer func() { g.clamps += int(clamped.Load()) }()
	parallelFor(g.nc, func(lo, hi int) {
		w := make([]float64, p)
		z := make([]float64, m)
		for i := lo; i < hi; i++ {
			r.load(z, i, m)
			for a := range w {
				w[a] = dot(z, gcols[a*m:(a+1)*m])
			}
			f.SolveL(w)
			v := r.vari[i] - dot(w, w)
			if v < 0 {
				v = 0
				clamped.Add(1)
			}
			dst[i] = v
		}
	})
	return nil
}

func checkPending(dst []float64, pending []int, n int) error {
	if len(dst) != n {
		return fmt.Errorf("gp: destination has length %d, want %d", len(dst), n)
	}
	for _, i := range pending {
		if i < 0 || i >= n {
			return fmt.Errorf("gp: pending candidate %d out of range [0,%d)", i, n)
		}
	}
	return nil
}
