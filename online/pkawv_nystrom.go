package online

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// KORS holds the parameters of Kernel Online Row Sampling (Calandriello et
// al. 2017, Prop. 1; Jézéquel et al. (NeurIPS 2019), Section 3.2 and Proposition 5), the rule that
// grows PKAWV's Nystrom dictionary. At round t, with the approximate ridge
// leverage score
//
//	q_t   = k(x_t,x_t) - b^T (S K_II S + Mu I)^{-1} b,  b = S k_I(x_t),
//	tau_t = (1+Eps) q_t / (q_t + Mu),
//
// x_t is added with probability p_t = min(Beta tau_t, 1) and weight
// s = 1/sqrt(p_t) (the implementation notes on Jézéquel et al. (NeurIPS 2019), "closed form", checked there against the
// paper code's temporary-dictionary formula).
type KORS struct {
	// Mu is KORS's regularization (the accuracy mu of Theorem 6). The
	// experiments use 1.
	Mu float64
	// Eps is the accuracy epsilon; the experiments use 0.5.
	Eps float64
	// Beta is the oversampling; theory needs 12 log(n/delta), the
	// experiments use 1 (pitfall P10e).
	Beta float64
	// PaperWeights uses the weight 1/p on both sides of K (an effective
	// 1/p^2, the paper's printed code) instead of 1/sqrt(p) (pitfall P10c).
	PaperWeights bool
}

// DefaultKORS returns the experiments' KORS parameters: mu = 1, eps = 0.5,
// beta = 1 (Jézéquel et al., NeurIPS 2019, Section 4).
func DefaultKORS() KORS { return KORS{Mu: 1, Eps: 0.5, Beta: 1} }

func (k KORS) validate() error {
	if err := positive("KORS mu", k.Mu); err != nil {
		return err
	}
	if !(k.Eps >= 0) || math.IsInf(k.Eps, 0) {
		return fmt.Errorf("online: KORS eps must be finite and >= 0, got %v", k.Eps)
	}
	return positive("KORS beta", k.Beta)
}

// PKAWVNystromConfig configures NewPKAWVNystrom.
type PKAWVNystromConfig struct {
	Kernel kernel.Kernel
	Dim    int
	// Lambda is the ridge, > 0 (the experiments use 1; pitfall P12).
	Lambda float64
	Mode   Mode
	// KORS is the dictionary rule; the zero value means DefaultKORS().
	KORS KORS
	// All puts every point in the dictionary (the PKAWV = Kernel-AWV check).
	All bool
	// MaxDictionary stops the growth at this size (0: unlimited).
	MaxDictionary int
	// Seed drives the Bernoulli draws: round t uses the uniform of the PCG
	// stream (Seed, t), so a probe at x_t and the later Learn agree.
	Seed uint64
}

// PKAWVNystrom is PKAWV with Nystrom projections (Jézéquel et al., NeurIPS 2019, Section 3.2,
// Algorithm 2): the forecaster of eq. 4 restricted to
// H~_t = span{phi(x) : x in I_t}, with the dictionary I_t grown by KORS and
// never shrunk. x_t may join I_t at round t, before its prediction.
//
// Instead of the paper's Cholesky factor of K_{t,I}^T K_{t,I} + lambda K_II
// (whose conditioning is that of K_II), it runs linear AWV on the
// Cholesky-form Nystrom embedding z(x) = L^{-1} k_I(x), L L^T = K_II, of
// gp.Nystrom: A = lambda I + sum_s z(x_s) z(x_s)^T has eigenvalues >= lambda,
// and the two give the same predictions (the implementation notes on Jézéquel et al. (NeurIPS 2019) Sections 1.7 and 9,
// check 7). When x joins I every past embedding gains one coordinate
// (gp.NewCoordinate), so A and b are bordered by one row: O(t m) on growth
// rounds, which needs the past inputs and their embeddings (pitfall P9),
// and O(m d + m^2) on the others.
type PKAWVNystrom struct {
	cfg  PKAWVNystromConfig
	ny   *gp.Nystrom
	r    ridge
	xs   []float64   // past inputs, t x d
	ys   []float64   // past targets
	cols [][]float64 // cols[j][s] = z_j(x_s) for every past s
	t    int

	korsF chol.Factor // S K_II S + mu I
	korsW []float64   // weights s_j
	pcg   *rand.PCG
	rng   *rand.Rand

	// pending is the state prepared for the current round's point.
	pend struct {
		active, grown bool
		x, phi        []float64
	}
	kcol, z, v, spare []float64
}

