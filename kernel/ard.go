package kernel

import (
	"errors"
	"fmt"
	"math"
)

// ARD (automatic relevance determination) kernels: stationary kernels with
// one length scale per input dimension, the covariance every serious BO tool
// fits by marginal likelihood (Rasmussen & Williams 2006, eq. 5.1; section
// 4.2 for the Matern family). A dimension whose fitted length scale is long
// has little influence on the function, hence the name.

// RBFARD is the squared-exponential kernel with one length scale per
// dimension,
//
//	k(x, y) = Variance * exp(-r^2/2),   r^2 = sum_i ((x_i - y_i)/LengthScales[i])^2.
//
// Unlike RBF, the zero Variance is not read as 1: Variance is the signal
// variance and must be set (Validate reports 0). With all length scales
// equal to l it is RBF{LengthScale: l, Variance: Variance}.
type RBFARD struct {
	LengthScales []float64
	Variance     float64
}

// Matern52ARD is the Matern nu = 5/2 kernel with one length scale per
// dimension (Rasmussen & Williams eq. 4.17 with r scaled per dimension),
//
//	k(x, y) = Variance * (1 + sqrt(5) r + 5 r^2/3) exp(-sqrt(5) r),
//	r^2 = sum_i ((x_i - y_i)/LengthScales[i])^2.
//
// Variance must be set (Validate reports 0). With all length scales equal to
// l it is Matern{Nu: 2.5, LengthScale: l, Variance: Variance}.
type Matern52ARD struct {
	LengthScales []float64
	Variance     float64
}

// ARDGradienter is implemented by the ARD kernels: it evaluates k(x, y) and
// its derivatives with respect to the log length scales, the gradient a
// marginal-likelihood fit needs (dK/dtheta in Rasmussen & Williams eq. 5.9).
// The derivative with respect to the log variance is k itself.
type ARDGradienter interface {
	Kernel
	// EvalGrad returns k(x, y) and writes dk/dlog(LengthScales[i]) into
	// grad[i]; grad must have len(x) entries. It does not allocate.
	EvalGrad(grad, x, y []float64) float64
}

// scaledSq returns sum_i ((x_i-y_i)/l_i)^2. Written by hand
// for the same reason as sqDist: it is the innermost loop of the kernel.
func scaledSq(l, x, y []float64) float64 {
	if len(x) != len(y) || len(x) != len(l) {
		panic(fmt.Sprintf("kernel: ARD dimension mismatch: x %d, y %d, length scales %d", len(x), len(y), len(l)))
	}
	y = y[:len(x)]
	l = l[:len(x)]
	var s float64
	for i, xi := range x {
		d := (xi - y[i]) / l[i]
		s += d * d
	}
	return s
}

// scaledSqGrad returns r^2 and writes ((x_i-y_i)/l_i)^2 into g[i].
func scaledSqGrad(g, l, x, y []float64) float64 {
	if len(x) != len(y) || len(x) != len(l) || len(g) != len(x) {
		panic(fmt.Sprintf("kernel: ARD dimension mismatch: x %d, y %d, length scales %d, grad %d", len(x), len(y), len(l), len(g)))
	}
	y = y[:len(x)]
	l = l[:len(x)]
	g = g[:len(x)]
	var s float64
	for i, xi := range x {
		d := (xi - y[i]) / l[i]
		d *= d
		g[i] = d
		s += d
	}
	return s
}

func validateARD(name string, l []float64, v float64) error {
	if len(l) == 0 {
		return errors.New("kernel: " + name + " needs at least one length scale")
	}
	for i, li := range l {
		if err := checkPositive(fmt.Sprintf("%s length scale %d", name, i), li); err != nil {
			return err
		}
	}
	return checkPositive(name+" variance (the signal variance; 0 is not read as 1)", v)
}

// Eval returns k(x, y). It panics if len(x), len(y) and len(LengthScales)
// differ, a programmer error.
func (k RBFARD) Eval(x, y []float64) float64 {
	return k.Variance * math.Exp(-0.5*scaledSq(k.LengthScales, x, y))
}

