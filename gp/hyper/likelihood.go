package hyper

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// objective evaluates the log marginal likelihood and its gradient on a fixed
// set of points, reusing its n x n buffers between evaluations.
type objective struct {
	x      *mat.Dense
	y      *mat.VecDense
	n, d   int
	fam    Family
	k      *mat.SymDense // K + noise I
	chol   mat.Cholesky
	inv    mat.SymDense
	alpha  *mat.VecDense
	g, ls  []float64
	priors *Priors // nil: maximum likelihood
}

func newObjective(x *mat.Dense, y []float64, fam Family) *objective {
	n, d := x.Dims()
	return &objective{
		x:     x,
		y:     mat.NewVecDense(n, append([]float64(nil), y...)),
		n:     n,
		d:     d,
		fam:   fam,
		k:     mat.NewSymDense(n, nil),
		alpha: mat.NewVecDense(n, nil),
		g:     make([]float64, d),
		ls:    make([]float64, d),
	}
}

// eval returns log p(y | X, theta) at the log parameters s = (log l, log
// signal variance, log noise variance) (Rasmussen & Williams eq. 5.8),
//
//	-1/2 y^T K^-1 y - 1/2 log|K| - n/2 log 2 pi,   K = K_f + sigma_n^2 I,
//
// and, when grad is not nil, writes its gradient in s (eq. 5.9),
//
//	d/ds_j = 1/2 tr((a a^T - K^-1) dK/ds_j),   a = K^-1 y,
//
// with dK/dlog sigma_f^2 = K_f, dK/dlog sigma_n^2 = sigma_n^2 I and dK/dlog l_m
// from kernel.ARDGradienter. ok is false when K is not numerically positive
// definite.
func (o *objective) eval(s, grad []float64) (lml float64, ok bool) {
	d, n := o.d, o.n
	for i := range d {
		o.ls[i] = math.Exp(s[i])
	}
	sv, nv := math.Exp(s[d]), math.Exp(s[d+1])
	var kern kernel.Kernel
	if o.fam == Matern52 {
		kern = kernel.Matern52ARD{LengthScales: o.ls, Variance: sv}
	} else {
		kern = kernel.RBFARD{LengthScales: o.ls, Variance: sv}
	}
	kr := o.k.RawSymmetric()
	xr := o.x.RawMatrix()
	row := func(i int) []float64 { return xr.Data[i*xr.Stride : i*xr.Stride+xr.Cols] }
	// Upper triangle only: the SymDense reads that half.
	for i := range n {
		xi := row(i)
		kr.Data[i*kr.Stride+i] = sv + nv
		for j := i + 1; j < n; j++ {
			kr.Data[i*kr.Stride+j] = kern.Eval(xi, row(j))
		}
	}
	if !o.chol.Factorize(o.k) {
		return 0, false
	}
	if err := o.chol.SolveVecTo(o.alpha, o.y); err != nil {
		return 0, false
	}
	lml = -0.5*mat.Dot(o.y, o.alpha) - 0.5*o.chol.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return 0, false
	}
	if grad == nil {
		return lml, true
	}
	if err := o.chol.InverseTo(&o.inv); err != nil {
		return 0, false
	}
	ir := o.inv.RawSymmetric()
	a := o.alpha.RawVector().Data
	for i := range grad {
		grad[i] = 0
	}
	// W = a a^T - K^-1 is symmetric; the sums over i != j run over the upper
	// triangle and count twice, so 1/2 * 2 = 1.
	//
	// dk/dlog l_m = c(r) ((x_m - x'_m)/l_m)^2 (kernel.ARDGradienter), with
	// c = k for the RBF and c = (5/3) (1+s) k / (1 + s + s^2/3), s = sqrt(5) r,
	// for the Matern 5/2 kernel; it is computed here from the k values
	// already in K rather than by EvalGrad, which saves one exp per pair
	// (a quarter of an evaluation at n = 300, d = 6).
	var trW, sumWK float64
	matern := o.fam == Matern52
	sq := o.g
	for i := range n {
		xi := row(i)
		wii := a[i]*a[i] - ir.Data[i*ir.Stride+i]
		trW += wii
		for j := i + 1; j < n; j++ {
			w := a[i]*a[j] - ir.Data[i*ir.Stride+j]
			kij := kr.Data[i*kr.Stride+j]
			sumWK += w * kij
			xj := row(j)
			var r2 float64
			for m, l := range o.ls {
				dm := (xi[m] - xj[m]) / l
				sq[m] = dm * dm
				r2 += sq[m]
			}
			c := kij
			if matern {
				s := math.Sqrt(5 * r2)
				c = 5.0 / 3 * (1 + s) * kij / (1 + s + s*s/3)
			}
			c *= w
			for m, q := range sq {
				grad[m] += c * q
			}
		}
	}
	// dK/dlog sf^2 = K_f: diagonal sv, off-diagonal the kernel values.
	grad[d] = 0.5*trW*sv + sumWK
	grad[d+1] = 0.5 * trW * nv
	return lml, true
}

// logPrior returns the sum of the Gamma log densities (without normalizing
// constants) at the parameters exp(s) and adds its gradient in s to grad:
// for v = e^s, log p = (a-1) s - b v and d/ds = (a-1) - b v.
func (o *objective) logPrior(s, grad []float64) float64 {
	if o.priors == nil {
		return 0
	}
	var lp float64
	add := func(i int, g Gamma) {
		v := math.Exp(s[i])
		lp += (g.Shape-1)*s[i] - g.Rate*v
		grad[i] += (g.Shape - 1) - g.Rate*v
	}
	for i := range o.d {
		add(i, o.priors.LengthScale)
	}
	add(o.d, o.priors.SignalVariance)
	add(o.d+1, o.priors.NoiseVariance)
	return lp
}
