package objectives

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// MaxGPSampleArms bounds the number of distinct arms of a GPSample: drawing
// the sample needs the dense n x n kernel matrix and its Cholesky factor
// (O(n^2) memory, 3.2 GB each at the limit, and O(n^3) time).
const MaxGPSampleArms = 20000

// GPSample is a function drawn from a zero-mean Gaussian-process prior with
// covariance k on a finite arm set, f ~ N(0, K) with K_ij = k(x_i, x_j):
// the synthetic objective of Calandriello, Carratino, Lazaric, Valko and
// Rosasco, "Gaussian process optimization with adaptive sketching: scalable
// and no regret" (COLT 2019), Fig. 2. It is noiseless: Evaluate returns f at
// the arm. A GPSample is immutable after construction and safe for
// concurrent use.
type GPSample struct {
	arms   *mat.Dense
	values []float64
	index  map[string]int
	best   int
	jitter float64
}

// NewGPSample draws f ~ N(0, K + jitter I) on the rows of arms, as
// f = L z with L the Cholesky factor and z a standard normal vector drawn
// from math/rand/v2's PCG generator seeded with seed (so the same kernel,
// arms and seed give the same function).
//
// The jitter is adaptive: it starts at 1e-10 times the mean of K's diagonal
// and grows by factors of 10 up to 1e-4 times that mean until the Cholesky
// factorisation succeeds; NewGPSample fails if none does. Duplicate arms
// (bitwise-equal rows) share one value, so they do not make K singular.
//
// It is an error if k is nil or invalid (kernel.Validate), arms is nil or
// empty or has a non-finite entry, there are more than MaxGPSampleArms
// distinct arms, or the kernel matrix has a non-finite entry or a
// non-positive mean diagonal. NewGPSample copies arms.
func NewGPSample(k kernel.Kernel, arms *mat.Dense, seed uint64) (*GPSample, error) {
	if err := kernel.Validate(k); err != nil {
		return nil, fmt.Errorf("objectives: NewGPSample: %w", err)
	}
	if arms == nil || arms.IsEmpty() {
		return nil, errors.New("objectives: NewGPSample: no arms")
	}
	n, d := arms.Dims()
	g := &GPSample{
		arms:   mat.DenseCopyOf(arms),
		values: make([]float64, n),
		index:  make(map[string]int, n),
	}
	// Deduplicate: uniq[i] is the index among distinct arms of arm i.
	uniq := make([]int, n)
	var distinct []int // arm index of each distinct arm
	for i := 0; i < n; i++ {
		row := g.arms.RawRowView(i)
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("objectives: NewGPSample: arm %d, coordinate %d is %v", i, j, v)
			}
		}
		key := armKey(row)
		if u, ok := g.index[key]; ok {
			uniq[i] = uniq[u]
			continue
		}
		if len(distinct) == MaxGPSampleArms {
			return nil, fmt.Errorf("objectives: NewGPSample: more than %d distinct arms", MaxGPSampleArms)
		}
		g.index[key] = i
		uniq[i] = len(distinct)
		distinct = append(distinct, i)
	}
	m := len(distinct)
	u := mat.NewDense(m, d, nil)
	for r, i := range distinct {
		u.SetRow(r, g.arms.RawRowView(i))
	}

	// K is built directly in symmetric storage (rather than with
	// kernel.Matrix into a Dense) so that only K and its Cholesky factor
	// are held in memory.
	sym := mat.NewSymDense(m, nil)
	diag := make([]float64, m)
	var trace float64
	for i := 0; i < m; i++ {
		xi := u.RawRowView(i)
		for j := 0; j <= i; j++ {
			v := k.Eval(xi, u.RawRowView(j))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("objectives: NewGPSample: kernel matrix entry (%d, %d) is %v", i, j, v)
			}
			sym.SetSym(i, j, v)
		}
		diag[i] = sym.At(i, i)
		trace += diag[i]
	}
	meanDiag := trace / float64(m)
	if !(meanDiag > 0) {
		return nil, fmt.Errorf("objectives: NewGPSample: kernel matrix has mean diagonal %v, want > 0", meanDiag)
	}

	var chol mat.Cholesky
	ok := false
	for rel := 1e-10; rel <= 1e-4*(1+1e-9); rel *= 10 {
		jit := rel * meanDiag
		for i, v := range diag {
			sym.SetSym(i, i, v+jit)
		}
		if chol.Factorize(sym) {
			ok = true
			g.jitter = jit
			break
		}
	}
	if !ok {
		return nil, fmt.Errorf("objectives: NewGPSample: kernel matrix of %d arms is not positive definite even with jitter 1e-4 * %v", m, meanDiag)
	}

	rng := newRand(seed, streamGP)
	z := mat.NewVecDense(m, nil)
	for i := 0; i < m; i++ {
		z.SetVec(i, rng.NormFloat64())
	}
	var l mat.TriDense
	chol.LTo(&l)
	f := mat.NewVecDense(m, nil)
	f.MulVec(&l, z)
	for i := range g.values {
		g.values[i] = f.AtVec(uniq[i])
		if g.values[i] > g.values[g.best] {
			g.best = i
		}
	}
	return g, nil
}

// armKey returns a map key identifying x bitwise, except that -0 and +0
// (which compare equal) share a key.
func armKey(x []float64) string {
	b := make([]byte, 0, 8*len(x))
	for _, v := range x {
		if v == 0 {
			v = 0 // canonicalise -0
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}

// Values returns a copy of f on each arm, in the order of the rows of arms.
func (g *GPSample) Values() []float64 {
	return append([]float64(nil), g.values...)
}

// Evaluate returns f(x). x must be equal, coordinate by coordinate and bit
// for bit (except that -0 equals +0), to one of the arms; any other point,
// a point of the wrong dimension, or a done ctx is an error.
func (g *GPSample) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkPoint("GPSample", x, g.Dim()); err != nil {
		return 0, err
	}
	i, ok := g.index[armKey(x)]
	if !ok {
		return 0, fmt.Errorf("objectives: GPSample: point %v is not one of the %d arms", x, len(g.values))
	}
	return g.values[i], nil
}

// Optimum returns the largest value of f over the arms.
func (g *GPSample) Optimum() float64 { return g.values[g.best] }

// ArgMax returns the index of (the first) arm where f is largest.
func (g *GPSample) ArgMax() int { return g.best }

// Arms returns a copy of the arm set.
func (g *GPSample) Arms() *mat.Dense { return mat.DenseCopyOf(g.arms) }

// Dim returns the dimension of the arms.
func (g *GPSample) Dim() int {
	_, d := g.arms.Dims()
	return d
}

// Jitter returns the jitter that was added to the diagonal of the kernel
// matrix to factorise it.
func (g *GPSample) Jitter() float64 { return g.jitter }
