package online

import (
	"fmt"
	"slices"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// Mode selects between the two forecasters of Jézéquel et al. (NeurIPS 2019) (pitfall P5).
type Mode int

const (
	// KRR is online kernel ridge regression: yhat_t = phi(x_t)^T A_{t-1}^{-1} b_{t-1},
	// the "Kernel Ridge Regression / Projected-KRR" of the real-data runs
	// (Jézéquel et al., NeurIPS 2019, Section 4).
	KRR Mode = iota
	// AWV is the Vovk-Azoury-Warmuth forecaster (Jézéquel et al., NeurIPS 2019, eq. 3): the
	// current point enters A before predicting, yhat_t = phi(x_t)^T A_t^{-1} b_{t-1}
	// = yhat_KRR / (1 + s_t^2) with s_t^2 = phi(x_t)^T A_{t-1}^{-1} phi(x_t).
	AWV
)

// String returns "krr" or "awv".
func (m Mode) String() string {
	if m == AWV {
		return "awv"
	}
	return "krr"
}

// DefaultExactCapacity is the default largest number of examples an Exact
// learner stores. Its Cholesky factor needs 8 s^2 bytes with s the next
// power of two (chol.Factor's storage), 512 MiB at 8192.
const DefaultExactCapacity = 8192

// Exact is the exact online kernel forecaster of Jézéquel et al. (NeurIPS 2019): Kernel-AWV
// (eq. 3, Proposition 1) or online kernel ridge regression, in dual form
//
//	yhat_KRR = k_{t-1}(x_t)^T (K_{t-1} + lambda I)^{-1} Y_{t-1},
//	yhat_AWV = yhat_KRR / (1 + s_t^2),  s_t^2 = (k(x_t,x_t) - k^T (K + lambda I)^{-1} k) / lambda,
//
// the identity of the implementation notes on Jézéquel et al. (NeurIPS 2019) Section 1.1. It keeps the Cholesky factor L of
// K_{t-1} + lambda I (grown by one row per round, O(t^2)) and v = L^{-1} Y,
// so that a prediction is one triangular solve z = L^{-1} k and
// yhat_KRR = z.v. O(t^2) time per round and O(t^2) memory: it is the
// reference the sketched learners are compared against.
type Exact struct {
	k        kernel.Kernel
	lambda   float64
	mode     Mode
	dim      int
	capacity int
	xs       []float64
	f        chol.Factor
	v        []float64
	// cache of the last Predict: z = L^{-1} k_t(x) for x = cx.
	cx  []float64
	cz  []float64
	ckx float64
	cok bool
}

// NewExact returns an exact KRR or Kernel-AWV learner with ridge lambda > 0
// for points of dimension dim, refusing to store more than capacity points
// (DefaultExactCapacity if capacity <= 0).
func NewExact(k kernel.Kernel, dim int, lambda float64, mode Mode, capacity int) (*Exact, error) {
	if err := kernel.Validate(k); err != nil {
		return nil, err
	}
	if dim < 1 {
		return nil, fmt.Errorf("online: dimension must be >= 1, got %d", dim)
	}
	if err := positive("ridge lambda", lambda); err != nil {
		return nil, err
	}
	if capacity <= 0 {
		capacity = DefaultExactCapacity
	}
	return &Exact{k: k, lambda: lambda, mode: mode, dim: dim, capacity: capacity}, nil
}

// Name returns "kawv" or "krr".
func (e *Exact) Name() string {
	if e.mode == AWV {
		return "kawv"
	}
	return "krr"
}

// Size returns the number of stored points t.
func (e *Exact) Size() int { return e.f.Size() }

// Capacity returns the largest number of points the learner stores.
func (e *Exact) Capacity() int { return e.capacity }

func (e *Exact) embed(x []float64) {
	if e.cok && slices.Equal(e.cx, x) {
		return
	}
	t := e.f.Size()
	e.cz = slices.Grow(e.cz[:0], t+1)[:t]
	for i := range e.cz {
		e.cz[i] = e.k.Eval(e.xs[i*e.dim:(i+1)*e.dim], x)
	}
	e.f.SolveL(e.cz)
	e.ckx = kernel.Diag(e.k, x)
	e.cx = append(e.cx[:0], x...)
	e.cok = true
}

// Predict returns yhat_t at x.
func (e *Exact) Predict(x []float64) float64 {
	if len(x) != e.dim {
		panic(fmt.Sprintf("online: point has dimension %d, want %d", len(x), e.dim))
	}
	e.embed(x)
	y := dot(e.cz, e.v)
	if e.mode == AWV {
		s2 := (e.ckx - dot(e.cz, e.cz)) / e.lambda
		if s2 < 0 {
			s2 = 0
		}
		y /= 1 + s2
	}
	return y
}

// Learn appends (x, y): L gains the row (z, d), d = sqrt(k(x,x) + lambda - ||z||^2),
// and v gains (y - z.v)/d.
func (e *Exact) Learn(x []float64, y float64) error {
	if err := checkDim(x, e.dim); err != nil {
		return err
	}
	if e.f.Size() >= e.capacity {
		return fmt.Errorf("online: exact learner is full (%d points); it needs O(t^2) memory", e.capacity)
	}
	e.embed(x)
	d := e.f.AppendSolved(e.cz, e.ckx+e.lambda)
	e.v = append(e.v, (y-dot(e.cz, e.v))/d)
	e.xs = append(e.xs, x...)
	e.cok = false
	return nil
}
