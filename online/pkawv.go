package online

import (
	"fmt"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// ridge is linear AWV / recursive least squares on an embedding phi in R^r,
// the core of PKAWV (Jézéquel et al., NeurIPS 2019, Algorithm 1):
//
//	A = lambda I + sum_s phi_s phi_s^T,  b = sum_s y_s phi_s,
//	yhat_KRR = phi^T A^{-1} b,  yhat_AWV = yhat_KRR / (1 + phi^T A^{-1} phi).
//
// A is held as a Cholesky factor L updated by cholup (Jézéquel et al., NeurIPS 2019, Section 4,
// trick 3; pitfall P15: no Sherman-Morrison), with c = L^{-1} b, so that a
// prediction is one triangular solve u = L^{-1} phi: yhat_KRR = u.c and
// s^2 = ||u||^2. An embedding that gains a coordinate (a Nystrom dictionary
// growing) borders A and b (grow).
type ridge struct {
	lambda float64
	f      chol.Factor
	b, c   []float64
	u, tmp []float64
}

func (r *ridge) init(dim int, lambda float64) {
	r.lambda = lambda
	r.f.Reset()
	r.f.Reserve(dim)
	r.b, r.c = r.b[:0], r.c[:0]
	for i := 0; i < dim; i++ {
		r.f.AppendSolved(r.c, lambda) // c is all zeros here
		r.b = append(r.b, 0)
		r.c = append(r.c, 0)
	}
}

func (r *ridge) dim() int { return r.f.Size() }

// predict returns phi^T A^{-1} b (KRR) or its AWV version.
func (r *ridge) predict(phi []float64, mode Mode) float64 {
	n := r.f.Size()
	r.u = append(r.u[:0], phi[:n]...)
	r.f.SolveL(r.u)
	y := dot(r.u, r.c)
	if mode == AWV {
		y /= 1 + dot(r.u, r.u)
	}
	return y
}

// learn adds (phi, y): A += phi phi^T, b += y phi, c = L^{-1} b. O(r^2).
func (r *ridge) learn(phi []float64, y float64) {
	n := r.f.Size()
	r.tmp = append(r.tmp[:0], phi[:n]...)
	r.f.RankOneUpdate(r.tmp)
	axpy(y, phi[:n], r.b)
	copy(r.c, r.b)
	r.f.SolveL(r.c)
}

// grow borders A with the column a (len dim(), overwritten), diagonal ann,
// and b with bn: the new coordinate of c is (bn - l.c)/d with l = L^{-1} a.
func (r *ridge) grow(a []float64, ann, bn float64) {
	d := r.f.Append(a, ann)
	r.c = append(r.c, (bn-dot(a[:len(r.c)], r.c))/d)
	r.b = append(r.b, bn)
}

// shrink drops the last coordinate (undoes grow).
func (r *ridge) shrink() {
	n := r.f.Size()
	r.f.Remove(n-1, nil)
	r.b = r.b[:n-1]
	r.c = r.c[:n-1]
}

// PKAWVFeatures is PKAWV on a fixed embedding phi~ (Jézéquel et al., NeurIPS 2019, Section 3.1
// and Appendix H.1, Algorithm 1, with the typo of pitfall P6 corrected): linear
// AWV, or linear ridge regression in KRR mode, on phi~(x). With the Taylor
// basis of the Gaussian kernel (kernel.TaylorGaussian, Q = I by Lemma 11) it
// is "PKAWV with Taylor expansions" of the experiments, r = binom(M+d, d)
// features, O(r^2 + r d) time per round and O(r^2) memory (Theorem 4).
type PKAWVFeatures struct {
	fm   kernel.FeatureMap
	mode Mode
	name string
	r    ridge
	phi  []float64
}

// NewPKAWVFeatures returns PKAWV with ridge lambda > 0 on the feature map
// fm. name is what Name reports (e.g. "pkawv-taylor(M=2)").
func NewPKAWVFeatures(fm kernel.FeatureMap, lambda float64, mode Mode, name string) (*PKAWVFeatures, error) {
	if fm == nil {
		return nil, fmt.Errorf("online: nil feature map")
	}
	if err := positive("ridge lambda", lambda); err != nil {
		return nil, err
	}
	if fm.Dim() < 1 || fm.InputDim() < 1 {
		return nil, fmt.Errorf("online: feature map has dimension %d on inputs of dimension %d", fm.Dim(), fm.InputDim())
	}
	p := &PKAWVFeatures{fm: fm, mode: mode, name: name, phi: make([]float64, fm.Dim())}
	p.r.init(fm.Dim(), lambda)
	return p, nil
}

// NewPKAWVTaylor returns PKAWV with the degree-M Taylor features of the
// Gaussian kernel exp(-||x-y||^2/(2 sigma^2)) on R^dim (Jézéquel et al., NeurIPS 2019, eq. 6).
func NewPKAWVTaylor(dim, degree int, sigma, lambda float64, mode Mode) (*PKAWVFeatures, error) {
	fm, err := kernel.NewTaylorGaussian(dim, degree, sigma)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("pkawv-taylor(M=%d)", degree)
	if mode == KRR {
		name = fmt.Sprintf("pkrr-taylor(M=%d)", degree)
	}
	return NewPKAWVFeatures(fm, lambda, mode, name)
}

// Name returns the name given at construction.
func (p *PKAWVFeatures) Name() string { return p.name }

// Size returns the number of features r.
func (p *PKAWVFeatures) Size() int { return p.fm.Dim() }

// Predict returns yhat_t = phi~(x)^T A_t^{-1} b_{t-1} (AWV) or with A_{t-1} (KRR).
func (p *PKAWVFeatures) Predict(x []float64) float64 {
	p.fm.Map(p.phi, x)
	return p.r.predict(p.phi, p.mode)
}

// Learn adds phi~(x) phi~(x)^T to A and y phi~(x) to b.
func (p *PKAWVFeatures) Learn(x []float64, y float64) error {
	if err := checkDim(x, p.fm.InputDim()); err != nil {
		return err
	}
	p.fm.Map(p.phi, x)
	p.r.learn(p.phi, y)
	return nil
}
