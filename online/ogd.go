package online

import (
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
	"gonum.org/v1/gonum/mat"
)

// FOGDConfig configures FOGD.
type FOGDConfig struct {
	Kernel kernel.SpectralSampler
	Dim    int
	// Frequencies is the number D of random frequencies (Li and Liao (ICML 2023): 400;
	// Jézéquel et al. (NeurIPS 2019): 1000; Wen et al. (IJCAI 2024): 4B).
	Frequencies int
	// Phase uses the phase features sqrt(2 k(0)/D) cos(omega.x + b) of
	// kernel.RandomFourier (D features) instead of the paper's pairs
	// sqrt(k(0)/D) [cos(omega.x), sin(omega.x)] (2D features).
	Phase bool
	// Eta is the constant step (tuned in {1, 10, 100, 1000}/sqrt(T) in
	// Li and Liao (ICML 2023); 1/sqrt(n) in Jézéquel et al. (NeurIPS 2019); 0.2 in Wen et al. (IJCAI 2024)).
	Eta  float64
	Loss Loss
	Seed uint64
}

// FOGD is Fourier Online Gradient Descent (Lu et al., JMLR 2016; the
// baseline of Jézéquel et al. (NeurIPS 2019), Li and Liao (ICML 2023) and Wen et al. (IJCAI 2024)): linear online gradient descent
// w <- w - eta l'(w.z(x), y) z(x) on random Fourier features z of a
// shift-invariant kernel (Bochner's theorem; Dai et al. (NIPS 2014), Theorem 2). The
// frequencies are those of kernel.NewRandomFourier(k, d, D, seed), so they
// can be regenerated from the seed.
type FOGD struct {
	cfg   FOGDConfig
	rf    *kernel.RandomFourier
	omega []float64 // D x d (paired form)
	scale float64
	w, z  []float64
}

// NewFOGD returns FOGD.
func NewFOGD(cfg FOGDConfig) (*FOGD, error) {
	if err := positive("step eta", cfg.Eta); err != nil {
		return nil, err
	}
	if err := cfg.Loss.valid(); err != nil {
		return nil, err
	}
	rf, err := kernel.NewRandomFourier(cfg.Kernel, cfg.Dim, cfg.Frequencies, cfg.Seed)
	if err != nil {
		return nil, err
	}
	f := &FOGD{cfg: cfg, rf: rf}
	n := rf.Dim()
	if !cfg.Phase {
		f.omega = make([]float64, n*cfg.Dim)
		for j := 0; j < n; j++ {
			rf.Frequency(j, f.omega[j*cfg.Dim:(j+1)*cfg.Dim])
		}
		f.scale = math.Sqrt(cfg.Kernel.Scale() / float64(n))
		n *= 2
	}
	f.w = make([]float64, n)
	f.z = make([]float64, n)
	return f, nil
}

// Name returns "fogd".
func (f *FOGD) Name() string { return "fogd" }

// Size returns the number of features (2D in the paired form).
func (f *FOGD) Size() int { return len(f.w) }

func (f *FOGD) features(x []float64) {
	if f.cfg.Phase {
		f.rf.Map(f.z, x)
		return
	}
	d, n := f.cfg.Dim, f.rf.Dim()
	for j := 0; j < n; j++ {
		s := dot(f.omega[j*d:(j+1)*d], x)
		sn, cs := math.Sincos(s)
		f.z[j] = f.scale * cs
		f.z[n+j] = f.scale * sn
	}
}

// Predict returns w.z(x).
func (f *FOGD) Predict(x []float64) float64 {
	f.features(x)
	return dot(f.w, f.z)
}

// Learn takes the gradient step at (x, y).
func (f *FOGD) Learn(x []float64, y float64) error {
	if err := checkDim(x, f.cfg.Dim); err != nil {
		return err
	}
	f.features(x)
	g := f.cfg.Loss.Deriv(dot(f.w, f.z), y)
	if g != 0 {
		axpy(-f.cfg.Eta*g, f.z, f.w)
	}
	return nil
}

// NOGDConfig configures NOGD.
type NOGDConfig struct {
	Kernel kernel.Kernel
	Dim    int
	// Budget B is the number of support vectors collected by kernel OGD
	// before the Nystrom map is built (Li and Liao (ICML 2023): 400; Wen et al. (IJCAI 2024): B).
	Budget int
	// Rank k of the eigendecomposition of K_B (Wen et al. (IJCAI 2024): 0.1 B). 0 or >= B
	// uses the full-rank Cholesky-form Nystrom embedding of gp.Nystrom
	// (Li and Liao (ICML 2023): rank r = B), which gives the same kernel as the full
	// eigendecomposition.
	Rank int
	Eta  float64
	Loss Loss
}

