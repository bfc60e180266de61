// Package kernel provides positive-definite kernels, batch kernel matrices
// and explicit feature maps (random Fourier features, Taylor features of the
// Gaussian kernel) shared by the Gaussian-process, bandit and online-learning
// packages of this module.
//
// A Kernel is a small interface with one method, so that a user can plug in
// their own covariance function; the batch helpers (Matrix, Column, Diagonal)
// write into caller-owned buffers and never allocate per entry.
package kernel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Kernel is a symmetric positive-definite covariance function k(x, y).
// Eval must not retain or modify x or y, and must be safe for concurrent use.
type Kernel interface {
	Eval(x, y []float64) float64
}

// Validator is implemented by kernels whose parameters can be checked.
// The constructors of the gp and bandit packages call Validate when present.
type Validator interface {
	Validate() error
}

// Validate returns the error of k's Validate method, if k has one, and nil
// otherwise. A nil kernel is an error.
func Validate(k Kernel) error {
	if k == nil {
		return errors.New("kernel: nil kernel")
	}
	if v, ok := k.(Validator); ok {
		return v.Validate()
	}
	return nil
}

// sqDist returns ||x-y||^2. Written by hand because it is the innermost loop
// of every stationary kernel and a BLAS call per pair costs more than the work.
func sqDist(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", len(x), len(y)))
	}
	y = y[:len(x)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(x); i += 2 {
		d0 := x[i] - y[i]
		d1 := x[i+1] - y[i+1]
		s0 += d0 * d0
		s1 += d1 * d1
	}
	if i < len(x) {
		d := x[i] - y[i]
		s0 += d * d
	}
	return s0 + s1
}

func dot(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", len(x), len(y)))
	}
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("kernel: %s must be positive and finite, got %v", name, v)
	}
	return nil
}

// RBF is the squared-exponential (Gaussian) kernel
//
//	k(x, y) = Variance * exp(-||x-y||^2 / (2 LengthScale^2)).
//
// The zero Variance is read as 1, so RBF{LengthScale: l} is the unit-variance
// kernel. With LengthScale = sigma it is the Gaussian kernel of Jézéquel et al. (NeurIPS 2019), Dai et al. (NIPS 2014), Li and Liao (ICML 2023) and Wen et al. (IJCAI 2024).
type RBF struct {
	LengthScale float64
	Variance    float64
}

func variance(v float64) float64 {
	if v == 0 {
		return 1
	}
	return v
}

// Eval returns k(x, y).
func (k RBF) Eval(x, y []float64) float64 {
	return variance(k.Variance) * math.Exp(-sqDist(x, y)/(2*k.LengthScale*k.LengthScale))
}

// Validate reports a non-positive length scale or variance.
func (k RBF) Validate() error {
	if err := checkPositive("RBF length scale", k.LengthScale); err != nil {
		return err
	}
	return checkPositive("RBF variance", variance(k.Variance))
}

// Diag returns k(x, x), which does not depend on x.
func (k RBF) Diag([]float64) float64 { return variance(k.Variance) }

// Matern is the Matern kernel with smoothness Nu in {0.5, 1.5, 2.5}:
//
//	nu = 1/2: Variance * exp(-r/l)
//	nu = 3/2: Variance * (1 + sqrt(3) r/l) exp(-sqrt(3) r/l)
//	nu = 5/2: Variance * (1 + sqrt(5) r/l + 5 r^2/(3 l^2)) exp(-sqrt(5) r/l)
//
// with r = ||x-y|| and l = LengthScale. The zero Variance is read as 1.
type Matern struct {
	Nu          float64
	LengthScale float64
	Variance    float64
}

// Eval returns k(x, y).
func (k Matern) Eval(x, y []float64) float64 {
	r := math.Sqrt(sqDist(x, y)) / k.LengthScale
	v := variance(k.Variance)
	switch k.Nu {
	case 0.5:
		return v * math.Exp(-r)
	case 1.5:
		s := math.Sqrt(3) * r
		return v * (1 + s) * math.Exp(-s)
	case 2.5:
		s := math.Sqrt(5) * r
		return v * (1 + s + s*s/3) * math.Exp(-s)
	}
	panic(fmt.Sprintf("kernel: Matern nu %v not in {0.5, 1.5, 2.5}", k.Nu))
}