// NewPKAWVNystrom returns PKAWV-Nystrom (or Projected-KRR in KRR mode).
func NewPKAWVNystrom(cfg PKAWVNystromConfig) (*PKAWVNystrom, error) {
	if cfg.KORS == (KORS{}) {
		cfg.KORS = DefaultKORS()
	}
	if !cfg.All {
		if err := cfg.KORS.validate(); err != nil {
			return nil, err
		}
	}
	if err := positive("ridge lambda", cfg.Lambda); err != nil {
		return nil, err
	}
	if cfg.MaxDictionary < 0 {
		return nil, fmt.Errorf("online: negative dictionary cap %d", cfg.MaxDictionary)
	}
	ny, err := gp.NewNystrom(cfg.Kernel, cfg.Dim)
	if err != nil {
		return nil, err
	}
	p := &PKAWVNystrom{cfg: cfg, ny: ny}
	p.r.init(0, cfg.Lambda)
	p.pcg = rand.NewPCG(cfg.Seed, 0)
	p.rng = rand.New(p.pcg)
	return p, nil
}

// Name returns "pkawv-nystrom" or "pkrr-nystrom".
func (p *PKAWVNystrom) Name() string {
	if p.cfg.Mode == KRR {
		return "pkrr-nystrom"
	}
	return "pkawv-nystrom"
}

// Size returns the dictionary size |I_t|.
func (p *PKAWVNystrom) Size() int {
	if p.pend.active && p.pend.grown {
		return p.ny.Size() - 1
	}
	return p.ny.Size()
}

// Dictionary returns the Nystrom embedding (read only).
func (p *PKAWVNystrom) Dictionary() *gp.Nystrom { return p.ny }

// prepare makes the pending state describe round t with point x: the KORS
// decision, the tentative growth and the embedding phi of x.
func (p *PKAWVNystrom) prepare(x []float64) {
	if p.pend.active {
		if slices.Equal(p.pend.x, x) {
			return
		}
		p.rollback()
	}
	m := p.ny.Size()
	p.z = slices.Grow(p.z[:0], m+1)[:m]
	res := p.ny.Embed(p.z, x)
	accept := p.cfg.MaxDictionary == 0 || m < p.cfg.MaxDictionary
	var weight float64
	if accept && !p.cfg.All {
		accept, weight = p.korsDecide(x, res)
	}
	p.pend.active, p.pend.grown = true, accept
	p.pend.x = append(p.pend.x[:0], x...)
	if accept {
		p.grow(x, weight)
		p.pend.phi = append(p.pend.phi[:0], p.ny.LastRow()...)
	} else {
		p.pend.phi = append(p.pend.phi[:0], p.z...)
	}
}

// korsDecide draws the KORS Bernoulli of round t and returns the weight
// factor s of x if accepted. It leaves v = F^{-1} S k_I(x) for the append.
func (p *PKAWVNystrom) korsDecide(x []float64, _ float64) (bool, float64) {
	m := p.ny.Size()
	p.kcol = slices.Grow(p.kcol[:0], m)[:m]
	p.ny.KernelColumn(p.kcol, x)
	p.v = append(p.v[:0], p.kcol...)
	for j := range p.v {
		p.v[j] *= p.korsW[j]
	}
	p.korsF.SolveL(p.v)
	kxx := kernel.Diag(p.cfg.Kernel, x)
	q := math.Max(kxx-dot(p.v, p.v), 0)
	kc := p.cfg.KORS
	tau := (1 + kc.Eps) * q / (q + kc.Mu)
	prob := math.Min(kc.Beta*tau, 1)
	p.pcg.Seed(p.cfg.Seed, uint64(p.t))
	if !(p.rng.Float64() < prob) {
		return false, 0
	}
	s := 1 / math.Sqrt(prob)
	if kc.PaperWeights {
		s = 1 / prob
	}
	return true, s
}

