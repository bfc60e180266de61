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

// KONSConfig configures PROS-N-KONS and CON-KONS, the two baselines of
// Li and Liao's (ICML 2023) Table 3 built on Calandriello et al. (2017a, "Efficient
// second-order online kernel learning with adaptive embedding").
type KONSConfig struct {
	Kernel kernel.Kernel
	Dim    int
	// KORS is the dictionary rule; its Mu is the papers' gamma (tuned in
	// {0.5, 1, 5, 10}; a larger gamma gives a smaller dictionary). The zero
	// value means DefaultKORS().
	KORS KORS
	// Alpha is the regularization A_0 = alpha I of every epoch (tuned in
	// {1, 5, 15}).
	Alpha float64
	// C bounds the predictions, |w.phi(x)| <= C (the projection of KONS);
	// the experiments use C = 1.
	C float64
	// Restart selects PROS-N-KONS (restart A = alpha I, w = 0 at every
	// dictionary change); false is CON-KONS (continue: A <- blockdiag(A,
	// alpha), w <- (w; 0), the transfer Q A Q^T, Q w of the implementation notes on Li and Liao (ICML 2023) Section
	// "CON-KONS" in the Cholesky basis where Q = [I; 0]).
	Restart bool
	// MaxDictionary is the budget J (0: none): KORS stops sampling at J.
	MaxDictionary int
	Seed          uint64
}

// KONS is PROS-N-KONS (Restart) or CON-KONS: the online Newton step with
// step coefficient sigma/2, sigma = 1/(8 C^2) (the official R code of seed
// 002), on the Nystrom features phi(x) = L^{-1} k_S(x) of a dictionary
// sampled by KORS. The feature map changes at the start of the round after
// a point is accepted (the implementation notes on Li and Liao (ICML 2023)), so Predict has no side effects. The
// projection onto |w.phi(x_{t+1})| <= C is done lazily at the start of
// round t+1, as in NONSALD. O(dJ + J^2) per round (a restart rebuilds the
// factor of alpha I in O(J^2)).
type KONS struct {
	cfg   KONSConfig
	eta   float64
	ny    *gp.Nystrom
	korsF chol.Factor // factor of S K_I S + mu I, KORS's weighted dictionary
	korsW []float64
	a     chol.Factor // A
	wtil  []float64
	w     []float64
	z, q  []float64
	kcol  []float64
	zero  []float64
	pcg   *rand.PCG
	rng   *rand.Rand
	t     int
}

// NewKONS returns PROS-N-KONS (cfg.Restart) or CON-KONS.
func NewKONS(cfg KONSConfig) (*KONS, error) {
	if cfg.KORS == (KORS{}) {
		cfg.KORS = DefaultKORS()
	}
	if err := cfg.KORS.validate(); err != nil {
		return nil, err
	}
	if err := firstErr(positive("regularization alpha", cfg.Alpha), positive("prediction bound C", cfg.C)); err != nil {
		return nil, err
	}
	if cfg.MaxDictionary < 0 {
		return nil, fmt.Errorf("online: negative dictionary budget %d", cfg.MaxDictionary)
	}
	ny, err := gp.NewNystrom(cfg.Kernel, cfg.Dim)
	if err != nil {
		return nil, err
	}
	k := &KONS{cfg: cfg, eta: 1 / (16 * cfg.C * cfg.C), ny: ny}
	k.pcg = rand.NewPCG(cfg.Seed, 0x4b0)
	k.rng = rand.New(k.pcg)
	return k, nil
}

// Name returns "pros-n-kons" or "con-kons".
func (k *KONS) Name() string {
	if k.cfg.Restart {
		return "pros-n-kons"
	}
	return "con-kons"
}

// Size returns the dictionary size J.
func (k *KONS) Size() int { return k.ny.Size() }

func (k *KONS) embed(x []float64) {
	m := k.ny.Size()
	k.z = slices.Grow(k.z[:0], m+1)[:m]
	k.ny.Embed(k.z, x)
}

// Predict returns clip(wtil.phi(x), -C, C), the prediction of the iterate
// projected onto the slab at x.
func (k *KONS) Predict(x []float64) float64 {
	k.embed(x)
	y := dot(k.wtil, k.z)
	return math.Max(-k.cfg.C, math.Min(k.cfg.C, y))
}

// project sets w to the A-norm projection of wtil onto |w.p| <= C.
func (k *KONS) project(p []float64) {
	k.w, k.q = slabProject(k.w, k.q, k.wtil, p, k.cfg.C, &k.a)
}

// Learn performs round t: projection, Newton step on the square loss with
// the current features, then the KORS draw for x_t, which changes the
// features from round t+1 on.
func (k *KONS) Learn(x []float64, y float64) error {
	if err := checkDim(x, k.cfg.Dim); err != nil {
		return err
	}
	k.embed(x)
	k.project(k.z)
	if len(k.z) > 0 {
		g := 2 * (dot(k.w, k.z) - y)
		s := math.Sqrt(k.eta) * g
		k.q = k.q[:0]
		for _, v := range k.z {
			k.q = append(k.q, s*v)
		}
		k.a.RankOneUpdate(k.q)
		k.q = append(k.q[:0], k.z...)
		k.a.Solve(k.q)
		k.wtil = append(k.wtil[:0], k.w...)
		axpy(-g, k.q, k.wtil)
	}
	k.t++
	k.korsStep(x)
	return nil
}

// korsStep draws KORS's Bernoulli for x (Jézéquel et al.'s (NeurIPS 2019) closed form, see KORS)
// and on acceptance grows the dictionary and transfers or restarts the
// Newton state.
func (k *KONS) korsStep(x []float64) {
	m := k.ny.Size()
	if k.cfg.MaxDictionary > 0 && m >= k.cfg.MaxDictionary {
		return
	}
	k.kcol = slices.Grow(k.kcol[:0], m)[:m]
	k.ny.KernelColumn(k.kcol, x)
	for j := range k.kcol {
		k.kcol[j] *= k.korsW[j]
	}
	k.korsF.SolveL(k.kcol)
	kxx := kernel.Diag(k.cfg.Kernel, x)
	kc := k.cfg.KORS
	q := math.Max(kxx-dot(k.kcol, k.kcol), 0)
	prob := math.Min(kc.Beta*(1+kc.Eps)*q/(q+kc.Mu), 1)
	k.pcg.Seed(k.cfg.Seed, uint64(k.t))
	if !(k.rng.Float64() < prob) {
		return
	}
	s := 1 / math.Sqrt(prob)
	for j := range k.kcol {
		k.kcol[j] *= s
	}
	k.korsF.AppendSolved(k.kcol, s*s*kxx+kc.Mu)
	k.korsW = append(k.korsW, s)
	k.embed(x)
	k.ny.Add(x, k.z)
	if k.cfg.Restart {
		k.a.Reset()
		k.zero = append(k.zero[:0], make([]float64, m+1)...)
		for j := 0; j <= m; j++ {
			k.a.AppendSolved(k.zero[:j], k.cfg.Alpha)
		}
		k.wtil = append(k.wtil[:0], k.zero[:m+1]...)
		return
	}
	k.zero = append(k.zero[:0], make([]float64, m+1)...)
	k.a.AppendSolved(k.zero[:m], k.cfg.Alpha) // A <- blockdiag(A, alpha)
	k.wtil = append(k.wtil, 0)
}
