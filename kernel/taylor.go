package kernel

import (
	"fmt"
	"math"
	"math/big"
)

// MaxTaylorFeatures is the largest number of features binom(M+d, d) that
// NewTaylorGaussian accepts.
const MaxTaylorFeatures = 10_000_000

// taylorStackTable is the largest d*M for which Map keeps its table of
// per-coordinate factors on the stack.
const taylorStackTable = 128

// TaylorFeatureCount returns binom(degree+inputDim, inputDim), the number of
// multi-indices k in N_0^d with |k| <= M (Section 3.1 of Jézéquel et al. (NeurIPS 2019), r = |G_M|),
// exactly. It returns nil for negative arguments or when M+d overflows an
// int.
func TaylorFeatureCount(inputDim, degree int) *big.Int {
	if inputDim < 0 || degree < 0 || degree > math.MaxInt-inputDim {
		return nil
	}
	return new(big.Int).Binomial(int64(degree+inputDim), int64(inputDim))
}

// taylorCount returns binom(m+d, d) and true if it is at most limit, and
// false otherwise, without computing large binomials: the partial products
// binom(n+j, j), n = max(d, m), j = 1..min(d, m), increase with j.
func taylorCount(d, m, limit int) (int, bool) {
	n, k := max(d, m), min(d, m)
	c := 1
	for j := 1; j <= k; j++ {
		if float64(c)*float64(n+j)/float64(j) > float64(limit) {
			return 0, false
		}
		c = c * (n + j) / j
	}
	return c, c <= limit
}

// TaylorGaussian is the exact Taylor feature map of the Gaussian kernel
// exp(-||x-y||^2/(2 sigma^2)) of Section 3.1, Eq. 6, Jézéquel et al. (NeurIPS 2019):
//
//	g_k(x) = prod_i psi_{k_i}(x_i),  psi_t(z) = z^t / (sigma^t sqrt(t!)) exp(-z^2/(2 sigma^2)),
//
// that is g_k(x) = exp(-||x||^2/(2 sigma^2)) prod_i x_i^{k_i} / (sigma^{k_i} sqrt(k_i!)),
// over ALL multi-indices k with total degree |k| <= M (not a tensor grid,
// pitfall P2), binom(M+d, d) features. These are a Gaussian envelope times
// scaled monomials, not Hermite functions (pitfall P1). They are orthonormal
// in the Gaussian RKHS (Lemma 11) and phi(x).phi(y) is exactly the truncated
// kernel TaylorKernel{M, sigma} (Lemma 12), within TaylorErrorBound of the
// Gaussian kernel for ||x||, ||y|| <= R (Lemma 13). The approximation is only
// good near the origin (pitfall P3): centre and scale the inputs.
//
// Features are ordered degree by degree; the order is fixed by (d, M) and
// MultiIndex reports it. A child k+e_i of a parent k (with i no smaller than
// the coordinate last incremented in k, so every multi-index appears once)
// has value g_k(x) x_i / (sigma sqrt(k_i+1)), so Map costs O(r + d M) with
// one multiplication per feature (two when d M > 128) and does not allocate.
// A TaylorGaussian is immutable and safe for concurrent use.
type TaylorGaussian struct {
	d, m   int
	sigma  float64
	vari   float64 // kernel variance
	amp    float64 // sqrt(vari), the scale of every feature
	parent []int32 // parent feature index, parent[0] = 0 unused
	factor []int32 // index coord*m + k_coord(parent) into the per-call table

	// Only when d*M > taylorStackTable: the coordinate raised by each
	// feature and its factor 1/(sigma sqrt(k_coord(parent)+1)).
	coord []int32
	mult  []float64
}