// Validate reports an unsupported Nu or a non-positive length scale or variance.
func (k Matern) Validate() error {
	if k.Nu != 0.5 && k.Nu != 1.5 && k.Nu != 2.5 {
		return fmt.Errorf("kernel: Matern nu must be 0.5, 1.5 or 2.5, got %v", k.Nu)
	}
	if err := checkPositive("Matern length scale", k.LengthScale); err != nil {
		return err
	}
	return checkPositive("Matern variance", variance(k.Variance))
}

// Diag returns k(x, x), which does not depend on x.
func (k Matern) Diag([]float64) float64 { return variance(k.Variance) }

// Linear is the linear kernel k(x, y) = Variance * x.y + Offset.
// The zero Variance is read as 1.
type Linear struct {
	Variance float64
	Offset   float64
}

// Eval returns k(x, y).
func (k Linear) Eval(x, y []float64) float64 {
	return variance(k.Variance)*dot(x, y) + k.Offset
}

// Validate reports a non-positive variance or a negative offset.
func (k Linear) Validate() error {
	if err := checkPositive("linear variance", variance(k.Variance)); err != nil {
		return err
	}
	if k.Offset < 0 || math.IsNaN(k.Offset) || math.IsInf(k.Offset, 0) {
		return fmt.Errorf("kernel: linear offset must be finite and >= 0, got %v", k.Offset)
	}
	return nil
}

// Polynomial is the polynomial kernel k(x, y) = (Scale * x.y + Offset)^Degree.
// The zero Scale is read as 1.
type Polynomial struct {
	Degree int
	Scale  float64
	Offset float64
}

// Eval returns k(x, y).
func (k Polynomial) Eval(x, y []float64) float64 {
	b := variance(k.Scale)*dot(x, y) + k.Offset
	r := 1.0
	for i := 0; i < k.Degree; i++ {
		r *= b
	}
	return r
}

// Validate reports a degree below 1, a non-positive scale or a negative offset.
func (k Polynomial) Validate() error {
	if k.Degree < 1 {
		return fmt.Errorf("kernel: polynomial degree must be >= 1, got %d", k.Degree)
	}
	if err := checkPositive("polynomial scale", variance(k.Scale)); err != nil {
		return err
	}
	if k.Offset < 0 || math.IsNaN(k.Offset) || math.IsInf(k.Offset, 0) {
		return fmt.Errorf("kernel: polynomial offset must be finite and >= 0, got %v", k.Offset)
	}
	return nil
}

// Diagonaler is implemented by kernels that compute k(x, x) faster than Eval.
type Diagonaler interface {
	Diag(x []float64) float64
}

// Diag returns k(x, x), using k's Diag method when it has one.
func Diag(k Kernel, x []float64) float64 {
	if d, ok := k.(Diagonaler); ok {
		return d.Diag(x)
	}
	return k.Eval(x, x)
}

// Matrix writes the kernel matrix K[i][j] = k(X_i, Y_j) into dst, which must
// be len(X rows) x len(Y rows). When X and Y are the same matrix (the same
// rows of the same backing array) only the lower triangle is evaluated and
// mirrored.
func Matrix(dst *mat.Dense, k Kernel, x, y mat.RawMatrixer) {
	xr, yr := x.RawMatrix(), y.RawMatrix()
	if xr.Cols != yr.Cols {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", xr.Cols, yr.Cols))
	}
	r, c := dst.Dims()
	if r != xr.Rows || c != yr.Rows {
		panic(fmt.Sprintf("kernel: destination is %dx%d, want %dx%d", r, c, xr.Rows, yr.Rows))
	}
	d := dst.RawMatrix()
	same := sameRaw(xr, yr)
	for i := 0; i < xr.Rows; i++ {
		xi := xr.Data[i*xr.Stride : i*xr.Stride+xr.Cols]
		row := d.Data[i*d.Stride : i*d.Stride+d.Cols]
		for j := 0; j < yr.Rows; j++ {
			if same && j > i {
				break
			}
			v := k.Eval(xi, yr.Data[j*yr.Stride:j*yr.Stride+yr.Cols])
			row[j] = v
			if same {
				d.Data[j*d.Stride+i] = v
			}
		}
	}
}