// EvalGrad returns k(x, y) and writes dk/dlog l_i = k (x_i-y_i)^2 / l_i^2
// into grad[i].
func (k RBFARD) EvalGrad(grad, x, y []float64) float64 {
	r2 := scaledSqGrad(grad, k.LengthScales, x, y)
	v := k.Variance * math.Exp(-0.5*r2)
	for i := range grad {
		grad[i] *= v
	}
	return v
}

// Validate reports an empty length-scale vector or a non-positive or
// non-finite length scale or variance.
func (k RBFARD) Validate() error { return validateARD("RBFARD", k.LengthScales, k.Variance) }

// Diag returns k(x, x) = Variance.
func (k RBFARD) Diag([]float64) float64 { return k.Variance }

// Scale returns k(x, x) = Variance.
func (k RBFARD) Scale() float64 { return k.Variance }

// SampleFrequency draws omega_i ~ N(0, 1/LengthScales[i]^2), the spectral
// density of the ARD Gaussian kernel; dst must have len(LengthScales) entries.
func (k RBFARD) SampleFrequency(dst []float64, src Source) {
	if len(dst) != len(k.LengthScales) {
		panic(fmt.Sprintf("kernel: RBFARD frequency has length %d, want %d", len(dst), len(k.LengthScales)))
	}
	for i := range dst {
		dst[i] = src.NormFloat64() / k.LengthScales[i]
	}
}

// Eval returns k(x, y). It panics if len(x), len(y) and len(LengthScales)
// differ, a programmer error.
func (k Matern52ARD) Eval(x, y []float64) float64 {
	s := math.Sqrt(5 * scaledSq(k.LengthScales, x, y))
	return k.Variance * (1 + s + s*s/3) * math.Exp(-s)
}

// EvalGrad returns k(x, y) and writes dk/dlog l_i into grad[i]. With
// s = sqrt(5) r, dk/dr = -(5/3) Variance r (1+s) e^-s and
// dr/dlog l_i = -((x_i-y_i)/l_i)^2 / r, so
//
//	dk/dlog l_i = (5/3) Variance (1+s) e^-s ((x_i-y_i)/l_i)^2,
//
// which has no 1/r and is exact at r = 0.
func (k Matern52ARD) EvalGrad(grad, x, y []float64) float64 {
	r2 := scaledSqGrad(grad, k.LengthScales, x, y)
	s := math.Sqrt(5 * r2)
	e := k.Variance * math.Exp(-s)
	c := 5.0 / 3 * (1 + s) * e
	for i := range grad {
		grad[i] *= c
	}
	return (1 + s + s*s/3) * e
}

// Validate reports an empty length-scale vector or a non-positive or
// non-finite length scale or variance.
func (k Matern52ARD) Validate() error {
	return validateARD("Matern52ARD", k.LengthScales, k.Variance)
}

// Diag returns k(x, x) = Variance.
func (k Matern52ARD) Diag([]float64) float64 { return k.Variance }

// Scale returns k(x, x) = Variance.
func (k Matern52ARD) Scale() float64 { return k.Variance }

// SampleFrequency draws omega from the ARD Matern 5/2 spectral density, a
// multivariate Student t with 5 degrees of freedom scaled by 1/LengthScales[i]
// per dimension: omega_i = z_i / l_i * sqrt(5/u), z ~ N(0, I), u ~ chi^2(5).
func (k Matern52ARD) SampleFrequency(dst []float64, src Source) {
	if len(dst) != len(k.LengthScales) {
		panic(fmt.Sprintf("kernel: Matern52ARD frequency has length %d, want %d", len(dst), len(k.LengthScales)))
	}
	var u float64
	for range 5 {
		g := src.NormFloat64()
		u += g * g
	}
	s := math.Sqrt(5 / u)
	for i := range dst {
		dst[i] = src.NormFloat64() * s / k.LengthScales[i]
	}
}