// NewTaylorGaussian returns the Taylor features of degree <= degree of the
// unit-variance Gaussian kernel with bandwidth sigma on R^inputDim. It
// reports inputDim < 1, degree < 0, a non-positive or infinite sigma, and
// feature counts binom(degree+inputDim, inputDim) above MaxTaylorFeatures.
func NewTaylorGaussian(inputDim, degree int, sigma float64) (*TaylorGaussian, error) {
	if inputDim < 1 {
		return nil, fmt.Errorf("kernel: Taylor input dimension must be >= 1, got %d", inputDim)
	}
	if degree < 0 {
		return nil, fmt.Errorf("kernel: Taylor degree must be >= 0, got %d", degree)
	}
	if err := checkPositive("Taylor sigma", sigma); err != nil {
		return nil, err
	}
	r, ok := taylorCount(inputDim, degree, MaxTaylorFeatures)
	if !ok {
		var count string
		if min(inputDim, degree) <= 1000 {
			count = TaylorFeatureCount(inputDim, degree).String()
		} else {
			a, _ := math.Lgamma(float64(degree + inputDim + 1))
			b, _ := math.Lgamma(float64(degree + 1))
			c, _ := math.Lgamma(float64(inputDim + 1))
			count = fmt.Sprintf("about 10^%.0f", (a-b-c)/math.Ln10)
		}
		return nil, fmt.Errorf("kernel: Taylor map with d = %d, M = %d has binom(M+d, d) = %s features, more than the cap %d",
			inputDim, degree, count, MaxTaylorFeatures)
	}
	t := &TaylorGaussian{
		d:      inputDim,
		m:      degree,
		sigma:  sigma,
		vari:   1,
		amp:    1,
		parent: make([]int32, r),
		factor: make([]int32, r),
	}
	// last[f] is the coordinate last incremented to reach feature f and
	// lastExp[f] its exponent in f; coordinates after last[f] have exponent 0.
	last := make([]int32, r)
	lastExp := make([]int32, r)
	n := 1
	lo, hi := 0, 1 // features of the previous degree
	for deg := 1; deg <= degree; deg++ {
		for p := lo; p < hi; p++ {
			for i := int(last[p]); i < inputDim; i++ {
				e := int32(0)
				if i == int(last[p]) {
					e = lastExp[p]
				}
				t.parent[n] = int32(p)
				t.factor[n] = int32(i*degree) + e
				last[n] = int32(i)
				lastExp[n] = e + 1
				n++
			}
		}
		lo, hi = hi, n
	}
	if n != r {
		panic(fmt.Sprintf("kernel: Taylor enumeration produced %d features, want %d", n, r))
	}
	if inputDim*degree > taylorStackTable {
		t.coord = make([]int32, r)
		t.mult = make([]float64, r)
		for f := 1; f < r; f++ {
			q := int(t.factor[f])
			t.coord[f] = int32(q / degree)
			t.mult[f] = 1 / (sigma * math.Sqrt(float64(q%degree+1)))
		}
	}
	return t, nil
}

// WithVariance returns a copy of t for the kernel
// variance * exp(-||x-y||^2/(2 sigma^2)): every feature is scaled by
// sqrt(variance). The copy shares t's (immutable) tables. It reports a
// non-positive or infinite variance.
func (t *TaylorGaussian) WithVariance(variance float64) (*TaylorGaussian, error) {
	if err := checkPositive("Taylor variance", variance); err != nil {
		return nil, err
	}
	c := *t
	c.vari = variance
	c.amp = math.Sqrt(variance)
	return &c, nil
}

// InputDim returns the dimension d of the inputs.
func (t *TaylorGaussian) InputDim() int { return t.d }

// Dim returns the number of features, binom(M+d, d).
func (t *TaylorGaussian) Dim() int { return len(t.parent) }

// Degree returns the maximal total degree M.
func (t *TaylorGaussian) Degree() int { return t.m }

// Sigma returns the bandwidth sigma.
func (t *TaylorGaussian) Sigma() float64 { return t.sigma }

// Variance returns the kernel variance (1 unless set by WithVariance).
func (t *TaylorGaussian) Variance() float64 { return t.vari }

// Kernel returns the truncated kernel phi(x).phi(y) that t computes exactly.
func (t *TaylorGaussian) Kernel() TaylorKernel {
	return TaylorKernel{Degree: t.m, Sigma: t.sigma, Variance: t.Variance()}
}

// MultiIndex writes the multi-index k of feature j into dst, which must have
// length InputDim(). Feature 0 is k = 0.
func (t *TaylorGaussian) MultiIndex(j int, dst []int) {
	if len(dst) != t.d {
		panic(fmt.Sprintf("kernel: multi-index buffer has length %d, want %d", len(dst), t.d))
	}
	clear(dst)
	for ; j != 0; j = int(t.parent[j]) {
		dst[int(t.factor[j])/t.m]++
	}
}

// Map writes phi(x) = (g_k(x))_k into dst (Eq. 6, Jézéquel et al. (NeurIPS 2019)). It panics if
// len(x) != InputDim() or len(dst) != Dim().
func (t *TaylorGaussian) Map(dst, x []float64) {
	if len(x) != t.d {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", len(x), t.d))
	}
	if len(dst) != len(t.parent) {
		panic(fmt.Sprintf("kernel: destination has length %d, want %d", len(dst), len(t.parent)))
	}
	inv := 1 / t.sigma
	// The Gaussian envelope, applied once per vector (pitfall P1).
	dst[0] = t.amp * math.Exp(-0.5*dot(x, x)*inv*inv)
	if t.m == 0 {
		return
	}
	if t.coord != nil {
		t.mapLarge(dst, x)
		return
	}
	// tab[i*M+e] = x_i / (sigma sqrt(e+1)), the factor that raises the
	// exponent of coordinate i from e to e+1.
	var buf [taylorStackTable]float64
	m := t.m
	tab := buf[:t.d*m]
	for i, v := range x {
		row := tab[i*m : i*m+m]
		for e := range row {
			row[e] = v * inv * invSqrt[e]
		}
	}
	// g_{k+e_i}(x) = g_k(x) x_i / (sigma sqrt(k_i+1)), one product per feature.
	parent, factor := t.parent[1:], t.factor[1:len(t.parent)]
	out := dst[1:len(t.parent)]
	for f, p := range parent {
		out[f] = dst[p] * tab[factor[f]]
	}
}