// NOGD is Nystrom Online Gradient Descent (Lu et al., JMLR 2016; the implementation notes on Li and Liao (ICML 2023)
// Section 4, the implementation notes on Wen et al. (IJCAI 2024) Section 7.2): kernel OGD with a constant step until
// Budget support vectors (examples with nonzero loss) are stored, then the
// Nystrom feature map z(x) = Lambda_k^{-1/2} V_k^T k_B(x) of the rank-k
// eigendecomposition K_B = V Lambda V^T, the dual coefficients converted to
// w0 = Lambda_k^{1/2} V_k^T a, and linear OGD on z from there. With full
// rank the map is the Cholesky-form embedding z = L^{-1} k_B(x) and
// w0 = L^T a.
type NOGD struct {
	supportVectors // stage 1
	cfg            NOGDConfig
	ny             *gp.Nystrom
	proj           []float64 // rank-k map: k x B, z = proj k_B(x)
	kb             []float64
	w, z           []float64
	built          bool
}

// NewNOGD returns NOGD.
func NewNOGD(cfg NOGDConfig) (*NOGD, error) {
	if err := kernel.Validate(cfg.Kernel); err != nil {
		return nil, err
	}
	if cfg.Dim < 1 || cfg.Budget < 1 {
		return nil, fmt.Errorf("online: NOGD needs dimension and budget >= 1, got %d and %d", cfg.Dim, cfg.Budget)
	}
	if err := positive("step eta", cfg.Eta); err != nil {
		return nil, err
	}
	if err := cfg.Loss.valid(); err != nil {
		return nil, err
	}
	return &NOGD{cfg: cfg}, nil
}

// Name returns "nogd".
func (n *NOGD) Name() string { return "nogd" }

// Size returns the number of support vectors (the budget once full).
func (n *NOGD) Size() int { return len(n.a) }

// supportVectors is budgeted kernel OGD, f(x) = sum_i a_i k(sv_i, x): the
// first stage of NOGD and FORKS, which collect Budget support vectors
// before building their feature maps from them.
type supportVectors struct {
	sv []float64 // n x d
	a  []float64 // coefficients
}

// kogd returns f(x).
func (s *supportVectors) kogd(k kernel.Kernel, d int, x []float64) float64 {
	var f float64
	for i, a := range s.a {
		f += a * k.Eval(s.sv[i*d:(i+1)*d], x)
	}
	return f
}

// kogdStep is one OGD step with step size eta: when the loss at x is
// positive, x becomes a support vector with coefficient -eta * loss'(f(x), y).
// It reports whether the budget is now full.
func (s *supportVectors) kogdStep(k kernel.Kernel, d int, loss Loss, eta float64, budget int, x []float64, y float64) (full bool) {
	f := s.kogd(k, d, x)
	if loss.Value(f, y) <= 0 {
		return false
	}
	s.sv = append(s.sv, x...)
	s.a = append(s.a, -eta*loss.Deriv(f, y))
	return len(s.a) == budget
}

func (n *NOGD) features(x []float64) {
	if n.ny != nil {
		n.ny.Embed(n.z, x)
		return
	}
	b := len(n.a)
	d := n.cfg.Dim
	for i := 0; i < b; i++ {
		n.kb[i] = n.cfg.Kernel.Eval(n.sv[i*d:(i+1)*d], x)
	}
	for j := range n.z {
		n.z[j] = dot(n.proj[j*b:(j+1)*b], n.kb)
	}
}

// Predict returns f_t(x).
func (n *NOGD) Predict(x []float64) float64 {
	if !n.built {
		return n.kogd(n.cfg.Kernel, n.cfg.Dim, x)
	}
	n.features(x)
	return dot(n.w, n.z)
}

// Learn takes the kernel or linear gradient step.
func (n *NOGD) Learn(x []float64, y float64) error {
	if err := checkDim(x, n.cfg.Dim); err != nil {
		return err
	}
	if !n.built {
		if n.kogdStep(n.cfg.Kernel, n.cfg.Dim, n.cfg.Loss, n.cfg.Eta, n.cfg.Budget, x, y) {
			return n.build()
		}
		return nil
	}
	n.features(x)
	g := n.cfg.Loss.Deriv(dot(n.w, n.z), y)
	if g != 0 {
		axpy(-n.cfg.Eta*g, n.z, n.w)
	}
	return nil
}