// sameRaw reports whether a and b describe the same rows of the same backing
// array. It replaces an interface comparison x == y, which panics when a
// RawMatrixer implementation is a non-comparable (e.g. slice-holding value)
// type, and which missed distinct headers over the same data.
func sameRaw(a, b blas64.General) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && a.Stride == b.Stride &&
		len(a.Data) > 0 && len(b.Data) > 0 && &a.Data[0] == &b.Data[0]
}

// Column writes dst[i] = k(X_i, y) for every row X_i of x.
func Column(dst []float64, k Kernel, x mat.RawMatrixer, y []float64) {
	xr := x.RawMatrix()
	if len(dst) != xr.Rows {
		panic(fmt.Sprintf("kernel: destination has length %d, want %d", len(dst), xr.Rows))
	}
	for i := range dst {
		dst[i] = k.Eval(xr.Data[i*xr.Stride:i*xr.Stride+xr.Cols], y)
	}
}

// Diagonal writes dst[i] = k(X_i, X_i) for every row X_i of x.
func Diagonal(dst []float64, k Kernel, x mat.RawMatrixer) {
	xr := x.RawMatrix()
	if len(dst) != xr.Rows {
		panic(fmt.Sprintf("kernel: destination has length %d, want %d", len(dst), xr.Rows))
	}
	for i := range dst {
		dst[i] = Diag(k, xr.Data[i*xr.Stride:i*xr.Stride+xr.Cols])
	}
}

// FeatureMap is an explicit, finite-dimensional feature map phi with
// phi(x).phi(y) approximating (or equal to) a kernel k(x, y).
type FeatureMap interface {
	// InputDim is the dimension of the points x.
	InputDim() int
	// Dim is the number of features, the length of phi(x).
	Dim() int
	// Map writes phi(x) into dst, which must have length Dim().
	Map(dst, x []float64)
}

// SpectralSampler is implemented by shift-invariant kernels whose spectral
// measure can be sampled (Bochner's theorem). It is what random Fourier
// features and the doubly stochastic gradients of Dai et al. (NIPS 2014) need: a frequency
// omega with E[cos(omega.(x-y))] = k(x, y)/k(0).
type SpectralSampler interface {
	Kernel
	// SampleFrequency writes one frequency omega in R^len(dst) drawn from the
	// kernel's normalised spectral density, using normal and chi-square draws
	// from src.
	SampleFrequency(dst []float64, src Source)
	// Scale is k(x, x) for this stationary kernel.
	Scale() float64
}

// Source is the randomness a feature map draws from; *rand.Rand of
// math/rand/v2 satisfies it.
type Source interface {
	NormFloat64() float64
	Float64() float64
}

// SampleFrequency draws omega ~ N(0, I/LengthScale^2), the spectral density
// of the Gaussian kernel.
func (k RBF) SampleFrequency(dst []float64, src Source) {
	for i := range dst {
		dst[i] = src.NormFloat64() / k.LengthScale
	}
}

// Scale returns k(x, x).
func (k RBF) Scale() float64 { return variance(k.Variance) }

// SampleFrequency draws omega from the Matern spectral density, a
// multivariate Student t with 2 Nu degrees of freedom scaled by
// 1/LengthScale: omega = z / l * sqrt(2 Nu / u), z ~ N(0, I), u ~ chi^2(2 Nu).
// 2 Nu is 1, 3 or 5, so u is a sum of that many squared normals.
func (k Matern) SampleFrequency(dst []float64, src Source) {
	dof := int(2*k.Nu + 0.5)
	var u float64
	for i := 0; i < dof; i++ {
		g := src.NormFloat64()
		u += g * g
	}
	s := math.Sqrt(float64(dof)/u) / k.LengthScale
	for i := range dst {
		dst[i] = src.NormFloat64() * s
	}
}

// Scale returns k(x, x).
func (k Matern) Scale() float64 { return variance(k.Variance) }