// mapLarge is Map for d*M > taylorStackTable, where the table of factors
// would not fit on the stack: it spends a second product per feature on a
// precomputed factor instead.
func (t *TaylorGaussian) mapLarge(dst, x []float64) {
	parent := t.parent[1:]
	coord, mult := t.coord[1:len(t.parent)], t.mult[1:len(t.parent)]
	out := dst[1:len(t.parent)]
	for f, p := range parent {
		out[f] = dst[p] * x[coord[f]] * mult[f]
	}
}

// invSqrt[e] = 1/sqrt(e+1), e < taylorStackTable.
var invSqrt = func() []float64 {
	s := make([]float64, taylorStackTable)
	for e := range s {
		s[e] = 1 / math.Sqrt(float64(e+1))
	}
	return s
}()

// TaylorKernel is the truncated Taylor kernel of the Gaussian kernel
// (Lemma 12, Jézéquel et al. (NeurIPS 2019)), the kernel computed exactly by TaylorGaussian:
//
//	k_M(x, y) = Variance exp(-(||x||^2 + ||y||^2)/(2 Sigma^2)) sum_{j=0..Degree} (x.y/Sigma^2)^j / j!.
//
// It is positive semi-definite but not translation invariant (pitfall P3).
// The zero Variance is read as 1.
type TaylorKernel struct {
	Degree   int
	Sigma    float64
	Variance float64
}

// Eval returns k_M(x, y).
func (k TaylorKernel) Eval(x, y []float64) float64 {
	s2 := k.Sigma * k.Sigma
	env := math.Exp(-(dot(x, x) + dot(y, y)) / (2 * s2))
	return variance(k.Variance) * env * expSeries(dot(x, y)/s2, k.Degree)
}

// Diag returns k_M(x, x).
func (k TaylorKernel) Diag(x []float64) float64 {
	z := dot(x, x) / (k.Sigma * k.Sigma)
	return variance(k.Variance) * math.Exp(-z) * expSeries(z, k.Degree)
}

// Validate reports a negative degree or a non-positive sigma or variance.
func (k TaylorKernel) Validate() error {
	if k.Degree < 0 {
		return fmt.Errorf("kernel: Taylor degree must be >= 0, got %d", k.Degree)
	}
	if err := checkPositive("Taylor sigma", k.Sigma); err != nil {
		return err
	}
	return checkPositive("Taylor variance", variance(k.Variance))
}

// expSeries returns sum_{j=0..m} z^j / j!.
func expSeries(z float64, m int) float64 {
	s, term := 1.0, 1.0
	for j := 1; j <= m; j++ {
		term *= z / float64(j)
		s += term
	}
	return s
}

// TaylorErrorBound returns the Lemma 13 (Jézéquel et al., NeurIPS 2019) bound
//
//	|k(x, y) - k_M(x, y)| <= (R/sigma)^(2M+2) / (M+1)!
//
// on the error of the degree-M Taylor features of the unit-variance Gaussian
// kernel for all ||x||, ||y|| <= R (multiply by the variance otherwise). It
// follows from |z| <= ||x|| ||y|| / sigma^2 <= (||x||^2 + ||y||^2)/(2 sigma^2)
// for z = x.y/sigma^2, so that the envelope cancels e^|z| in the Taylor
// remainder. It returns NaN for invalid arguments.
func TaylorErrorBound(degree int, radius, sigma float64) float64 {
	if degree < 0 || radius < 0 || !(sigma > 0) || math.IsNaN(radius) {
		return math.NaN()
	}
	if radius == 0 {
		return 0
	}
	lg, _ := math.Lgamma(float64(degree + 2))
	return math.Exp(float64(2*degree+2)*math.Log(radius/sigma) - lg)
}

// TaylorDegree returns the smallest degree M with
// TaylorErrorBound(M, radius, sigma) <= eps, or -1 if none up to 10000
// exists or the arguments are invalid.
func TaylorDegree(radius, sigma, eps float64) int {
	if !(eps > 0) || radius < 0 || !(sigma > 0) || math.IsInf(sigma, 0) || math.IsNaN(radius) || math.IsInf(radius, 0) {
		return -1
	}
	for m := 0; m <= 10000; m++ {
		if TaylorErrorBound(m, radius, sigma) <= eps {
			return m
		}
	}
	return -1
}

// TaylorTheoryDegree returns the degree of Theorem 4 (Jézéquel et al., NeurIPS 2019),
//
//	M = ceil(max(8 R^2/sigma^2, 2 log(n / min(lambda, 1)))),
//
// which the regret guarantee needs; it is far larger than the M in {2, 3, 4}
// used in practice (pitfall P4). It returns -1 for invalid arguments.
func TaylorTheoryDegree(radius, sigma float64, n int, lambda float64) int {
	if radius < 0 || !(sigma > 0) || n < 1 || !(lambda > 0) || math.IsInf(radius, 0) {
		return -1
	}
	m := math.Max(8*radius*radius/(sigma*sigma), 2*math.Log(float64(n)/math.Min(lambda, 1)))
	return int(math.Ceil(m))
}
