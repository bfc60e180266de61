package online

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// BlockStream is the adversarial stream of Wen et al. (IJCAI 2024), Section 5.2: b blocks;
// in each block one instance drawn uniformly from the dataset is repeated r
// times, and the labels of every even-numbered block (the 2nd, 4th, ...) are
// multiplied by -1. codrna-1/german-1 use b = 500, r = 10 (T = 5000),
// codrna-2/german-2 b = 500, r = 20.
type BlockStream struct {
	ds      *Dataset
	picks   []int
	repeats int
	pos     int
}

// NewBlockStream draws the b block instances from seed (without
// replacement when b <= N, with replacement otherwise).
func NewBlockStream(ds *Dataset, blocks, repeats int, seed uint64) (*BlockStream, error) {
	if blocks < 1 || repeats < 1 {
		return nil, fmt.Errorf("online: block stream needs b, r >= 1, got %d, %d", blocks, repeats)
	}
	if ds.N < 1 {
		return nil, fmt.Errorf("online: empty dataset")
	}
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	var picks []int
	if blocks <= ds.N {
		picks = rng.Perm(ds.N)[:blocks]
	} else {
		picks = make([]int, blocks)
		for i := range picks {
			picks[i] = rng.IntN(ds.N)
		}
	}
	return &BlockStream{ds: ds, picks: picks, repeats: repeats}, nil
}

// Next returns the next example.
func (s *BlockStream) Next() ([]float64, float64, bool) {
	if s.pos >= s.Len() {
		return nil, 0, false
	}
	blk := s.pos / s.repeats
	s.pos++
	i := s.picks[blk]
	y := s.ds.Y[i]
	if blk%2 == 1 { // blocks are numbered from 1: block 2, 4, ... flip
		y = -y
	}
	return s.ds.Row(i), y, true
}

// Len returns b r.
func (s *BlockStream) Len() int { return len(s.picks) * s.repeats }

// Dim returns the input dimension.
func (s *BlockStream) Dim() int { return s.ds.D }

// Task returns the dataset's task.
func (s *BlockStream) Task() Task { return s.ds.Task }

// AdversaryConfig configures NewAdversary.
type AdversaryConfig struct {
	// Dim is d (Jézéquel et al. (NeurIPS 2019): 5), N the number of rounds (80).
	Dim, N int
	// Kernel and Lambda define the comparator class: the regret is against
	// the best function in hindsight of the penalized problem
	// min_f sum_s (y_s - f(x_s))^2 + Lambda ||f||^2 (Proposition 1).
	Kernel kernel.Kernel
	Lambda float64
	// Candidates is the number of uniform random points tried per round
	// (default 256); Refine the number of local perturbation steps around
	// the best (default 64).
	Candidates, Refine int
	Seed               uint64
}

// Adversary is the greedy adversary of Jézéquel et al. (NeurIPS 2019), Appendix G: at each
// round it searches (x_t, y_t) in [-1, 1]^d x [-1, 1] maximizing the
// increase of the learner's regret,
//
//	(y - yhat_t(x))^2 - (L*_t(x, y) - L*_{t-1}),
//	L*_t = min_f sum_{s<=t} (y_s - f(x_s))^2 + lambda ||f||^2 = lambda Y^T (K + lambda I)^{-1} Y,
//
// the paper's "optimization on the regret function" (it used scipy; here a
// seeded random search with local refinement). The increment is a convex
// quadratic in y (its y^2 coefficient is 1 - lambda [(K+lambda I)^{-1}]_tt
// >= 0), so y_t = +-1. The stream probes the learner it attacks through
// Predict, which Learner guarantees to be free of side effects on other
// points. L* is tracked with a growing Cholesky factor of K + lambda I.
type Adversary struct {
	cfg   AdversaryConfig
	l     Learner
	rng   *rand.Rand
	f     chol.Factor
	xs    []float64
	v     []float64 // L^{-1} Y
	x     []float64
	cand  []float64
	z     []float64
	t     int
	loss  float64 // learner's cumulative square loss
	lstar float64 // L*_t
	ldet  float64 // log det(I + K/lambda)
}

// NewAdversary returns the adversarial stream against l.
func NewAdversary(l Learner, cfg AdversaryConfig) (*Adversary, error) {
	if l == nil {
		return nil, fmt.Errorf("online: nil learner")
	}
	if cfg.Dim < 1 || cfg.N < 1 {
		return nil, fmt.Errorf("online: adversary needs d, n >= 1, got %d, %d", cfg.Dim, cfg.N)
	}
	if err := kernel.Validate(cfg.Kernel); err != nil {
		return nil, err
	}
	if err := positive("comparator lambda", cfg.Lambda); err != nil {
		return nil, err
	}
	if cfg.Candidates <= 0 {
		cfg.Candidates = 256
	}
	if cfg.Refine < 0 {
		cfg.Refine = 0
	} else if cfg.Refine == 0 {
		cfg.Refine = 64
	}
	return &Adversary{cfg: cfg, l: l, rng: rand.New(rand.NewPCG(cfg.Seed, 0xad)),
		x: make([]float64, cfg.Dim), cand: make([]float64, cfg.Dim)}, nil
}