// grow adds x (embedding p.z under the current dictionary) to I: every past
// point gains the coordinate c_s = (k(x, x_s) - l.z(x_s))/d, A and b are
// bordered with sum_s z(x_s) c_s, lambda + sum_s c_s^2 and sum_s y_s c_s.
func (p *PKAWVNystrom) grow(x []float64, weight float64) {
	m := p.ny.Size()
	if !p.cfg.All {
		s := weight
		a := p.spare[:0]
		for _, v := range p.v {
			a = append(a, s*v)
		}
		p.korsF.AppendSolved(a, s*s*kernel.Diag(p.cfg.Kernel, x)+p.cfg.KORS.Mu)
		p.korsW = append(p.korsW, s)
		p.spare = a
	}
	p.ny.Add(x, p.z)
	lrow := p.ny.LastRow()
	pivot := lrow[m]
	t, d := p.t, p.cfg.Dim
	var col []float64
	if len(p.cols) < cap(p.cols) {
		col = p.cols[:m+1][m] // reuse a column dropped by rollback
	}
	col = slices.Grow(col[:0], t+1)[:t]
	for s := 0; s < t; s++ {
		col[s] = p.cfg.Kernel.Eval(p.xs[s*d:(s+1)*d], x)
	}
	for j := 0; j < m; j++ {
		axpy(-lrow[j], p.cols[j], col)
	}
	inv := 1 / pivot
	for s := range col {
		col[s] *= inv
	}
	a := slices.Grow(p.kcol[:0], m)[:m]
	for j := 0; j < m; j++ {
		a[j] = dot(p.cols[j], col)
	}
	p.r.grow(a, p.cfg.Lambda+dot(col, col), dot(p.ys, col))
	p.kcol = a
	p.cols = append(p.cols, col)
}

// rollback undoes a tentative growth for a point that was probed but not
// learned.
func (p *PKAWVNystrom) rollback() {
	if p.pend.grown {
		m := p.ny.Size()
		p.ny.Remove(m-1, nil)
		p.r.shrink()
		p.cols = p.cols[:m-1]
		if !p.cfg.All {
			p.korsF.Remove(m-1, nil)
			p.korsW = p.korsW[:m-1]
		}
	}
	p.pend.active, p.pend.grown = false, false
}

// Predict returns yhat_t = z(x)^T A^{-1} b (with A including z(x) z(x)^T in
// AWV mode), where x joins the dictionary first if KORS accepts it.
func (p *PKAWVNystrom) Predict(x []float64) float64 {
	if len(x) != p.cfg.Dim {
		panic(fmt.Sprintf("online: point has dimension %d, want %d", len(x), p.cfg.Dim))
	}
	p.prepare(x)
	return p.r.predict(p.pend.phi, p.cfg.Mode)
}

// Learn commits round t: A += z z^T, b += y z, and stores (x, y, z(x)).
func (p *PKAWVNystrom) Learn(x []float64, y float64) error {
	if err := checkDim(x, p.cfg.Dim); err != nil {
		return err
	}
	p.prepare(x)
	phi := p.pend.phi
	p.r.learn(phi, y)
	for j := range p.cols {
		p.cols[j] = append(p.cols[j], phi[j])
	}
	p.xs = append(p.xs, x...)
	p.ys = append(p.ys, y)
	p.t++
	p.pend.active, p.pend.grown = false, false
	return nil
}