func (n *NOGD) build() error {
	b, d := len(n.a), n.cfg.Dim
	n.built = true
	if n.cfg.Rank <= 0 || n.cfg.Rank >= b {
		ny, err := gp.NewNystrom(n.cfg.Kernel, d)
		if err != nil {
			return err
		}
		// f = a^T k_B = a^T L z  =>  w = L^T a; row i of L is LastRow after
		// the i-th Add.
		n.w = make([]float64, b)
		for i := 0; i < b; i++ {
			ny.Add(n.sv[i*d:(i+1)*d], nil)
			axpy(n.a[i], ny.LastRow(), n.w)
		}
		n.ny = ny
		n.z = make([]float64, b)
		return nil
	}
	k := n.cfg.Rank
	km := mat.NewSymDense(b, nil)
	for i := 0; i < b; i++ {
		for j := 0; j <= i; j++ {
			km.SetSym(i, j, n.cfg.Kernel.Eval(n.sv[i*d:(i+1)*d], n.sv[j*d:(j+1)*d]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(km, true) {
		return fmt.Errorf("online: NOGD eigendecomposition of the %d x %d kernel matrix failed", b, b)
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	n.proj = make([]float64, k*b)
	n.w = make([]float64, k)
	for j := 0; j < k; j++ {
		col := b - 1 - j
		lam := vals[col]
		if lam <= 1e-12*vals[b-1] {
			continue // drop numerically null directions
		}
		s := 1 / math.Sqrt(lam)
		for i := 0; i < b; i++ {
			v := vecs.At(i, col)
			n.proj[j*b+i] = s * v
			n.w[j] += math.Sqrt(lam) * v * n.a[i]
		}
	}
	n.kb = make([]float64, b)
	n.z = make([]float64, k)
	return nil
}

// DSGConfig configures DSG.
type DSGConfig struct {
	Kernel kernel.SpectralSampler
	Dim    int
	Loss   Loss
	// Nu is the regularization nu of eq. 1 (R(f) = E l + nu/2 ||f||^2).
	Nu float64
	// Theta and T0 give the step gamma_t = Theta/(T0 + t), t = 1, 2, ...:
	// T0 = 0 is the paper's theta/t (Section 4), T0 > 0 the code's
	// gamma0/(1 + c t) with Theta = gamma0/c, T0 = 1/c (pitfall 3).
	Theta, T0 float64
	// Block is the number r of new random features per round (default 1);
	// each is scaled by sqrt(2 k(0)/r) (pitfall 5).
	Block int
	// Seed keys the features: feature j of the model is
	// kernel.FourierFeature(Kernel, Seed, j, .).
	Seed uint64
}

// DSG is the doubly stochastic functional gradient learner of Dai et al. (NIPS 2014)
// (Algorithms 1 and 2): at round i it draws r random features w_{i,l} from the
// seed (the "pseudo-random seed trick"), predicts f(x_i) with the
// coefficients of rounds < i, and sets
//
//	alpha_{i,l} = -gamma_i l'(f(x_i), y_i) phi_{w_{i,l}}(x_i),
//	alpha_j     = (1 - gamma_i nu) alpha_j   for j < i,
//
// (eq. 7). The model is the seed and the coefficients only: frequencies are
// regenerated by a kernel.FourierGenerator at every prediction, never
// stored, so memory is O(t r) and a prediction costs O(t r d). The decay is
// lazy: alpha_j = scale * beta_j (the implementation notes on Dai et al. (NIPS 2014) trick 5).
type DSG struct {
	cfg   DSGConfig
	gen   *kernel.FourierGenerator
	model DSGModel
	t     int
	omega []float64
	cx    []float64
	cf    float64
	cok   bool
}

// DSGModel is a trained doubly stochastic predictor: the kernel, the seed,
// the block size and the coefficients alpha_j = Scale * Beta[j] of the
// random features j = 0, 1, ... (Algorithm 2).
type DSGModel struct {
	Kernel kernel.SpectralSampler
	Dim    int
	Seed   uint64
	Block  int
	Scale  float64
	Beta   []float64
}

// NewDSG returns DSG.
func NewDSG(cfg DSGConfig) (*DSG, error) {
	if cfg.Block == 0 {
		cfg.Block = 1
	}
	if cfg.Block < 0 || cfg.Dim < 1 {
		return nil, fmt.Errorf("online: DSG needs block and dimension >= 1, got %d and %d", cfg.Block, cfg.Dim)
	}
	if err := positive("step theta", cfg.Theta); err != nil {
		return nil, err
	}
	if !(cfg.Nu >= 0) || !(cfg.T0 >= 0) || math.IsInf(cfg.Nu, 0) || math.IsInf(cfg.T0, 0) {
		return nil, fmt.Errorf("online: DSG needs finite nu, t0 >= 0, got %v, %v", cfg.Nu, cfg.T0)
	}
	if err := cfg.Loss.valid(); err != nil {
		return nil, err
	}
	gen, err := kernel.NewFourierGenerator(cfg.Kernel, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return &DSG{
		cfg:   cfg,
		gen:   gen,
		model: DSGModel{Kernel: cfg.Kernel, Dim: cfg.Dim, Seed: cfg.Seed, Block: cfg.Block, Scale: 1},
		omega: make([]float64, cfg.Dim),
	}, nil
}

// Name returns "dsg".
func (g *DSG) Name() string { return "dsg" }

// Size returns the number of random features drawn so far, t r.
func (g *DSG) Size() int { return len(g.model.Beta) }

// Model returns a copy of the current predictor.
func (g *DSG) Model() DSGModel {
	m := g.model
	m.Beta = slices.Clone(m.Beta)
	return m
}

// feature returns phi_j(x) = sqrt(2 k(0)/r) cos(omega_j.x + b_j),
// regenerating omega_j, b_j from the seed.
func feature(gen *kernel.FourierGenerator, j int, omega, x []float64, amp float64) float64 {
	b := gen.Feature(j, omega)
	return amp * math.Cos(dot(omega, x)+b)
}

// predict evaluates the model at x with gen's stream.
func (m *DSGModel) predict(gen *kernel.FourierGenerator, omega, x []float64) float64 {
	amp := math.Sqrt(2 * m.Kernel.Scale() / float64(m.Block))
	var f float64
	for j, b := range m.Beta {
		if b != 0 {
			f += b * feature(gen, j, omega, x, amp)
		}
	}
	return m.Scale * f
}

// Predict evaluates f(x) = sum_j alpha_j phi_j(x) (Algorithm 2), regenerating
// every feature from the seed. It allocates a generator per call; keep the
// DSG learner for repeated predictions.
func (m DSGModel) Predict(x []float64) (float64, error) {
	if len(x) != m.Dim {
		return 0, fmt.Errorf("online: point has dimension %d, want %d", len(x), m.Dim)
	}
	gen, err := kernel.NewFourierGenerator(m.Kernel, m.Seed)
	if err != nil {
		return 0, err
	}
	if m.Block < 1 {
		return 0, fmt.Errorf("online: DSG model block %d < 1", m.Block)
	}
	return m.predict(gen, make([]float64, m.Dim), x), nil
}

// Predict returns f_t(x) (Algorithm 2).
func (g *DSG) Predict(x []float64) float64 {
	if g.cok && slices.Equal(g.cx, x) {
		return g.cf
	}
	if len(x) != g.cfg.Dim {
		panic(fmt.Sprintf("online: point has dimension %d, want %d", len(x), g.cfg.Dim))
	}
	g.cf = g.model.predict(g.gen, g.omega, x)
	g.cx = append(g.cx[:0], x...)
	g.cok = true
	return g.cf
}

// Learn performs iteration t of Algorithm 1.
func (g *DSG) Learn(x []float64, y float64) error {
	if err := checkDim(x, g.cfg.Dim); err != nil {
		return err
	}
	f := g.Predict(x)
	g.t++
	gamma := g.cfg.Theta / (g.cfg.T0 + float64(g.t))
	lp := g.cfg.Loss.Deriv(f, y)
	m := &g.model
	decay := 1 - gamma*g.cfg.Nu
	m.Scale *= decay
	if m.Scale == 0 { // theta nu an integer: every old coefficient is wiped (pitfall 3)
		clear(m.Beta)
		m.Scale = 1
	}
	r := g.cfg.Block
	amp := math.Sqrt(2 * g.cfg.Kernel.Scale() / float64(r))
	j0 := len(m.Beta)
	for l := 0; l < r; l++ {
		alpha := 0.0
		if lp != 0 {
			alpha = -gamma * lp * feature(g.gen, j0+l, g.omega, x, amp)
		}
		m.Beta = append(m.Beta, alpha/m.Scale)
	}
	if s := math.Abs(m.Scale); s < 1e-100 || s > 1e100 {
		for i := range m.Beta {
			m.Beta[i] *= m.Scale
		}
		m.Scale = 1
	}
	g.cok = false
	return nil
}