// gain returns the best regret increment at x and its y, and the learner's
// prediction there.
func (a *Adversary) gain(x []float64) (g, y, yhat float64) {
	yhat = a.l.Predict(x)
	t := a.t
	a.z = slices.Grow(a.z[:0], t+1)[:t]
	for i := range a.z {
		a.z[i] = a.cfg.Kernel.Eval(a.xs[i*a.cfg.Dim:(i+1)*a.cfg.Dim], x)
	}
	a.f.SolveL(a.z)
	d2 := math.Max(kernel.Diag(a.cfg.Kernel, x)+a.cfg.Lambda-dot(a.z, a.z), 1e-300)
	m := dot(a.z, a.v)
	g = math.Inf(-1)
	for _, yy := range []float64{-1, 1} {
		gg := (yy-yhat)*(yy-yhat) - a.cfg.Lambda*(yy-m)*(yy-m)/d2
		if gg > g {
			g, y = gg, yy
		}
	}
	return g, y, yhat
}

// Next runs the adversary's search for round t and returns (x_t, y_t).
func (a *Adversary) Next() ([]float64, float64, bool) {
	if a.t >= a.cfg.N {
		return nil, 0, false
	}
	best, by, byh := math.Inf(-1), 0.0, 0.0
	for c := 0; c < a.cfg.Candidates; c++ {
		for j := range a.cand {
			a.cand[j] = 2*a.rng.Float64() - 1
		}
		if g, y, yh := a.gain(a.cand); g > best {
			best, by, byh = g, y, yh
			copy(a.x, a.cand)
		}
	}
	radius := 0.5
	for r := 0; r < a.cfg.Refine; r++ {
		for j := range a.cand {
			a.cand[j] = math.Max(-1, math.Min(1, a.x[j]+radius*a.rng.NormFloat64()))
		}
		if g, y, yh := a.gain(a.cand); g > best {
			best, by, byh = g, y, yh
			copy(a.x, a.cand)
		} else {
			radius *= 0.93
		}
	}
	// Commit: the comparator state and the learner's loss at (x, y).
	a.gain(a.x)
	d := a.f.AppendSolved(a.z, kernel.Diag(a.cfg.Kernel, a.x)+a.cfg.Lambda)
	a.ldet += 2 * math.Log(d/math.Sqrt(a.cfg.Lambda))
	vn := (by - dot(a.z, a.v)) / d
	a.v = append(a.v, vn)
	a.lstar += a.cfg.Lambda * vn * vn
	a.loss += (by - byh) * (by - byh)
	a.xs = append(a.xs, a.x...)
	a.t++
	return a.x, by, true
}

// Len returns n.
func (a *Adversary) Len() int { return a.cfg.N }

// Dim returns d.
func (a *Adversary) Dim() int { return a.cfg.Dim }

// Task returns Regression.
func (a *Adversary) Task() Task { return Regression }

// Regret returns the learner's regret after the rounds played so far,
// sum_t (y_t - yhat_t)^2 - L*_t, against the best penalized kernel
// predictor in hindsight (the comparator of Proposition 1).
func (a *Adversary) Regret() float64 { return a.loss - a.lstar }

// LogDet returns log det(I + K_t/lambda) = sum_k log(1 + lambda_k(K_t)/lambda),
// so that Kernel-AWV's Proposition 1 bound reads Regret <= B^2 LogDet with
// B = 1 here.
func (a *Adversary) LogDet() float64 { return a.ldet }

// SyntheticDataset draws n points x uniformly over the domain of the
// black-box test function f and observes y = f(x) + noise N(0, noise^2),
// from seed. The result is an ordinary Dataset (Task Regression) that can
// be rescaled and streamed like a file; its inputs are in f's box.
func SyntheticDataset(f *objectives.Function, n int, noise float64, seed uint64) (*Dataset, error) {
	if f == nil {
		return nil, fmt.Errorf("online: nil objective")
	}
	if n < 1 {
		return nil, fmt.Errorf("online: synthetic stream needs n >= 1, got %d", n)
	}
	if !(noise >= 0) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("online: noise must be finite and >= 0, got %v", noise)
	}
	box := f.Domain()
	if err := box.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x5717))
	ds := &Dataset{Name: f.String(), N: n, D: f.Dim, Task: Regression,
		X: make([]float64, n*f.Dim), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		x := ds.X[i*f.Dim : (i+1)*f.Dim]
		for j := range x {
			x[j] = box.Lower[j] + (box.Upper[j]-box.Lower[j])*rng.Float64()
		}
		ds.Y[i] = f.Value(x) + noise*rng.NormFloat64()
	}
	return ds, nil
}
