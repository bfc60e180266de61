package gp

import (
	"fmt"
	"math"

	"github.com/bkb-go/bkb/kernel"
)

// Normal is the randomness a posterior sample draws from; *rand.Rand of
// math/rand/v2 satisfies it.
type Normal interface {
	NormFloat64() float64
}

// SampleWeights writes into dst (length DictionarySize()) a draw of the
// DTC posterior's weights, w ~ N(V^{-1} Z^T W ybar, lambda V^{-1}) on the
// GP scale, and returns dst. z(x)^T w is the part of a DTC posterior draw
// in the span of S, jointly over any set of points: its covariance is
// lambda z(x)^T V^{-1} z(x') (Eq. 4, Calandriello et al. (COLT 2019)). The DTC posterior also has
// a residual part, of covariance k(x,x') - z(x)^T z(x'), which SampleAt
// and SampleCandidates only give per point (its variance): a caller that
// draws it independently per point, as f(x) = z(x)^T w +
// sqrt(k(x,x) - ||z(x)||^2) eta_x, leaves out its cross term, so that two
// points outside S with identical coordinates get independent values
// (posterior correlation 1, sample correlation 0). NewJointSample draws
// the residual jointly too. O(m^2).
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
// z(x)^T w of a sample at x and the Nystrom residual
// k(x,x) - ||z(x)||^2 >= 0, the variance of the residual part at x alone
// (its covariance with other points is not drawn: see SampleWeights and
// NewJointSample). O(m d + m^2).
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
// weights w at every candidate, as SampleAt (the residual per point
// only). O(A m).
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

// SampleSource is the randomness of NewJointSample: normal draws and the
// seed of the random features; *rand.Rand of math/rand/v2 satisfies it.
type SampleSource interface {
	NormFloat64() float64
	Uint64() uint64
}

// DefaultSampleFeatures is the number of random Fourier features of a
// joint sample's prior part when NewJointSample is given 0.
const DefaultSampleFeatures = 256

// JointSample is one draw of the DTC posterior as a function, joint over
// any set of points, the residual included:
//
//	f(x) = z(x)^T w + r(x),  r(x) = f0(x) - z(x)^T L^{-1} f0(S),
//
// with w from SampleWeights and f0 a draw of the prior through random
// Fourier features (Rahimi and Recht 2007) with their own frequencies,
// so that r is the prior conditioned on its values at S ("pathwise
// conditioning", Wilson et al. 2020): Cov(r(x), r(x')) =
// E[k_D(x,x')] - z(x)^T z(x') = k(x,x') - z(x)^T z(x'), exactly over the
// draw of the frequencies (k_D, the D-feature kernel, is unbiased), and
// r(x) = 0 at every live point of S. The covariance of f is the DTC
// posterior's: lambda z(x)^T V^{-1} z(x') + k(x,x') - z(x)^T z(x'), points
// with identical coordinates get identical values, and f is continuous in
// x. Its law is Gaussian in the span of S and, in the residual, a mixture
// that tends to the Gaussian as the number of features grows.
//
// A JointSample belongs to the posterior state it was drawn from: after
// an observation or a change of S its methods return an error. It is not
// safe for concurrent use.
type JointSample struct {
	g     *DTC
	state [3]int // g.nobs, g.changes, g.rebuilds when drawn
	u     []float64
	rf    *kernel.RandomFourier
	a     []float64
	phi   []float64
	z     []float64
}

// NewJointSample draws a joint sample of the DTC posterior (JointSample)
// with the given number of random Fourier features for its prior part
// (0: DefaultSampleFeatures). The kernel must be stationary with a
// spectral measure (kernel.SpectralSampler: RBF, Matern and their ARD
// forms). O(m^2 + m D d) to draw; O(m d + m^2 + D d) per point after.
func (g *DTC) NewJointSample(src SampleSource, features int) (*JointSample, error) {
	sp, ok := g.k.(kernel.SpectralSampler)
	if !ok {
		return nil, fmt.Errorf("gp: a joint sample needs a stationary kernel with a spectral measure (kernel.SpectralSampler); %T is not one", g.k)
	}
	if features < 0 {
		return nil, fmt.Errorf("gp: a joint sample needs a positive number of features, got %d", features)
	}
	if features == 0 {
		features = DefaultSampleFeatures
	}
	g.flush()
	m := g.ny.Size()
	u := g.SampleWeights(make([]float64, m), src)
	rf, err := kernel.NewRandomFourier(sp, g.dim, features, src.Uint64())
	if err != nil {
		return nil, fmt.Errorf("gp: joint sample: %w", err)
	}
	s := &JointSample{g: g, state: g.sampleState(), u: u, rf: rf,
		a: make([]float64, features), phi: make([]float64, features), z: make([]float64, m)}
	for i := range s.a {
		s.a[i] = src.NormFloat64()
	}
	// u = w - L^{-1} f0(S): dead points' entries are 0, as their
	// coordinate in every embedding is.
	f0 := make([]float64, m)
	for j := 0; j < m; j++ {
		if !g.ny.dead[j] {
			f0[j] = s.prior(g.ny.Point(j))
		}
	}
	g.ny.l.SolveL(f0)
	for j := range u {
		u[j] -= f0[j]
	}
	return s, nil
}

func (g *DTC) sampleState() [3]int { return [3]int{g.nobs, g.changes, g.rebuilds} }

// prior returns f0(x), the prior draw through the random features.
func (s *JointSample) prior(x []float64) float64 {
	s.rf.Map(s.phi, x)
	return dot(s.phi, s.a)
}

func (s *JointSample) check() error {
	if s.g.sampleState() != s.state {
		return fmt.Errorf("gp: the posterior changed since the joint sample was drawn")
	}
	return nil
}

// At returns the sample's value at x. O(m d + m^2 + D d).
func (s *JointSample) At(x []float64) (float64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if err := checkPoint(x, s.g.dim); err != nil {
		return 0, err
	}
	s.g.ny.Embed(s.z, x)
	return dot(s.z, s.u) + s.prior(x), nil
}

// Candidates writes the sample's value at every candidate into dst
// (length NumCandidates()), from the candidates' embeddings kept by the
// posterior. O(A (m + D d)).
func (s *JointSample) Candidates(dst []float64) error {
	if err := s.check(); err != nil {
		return err
	}
	g := s.g
	if len(dst) != g.nc {
		return fmt.Errorf("gp: joint sample destination has length %d, want %d", len(dst), g.nc)
	}
	g.flush()
	m := len(s.u)
	for i := range dst {
		dst[i] = dot(g.r.slot(i)[:m], s.u) + s.prior(g.r.point(i))
	}
	return nil
}
