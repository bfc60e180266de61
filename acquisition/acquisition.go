// Package acquisition turns posterior means and variances over a finite
// arm set into scores: UCB with its beta schedules, expected improvement,
// Thompson draws, and a consistent argmax. It does not know how the
// posterior was computed (BoTorch's split between models and acquisition
// functions): every function reads flat mean/variance slices and writes
// into a caller's buffer.
package acquisition

import (
	"fmt"
	"math"
)

// UCB writes dst[i] = mean[i] + beta*sqrt(variance[i]) (Calandriello et al., COLT 2019, Eq. 3;
// negative variances from rounding count as 0).
func UCB(dst, mean, variance []float64, beta float64) {
	checkLens(dst, mean, variance)
	for i, m := range mean {
		v := variance[i]
		if v < 0 {
			v = 0
		}
		dst[i] = m + beta*math.Sqrt(v)
	}
}

// ExpectedImprovement writes the expected improvement over best,
// E[max(f(x) - best - xi, 0)] under N(mean, variance) (Jones et al. 1998):
// (mu - best - xi) Phi(z) + sigma phi(z), z = (mu - best - xi)/sigma.
func ExpectedImprovement(dst, mean, variance []float64, best, xi float64) {
	checkLens(dst, mean, variance)
	for i, m := range mean {
		d := m - best - xi
		v := variance[i]
		if v <= 0 {
			dst[i] = math.Max(d, 0)
			continue
		}
		s := math.Sqrt(v)
		z := d / s
		dst[i] = d*0.5*math.Erfc(-z/math.Sqrt2) + s*math.Exp(-0.5*z*z)/math.Sqrt(2*math.Pi)
	}
}

// Normal is a source of standard normal draws; *rand.Rand of
// math/rand/v2 satisfies it.
type Normal interface {
	NormFloat64() float64
}

// Thompson writes one draw per arm from its marginal posterior,
// mean + scale*sqrt(variance)*N(0,1). Arms are drawn independently: a joint
// draw over A arms costs O(A^3), which is what Thompson sampling on a
// finite arm set avoids in practice; scale lets a DTC posterior's
// 1/lambda-scaled variance be brought back to the GP scale.
func Thompson(dst, mean, variance []float64, scale float64, src Normal) {
	checkLens(dst, mean, variance)
	for i, m := range mean {
		v := variance[i]
		if v < 0 {
			v = 0
		}
		dst[i] = m + scale*math.Sqrt(v)*src.NormFloat64()
	}
}

// Argmax returns the index of the largest score, breaking ties by the
// lowest index, so the same scores always give the same arm. NaN scores
// are never chosen; it returns -1 when every score is NaN or x is empty.
func Argmax(x []float64) int {
	best := -1
	bv := math.Inf(-1)
	for i, v := range x {
		if v > bv || (best < 0 && v == bv) {
			best, bv = i, v
		}
	}
	return best
}

func checkLens(dst, mean, variance []float64) {
	if len(dst) != len(mean) || len(mean) != len(variance) {
		panic(fmt.Sprintf("acquisition: lengths dst %d, mean %d, variance %d differ", len(dst), len(mean), len(variance)))
	}
}

// State is what a beta schedule may read at step t.
type State struct {
	T      int     // number of observations so far
	Arms   int     // size of the arm set
	SumVar float64 // sum over observations of the (approximate) posterior variance, the d_eff estimate
	Lambda float64 // noise variance of the posterior
	Kappa2 float64 // sup_x k(x, x)
}

// Beta is an exploration schedule beta_t for UCB.
type Beta interface {
	Beta(s State) float64
}

// Constant is a fixed beta, the choice most users make in practice
// (theoretical schedules over-explore in practice).
type Constant float64

// Beta returns the constant.
func (c Constant) Beta(State) float64 { return float64(c) }

// BKBTheorem is the beta~_t of Theorem 4.1 of Calandriello et al. (COLT 2019), for the DTC
// variance on the 1/lambda scale:
//
//	beta~_t = 2 xi sqrt(alpha log(kappa^2 t) sum_s sigma~^2(x_s) + log(1/delta))
//	          + (1 + 1/sqrt(1-eps)) sqrt(lambda) F
//
// with alpha = (1+eps)/(1-eps), F a bound on ||f||_H and xi the noise
// standard deviation.
type BKBTheorem struct {
	F, Delta, Eps, Xi float64
}

// Beta returns beta~_t. log(kappa^2 t) is floored at 0 for small t.
func (b BKBTheorem) Beta(s State) float64 {
	alpha := (1 + b.Eps) / (1 - b.Eps)
	lt := math.Max(math.Log(math.Max(s.Kappa2, 1e-300)*float64(max(s.T, 1))), 0)
	return 2*b.Xi*math.Sqrt(alpha*lt*s.SumVar+math.Log(1/b.Delta)) +
		(1+1/math.Sqrt(1-b.Eps))*math.Sqrt(s.Lambda)*b.F
}

// Validate reports parameters outside the theorem's range.
func (b BKBTheorem) Validate() error {
	if !(b.Eps > 0 && b.Eps < 1) || !(b.Delta > 0 && b.Delta < 1) || !(b.F >= 0) || !(b.Xi >= 0) {
		return fmt.Errorf("acquisition: BKB beta needs 0<eps<1, 0<delta<1, F>=0, xi>=0; got eps=%v delta=%v F=%v xi=%v", b.Eps, b.Delta, b.F, b.Xi)
	}
	return nil
}

// BatchBKB is the beta of the authors' batch-bkb code (Calandriello et
// al., ICML 2020; github.com/luigicarratino/batch-bkb):
// sqrt(lambda) F + sqrt(xi^2 (logdet + log(1/delta))), with
// logdet ~ sum_s sigma~^2(x_s) log(t).
type BatchBKB struct {
	F, Delta, Xi float64
}

// Beta returns the batch-bkb beta.
func (b BatchBKB) Beta(s State) float64 {
	logdet := s.SumVar * math.Log(math.Max(float64(s.T), 1))
	return math.Sqrt(s.Lambda)*b.F + math.Sqrt(b.Xi*b.Xi*(logdet+math.Log(1/b.Delta)))
}

// GPUCBFinite is the beta of Srinivas et al. (2010), Theorem 1, for a
// finite arm set, on the GP variance scale (sigma, not sigma~):
// beta_t = sqrt(2 log(|A| t^2 pi^2 / (6 delta))).
type GPUCBFinite struct {
	Delta float64
}

// Beta returns the Srinivas et al. beta for step t (at least 1).
func (b GPUCBFinite) Beta(s State) float64 {
	t := float64(max(s.T, 1))
	return math.Sqrt(2 * math.Log(float64(s.Arms)*t*t*math.Pi*math.Pi/(6*b.Delta)))
}
